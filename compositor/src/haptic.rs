//! The haptic step of a prompt: the force-feedback backend (evdev by default; the harness can
//! put a recording one in), the cue played when a prompt asks for a double tap, and the
//! compositor's own touch events fed to the double-tap detector. A cue that cannot play or a
//! device that goes away moves the prompt to its visual fallback.

use std::time::Duration;

use pcp_gate::{Answer, IntentId, Modality, ModalityEvent};
use pcp_haptics::{HapticAsk, HapticPrompt, Haptics, Position, TouchEvent, TouchKind};
use pcp_overlay::HapticState;
use smithay::utils::{Logical, Point};

use crate::state::State;

/// Millimetres per inch: `[compositor] touch_dpi` is per inch, `[haptics.tap]` is in millimetres.
const MM_PER_INCH: f64 = 25.4;

/// The backend, its settings and the prompt whose cue is playing.
pub struct HapticFlow {
    backend: Box<dyn Haptics>,
    config: pcp_haptics::Config,
    prompt: Option<(IntentId, HapticPrompt)>,
}

impl HapticFlow {
    /// A flow over `backend` with the `[haptics]` settings.
    pub fn new(backend: Box<dyn Haptics>, config: pcp_haptics::Config) -> HapticFlow {
        HapticFlow {
            backend,
            config,
            prompt: None,
        }
    }

    /// Whether a force-feedback device can play the cue now.
    pub fn available(&self) -> bool {
        self.backend.availability().is_available()
    }

    /// Whether a double tap is being watched for.
    pub fn active(&self) -> bool {
        self.prompt.is_some()
    }

    fn end(&mut self) {
        if let Some((id, prompt)) = self.prompt.take()
            && let Err(e) = prompt.end(self.backend.as_mut())
        {
            tracing::warn!(?id, "the haptic cue could not be stopped: {e}");
        }
    }
}

/// The longest an input event may have waited to be read and still be dated by its own time;
/// an older (or future) one is from another clock and is dated now.
const MAX_EVENT_AGE_MS: i64 = 10_000;

/// The clock time in milliseconds of an event whose time is `event` (the low 32 bits of the
/// same clock's milliseconds), read at `now`.
fn event_ms(now: i64, event: u32) -> i64 {
    let age = i64::from((now as u32).wrapping_sub(event));
    if age <= MAX_EVENT_AGE_MS {
        now - age
    } else {
        now
    }
}

fn touch_time(ms: i64) -> Duration {
    Duration::from_millis(ms.max(0) as u64)
}

impl State {
    /// Plays the cue when the shown prompt's plan has an unanswered haptic step; ends it (stops
    /// and erases the cue) when the prompt ended or no longer asks for haptics.
    pub(crate) fn sync_haptic(&mut self) {
        let want = self.intents.gate().active().and_then(|p| {
            if !p.plan.modalities.contains(&Modality::Haptic) || p.answered(Modality::Haptic) {
                return None;
            }
            let companions: Vec<Modality> = p
                .plan
                .modalities
                .iter()
                .copied()
                .filter(|m| *m != Modality::Haptic)
                .collect();
            Some((p.id, p.capability.side_effects, p.risk, companions))
        });
        let current = self.haptic.prompt.as_ref().map(|(id, _)| *id);
        match want {
            Some((id, ..)) if current == Some(id) => {}
            Some((id, side_effects, risk, companions)) => {
                self.haptic.end();
                let ask = HapticAsk {
                    side_effects,
                    risk,
                    companions: &companions,
                };
                let now = touch_time(self.clock.now_ms());
                let flow = &mut self.haptic;
                match HapticPrompt::begin(flow.backend.as_mut(), &flow.config, &ask, now) {
                    Ok(prompt) => {
                        flow.prompt = Some((id, prompt));
                        self.overlay.dialog_mut().set_haptic(HapticState::Waiting);
                        self.dirty = true;
                    }
                    Err(e) => {
                        tracing::warn!("the haptic cue cannot play, falling back to visual: {e}");
                        crate::intent::respond(self, ModalityEvent::Lost(Modality::Haptic));
                    }
                }
            }
            None => self.haptic.end(),
        }
    }

    /// The device went away while its prompt waits: the prompt falls back to visual.
    pub(crate) fn check_haptic_device(&mut self) {
        if self.haptic.active() && !self.haptic.available() {
            tracing::warn!("the haptic device went away mid-prompt, falling back to visual");
            self.haptic.end();
            crate::intent::respond(self, ModalityEvent::Lost(Modality::Haptic));
        }
    }

    /// Feeds a touch that happened at `time` (the low 32 bits of the compositor clock's
    /// milliseconds, as the backends pass event times) to the double-tap detector (the caller
    /// keeps it from the dialog and from clients: a tap for the haptic answer must not also
    /// press a button). A double tap is judged by when the touches happened, not by when a busy
    /// compositor got to them.
    pub(crate) fn haptic_touch(&mut self, kind: TouchKind, p: Point<f64, Logical>, time: u32) {
        let time = touch_time(event_ms(self.clock.now_ms(), time));
        let px_per_mm = self.config.touch_dpi / MM_PER_INCH;
        let Some((_, prompt)) = self.haptic.prompt.as_mut() else {
            return;
        };
        let position = Position {
            x: p.x / px_per_mm,
            y: p.y / px_per_mm,
        };
        let answer = prompt.on_touch(&TouchEvent::finger(time, 0, kind, position));
        self.show_haptic_progress();
        if let Some(Answer::Approve) = answer {
            tracing::info!("haptic double tap approved");
            crate::intent::respond(
                self,
                ModalityEvent::Answer(Modality::Haptic, Answer::Approve),
            );
        }
    }

    /// Shows "tap again" on the dialog while a first tap waits for its second, and takes it back
    /// once the window for the second has passed (called on each touch and on the poll timer).
    pub(crate) fn show_haptic_progress(&mut self) {
        let now = touch_time(self.clock.now_ms());
        let Some((_, prompt)) = self.haptic.prompt.as_ref() else {
            return;
        };
        let shown = if prompt.first_tap_pending(now) {
            HapticState::FirstTap
        } else {
            HapticState::Waiting
        };
        if self.overlay.dialog().live().map(|l| l.haptic) != Some(shown) {
            self.overlay.dialog_mut().set_haptic(shown);
            self.dirty = true;
        }
    }

    /// Replaces the haptic backend (the harness puts in a recording one).
    #[cfg(feature = "test-harness")]
    pub fn set_haptics(&mut self, backend: Box<dyn Haptics>) {
        self.haptic.end();
        let config = self.haptic.config.clone();
        self.haptic = HapticFlow::new(backend, config);
        self.refresh_availability();
    }
}

#[cfg(test)]
mod tests {
    use super::event_ms;

    #[test]
    fn an_event_is_dated_by_its_own_time_when_it_is_recent() {
        let now = 1_700_000_123_456_i64;
        // Read 300 ms late.
        assert_eq!(event_ms(now, (now - 300) as u32), now - 300);
        // Across the 32-bit wrap of the low bits.
        let wrap = 0x1_0000_0010_i64;
        assert_eq!(event_ms(wrap, (wrap - 0x20) as u32), wrap - 0x20);
        // From another clock (or the future): dated now.
        assert_eq!(event_ms(now, (now + 5) as u32), now);
        assert_eq!(event_ms(now, 7), now);
    }
}

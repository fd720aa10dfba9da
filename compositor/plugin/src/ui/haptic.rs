//! The haptic step of the shown prompt: the force-feedback backend (evdev by default; a host or
//! the test harness can put in another), the cue played when the prompt's plan asks for a double
//! tap, and the seat's touch points fed to the double-tap detector. A cue that cannot play or a
//! device that goes away is a loss: the prompt falls back to the dialog.

use std::time::Duration;

use pcp_gate::{Answer, IntentId, Modality, ModalityEvent, Prompt};
use pcp_haptics::{HapticAsk, HapticPrompt, Haptics, Position, TouchEvent, TouchKind};
use pcp_overlay::{ConfirmDialog, HapticState};

use crate::PromptEvent;

/// Millimetres per inch: touch points come in logical pixels, `[haptics.tap]` is in millimetres.
const MM_PER_INCH: f64 = 25.4;

/// The backend, its settings and the prompt whose cue is playing.
pub(crate) struct HapticStep {
    backend: Box<dyn Haptics>,
    config: pcp_haptics::Config,
    prompt: Option<(IntentId, HapticPrompt)>,
    /// When the last first tap of a possible double tap was lifted (host clock, ms): the dialog
    /// says "tap again" until `tap.max_interval_ms` after it.
    first_tap_at: Option<i64>,
}

fn touch_time(ms: i64) -> Duration {
    Duration::from_millis(ms.max(0) as u64)
}

impl HapticStep {
    pub fn new(backend: Box<dyn Haptics>, config: pcp_haptics::Config) -> HapticStep {
        HapticStep {
            backend,
            config,
            prompt: None,
            first_tap_at: None,
        }
    }

    /// Whether a force-feedback device can play the cue now (the backend's own state: no
    /// device is touched).
    pub fn available(&self) -> bool {
        self.backend.availability().is_available()
    }

    /// Whether a double tap is being watched for (touches are then the haptic answer's).
    pub fn active(&self) -> bool {
        self.prompt.is_some()
    }

    /// Replaces the backend (ending any cue on the old one).
    pub fn set_backend(&mut self, backend: Box<dyn Haptics>) {
        self.end();
        self.backend = backend;
    }

    /// New `[haptics]` settings (ending any cue played under the old ones).
    pub fn set_config(&mut self, config: pcp_haptics::Config) {
        self.end();
        self.config = config;
    }

    /// Stops and erases the cue.
    pub fn end(&mut self) {
        self.first_tap_at = None;
        if let Some((id, prompt)) = self.prompt.take()
            && let Err(e) = prompt.end(self.backend.as_mut())
        {
            tracing::warn!(?id, "the haptic cue could not be stopped: {e}");
        }
    }

    /// Plays the cue when `prompt` has an unanswered haptic step; ends it when the prompt ended
    /// or no longer asks for haptics. A cue that cannot play is a loss.
    pub fn sync(
        &mut self,
        prompt: Option<&Prompt>,
        dialog: &mut ConfirmDialog,
        now: i64,
    ) -> Vec<PromptEvent> {
        let want = prompt.filter(|p| {
            p.plan.modalities.contains(&Modality::Haptic) && !p.answered(Modality::Haptic)
        });
        let current = self.prompt.as_ref().map(|(id, _)| *id);
        let Some(p) = want else {
            self.end();
            return Vec::new();
        };
        if current == Some(p.id) {
            return Vec::new();
        }
        self.end();
        let companions: Vec<Modality> = p
            .plan
            .modalities
            .iter()
            .copied()
            .filter(|m| *m != Modality::Haptic)
            .collect();
        let ask = HapticAsk {
            side_effects: p.capability.side_effects,
            risk: p.risk,
            companions: &companions,
        };
        match HapticPrompt::begin(self.backend.as_mut(), &self.config, &ask, touch_time(now)) {
            Ok(started) => {
                self.prompt = Some((p.id, started));
                dialog.set_haptic(HapticState::Waiting);
                Vec::new()
            }
            Err(e) => {
                tracing::warn!("the haptic cue cannot play, falling back to visual: {e}");
                vec![lost(p.id)]
            }
        }
    }

    /// The device went away while its prompt waits: the prompt falls back to the dialog.
    pub fn check_device(&mut self) -> Vec<PromptEvent> {
        match &self.prompt {
            Some((id, _)) if !self.available() => {
                let id = *id;
                tracing::warn!("the haptic device went away mid-prompt, falling back to visual");
                self.end();
                vec![lost(id)]
            }
            _ => Vec::new(),
        }
    }

    /// Feeds a touch at logical point `p` (at `touch_dpi`) to the double-tap detector; an
    /// approval when it completes a double tap.
    pub fn touch(
        &mut self,
        kind: TouchKind,
        p: pcp_overlay::Point,
        touch_dpi: f64,
        dialog: &mut ConfirmDialog,
        now: i64,
    ) -> Vec<PromptEvent> {
        let px_per_mm = touch_dpi / MM_PER_INCH;
        let Some((id, prompt)) = self.prompt.as_mut() else {
            return Vec::new();
        };
        let id = *id;
        let position = Position {
            x: p.x / px_per_mm,
            y: p.y / px_per_mm,
        };
        let answer = prompt.on_touch(&TouchEvent::finger(touch_time(now), 0, kind, position));
        // A lift that leaves a first tap waiting starts the window for the second.
        if kind == TouchKind::Up && prompt.first_tap_pending(touch_time(now)) {
            self.first_tap_at = Some(now);
        }
        self.show_progress(dialog, now);
        if let Some(Answer::Approve) = answer {
            tracing::info!("haptic double tap approved");
            return vec![PromptEvent {
                prompt: id,
                event: ModalityEvent::Answer(Modality::Haptic, Answer::Approve),
            }];
        }
        Vec::new()
    }

    /// Shows "tap again" while a first tap waits for its second, and takes it back once the
    /// window for the second has passed.
    pub fn show_progress(&mut self, dialog: &mut ConfirmDialog, now: i64) {
        let Some((_, prompt)) = self.prompt.as_ref() else {
            return;
        };
        let shown = if prompt.first_tap_pending(touch_time(now)) {
            HapticState::FirstTap
        } else {
            self.first_tap_at = None;
            HapticState::Waiting
        };
        if dialog.live().map(|l| l.haptic) != Some(shown) {
            dialog.set_haptic(shown);
        }
    }

    /// When the "tap again" hint must go (host clock, ms).
    pub fn next_change(&self) -> Option<i64> {
        self.prompt.as_ref()?;
        self.first_tap_at
            .map(|t| t + i64::from(self.config.tap.max_interval_ms) + 1)
    }
}

fn lost(prompt: IntentId) -> PromptEvent {
    PromptEvent {
        prompt,
        event: ModalityEvent::Lost(Modality::Haptic),
    }
}

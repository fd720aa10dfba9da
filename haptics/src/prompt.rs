//! One haptic confirmation from start to end, and the boundary rule: a haptic-only confirmation
//! for a destructive or system capability is refused here, whatever the caller's plan says.

use std::time::Duration;

use pcp_gate::{Answer, Modality, RiskClass, SideEffects};
use tracing::debug;

use crate::config::Config;
use crate::error::HapticsError;
use crate::haptics::{Availability, Haptics};
use crate::tap::{DoubleTapDetector, Verdict};
use crate::touch::TouchEvent;

/// What to present instead when haptics cannot be used (without haptic hardware the prompt falls back to visual).
pub const FALLBACK: Modality = Modality::Visual;

/// What the caller asks haptics to confirm.
#[derive(Debug, Clone, Copy)]
pub struct HapticAsk<'a> {
    /// The capability's side effects (from its trusted manifest).
    pub side_effects: SideEffects,
    /// The capability's risk class.
    pub risk: RiskClass,
    /// The other modalities presented for the same prompt (haptic itself does not count).
    pub companions: &'a [Modality],
}

/// Refuses a haptic-only confirmation for a destructive or system capability. Either the side
/// effects or the risk class naming one is enough, so a mislabelled request still fails closed.
pub fn check_haptic_allowed(ask: &HapticAsk<'_>) -> Result<(), HapticsError> {
    let grave = matches!(
        ask.side_effects,
        SideEffects::Destructive | SideEffects::System
    ) || !ask.risk.allows_haptic_alone();
    let accompanied = ask.companions.iter().any(|m| *m != Modality::Haptic);
    if grave && !accompanied {
        let risk = match ask.side_effects {
            SideEffects::Destructive => RiskClass::Destructive,
            SideEffects::System => RiskClass::System,
            _ => ask.risk,
        };
        return Err(HapticsError::HapticAloneRefused { risk });
    }
    Ok(())
}

/// A haptic prompt in progress: the cue has been started and double taps are being watched for.
#[derive(Debug)]
pub struct HapticPrompt {
    detector: DoubleTapDetector,
    cue_duration: Duration,
    /// How long after a first tap's lift the second may come (`tap.max_interval_ms`).
    max_interval: Duration,
    answered: bool,
}

impl HapticPrompt {
    /// Checks the boundary rule and availability, plays the cue and starts listening.
    /// `touch_now` is the current time on the touch source's clock (the realtime clock for evdev
    /// devices, the compositor's clock for forwarded events): taps touching down before the cue
    /// has ended plus `tap.arm_delay_ms` are ignored. Any error means: present [`FALLBACK`].
    pub fn begin(
        haptics: &mut dyn Haptics,
        config: &Config,
        ask: &HapticAsk<'_>,
        touch_now: Duration,
    ) -> Result<HapticPrompt, HapticsError> {
        check_haptic_allowed(ask)?;
        if let Availability::Unavailable(why) = haptics.availability() {
            return Err(HapticsError::Unavailable(why));
        }
        let cue_duration = haptics.start_cue()?;
        let mut detector = DoubleTapDetector::new(&config.tap);
        let arm_delay = Duration::from_millis(config.tap.arm_delay_ms.into());
        detector.arm_from(touch_now + cue_duration + arm_delay);
        debug!(?cue_duration, "haptic prompt started");
        Ok(HapticPrompt {
            detector,
            cue_duration,
            max_interval: Duration::from_millis(config.tap.max_interval_ms.into()),
            answered: false,
        })
    }

    /// How long the cue lasts; stop it with [`HapticPrompt::end`] or [`Haptics::stop_cue`].
    pub fn cue_duration(&self) -> Duration {
        self.cue_duration
    }

    /// Feeds a touch event; returns `Some(Answer::Approve)` once, on the first double tap.
    /// A double tap only ever approves: denial comes from the other modalities or the timeout.
    pub fn on_touch(&mut self, ev: &TouchEvent) -> Option<Answer> {
        if self.answered {
            return None;
        }
        let verdict = self.detector.feed(ev)?;
        debug!(?verdict, "haptic tap verdict");
        match verdict {
            Verdict::DoubleTap { .. } => {
                self.answered = true;
                Some(Answer::Approve)
            }
            _ => None,
        }
    }

    /// Whether a first tap was taken and a second one at `now` (the touch source's clock) would
    /// still complete the double tap: what the dialog's "tap again" shows.
    pub fn first_tap_pending(&self, now: Duration) -> bool {
        !self.answered
            && self
                .detector
                .pending()
                .is_some_and(|tap| now.saturating_sub(tap.up) <= self.max_interval)
    }

    /// Ends the prompt: stops and erases the cue.
    pub fn end(self, haptics: &mut dyn Haptics) -> Result<(), HapticsError> {
        haptics.stop_cue()
    }
}

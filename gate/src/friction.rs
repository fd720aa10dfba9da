//! Friction adaptation (repeated identical approvals degrade the threshold, boundedly): how a user's history of identical approvals lowers the
//! threshold, gradually and boundedly, and the floors it never crosses.

use crate::config::FrictionRules;
use crate::types::{SideEffects, Threshold};

/// What the store remembers of one (profile, capability, version, salient params) key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct History {
    /// Explicit approvals in a row (a denial or timeout clears the history).
    pub approvals: u32,
    /// Implicit passes since the last explicit confirmation.
    pub implicit_passes: u32,
    /// When the action was last approved, explicitly or implicitly (ms since the epoch).
    pub last_approved_ms: i64,
}

/// The friction key: (profile, app, capability, version, fingerprint of the salient params).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FrictionKey {
    pub profile: String,
    /// The verified app identity ([`crate::ClientIdentity::app_key`]): one app's approvals never
    /// lower another's prompts.
    pub app: String,
    pub capability: String,
    pub version: u32,
    pub fingerprint: String,
}

/// A change to friction history that commits together with its audit record.
#[derive(Debug, Clone)]
pub enum FrictionUpdate {
    Set(FrictionKey, History),
    Clear(FrictionKey),
}

/// Why the effective threshold is what it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrictionReason {
    /// No history for these parameters: the full threshold.
    FirstOccurrence,
    /// Friction never degrades under this safety level or for this capability class.
    NeverDegrades,
    /// The history is older than the idle period: the full threshold again.
    Idle,
    /// Too many implicit passes: a periodic full re-confirmation.
    Reconfirm,
    /// Not enough identical approvals yet.
    Building { approvals: u32, needed: u32 },
    /// Lowered by history.
    Reduced { approvals: u32 },
}

impl FrictionReason {
    pub fn describe(self) -> String {
        match self {
            FrictionReason::FirstOccurrence => "first occurrence of these parameters".into(),
            FrictionReason::NeverDegrades => "friction never degrades here".into(),
            FrictionReason::Idle => "history expired after the idle period".into(),
            FrictionReason::Reconfirm => "periodic full re-confirmation".into(),
            FrictionReason::Building { approvals, needed } => {
                format!("{approvals} of {needed} identical approvals before friction drops")
            }
            FrictionReason::Reduced { approvals } => {
                format!("lowered after {approvals} identical approvals")
            }
        }
    }
}

/// The threshold after friction. `rules` is `None` under the strict safety level.
///
/// Floors: system actions never degrade; destructive actions never go below visual (only the
/// voice step may drop); multi-step intents never go below visual.
pub fn effective(
    full: Threshold,
    side_effects: SideEffects,
    multi_step: bool,
    history: Option<&History>,
    rules: Option<&FrictionRules>,
    now_ms: i64,
) -> (Threshold, FrictionReason) {
    let floor = if multi_step || side_effects == SideEffects::Destructive {
        Threshold::Visual
    } else {
        Threshold::None
    };
    let Some(rules) = rules else {
        return (full, FrictionReason::NeverDegrades);
    };
    if full == Threshold::None || side_effects == SideEffects::System {
        return (full, FrictionReason::NeverDegrades);
    }
    let Some(history) = history else {
        return (full, FrictionReason::FirstOccurrence);
    };
    let idle_ms = i64::from(rules.idle_reset_hours) * 3_600_000;
    if now_ms.saturating_sub(history.last_approved_ms) > idle_ms {
        return (full, FrictionReason::Idle);
    }
    if history.implicit_passes >= rules.reconfirm_every {
        return (full, FrictionReason::Reconfirm);
    }
    let approvals = history.approvals;
    let lowered = match full {
        Threshold::VoiceVisual if approvals >= rules.voice_drops_after => Threshold::Visual,
        Threshold::Visual if approvals >= rules.implicit_after => Threshold::None,
        other => other,
    };
    let lowered = lowered.max(floor);
    if lowered < full {
        (lowered, FrictionReason::Reduced { approvals })
    } else {
        let needed = match full {
            Threshold::VoiceVisual => rules.voice_drops_after,
            _ => rules.implicit_after,
        };
        if approvals >= needed {
            (full, FrictionReason::NeverDegrades)
        } else {
            (full, FrictionReason::Building { approvals, needed })
        }
    }
}

/// The history after an explicit approval at `now`.
pub fn after_explicit_approval(history: Option<History>, now_ms: i64) -> History {
    let previous = history.unwrap_or_default();
    History {
        approvals: previous.approvals.saturating_add(1),
        implicit_passes: 0,
        last_approved_ms: now_ms,
    }
}

/// The history after an implicit (`confirmed_by_history`) pass at `now`.
pub fn after_implicit_pass(history: History, now_ms: i64) -> History {
    History {
        approvals: history.approvals,
        implicit_passes: history.implicit_passes.saturating_add(1),
        last_approved_ms: now_ms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> FrictionRules {
        FrictionRules {
            voice_drops_after: 3,
            implicit_after: 3,
            reconfirm_every: 4,
            idle_reset_hours: 24,
        }
    }

    fn approved(times: u32, at: i64) -> History {
        let mut h = None;
        for _ in 0..times {
            h = Some(after_explicit_approval(h, at));
        }
        h.unwrap_or_default()
    }

    #[test]
    fn first_occurrence_gets_the_full_threshold() {
        let r = rules();
        for (full, se) in [
            (Threshold::Visual, SideEffects::Write),
            (Threshold::VoiceVisual, SideEffects::Destructive),
        ] {
            let (t, why) = effective(full, se, false, None, Some(&r), 0);
            assert_eq!(t, full);
            assert_eq!(why, FrictionReason::FirstOccurrence);
        }
    }

    #[test]
    fn repeated_identical_visual_degrades_gradually_to_implicit() {
        let r = rules();
        let steps: Vec<Threshold> = (0..=4)
            .map(|n| {
                let h = approved(n, 1000);
                let hist = (n > 0).then_some(&h);
                effective(
                    Threshold::Visual,
                    SideEffects::Write,
                    false,
                    hist,
                    Some(&r),
                    2000,
                )
                .0
            })
            .collect();
        assert_eq!(
            steps,
            [
                Threshold::Visual,
                Threshold::Visual,
                Threshold::Visual,
                Threshold::None,
                Threshold::None
            ]
        );
    }

    #[test]
    fn implicit_passes_are_bounded_by_a_periodic_reconfirmation() {
        let r = rules();
        let mut h = approved(3, 0);
        let mut implicit = 0;
        for _ in 0..10 {
            let (t, _) = effective(
                Threshold::Visual,
                SideEffects::Write,
                false,
                Some(&h),
                Some(&r),
                10,
            );
            if t == Threshold::None {
                implicit += 1;
                h = after_implicit_pass(h, 10);
            } else {
                break;
            }
        }
        assert_eq!(implicit, r.reconfirm_every);
        let (t, why) = effective(
            Threshold::Visual,
            SideEffects::Write,
            false,
            Some(&h),
            Some(&r),
            10,
        );
        assert_eq!((t, why), (Threshold::Visual, FrictionReason::Reconfirm));
        // The re-confirmation restores implicit passes.
        let h = after_explicit_approval(Some(h), 20);
        assert_eq!(
            effective(
                Threshold::Visual,
                SideEffects::Write,
                false,
                Some(&h),
                Some(&r),
                30
            )
            .0,
            Threshold::None
        );
    }

    #[test]
    fn idle_history_gets_the_full_threshold_again() {
        let r = rules();
        let h = approved(5, 0);
        let day_and_a_bit = 24 * 3_600_000 + 1;
        let (t, why) = effective(
            Threshold::Visual,
            SideEffects::Write,
            false,
            Some(&h),
            Some(&r),
            day_and_a_bit,
        );
        assert_eq!((t, why), (Threshold::Visual, FrictionReason::Idle));
        let (t, _) = effective(
            Threshold::Visual,
            SideEffects::Write,
            false,
            Some(&h),
            Some(&r),
            60_000,
        );
        assert_eq!(t, Threshold::None);
    }

    #[test]
    fn destructive_never_degrades_below_visual_but_voice_may_drop() {
        let r = rules();
        for n in [3, 10, 1000] {
            let h = approved(n, 0);
            let (t, _) = effective(
                Threshold::VoiceVisual,
                SideEffects::Destructive,
                false,
                Some(&h),
                Some(&r),
                1,
            );
            assert_eq!(t, Threshold::Visual, "after {n} approvals");
        }
        let h = approved(2, 0);
        let (t, _) = effective(
            Threshold::VoiceVisual,
            SideEffects::Destructive,
            false,
            Some(&h),
            Some(&r),
            1,
        );
        assert_eq!(t, Threshold::VoiceVisual);
    }

    #[test]
    fn system_never_degrades() {
        let r = rules();
        let h = approved(1000, 0);
        let (t, why) = effective(
            Threshold::VoiceVisual,
            SideEffects::System,
            false,
            Some(&h),
            Some(&r),
            1,
        );
        assert_eq!(
            (t, why),
            (Threshold::VoiceVisual, FrictionReason::NeverDegrades)
        );
    }

    #[test]
    fn strict_safety_never_degrades() {
        let h = approved(1000, 0);
        let (t, why) = effective(
            Threshold::Visual,
            SideEffects::Write,
            false,
            Some(&h),
            None,
            1,
        );
        assert_eq!((t, why), (Threshold::Visual, FrictionReason::NeverDegrades));
    }

    #[test]
    fn multi_step_never_degrades_below_visual() {
        let r = rules();
        let h = approved(100, 0);
        let (t, _) = effective(
            Threshold::Visual,
            SideEffects::Write,
            true,
            Some(&h),
            Some(&r),
            1,
        );
        assert_eq!(t, Threshold::Visual);
    }
}

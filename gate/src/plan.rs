//! Choosing modalities: from the threshold after friction, the capability's risk and what the
//! hardware can do now, to the list the user must answer through.

use crate::intent::{Authorizer, Availability, Plan, PlanNote};
use crate::types::{Modality, RiskClass, Threshold};

/// What planning needs to know about the intent.
#[derive(Debug, Clone, Copy)]
pub struct PlanInput {
    pub effective: Threshold,
    pub full: Threshold,
    pub risk: RiskClass,
    /// The manifest allows a haptic double-tap (quick, low-risk).
    pub haptic_eligible: bool,
    pub multi_step: bool,
    pub parent_authorizer: bool,
}

/// The authorizer for an ask: nobody can answer without an output and an input device.
pub fn select_authorizer(available: &Availability, parent: bool) -> Authorizer {
    if parent {
        Authorizer::Parent
    } else if available.visual() {
        Authorizer::LocalUser
    } else {
        Authorizer::Denying
    }
}

/// The plan for an intent whose effective threshold is not `None` (or that has steps).
pub fn plan(input: PlanInput, available: &Availability) -> Plan {
    let authorizer = select_authorizer(available, input.parent_authorizer);
    let mut notes = Vec::new();
    if input.multi_step {
        notes.push(PlanNote::MultiStep);
    }
    if input.full == Threshold::VoiceVisual && input.effective == Threshold::Visual {
        notes.push(PlanNote::VoiceDroppedByHistory);
    }
    if authorizer != Authorizer::LocalUser {
        return Plan {
            authorizer,
            modalities: Vec::new(),
            press_and_hold: false,
            notes,
        };
    }
    let mut press_and_hold = false;
    let modalities = match input.effective.max(if input.multi_step {
        Threshold::Visual
    } else {
        Threshold::None
    }) {
        Threshold::VoiceVisual if available.voice => vec![Modality::Voice, Modality::Visual],
        Threshold::VoiceVisual => {
            notes.push(PlanNote::VoiceUnavailable);
            press_and_hold = true;
            vec![Modality::Visual]
        }
        Threshold::Visual | Threshold::None => {
            let haptic_alone =
                input.haptic_eligible && input.risk.allows_haptic_alone() && !input.multi_step;
            if haptic_alone && available.haptic {
                vec![Modality::Haptic]
            } else {
                if haptic_alone {
                    notes.push(PlanNote::HapticUnavailable);
                }
                vec![Modality::Visual]
            }
        }
    };
    Plan {
        authorizer,
        modalities,
        press_and_hold,
        notes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(effective: Threshold, risk: RiskClass) -> PlanInput {
        PlanInput {
            effective,
            full: effective,
            risk,
            haptic_eligible: false,
            multi_step: false,
            parent_authorizer: false,
        }
    }

    fn all() -> Availability {
        Availability {
            output: true,
            input: true,
            voice: true,
            haptic: true,
        }
    }

    #[test]
    fn voice_plus_visual_asks_both_when_voice_is_available() {
        let p = plan(
            input(Threshold::VoiceVisual, RiskClass::Destructive),
            &all(),
        );
        assert_eq!(p.modalities, [Modality::Voice, Modality::Visual]);
        assert!(!p.press_and_hold);
    }

    #[test]
    fn voice_unavailable_falls_back_to_visual_with_press_and_hold() {
        let a = Availability {
            voice: false,
            ..all()
        };
        let p = plan(input(Threshold::VoiceVisual, RiskClass::System), &a);
        assert_eq!(p.modalities, [Modality::Visual]);
        assert!(p.press_and_hold);
        assert!(p.notes.contains(&PlanNote::VoiceUnavailable));
    }

    #[test]
    fn haptic_alone_for_a_quick_low_risk_action_with_hardware() {
        let mut i = input(Threshold::Visual, RiskClass::Privileged);
        i.haptic_eligible = true;
        assert_eq!(plan(i, &all()).modalities, [Modality::Haptic]);
    }

    #[test]
    fn haptic_without_hardware_falls_back_to_visual() {
        let mut i = input(Threshold::Visual, RiskClass::Privileged);
        i.haptic_eligible = true;
        let a = Availability {
            haptic: false,
            ..all()
        };
        let p = plan(i, &a);
        assert_eq!(p.modalities, [Modality::Visual]);
        assert!(p.notes.contains(&PlanNote::HapticUnavailable));
    }

    #[test]
    fn haptic_is_never_the_sole_modality_for_destructive_or_system() {
        for risk in [RiskClass::Destructive, RiskClass::System] {
            for effective in [Threshold::Visual, Threshold::VoiceVisual] {
                let mut i = input(effective, risk);
                i.haptic_eligible = true;
                let p = plan(i, &all());
                assert!(
                    p.modalities.contains(&Modality::Visual),
                    "{risk:?} {effective:?}"
                );
                assert_ne!(p.modalities, [Modality::Haptic]);
            }
        }
    }

    #[test]
    fn multi_step_is_always_visual() {
        let mut i = input(Threshold::None, RiskClass::Routine);
        i.multi_step = true;
        i.haptic_eligible = true;
        let p = plan(i, &all());
        assert_eq!(p.modalities, [Modality::Visual]);
        assert!(p.notes.contains(&PlanNote::MultiStep));
    }

    #[test]
    fn no_output_or_no_input_selects_the_denying_authorizer() {
        for a in [
            Availability {
                output: false,
                ..all()
            },
            Availability {
                input: false,
                ..all()
            },
        ] {
            let p = plan(input(Threshold::Visual, RiskClass::Privileged), &a);
            assert_eq!(p.authorizer, Authorizer::Denying);
            assert!(p.modalities.is_empty());
        }
    }

    #[test]
    fn a_nested_session_asks_the_parent() {
        let mut i = input(Threshold::Visual, RiskClass::Privileged);
        i.parent_authorizer = true;
        assert_eq!(plan(i, &all()).authorizer, Authorizer::Parent);
    }
}

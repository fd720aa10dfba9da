//! The confirmation threshold: the table of side effects × auth level (none/read → none,
//! write+privileged → visual, destructive and system → voice+visual, …), and how the safety
//! level shifts it.

use crate::types::{AuthLevel, SafetyLevel, SideEffects, Threshold};

/// The table, exactly: none/read → none; write+user → none; write+privileged → visual;
/// destructive → voice+visual; network+user → none; network+privileged → visual; system →
/// voice+visual.
pub fn table(side_effects: SideEffects, auth_level: AuthLevel) -> Threshold {
    match (side_effects, auth_level) {
        (SideEffects::None | SideEffects::Read, _) => Threshold::None,
        (SideEffects::Write, AuthLevel::User) => Threshold::None,
        (SideEffects::Write, AuthLevel::Privileged) => Threshold::Visual,
        (SideEffects::Destructive, _) => Threshold::VoiceVisual,
        (SideEffects::Network, AuthLevel::User) => Threshold::None,
        (SideEffects::Network, AuthLevel::Privileged) => Threshold::Visual,
        (SideEffects::System, _) => Threshold::VoiceVisual,
    }
}

/// The full threshold under a safety level: `strict` raises privileged writes and network calls
/// to voice + visual; `moderate` and `permissive` keep the table (permissive differs in friction).
pub fn threshold(
    side_effects: SideEffects,
    auth_level: AuthLevel,
    level: SafetyLevel,
) -> Threshold {
    let base = table(side_effects, auth_level);
    match (level, side_effects, auth_level) {
        (SafetyLevel::Strict, SideEffects::Write | SideEffects::Network, AuthLevel::Privileged) => {
            Threshold::VoiceVisual
        }
        _ => base,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const AUTH: [AuthLevel; 2] = [AuthLevel::User, AuthLevel::Privileged];

    #[test]
    fn none_and_read_need_no_confirmation_at_any_auth_level() {
        for auth in AUTH {
            assert_eq!(table(SideEffects::None, auth), Threshold::None);
            assert_eq!(table(SideEffects::Read, auth), Threshold::None);
        }
    }

    #[test]
    fn user_write_is_routine() {
        assert_eq!(table(SideEffects::Write, AuthLevel::User), Threshold::None);
    }

    #[test]
    fn privileged_write_needs_a_visual_prompt() {
        assert_eq!(
            table(SideEffects::Write, AuthLevel::Privileged),
            Threshold::Visual
        );
    }

    #[test]
    fn destructive_needs_voice_and_visual_at_any_auth_level() {
        for auth in AUTH {
            assert_eq!(
                table(SideEffects::Destructive, auth),
                Threshold::VoiceVisual
            );
        }
    }

    #[test]
    fn user_network_is_routine() {
        assert_eq!(
            table(SideEffects::Network, AuthLevel::User),
            Threshold::None
        );
    }

    #[test]
    fn privileged_network_needs_a_visual_prompt() {
        assert_eq!(
            table(SideEffects::Network, AuthLevel::Privileged),
            Threshold::Visual
        );
    }

    #[test]
    fn system_needs_voice_and_visual_at_any_auth_level() {
        for auth in AUTH {
            assert_eq!(table(SideEffects::System, auth), Threshold::VoiceVisual);
        }
    }

    #[test]
    fn moderate_and_permissive_are_the_table() {
        let all = [
            SideEffects::None,
            SideEffects::Read,
            SideEffects::Write,
            SideEffects::Destructive,
            SideEffects::Network,
            SideEffects::System,
        ];
        for se in all {
            for auth in AUTH {
                assert_eq!(threshold(se, auth, SafetyLevel::Moderate), table(se, auth));
                assert_eq!(
                    threshold(se, auth, SafetyLevel::Permissive),
                    table(se, auth)
                );
            }
        }
    }

    #[test]
    fn strict_raises_privileged_write_and_network_to_voice_and_visual() {
        for se in [SideEffects::Write, SideEffects::Network] {
            assert_eq!(
                threshold(se, AuthLevel::Privileged, SafetyLevel::Strict),
                Threshold::VoiceVisual
            );
            assert_eq!(
                threshold(se, AuthLevel::User, SafetyLevel::Strict),
                Threshold::None
            );
        }
        assert_eq!(
            threshold(
                SideEffects::Read,
                AuthLevel::Privileged,
                SafetyLevel::Strict
            ),
            Threshold::None
        );
    }
}

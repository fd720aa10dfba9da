//! What replacing a capability's declaration would lower: the registry refuses a user's
//! redeclaration of a system capability that does (`registry`), and the policy comparison orders
//! a changed capability by the same measures and names its class in the same words (`policy`).

use crate::capability::{Capability, ExtraParams};
use crate::threshold;
use crate::types::{SafetyLevel, SideEffects, Threshold};

/// What a redeclaration would lower about a capability, in words (empty: nothing). Thresholds
/// are compared under every safety level.
pub fn capability_lowerings(old: &Capability, new: &Capability) -> Vec<String> {
    let mut out = Vec::new();
    for level in [
        SafetyLevel::Strict,
        SafetyLevel::Moderate,
        SafetyLevel::Permissive,
    ] {
        let (a, b) = (threshold_of(old, level), threshold_of(new, level));
        if b < a {
            out.push(format!(
                "it would need {b} instead of {a} under {} safety",
                level_name(level)
            ));
        }
    }
    if floor_rank(new.side_effects) < floor_rank(old.side_effects) {
        out.push(format!(
            "friction could lower it further than a {} action",
            side_effects_name(old.side_effects)
        ));
    }
    if new.haptic && !old.haptic {
        out.push("a haptic double-tap alone could confirm it".into());
    }
    out.extend(crate::classify::lowerings(
        old.classifier.as_ref(),
        new.classifier.as_ref(),
    ));
    if !salient_covers(&new.salient, &old.salient) {
        out.push(format!(
            "fewer parameters would make two actions the same ({} instead of {})",
            salient_text(&new.salient),
            salient_text(&old.salient)
        ));
    }
    if let Some(added) = new.params.iter().find(|p| !old.params.contains(p)) {
        out.push(format!("clients could send the parameter `{added}`"));
    }
    if new.extra_params == ExtraParams::Show && old.extra_params == ExtraParams::Refuse {
        out.push("clients could send parameters it does not declare".into());
    }
    out
}

pub(crate) fn threshold_of(cap: &Capability, level: SafetyLevel) -> Threshold {
    threshold::threshold(cap.side_effects, cap.auth_level, level)
}

/// How far friction may lower a capability: system never, destructive to visual, others to
/// nothing.
pub(crate) fn floor_rank(side_effects: SideEffects) -> u8 {
    match side_effects {
        SideEffects::System => 2,
        SideEffects::Destructive => 1,
        _ => 0,
    }
}

/// Whether salient set `new` tells at least the actions apart that `old` does (`None`: all
/// parameters).
pub(crate) fn salient_covers(new: &Option<Vec<String>>, old: &Option<Vec<String>>) -> bool {
    match (new, old) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(n), Some(o)) => o.iter().all(|k| n.contains(k)),
    }
}

pub(crate) fn salient_text(salient: &Option<Vec<String>>) -> String {
    match salient {
        None => "*".into(),
        Some(keys) => format!("[{}]", keys.join(", ")),
    }
}

fn level_name(level: SafetyLevel) -> &'static str {
    match level {
        SafetyLevel::Strict => "strict",
        SafetyLevel::Moderate => "moderate",
        SafetyLevel::Permissive => "permissive",
    }
}

fn side_effects_name(s: SideEffects) -> &'static str {
    match s {
        SideEffects::None => "none",
        SideEffects::Read => "read",
        SideEffects::Write => "write",
        SideEffects::Destructive => "destructive",
        SideEffects::Network => "network",
        SideEffects::System => "system",
    }
}

fn auth_name(cap: &Capability) -> &'static str {
    match cap.auth_level {
        crate::types::AuthLevel::User => "user",
        crate::types::AuthLevel::Privileged => "privileged",
    }
}

/// `destructive, user: voice+visual` under the policy's safety level.
pub(crate) fn capability_summary(cap: &Capability, level: SafetyLevel) -> String {
    format!(
        "{}, {}: {}",
        side_effects_name(cap.side_effects),
        auth_name(cap),
        threshold_of(cap, level)
    )
}

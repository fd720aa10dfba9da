//! The host's part of the policy-change prompt: what the plugin's own sections (`[overlay]`,
//! `[speech]`, `[haptics]`) mean for protection, told to the gate as facts and key rules, and the
//! calls through which a host starts with, and reloads, a config file. A policy that lowers
//! protection anywhere — the gate's sections or the host's — is asked about (voice + visual, on
//! the dialog like any prompt) and applies only when the user approves it; until then the policy
//! in force stays, the host's sections included. See `docs/embedding.md`.
//!
//! Values are compared as the sections take effect (defaults filled in), so writing out a
//! default changes nothing. A key with an order below becomes a [`ProtectionFact`] whose rank
//! orders it; a key named by an unrelated rule applies at once; any other key of these sections
//! lowers protection when it changes (the gate's rule for keys it cannot order).

use pcp_gate::{GateConfig, IntentId, KeyRule, Order, ProtectionFact, StartPolicy};
use serde::Serialize;

use crate::config::PluginConfig;
use crate::{Command, PcpHandler};

/// How the values of one key of a host section order protection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rank {
    /// A larger number is more protection (a longer guard).
    LargerRaises,
    /// A larger number is less protection (a longer listening window).
    LargerLowers,
    /// `true` is more protection (voice on).
    TrueRaises,
    /// `true` is less protection (a haptic double tap alone may confirm).
    TrueLowers,
    /// A list whose members each add protection (risks that need press-and-hold).
    MembersRaise,
    /// Any change lowers protection (a device, a model, a wording).
    AnyChangeLowers,
}

/// `[overlay]` keys that order protection.
pub const OVERLAY_FACTS: &[(&str, Rank)] = &[
    ("guard_delay_ms", Rank::LargerRaises),
    ("guard_early_press_extension_ms", Rank::LargerRaises),
    ("guard_max_extension_ms", Rank::LargerRaises),
    ("hold_to_approve_ms", Rank::LargerRaises),
    ("hold_risks", Rank::MembersRaise),
    ("max_width", Rank::LargerRaises),
    ("font_size", Rank::LargerRaises),
    ("max_action_lines", Rank::LargerRaises),
    ("max_target_lines", Rank::LargerRaises),
    ("max_steps", Rank::LargerRaises),
    ("theme", Rank::AnyChangeLowers),
    ("system_fonts", Rank::AnyChangeLowers),
];

/// `[overlay]` keys that have nothing to do with protection.
pub const OVERLAY_UNRELATED: &[&str] = &["margin", "min_target", "large_output_width"];

/// `[speech]` keys that order protection. `enabled = false` is "voice turned off".
pub const SPEECH_FACTS: &[(&str, Rank)] = &[
    ("enabled", Rank::TrueRaises),
    ("language", Rank::AnyChangeLowers),
    ("model", Rank::AnyChangeLowers),
    ("phrases_dir", Rank::AnyChangeLowers),
    ("input_device", Rank::AnyChangeLowers),
    ("output_device", Rank::AnyChangeLowers),
    ("timeout_ms", Rank::LargerLowers),
    ("stable_partial_ms", Rank::LargerRaises),
    ("quiet_dbfs", Rank::AnyChangeLowers),
    ("quiet_final_ms", Rank::AnyChangeLowers),
    ("speak_prompt", Rank::TrueRaises),
    ("question_template", Rank::AnyChangeLowers),
    // The question itself says "yes": a shorter pause could let the listener hear it.
    ("after_prompt_ms", Rank::LargerRaises),
    // Each risk class listed needs its challenge word in a spoken approval.
    ("challenge", Rank::MembersRaise),
    // Read aloud, the word can be repeated by whatever hears the question.
    ("speak_challenge", Rank::TrueLowers),
    // A wider margin over every rival reading is a surer approval.
    ("approve_margin", Rank::LargerRaises),
];

/// `[speech]` keys that have nothing to do with protection (capture format, tuning, the
/// speaking voice).
pub const SPEECH_UNRELATED: &[&str] = &[
    "capture_rate",
    "capture_channels",
    "decoder_phases",
    "parallel_phases",
    "block_ms",
    "queue_blocks",
    "capture_buffer_ms",
    "capture_reopen",
    "load_at_start",
    "level_interval_ms",
    "voice",
    "speech_rate_wpm",
    "pitch",
    // The missed-answer cue only tells the user to repeat; the dialog says so either way.
    "missed_earcon",
    "earcon_hz",
    "earcon_ms",
];

/// `[haptics]` keys that order protection. `enabled = true` lets a double tap alone confirm
/// the capabilities that allow it.
pub const HAPTICS_FACTS: &[(&str, Rank)] = &[
    ("enabled", Rank::TrueLowers),
    ("device", Rank::AnyChangeLowers),
    ("touch_device", Rank::AnyChangeLowers),
    ("tap.max_interval_ms", Rank::LargerLowers),
    ("tap.min_interval_ms", Rank::LargerRaises),
    ("tap.max_tap_ms", Rank::LargerLowers),
    ("tap.max_movement_mm", Rank::LargerLowers),
    ("tap.max_distance_mm", Rank::LargerLowers),
    ("tap.arm_delay_ms", Rank::LargerRaises),
    ("tap.fallback_units_per_mm", Rank::AnyChangeLowers),
];

/// `[haptics]` keys that have nothing to do with protection (how strong the cue is).
pub const HAPTICS_UNRELATED: &[&str] = &["gain", "cue.*"];

/// The facts of one host section: for each key of `keys` (dotted below `section`), its value as
/// `effective` has it (defaults filled in), ranked by its order. The fact's name is the key's
/// full dotted name, so the gate compares the key through the fact only.
pub fn section_facts<T: Serialize>(
    section: &str,
    effective: &T,
    keys: &[(&str, Rank)],
) -> Vec<ProtectionFact> {
    let table = match toml::Value::try_from(effective) {
        Ok(toml::Value::Table(t)) => t,
        Ok(_) | Err(_) => {
            // Then the keys are compared as written, where any change lowers protection.
            tracing::error!("[{section}] cannot be turned into facts");
            return Vec::new();
        }
    };
    keys.iter()
        .filter_map(|(key, rank)| {
            let value = lookup(&table, key)?;
            let rank = rank_of(value, *rank)?;
            Some(ProtectionFact::new(
                &format!("{section}.{key}"),
                &value_text(value),
                rank,
            ))
        })
        .collect()
}

/// Rules that call `keys` of `section` unrelated to protection: their changes apply at once.
pub fn unrelated_rules(section: &str, keys: &[&str]) -> Vec<KeyRule> {
    keys.iter()
        .map(|k| KeyRule::new(&format!("{section}.{k}"), Order::Unrelated))
        .collect()
}

/// The facts of the plugin's sections as `config` has them.
pub fn plugin_facts(config: &PluginConfig) -> Vec<ProtectionFact> {
    let mut facts = section_facts("overlay", &config.overlay, OVERLAY_FACTS);
    facts.extend(section_facts("speech", &config.speech, SPEECH_FACTS));
    facts.extend(section_facts("haptics", &config.haptics, HAPTICS_FACTS));
    facts
}

/// The rules of the plugin's sections (a host adds its own sections' rules).
pub fn plugin_rules() -> Vec<KeyRule> {
    let mut rules = unrelated_rules("overlay", OVERLAY_UNRELATED);
    rules.extend(unrelated_rules("speech", SPEECH_UNRELATED));
    rules.extend(unrelated_rules("haptics", HAPTICS_UNRELATED));
    rules
}

fn lookup<'a>(table: &'a toml::Table, dotted: &str) -> Option<&'a toml::Value> {
    let mut parts = dotted.split('.');
    let mut value = table.get(parts.next()?)?;
    for part in parts {
        value = value.as_table()?.get(part)?;
    }
    Some(value)
}

fn value_text(value: &toml::Value) -> String {
    match value {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Numbers rank in thousandths, so that fractional millimetres and decibels order too.
fn rank_of(value: &toml::Value, rank: Rank) -> Option<i64> {
    let number = match value {
        toml::Value::Integer(i) => Some(*i as f64),
        toml::Value::Float(f) => Some(*f),
        _ => None,
    };
    let milli = |n: f64| (n * 1000.0).round() as i64;
    match rank {
        Rank::LargerRaises => number.map(milli),
        Rank::LargerLowers => number.map(|n| -milli(n)),
        Rank::TrueRaises => value.as_bool().map(i64::from),
        Rank::TrueLowers => value.as_bool().map(|b| i64::from(!b)),
        // Members added raise; the same count with other members is a change of equal rank,
        // which the gate counts as lowering.
        Rank::MembersRaise => value.as_array().map(|a| a.len() as i64),
        Rank::AnyChangeLowers => Some(0),
    }
}

/// What became of a proposed policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Proposal {
    /// Nothing in it lowers protection: it is in force now ([`Effect::PolicySettled`](crate::Effect::PolicySettled) says
    /// `applied`).
    Applied,
    /// It lowers protection: the policy-change prompt `IntentId` waits for the user; the policy
    /// in force stays until then.
    Asking(IntentId),
    /// Nobody can answer the prompt now (no output or input device); the policy in force stays,
    /// and the proposal is made again when what can answer changes.
    Deferred(String),
}

/// Proposes the policy in the files at a start, as [`pcp_gate::Gate::start`] found it: call it
/// once the host's outputs and input devices are known (after the first [`crate::refresh`]).
/// `None` when the files are the policy in force.
pub fn start<D: PcpHandler>(state: &mut D, found: StartPolicy) -> Option<Proposal> {
    match found {
        StartPolicy::InForce => None,
        StartPolicy::Changed(config, facts) => propose(state, *config, facts),
    }
}

/// Proposes `config` with the host's `facts` (a changed config file) in place of the policy in
/// force: see [`Proposal`]. A proposal replaces any that waits. `None` when called while the
/// plugin drains effects: the proposal then runs once the drain is done.
pub fn propose<D: PcpHandler>(
    state: &mut D,
    config: GateConfig,
    facts: Vec<ProtectionFact>,
) -> Option<Proposal> {
    let nested = state.pcp().draining;
    let config = Box::new(config);
    crate::run(state, Command::ProposePolicy { config, facts });
    if nested {
        return None;
    }
    state.pcp().engine.take_proposal()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fact<'a>(facts: &'a [ProtectionFact], name: &str) -> &'a ProtectionFact {
        facts
            .iter()
            .find(|f| f.name == name)
            .unwrap_or_else(|| panic!("no fact {name}: {facts:?}"))
    }

    #[test]
    fn facts_rank_the_effective_values_by_their_order() {
        let mut overlay = pcp_overlay::Config::default();
        let speech = pcp_speech::Config::default();
        let haptics = pcp_haptics::Config::default();
        let before = section_facts("overlay", &overlay, OVERLAY_FACTS);
        overlay.guard_delay_ms = 100;
        let after = section_facts("overlay", &overlay, OVERLAY_FACTS);
        let (a, b) = (
            fact(&before, "overlay.guard_delay_ms"),
            fact(&after, "overlay.guard_delay_ms"),
        );
        assert!(b.rank < a.rank, "a shorter guard is less protection");
        assert_eq!(b.value, "100");

        let on = section_facts("speech", &speech, SPEECH_FACTS);
        let off = section_facts(
            "speech",
            &pcp_speech::Config {
                enabled: false,
                ..speech.clone()
            },
            SPEECH_FACTS,
        );
        assert!(fact(&off, "speech.enabled").rank < fact(&on, "speech.enabled").rank);
        let longer = section_facts(
            "speech",
            &pcp_speech::Config {
                timeout_ms: speech.timeout_ms * 2,
                ..speech
            },
            SPEECH_FACTS,
        );
        assert!(fact(&longer, "speech.timeout_ms").rank < fact(&on, "speech.timeout_ms").rank);

        let facts = section_facts("haptics", &haptics, HAPTICS_FACTS);
        assert_eq!(facts.len(), HAPTICS_FACTS.len(), "every key is found");
        assert_eq!(fact(&facts, "haptics.enabled").rank, 0, "haptics on");
    }

    #[test]
    fn unrelated_rules_name_the_full_key() {
        let rules = plugin_rules();
        assert!(
            rules
                .iter()
                .any(|r| r.pattern == "haptics.cue.*" && r.order == Order::Unrelated)
        );
    }
}

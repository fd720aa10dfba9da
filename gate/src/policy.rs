//! Comparing two policies: every change between the policy in force and a newly loaded one, and
//! whether it lowers or raises protection. A change is a raise only when the comparison knows it
//! is one; anything it cannot order (an unknown key, a changed prompt wording, a value of another
//! type) counts as lowering, so it is asked about rather than applied.
//!
//! Directions, as documented in `assets/config/gate.toml`:
//! - a capability's threshold (under any safety level), its friction floor (destructive, system),
//!   `haptic = true`, fewer salient parameters, more declared parameters, `extra_params =
//!   "show"`, a new capability (it was unknown, so denied) and a changed description or target
//!   (what the prompt says) lower protection; a removed capability, a new version (its history
//!   resets) and the opposites raise it;
//! - `[safety] level` orders permissive < moderate < strict;
//! - longer timeouts lower protection (a prompt stays answerable longer; a timeout is a denial);
//! - `voice_drops_after` and `implicit_after` raise it as they grow; `reconfirm_every` and
//!   `idle_reset_hours` lower it as they grow;
//! - larger queues (more prompts, more refusals before a disconnect, more intents decided per
//!   round; a longer `disconnect_window_seconds` raises it), longer token expiry, larger group commits and writer queues,
//!   `redact_params = true`, a parent authorizer, another state file or profile, a new manifest
//!   folder and any change to the prompt's own wording lower it; `full_params = true` and a
//!   larger `params_excerpt_bytes` (more of the parameters in the audit log) raise it;
//! - a new deny rule raises protection, a removed one lowers it (a changed one is both);
//!   `[gate] session_approvals = true` lowers it;
//! - facts the host feeds in (e.g. whether voice is on) are ordered by their rank.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::capability::{Capability, ExtraParams};
pub use crate::config::gate_rules;
use crate::config::{GateConfig, PolicyChangeConfig};
pub use crate::fact::ProtectionFact;
pub use crate::key_rule::{KeyRule, Order};
use crate::lowering::{capability_summary, floor_rank, salient_covers, salient_text, threshold_of};
use crate::registry::Registry;
use crate::sources::PolicySources;
use crate::types::SafetyLevel;

/// Whether a change makes the gate ask less (lowers) or more (raises), or, by the host's rule,
/// has nothing to do with protection (neutral: a colour, a capture interval).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Lowers,
    Raises,
    Neutral,
}

/// One difference between two policies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyChange {
    /// What changes: `[timeouts] voice_seconds`, `capability file.delete`, a fact's name.
    pub subject: String,
    /// The value in force (`None`: it is new).
    pub old: Option<String>,
    /// The value proposed (`None`: it is removed).
    pub new: Option<String>,
    pub direction: Direction,
}

impl PolicyChange {
    /// The change as one line of the policy-change prompt, in the configured wording.
    pub fn line(&self, wording: &PolicyChangeConfig) -> String {
        let direction = match self.direction {
            Direction::Lowers => &wording.lowers,
            Direction::Raises => &wording.raises,
            Direction::Neutral => &wording.neutral,
        };
        let template = match (&self.old, &self.new) {
            (None, _) => &wording.added,
            (_, None) => &wording.removed,
            _ => &wording.changed,
        };
        fill(
            template,
            &[
                ("direction", direction),
                ("subject", &self.subject),
                ("old", self.old.as_deref().unwrap_or("")),
                ("new", self.new.as_deref().unwrap_or("")),
            ],
        )
    }
}

/// A policy to compare: the gate's config and the host's facts.
#[derive(Debug, Clone, Copy)]
pub struct PolicyView<'a> {
    pub config: &'a GateConfig,
    pub facts: &'a [ProtectionFact],
}

/// The digest of a policy: its sources and the host's facts.
pub fn policy_digest(sources: &PolicySources, facts: &[ProtectionFact]) -> String {
    let text = serde_json::to_string(&(sources, facts)).unwrap_or_default();
    crate::capability::lower_hex(&Sha256::digest(text.as_bytes()))
}

/// Every change from `old` to `new`: settings (ordered by `host_rules`, then the gate's own),
/// capabilities, manifest folders and facts.
pub fn compare(
    old: PolicyView<'_>,
    new: PolicyView<'_>,
    host_rules: &[KeyRule],
) -> Vec<PolicyChange> {
    let mut changes = Vec::new();
    let gate = gate_rules();
    let rules: Vec<&KeyRule> = host_rules.iter().chain(gate.iter()).collect();
    let fact_names: BTreeSet<&str> = old
        .facts
        .iter()
        .chain(new.facts)
        .map(|f| f.name.as_str())
        .collect();
    let old_keys = flatten(&old.config.file);
    let new_keys = flatten(&new.config.file);
    let keys: BTreeSet<&String> = old_keys.keys().chain(new_keys.keys()).collect();
    for key in keys {
        if fact_names.contains(key.as_str()) {
            continue;
        }
        let (a, b) = (old_keys.get(key), new_keys.get(key));
        if a == b {
            continue;
        }
        let order = rules
            .iter()
            .find(|r| r.matches(key))
            .map_or(&Order::AnyChangeLowers, |r| &r.order);
        setting_changes(key, a, b, order, &mut changes);
    }
    let levels = (old.config.file.safety.level, new.config.file.safety.level);
    capability_changes(
        &old.config.registry,
        &new.config.registry,
        levels,
        &mut changes,
    );
    rule_changes(&old.config.registry, &new.config.registry, &mut changes);
    fact_changes(old.facts, new.facts, &mut changes);
    changes
}

/// Whether any change lowers protection.
pub fn lowers(changes: &[PolicyChange]) -> bool {
    changes.iter().any(|c| c.direction == Direction::Lowers)
}

fn capability_changes(
    old: &Registry,
    new: &Registry,
    (old_level, new_level): (SafetyLevel, SafetyLevel),
    out: &mut Vec<PolicyChange>,
) {
    let names: BTreeSet<&String> = old
        .iter()
        .map(|c| &c.name)
        .chain(new.iter().map(|c| &c.name))
        .collect();
    for name in names {
        let subject = format!("capability {name}");
        match (old.get(name), new.get(name)) {
            (None, Some(b)) => {
                // It was unknown, so denied: any threshold is less than a denial.
                out.push(PolicyChange {
                    subject,
                    old: None,
                    new: Some(capability_summary(b, new_level)),
                    direction: Direction::Lowers,
                });
            }
            (Some(a), None) => {
                out.push(PolicyChange {
                    subject,
                    old: Some(capability_summary(a, old_level)),
                    new: None,
                    direction: Direction::Raises,
                });
            }
            (Some(a), Some(b)) => {
                // Every aspect the gate enforces is compared by these two; a new manifest key
                // that changes protection gets its own aspect.
                confirmation_changes(&subject, (a, b), (old_level, new_level), out);
                declaration_changes(&subject, (a, b), out);
            }
            (None, None) => {}
        }
    }
}

/// One aspect of a capability that changed (`""`: its class).
fn aspect_change(
    subject: &str,
    aspect: &str,
    (old, new): (String, String),
    direction: Direction,
) -> PolicyChange {
    PolicyChange {
        subject: if aspect.is_empty() {
            subject.to_string()
        } else {
            format!("{subject} {aspect}")
        },
        old: Some(old),
        new: Some(new),
        direction,
    }
}

/// How a redeclared capability is confirmed: its class (the threshold under every safety level
/// and the friction floor), whether a haptic tap alone may confirm it, and which parameters make
/// two actions the same.
fn confirmation_changes(
    subject: &str,
    (a, b): (&Capability, &Capability),
    (old_level, new_level): (SafetyLevel, SafetyLevel),
    out: &mut Vec<PolicyChange>,
) {
    if (a.side_effects, a.auth_level) != (b.side_effects, b.auth_level) {
        let levels = [
            SafetyLevel::Strict,
            SafetyLevel::Moderate,
            SafetyLevel::Permissive,
        ];
        let lower = levels
            .iter()
            .any(|&l| threshold_of(b, l) < threshold_of(a, l))
            || floor_rank(b.side_effects) < floor_rank(a.side_effects);
        let higher = levels
            .iter()
            .any(|&l| threshold_of(b, l) > threshold_of(a, l))
            || floor_rank(b.side_effects) > floor_rank(a.side_effects);
        let direction = if higher && !lower {
            Direction::Raises
        } else {
            Direction::Lowers
        };
        let summaries = (
            capability_summary(a, old_level),
            capability_summary(b, new_level),
        );
        out.push(aspect_change(subject, "", summaries, direction));
    }
    if a.haptic != b.haptic {
        let direction = if b.haptic {
            Direction::Lowers
        } else {
            Direction::Raises
        };
        let values = (a.haptic.to_string(), b.haptic.to_string());
        out.push(aspect_change(subject, "haptic", values, direction));
    }
    if a.salient != b.salient {
        let direction = if salient_covers(&b.salient, &a.salient) {
            Direction::Raises
        } else {
            Direction::Lowers
        };
        let values = (salient_text(&a.salient), salient_text(&b.salient));
        out.push(aspect_change(subject, "salient", values, direction));
    }
}

/// What a redeclared capability's prompt says and what clients may send it, and its version.
fn declaration_changes(
    subject: &str,
    (a, b): (&Capability, &Capability),
    out: &mut Vec<PolicyChange>,
) {
    if a.description != b.description {
        let values = (a.description.to_string(), b.description.to_string());
        out.push(aspect_change(
            subject,
            "description",
            values,
            Direction::Lowers,
        ));
    }
    if a.target != b.target {
        let text = |t: &Option<crate::capability::Template>| {
            t.as_ref().map_or_else(String::new, ToString::to_string)
        };
        let values = (text(&a.target), text(&b.target));
        out.push(aspect_change(subject, "target", values, Direction::Lowers));
    }
    if a.params != b.params {
        let direction = if b.params.iter().all(|p| a.params.contains(p)) {
            Direction::Raises
        } else {
            Direction::Lowers
        };
        let values = (
            format!("[{}]", a.params.join(", ")),
            format!("[{}]", b.params.join(", ")),
        );
        out.push(aspect_change(subject, "params", values, direction));
    }
    if a.extra_params != b.extra_params {
        let direction = match b.extra_params {
            ExtraParams::Show => Direction::Lowers,
            ExtraParams::Refuse => Direction::Raises,
        };
        let values = (
            a.extra_params.as_str().to_string(),
            b.extra_params.as_str().to_string(),
        );
        out.push(aspect_change(subject, "extra_params", values, direction));
    }
    if a.version != b.version {
        // A new version resets the capability's friction history.
        let values = (a.version.to_string(), b.version.to_string());
        out.push(aspect_change(subject, "version", values, Direction::Raises));
    }
}

/// Deny rules only add protection: a new one raises it, a removed one lowers it, and a changed
/// one is both (its old form removed, its new form added).
fn rule_changes(old: &Registry, new: &Registry, out: &mut Vec<PolicyChange>) {
    let summaries = |r: &Registry| -> BTreeSet<(String, String)> {
        r.rules()
            .map(|rule| (rule.name.clone(), rule.summary()))
            .collect()
    };
    let (a, b) = (summaries(old), summaries(new));
    for (name, summary) in a.difference(&b) {
        out.push(PolicyChange {
            subject: format!("rule {name}"),
            old: Some(summary.clone()),
            new: None,
            direction: Direction::Lowers,
        });
    }
    for (name, summary) in b.difference(&a) {
        out.push(PolicyChange {
            subject: format!("rule {name}"),
            old: None,
            new: Some(summary.clone()),
            direction: Direction::Raises,
        });
    }
}

fn fact_changes(old: &[ProtectionFact], new: &[ProtectionFact], out: &mut Vec<PolicyChange>) {
    let find = |facts: &'_ [ProtectionFact], name: &str| -> Option<ProtectionFact> {
        facts.iter().find(|f| f.name == name).cloned()
    };
    let names: BTreeSet<&str> = old.iter().chain(new).map(|f| f.name.as_str()).collect();
    for name in names {
        let (a, b) = (find(old, name), find(new, name));
        let direction = match (&a, &b) {
            (Some(a), Some(b)) if a == b => continue,
            _ if a.iter().chain(&b).any(|f| f.unrelated) => Direction::Neutral,
            (Some(a), Some(b)) if b.rank > a.rank => Direction::Raises,
            // A fact with nothing to compare it with (a key new to the host) is not known to
            // raise anything.
            _ => Direction::Lowers,
        };
        out.push(PolicyChange {
            subject: name.to_string(),
            old: a.map(|f| f.value),
            new: b.map(|f| f.value),
            direction,
        });
    }
}

/// The config's effective settings as `dotted.key → value` (tables flattened, lists kept
/// whole).
fn flatten(file: &crate::config::ConfigFile) -> BTreeMap<String, toml::Value> {
    let mut out = BTreeMap::new();
    match toml::Value::try_from(file) {
        Ok(toml::Value::Table(table)) => flatten_into("", &table, &mut out),
        Ok(_) => {}
        Err(e) => {
            // Cannot happen for the config's own types; if it did, the key below differs from
            // any other policy's and the change is asked about.
            tracing::error!("the config cannot be compared: {e}");
            out.insert("(unreadable)".into(), toml::Value::String(e.to_string()));
        }
    }
    out
}

fn flatten_into(prefix: &str, table: &toml::Table, out: &mut BTreeMap<String, toml::Value>) {
    for (key, value) in table {
        let path = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        match value {
            toml::Value::Table(t) => flatten_into(&path, t, out),
            other => {
                out.insert(path, other.clone());
            }
        }
    }
}

/// `[section] key` for `section.key` (`[friction.moderate] implicit_after`).
fn key_subject(key: &str) -> String {
    match key.rsplit_once('.') {
        Some((section, name)) => format!("[{section}] {name}"),
        None => key.to_string(),
    }
}

fn value_text(value: &toml::Value) -> String {
    match value {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn setting_changes(
    key: &str,
    old: Option<&toml::Value>,
    new: Option<&toml::Value>,
    order: &Order,
    out: &mut Vec<PolicyChange>,
) {
    use toml::Value as V;
    let subject = key_subject(key);
    if let Order::MembersRaise | Order::MembersLower = order {
        let members = |v: Option<&V>| -> Vec<V> {
            match v {
                Some(V::Array(items)) => items.clone(),
                Some(other) => vec![other.clone()],
                None => Vec::new(),
            }
        };
        let (a, b) = (members(old), members(new));
        let adding_raises = *order == Order::MembersRaise;
        for added in b.iter().filter(|m| !a.contains(m)) {
            out.push(PolicyChange {
                subject: subject.clone(),
                old: None,
                new: Some(value_text(added)),
                direction: if adding_raises {
                    Direction::Raises
                } else {
                    Direction::Lowers
                },
            });
        }
        for removed in a.iter().filter(|m| !b.contains(m)) {
            out.push(PolicyChange {
                subject: subject.clone(),
                old: Some(value_text(removed)),
                new: None,
                direction: if adding_raises {
                    Direction::Lowers
                } else {
                    Direction::Raises
                },
            });
        }
        if a.len() == b.len() && a.iter().all(|m| b.contains(m)) && a != b {
            // Only the order changed: folders read in another order can shadow each other.
            out.push(PolicyChange {
                subject,
                old: old.map(value_text),
                new: new.map(value_text),
                direction: Direction::Lowers,
            });
        }
        return;
    }
    let number = |v: Option<&V>| match v {
        Some(V::Integer(i)) => Some(*i as f64),
        Some(V::Float(f)) => Some(*f),
        _ => None,
    };
    let raises = match order {
        Order::LargerRaises | Order::LargerLowers => match (number(old), number(new)) {
            (Some(a), Some(b)) => {
                let larger = b > a;
                larger == (*order == Order::LargerRaises)
            }
            _ => false,
        },
        Order::TrueRaises | Order::TrueLowers => match (old, new) {
            (Some(V::Boolean(_)), Some(V::Boolean(b))) => *b == (*order == Order::TrueRaises),
            _ => false,
        },
        Order::Ranked(ranks) => {
            let rank = |v: Option<&V>| match v {
                Some(V::String(s)) => ranks.iter().position(|r| r == s),
                _ => None,
            };
            matches!((rank(old), rank(new)), (Some(a), Some(b)) if b > a)
        }
        _ => false,
    };
    out.push(PolicyChange {
        subject,
        old: old.map(value_text),
        new: new.map(value_text),
        direction: if *order == Order::Unrelated {
            Direction::Neutral
        } else if raises {
            Direction::Raises
        } else {
            Direction::Lowers
        },
    });
}

/// Fills `{name}` holes of a wording template (checked at load) with `values`.
fn fill(template: &str, values: &[(&str, &str)]) -> String {
    match crate::capability::Template::parse(template) {
        Ok(t) => {
            let params: serde_json::Map<String, serde_json::Value> = values
                .iter()
                .map(|(k, v)| (k.to_string(), serde_json::Value::String(v.to_string())))
                .collect();
            t.render(&serde_json::Value::Object(params))
        }
        Err(_) => template.to_string(),
    }
}

/// The lines the policy-change prompt shows: those that lower protection first, then the
/// unrelated ones, then the raises; beyond `[policy_change] max_lines`, the last line counts the
/// rest in the `more` wording.
pub fn prompt_lines(changes: &[PolicyChange], wording: &PolicyChangeConfig) -> Vec<String> {
    let mut ordered: Vec<&PolicyChange> = changes.iter().collect();
    ordered.sort_by_key(|c| match c.direction {
        Direction::Lowers => 0,
        Direction::Neutral => 1,
        Direction::Raises => 2,
    });
    let max = (wording.max_lines as usize).max(1);
    if ordered.len() <= max {
        return ordered.iter().map(|c| c.line(wording)).collect();
    }
    let (listed, rest) = ordered.split_at(max - 1);
    let mut lines: Vec<String> = listed.iter().map(|c| c.line(wording)).collect();
    let lowers = rest
        .iter()
        .filter(|c| c.direction == Direction::Lowers)
        .count();
    lines.push(fill(
        &wording.more,
        &[
            ("count", &rest.len().to_string()),
            ("lowers", &lowers.to_string()),
        ],
    ));
    lines
}

/// The description line of the policy-change prompt for `config` (a file's path).
pub fn description(wording: &PolicyChangeConfig, config: &str) -> String {
    fill(&wording.description, &[("config", config)])
}

#[cfg(test)]
mod tests;

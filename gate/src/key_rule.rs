//! How a config key's values order protection: the rule a policy comparison looks up for each
//! changed key. The gate's config declares the rules for its own keys beside their types
//! (`config::gate_rules`) and the policy comparison applies them (`policy`), so the rule lives
//! below both.

/// How the values of one config key order protection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Order {
    /// A larger number is more protection.
    LargerRaises,
    /// A larger number is less protection.
    LargerLowers,
    /// `true` is more protection.
    TrueRaises,
    /// `true` is less protection.
    TrueLowers,
    /// Strings from least to most protection.
    Ranked(Vec<String>),
    /// A list whose members each add protection (deny rules): a member added raises, one
    /// removed lowers.
    MembersRaise,
    /// A list whose members each add trust (manifest folders): a member added lowers.
    MembersLower,
    /// Any change lowers (wording, paths, profiles).
    AnyChangeLowers,
    /// The key has nothing to do with protection: its changes apply at once. For a host's own
    /// keys only, and only those that cannot mislead a user (not the dialog's wording or its risk
    /// colours).
    Unrelated,
}

/// The order of the keys that match `pattern`: dotted, `*` standing for one segment
/// (`friction.*.implicit_after`, `timeouts.*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRule {
    pub pattern: String,
    pub order: Order,
}

impl KeyRule {
    pub fn new(pattern: &str, order: Order) -> KeyRule {
        KeyRule {
            pattern: pattern.to_string(),
            order,
        }
    }

    pub(crate) fn matches(&self, key: &str) -> bool {
        let mut pattern = self.pattern.split('.');
        let mut key = key.split('.');
        loop {
            match (pattern.next(), key.next()) {
                (None, None) => return true,
                (Some(p), Some(k)) if p == "*" || p == k => {}
                _ => return false,
            }
        }
    }
}

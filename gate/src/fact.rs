//! What a host tells the gate about its own config sections: one fact per key, its value and how
//! it orders protection, so the gate compares two policies' host sections without knowing them.

use serde::{Deserialize, Serialize};

/// A fact about protection that the host knows from its own config sections (e.g.
/// `speech.enabled` = `on`, rank 1; `off`, rank 0): a lower rank is less protection. A key of
/// the config named by a fact is compared through the fact only. An `unrelated` fact (a colour,
/// a capture interval) has nothing to do with protection: its changes are listed as neutral and
/// apply at once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProtectionFact {
    pub name: String,
    /// What the prompt shows for it.
    pub value: String,
    pub rank: i64,
    /// Left out of the stored form when false, so that policies approved before it existed keep
    /// their digest.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unrelated: bool,
}

impl ProtectionFact {
    /// A key's value ordered by `rank`.
    pub fn new(name: &str, value: &str, rank: i64) -> ProtectionFact {
        ProtectionFact {
            name: name.to_string(),
            value: value.to_string(),
            rank,
            unrelated: false,
        }
    }

    /// A key's value that has nothing to do with protection.
    pub fn unrelated(name: &str, value: &str) -> ProtectionFact {
        ProtectionFact {
            unrelated: true,
            ..ProtectionFact::new(name, value, 0)
        }
    }
}

//! The plain types that cross crate boundaries: what a capability does, how much confirmation it
//! needs, how much friction the user wants, the modalities that can give it, and how a decision
//! was reached.

use std::fmt;

use serde::{Deserialize, Serialize};

/// What running a capability does to the world (a capability manifest's `side_effects`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SideEffects {
    None,
    Read,
    Write,
    Destructive,
    Network,
    System,
}

/// Who may run a capability without asking (a capability manifest's `auth_level`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AuthLevel {
    User,
    Privileged,
}

/// How much confirmation an intent needs, from nothing to both voice and the overlay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Threshold {
    #[serde(rename = "none")]
    None,
    #[serde(rename = "visual")]
    Visual,
    #[serde(rename = "voice+visual")]
    VoiceVisual,
}

impl Threshold {
    pub fn as_str(self) -> &'static str {
        match self {
            Threshold::None => "none",
            Threshold::Visual => "visual",
            Threshold::VoiceVisual => "voice+visual",
        }
    }
}

impl fmt::Display for Threshold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How much friction the user wants (`strict`, `moderate` or `permissive`): the config's
/// `[safety] level`, which the threshold table and the classifier read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SafetyLevel {
    /// Privileged writes and network calls need voice + visual; friction never degrades.
    Strict,
    /// The threshold table exactly.
    #[default]
    Moderate,
    /// Friction degrades sooner; the floors (destructive ≥ visual, system never) are unchanged.
    Permissive,
}

/// A way the user can answer a prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Modality {
    Voice,
    Visual,
    Haptic,
}

impl Modality {
    pub fn as_str(self) -> &'static str {
        match self {
            Modality::Voice => "voice",
            Modality::Visual => "visual",
            Modality::Haptic => "haptic",
        }
    }
}

impl fmt::Display for Modality {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The risk class shown to the user (wording and colour on the overlay).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RiskClass {
    Routine,
    Privileged,
    Destructive,
    System,
}

impl RiskClass {
    /// The risk class of a capability: destructive and system outrank the auth level.
    pub fn of(side_effects: SideEffects, auth_level: AuthLevel) -> RiskClass {
        match (side_effects, auth_level) {
            (SideEffects::Destructive, _) => RiskClass::Destructive,
            (SideEffects::System, _) => RiskClass::System,
            (_, AuthLevel::Privileged) => RiskClass::Privileged,
            (_, AuthLevel::User) => RiskClass::Routine,
        }
    }

    /// Whether a haptic double-tap may ever be the only answer (never for destructive or system actions).
    pub fn allows_haptic_alone(self) -> bool {
        !matches!(self, RiskClass::Destructive | RiskClass::System)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            RiskClass::Routine => "routine",
            RiskClass::Privileged => "privileged",
            RiskClass::Destructive => "destructive",
            RiskClass::System => "system",
        }
    }
}

/// A user's answer through one modality.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Answer {
    Approve,
    Deny,
}

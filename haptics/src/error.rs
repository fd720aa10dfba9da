//! The crate's error types: config problems (naming file and key), device failures, refusals of
//! the boundary rule, and unavailability (which callers answer by falling back to visual).

use std::io;
use std::path::PathBuf;

use pcp_gate::RiskClass;

use crate::haptics::Unavailable;

/// A `[haptics]` section that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The TOML is malformed or has an unknown key; `message` carries line and column.
    #[error("{}: {message}", origin.display())]
    Parse { origin: PathBuf, message: String },
    /// A value is out of range.
    #[error("{}: `{key}`: {reason}", origin.display())]
    Invalid {
        origin: PathBuf,
        key: String,
        reason: String,
    },
}

/// Why a haptic operation did not happen.
#[derive(Debug, thiserror::Error)]
pub enum HapticsError {
    /// The rule: haptics is never the sole modality for destructive or system actions.
    #[error(
        "haptic confirmation cannot be the only modality for a {} capability",
        risk.as_str()
    )]
    HapticAloneRefused { risk: RiskClass },
    /// No usable hardware; the caller falls back to visual confirmation.
    #[error("haptics unavailable: {0}")]
    Unavailable(Unavailable),
    /// The device refused an operation for a reason other than disappearing.
    #[error("{device}: {op} failed: {source}")]
    Device {
        device: String,
        op: &'static str,
        #[source]
        source: io::Error,
    },
    /// A device sent an event sequence that breaks the multitouch protocol.
    #[error("{device}: bad touch event: {reason}")]
    BadTouchEvent { device: String, reason: String },
}

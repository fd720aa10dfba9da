//! What each fuzz target checks. Every target is one function from raw bytes that panics when a
//! property fails: no input may make the code under test panic, and each module adds the
//! properties its parser or state machine promises (nothing drawn outside the dialog, no
//! approval without the guard, a tampered token never verifies, a decoy never approves…).
//!
//! The cargo-fuzz crate in `fuzz/` calls these; `tests/replay.rs` runs the seed corpus
//! (`fuzz/seeds/TARGET/`) and every crash input kept as a regression (`fuzz/regressions/TARGET/`)
//! through them with the ordinary test suite.

pub mod codex_patch;
pub mod config;
pub mod dialog;
pub mod inline_code;
pub mod json;
pub mod multitouch;
pub mod params;
pub mod phrases;
pub mod replay;
pub mod shell_risk;
pub mod token;
pub mod visible;

/// A target's check: panics when the input breaks a property.
pub type Check = fn(&[u8]);

/// Every target: its name (the cargo-fuzz binary and the folder names) and its check.
pub const TARGETS: &[(&str, Check)] = &[
    ("dialog", dialog::check),
    ("visible_text", visible::check),
    ("config", config::check),
    ("replay", replay::check),
    ("token", token::check),
    ("multitouch", multitouch::check),
    ("phrases", phrases::check),
    ("params", params::check),
    ("strict_json", json::check),
    ("shell_risk", shell_risk::check),
    ("codex_patch", codex_patch::check),
    ("inline_code", inline_code::check),
];

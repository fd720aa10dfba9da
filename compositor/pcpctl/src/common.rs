//! What several subcommands share: the clock, finding the config and the state store, and
//! reading `--params`.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use pcp_config::Config;
use pcp_config::reference::ReferenceSections;
use pcp_gate::GateConfig;
use pcp_gate::config::default_state_path;
use serde_json::Value;

/// Now, in Unix milliseconds.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// The gate's part of the config at `path`, else of the default file when it exists, else of
/// the built-in defaults: the whole file checked as the compositor checks it.
pub fn load_config(path: Option<&Path>) -> Result<GateConfig> {
    Ok(Config::<ReferenceSections>::load(path)?.gate)
}

/// The state file: `--state`, else the config's, else the default.
pub fn state_path(state: Option<PathBuf>, config: Option<&Path>) -> Result<PathBuf> {
    if let Some(s) = state {
        return Ok(s);
    }
    match config {
        Some(c) => Ok(load_config(Some(c))?.state_path()),
        None => Ok(load_config(None)
            .map(|c| c.state_path())
            .unwrap_or_else(|_| default_state_path())),
    }
}

/// `--params`: a JSON object.
pub fn parse_params(text: &str) -> Result<Value> {
    let v: Value =
        serde_json::from_str(text).with_context(|| format!("--params is not JSON: {text}"))?;
    if !v.is_object() {
        bail!("--params must be a JSON object, got {text}");
    }
    Ok(v)
}

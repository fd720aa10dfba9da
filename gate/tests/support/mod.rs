//! Shared test set-up: a gate over the shipped manifests, with a fresh state folder.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use pcp_gate::{Availability, ClientIdentity, Gate, GateConfig, Intent};
use serde_json::Value;

pub fn assets() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets")
}

/// A config with the shipped manifests and `extra` TOML appended, state in `dir`.
pub fn config(dir: &Path, extra: &str) -> GateConfig {
    let text = format!(
        "[manifests]\ndirs = [{:?}]\n[state]\npath = {:?}\n{extra}",
        assets().join("capabilities.d"),
        dir.join("state.sqlite3"),
    );
    let path = dir.join("config.toml");
    std::fs::write(&path, &text).unwrap();
    GateConfig::load(&path).unwrap()
}

/// A state folder in memory when the machine has one (`/dev/shm`): for tests that decide
/// thousands of prompts and are about logic, not about what reaches the disk.
pub fn memory_dir() -> tempfile::TempDir {
    match tempfile::tempdir_in("/dev/shm") {
        Ok(dir) => dir,
        Err(_) => tempfile::tempdir().unwrap(),
    }
}

pub fn gate(dir: &Path, extra: &str) -> Gate {
    let mut gate = Gate::open(config(dir, extra)).unwrap();
    gate.set_available(Availability {
        output: true,
        input: true,
        voice: true,
        haptic: false,
    });
    gate
}

pub fn intent(capability: &str, params: Value) -> Intent {
    Intent::new(capability, params, ClientIdentity::named("test-client"))
}

pub fn intent_from(client: &str, capability: &str, params: Value) -> Intent {
    Intent::new(capability, params, ClientIdentity::named(client))
}

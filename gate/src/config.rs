//! The gate's part of the compositor config file (`[safety]`, `[timeouts]`, `[friction]`,
//! `[queue]`, `[tokens]`, `[audit]`, `[state]`, `[session]`, `[manifests]`, `[[capability]]`), its
//! loading with errors that name file:line:column, and the default paths.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::capability::{CapabilityManifest, Registry};
use crate::error::ConfigError;

/// How much friction the user wants (seed 001's safety levels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SafetyLevel {
    /// Privileged writes and network calls need voice + visual; friction never degrades.
    Strict,
    /// Seed 000's table exactly.
    #[default]
    Moderate,
    /// Friction degrades sooner; the floors (destructive ≥ visual, system never) are unchanged.
    Permissive,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SafetyConfig {
    pub level: SafetyLevel,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TimeoutConfig {
    pub voice_seconds: u32,
    pub visual_seconds: u32,
    pub haptic_seconds: u32,
    pub parent_seconds: u32,
}

impl Default for TimeoutConfig {
    fn default() -> Self {
        TimeoutConfig {
            voice_seconds: 10,
            visual_seconds: 30,
            haptic_seconds: 10,
            parent_seconds: 60,
        }
    }
}

/// Friction counts for one safety level.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FrictionRules {
    /// Identical approvals after which a destructive action's voice step is dropped (visual stays).
    pub voice_drops_after: u32,
    /// Identical approvals after which a visual prompt becomes implicit (`confirmed_by_history`).
    pub implicit_after: u32,
    /// Implicit passes after which the full threshold is asked again.
    pub reconfirm_every: u32,
    /// Hours without the action after which its history no longer counts.
    pub idle_reset_hours: u32,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FrictionConfig {
    pub moderate: FrictionRules,
    pub permissive: FrictionRules,
}

impl Default for FrictionConfig {
    fn default() -> Self {
        FrictionConfig {
            moderate: FrictionRules {
                voice_drops_after: 3,
                implicit_after: 3,
                reconfirm_every: 10,
                idle_reset_hours: 24,
            },
            permissive: FrictionRules {
                voice_drops_after: 2,
                implicit_after: 2,
                reconfirm_every: 20,
                idle_reset_hours: 72,
            },
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct QueueConfig {
    /// Prompts waiting or shown at once, all clients together; more → `rate_limited`.
    pub max_pending: usize,
    /// Open prompts one client may have; more → `rate_limited`.
    pub per_client: usize,
}

impl Default for QueueConfig {
    fn default() -> Self {
        QueueConfig {
            max_pending: 8,
            per_client: 1,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TokenConfig {
    pub expiry_seconds: u32,
}

impl Default for TokenConfig {
    fn default() -> Self {
        TokenConfig {
            expiry_seconds: 300,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AuditConfig {
    /// Store only the parameters' digest, not the parameters.
    pub redact_params: bool,
    /// Routine (`policy_allow`) records buffered before a commit.
    pub group_commit_records: usize,
    /// Longest a routine record waits in the buffer.
    pub group_commit_ms: u32,
}

impl Default for AuditConfig {
    fn default() -> Self {
        AuditConfig {
            redact_params: false,
            group_commit_records: 64,
            group_commit_ms: 250,
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StateConfig {
    /// The SQLite state file; default `$XDG_STATE_HOME/pcp/state.sqlite3`.
    pub path: Option<PathBuf>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SessionConfig {
    /// The user profile whose history applies until a profile switch.
    pub profile: String,
    /// A nested session: every ask goes to the parent compositor instead of the local user.
    pub parent_authorizer: bool,
}

impl Default for SessionConfig {
    fn default() -> Self {
        SessionConfig {
            profile: "default".into(),
            parent_authorizer: false,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ManifestConfig {
    /// Folders of trusted capability manifests, read in order; relative to the config file.
    pub dirs: Vec<PathBuf>,
}

impl Default for ManifestConfig {
    fn default() -> Self {
        let mut dirs = vec![PathBuf::from("/usr/share/pcp/capabilities.d")];
        if let Some(config) = xdg_dir("XDG_CONFIG_HOME", ".config") {
            dirs.push(config.join("pcp/capabilities.d"));
        }
        ManifestConfig { dirs }
    }
}

/// The whole config file as the gate reads it. Sections owned by other crates are checked to be
/// tables here and validated by their crates.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ConfigFile {
    pub safety: SafetyConfig,
    pub timeouts: TimeoutConfig,
    pub friction: FrictionConfig,
    pub queue: QueueConfig,
    pub tokens: TokenConfig,
    pub audit: AuditConfig,
    pub state: StateConfig,
    pub session: SessionConfig,
    pub manifests: ManifestConfig,
    #[serde(rename = "capability")]
    pub capabilities: Vec<CapabilityManifest>,
    pub overlay: Option<toml::Table>,
    pub speech: Option<toml::Table>,
    pub haptics: Option<toml::Table>,
    pub compositor: Option<toml::Table>,
}

/// A loaded config: the settings and the capability registry built from every manifest.
#[derive(Debug, Clone)]
pub struct GateConfig {
    pub file: ConfigFile,
    pub registry: Registry,
    /// The file it came from, when it came from one.
    pub path: Option<PathBuf>,
}

impl GateConfig {
    /// Defaults with the given capabilities: for tests and embedders without a file.
    pub fn from_str_at(path: &Path, text: &str) -> Result<GateConfig, ConfigError> {
        let mut file: ConfigFile =
            toml::from_str(text).map_err(|e| ConfigError::from_toml(path, text, &e))?;
        validate_numbers(path, text, &file)?;
        let mut registry = Registry::default();
        let inline = std::mem::take(&mut file.capabilities);
        registry.add_manifests(path, text, inline)?;
        let base = path.parent().unwrap_or(Path::new("."));
        for dir in &file.manifests.dirs {
            registry.add_dir(&base.join(dir))?;
        }
        Ok(GateConfig {
            file,
            registry,
            path: Some(path.to_path_buf()),
        })
    }

    /// Reads and checks a config file and every manifest it reaches.
    pub fn load(path: &Path) -> Result<GateConfig, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        GateConfig::from_str_at(path, &text)
    }

    /// The friction counts of the configured safety level; `None` under `strict`.
    pub fn friction_rules(&self) -> Option<&FrictionRules> {
        match self.file.safety.level {
            SafetyLevel::Strict => None,
            SafetyLevel::Moderate => Some(&self.file.friction.moderate),
            SafetyLevel::Permissive => Some(&self.file.friction.permissive),
        }
    }

    /// Where the state store lives: the config's `[state] path`, else the XDG default.
    pub fn state_path(&self) -> PathBuf {
        self.file
            .state
            .path
            .clone()
            .unwrap_or_else(default_state_path)
    }
}

/// Zero counts and timeouts would make the gate useless or silently permissive: refuse them.
fn validate_numbers(path: &Path, text: &str, file: &ConfigFile) -> Result<(), ConfigError> {
    let checks: [(&str, &str, u64); 11] = [
        (
            "timeouts",
            "voice_seconds",
            file.timeouts.voice_seconds.into(),
        ),
        (
            "timeouts",
            "visual_seconds",
            file.timeouts.visual_seconds.into(),
        ),
        (
            "timeouts",
            "haptic_seconds",
            file.timeouts.haptic_seconds.into(),
        ),
        (
            "timeouts",
            "parent_seconds",
            file.timeouts.parent_seconds.into(),
        ),
        ("queue", "max_pending", file.queue.max_pending as u64),
        ("queue", "per_client", file.queue.per_client as u64),
        (
            "tokens",
            "expiry_seconds",
            file.tokens.expiry_seconds.into(),
        ),
        (
            "audit",
            "group_commit_records",
            file.audit.group_commit_records as u64,
        ),
        (
            "friction",
            "implicit_after",
            file.friction.moderate.implicit_after.into(),
        ),
        (
            "friction",
            "voice_drops_after",
            file.friction.moderate.voice_drops_after.into(),
        ),
        (
            "friction",
            "reconfirm_every",
            file.friction.moderate.reconfirm_every.into(),
        ),
    ];
    let permissive = &file.friction.permissive;
    let extra = [
        (
            "friction",
            "implicit_after",
            u64::from(permissive.implicit_after),
        ),
        (
            "friction",
            "voice_drops_after",
            permissive.voice_drops_after.into(),
        ),
        (
            "friction",
            "reconfirm_every",
            permissive.reconfirm_every.into(),
        ),
    ];
    for (section, key, value) in checks.into_iter().chain(extra) {
        if value == 0 {
            let offset = find_key(text, section, key).unwrap_or(0);
            return Err(ConfigError::invalid(
                path,
                text,
                offset,
                format!("[{section}] {key} must be at least 1"),
            ));
        }
    }
    if file.session.profile.trim().is_empty() {
        let offset = find_key(text, "session", "profile").unwrap_or(0);
        return Err(ConfigError::invalid(
            path,
            text,
            offset,
            "[session] profile must not be empty",
        ));
    }
    Ok(())
}

/// The byte offset of `key = …` after the `[section` header, for pointing at a bad value.
fn find_key(text: &str, section: &str, key: &str) -> Option<usize> {
    let header = text.find(&format!("[{section}"))?;
    let mut offset = header;
    for line in text[header..].split_inclusive('\n') {
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed.strip_prefix(key)
            && rest.trim_start().starts_with('=')
        {
            return Some(offset + (line.len() - trimmed.len()));
        }
        offset += line.len();
    }
    None
}

fn xdg_dir(var: &str, home_fallback: &str) -> Option<PathBuf> {
    match std::env::var_os(var) {
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ => std::env::var_os("HOME").map(|home| PathBuf::from(home).join(home_fallback)),
    }
}

/// `$XDG_CONFIG_HOME/pcp/config.toml`.
pub fn default_config_path() -> PathBuf {
    xdg_dir("XDG_CONFIG_HOME", ".config")
        .unwrap_or_else(|| PathBuf::from("."))
        .join("pcp/config.toml")
}

/// `$XDG_STATE_HOME/pcp/state.sqlite3`.
pub fn default_state_path() -> PathBuf {
    xdg_dir("XDG_STATE_HOME", ".local/state")
        .unwrap_or_else(|| PathBuf::from("."))
        .join("pcp/state.sqlite3")
}

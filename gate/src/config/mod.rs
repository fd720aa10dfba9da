//! The gate's part of the compositor config file (`[gate]`, `[safety]`, `[timeouts]`,
//! `[friction]`, `[queue]`, `[tokens]`, `[audit]`, `[state]`, `[session]`, `[manifests]`,
//! `[policy_change]`, `[shell_risk]`, `[mcp]`, `[[capability]]`, `[[rule]]`), its loading from
//! trusted files with errors that name file:line:column (`load`: [`GateConfig`]), and the default
//! paths. The file is one document
//! ([`document`]): the other sections belong to whoever embeds the gate and are read in the same
//! pass; the gate alone reads none but its own.

mod check;
pub mod document;
mod load;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::capability::CapabilityManifest;
use crate::key_rule::KeyRule;
use crate::rules::RuleManifest;
pub use crate::sources::{
    LoadOptions, ManifestFolder, PolicySources, SYSTEM_MANIFEST_DIRS, SourceFile,
};
// The safety level is shared vocabulary (the threshold table and the classifier read it), so it
// lives in `types`; it is still a `[safety]` setting, named here too.
pub use crate::types::SafetyLevel;

pub use self::load::GateConfig;

/// `[gate]`: choices about how the gate asks.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GateSectionConfig {
    /// Prompts for actions at most as risky as a visual prompt (never destructive, system or
    /// multi-step) may offer "allow until logout" to a verified app.
    pub session_approvals: bool,
    /// The label beside the gate's own rating of a classified intent on the prompt.
    pub risk_label: String,
}

impl Default for GateSectionConfig {
    fn default() -> Self {
        GateSectionConfig {
            session_approvals: false,
            risk_label: "risk".to_string(),
        }
    }
}

/// `[shell_risk]`: what the classifiers count as a secret, and the wording of their reasons as
/// prompts, `pcpctl explain` and refusals show them.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ShellRiskConfig {
    /// More secret paths (`~/…`, `/…` or a bare name; `*`, `?`, `[…]`, `**`), beside the
    /// built-in ones (`pcp_shell_risk::secrets::DEFAULT_SECRET_PATHS`).
    pub secrets: Vec<String>,
    /// Paths that are not secret although a secret pattern names them (`~/.ssh/*.pub`). Each
    /// entry lowers protection.
    pub not_secrets: Vec<String>,
    /// More names of environment variables that hold secrets (`*` and `?` allowed), beside the
    /// built-in ones.
    pub secret_env: Vec<String>,
    /// Whether the built-in secret lists count; `false` leaves only this config's own.
    pub builtin_secrets: bool,
    /// `[shell_risk.reasons]`: a phrase's key → its replacement template, with the phrase's own
    /// `{placeholders}` (`deletes_recursively = "löscht rekursiv"`). A phrase not named keeps its
    /// English; the keys are those of `pcp_shell_risk::phrases::ALL`.
    pub reasons: BTreeMap<String, String>,
}

impl Default for ShellRiskConfig {
    fn default() -> Self {
        ShellRiskConfig {
            secrets: Vec::new(),
            not_secrets: Vec::new(),
            secret_env: Vec::new(),
            builtin_secrets: true,
            reasons: BTreeMap::new(),
        }
    }
}

impl ShellRiskConfig {
    /// The secret lists this section makes. The config's check refused a bad entry before this
    /// is asked; were one ever given unchecked, the built-in lists stand alone.
    pub fn secrets(&self) -> Arc<pcp_shell_risk::Secrets> {
        match self.compile_secrets() {
            Ok(s) => Arc::new(s),
            Err(_) => pcp_shell_risk::Secrets::builtin(),
        }
    }

    /// The secret lists, or the first bad entry.
    pub fn compile_secrets(&self) -> Result<pcp_shell_risk::Secrets, pcp_shell_risk::SecretsError> {
        pcp_shell_risk::Secrets::new(
            &self.secrets,
            &self.not_secrets,
            &self.secret_env,
            self.builtin_secrets,
        )
    }

    /// The wording these replacements make. The config's check refused a bad key or template
    /// before this is asked, so none is skipped here but in a config never checked.
    pub fn wording(&self) -> pcp_shell_risk::Wording {
        let mut wording = pcp_shell_risk::Wording::default();
        for (key, template) in &self.reasons {
            let _ = wording.set(key, template);
        }
        wording
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SafetyConfig {
    pub level: SafetyLevel,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

#[derive(Debug, Clone, Serialize, Deserialize)]
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

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct QueueConfig {
    /// Prompts waiting or shown at once, all clients together; more → `rate_limited`.
    pub max_pending: usize,
    /// Open prompts one client may have; more → `rate_limited`.
    pub per_client: usize,
    /// A connection refused `rate_limited` this many times within `disconnect_window_seconds`
    /// is ended with a protocol error.
    pub disconnect_after: u32,
    /// The window, in seconds, in which `disconnect_after` refusals end a connection.
    pub disconnect_window_seconds: u32,
    /// Intents decided in one round of the host's event loop; more wait for the next round,
    /// connections taking turns (so a flood never delays the user's input).
    pub intents_per_round: u32,
}

impl Default for QueueConfig {
    fn default() -> Self {
        QueueConfig {
            max_pending: 8,
            per_client: 1,
            disconnect_after: 20,
            disconnect_window_seconds: 10,
            intents_per_round: 16,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
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

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AuditConfig {
    /// Store only the parameters' digest, not the parameters.
    pub redact_params: bool,
    /// Store parameters in full however big they are (else big ones become digest + excerpt).
    pub full_params: bool,
    /// Parameters whose canonical JSON is longer than this are stored as their digest and an
    /// excerpt of this many bytes.
    pub params_excerpt_bytes: usize,
    /// Records that need no disk sync before the decision returns (`policy_allow` and denials
    /// that change no history) buffered before a commit.
    pub group_commit_records: usize,
    /// Longest such a record waits in the buffer.
    pub group_commit_ms: u32,
    /// Full batches the audit writer may have waiting; when it is that far behind, decisions
    /// wait for it (memory stays bounded under a flood).
    pub writer_queue_batches: usize,
}

impl Default for AuditConfig {
    fn default() -> Self {
        AuditConfig {
            redact_params: false,
            full_params: false,
            params_excerpt_bytes: 1024,
            group_commit_records: 64,
            group_commit_ms: 250,
            writer_queue_batches: 16,
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StateConfig {
    /// The SQLite state file; default `$XDG_STATE_HOME/pcp/state.sqlite3`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
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

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ManifestConfig {
    /// Folders of the user's capability manifests, read in order after the system folders
    /// ([`SYSTEM_MANIFEST_DIRS`], always read); relative to the config file.
    pub dirs: Vec<PathBuf>,
}

impl Default for ManifestConfig {
    fn default() -> Self {
        let dirs = xdg_dir("XDG_CONFIG_HOME", ".config")
            .map(|config| config.join("pcp/capabilities.d"))
            .into_iter()
            .collect();
        ManifestConfig { dirs }
    }
}

/// The wording of the policy-change prompt: a reload or a start that would lower protection is
/// asked about first, one line per change. `{config}` is the config file; in a line,
/// `{direction}` is `lowers`, `raises` or `neutral`, `{subject}` what changes, `{old}` and `{new}`
/// its values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PolicyChangeConfig {
    /// The prompt's action line.
    pub description: String,
    /// `{direction}` for a change that lowers protection.
    pub lowers: String,
    /// `{direction}` for a change that raises it.
    pub raises: String,
    /// `{direction}` for a change the host declares unrelated to protection.
    pub neutral: String,
    /// A line for a setting or capability whose value changes.
    pub changed: String,
    /// A line for something new (a capability, a manifest folder).
    pub added: String,
    /// A line for something gone.
    pub removed: String,
    /// The most lines the prompt lists (keep it at most `[overlay] max_steps`, or the dialog
    /// cannot show the prompt). Changes that lower protection come first; beyond this many, the
    /// last line is `more` (every change is in the prompt's audit record).
    pub max_lines: u32,
    /// The last line when there are more changes than `max_lines`: `{count}` changes not listed,
    /// of which `{lowers}` lower protection.
    pub more: String,
}

impl Default for PolicyChangeConfig {
    fn default() -> Self {
        PolicyChangeConfig {
            description: "Apply a changed confirmation policy from {config}".into(),
            lowers: "Less protection".into(),
            raises: "More protection".into(),
            neutral: "No change in protection".into(),
            changed: "{direction}: {subject}: {old} → {new}".into(),
            added: "{direction}: {subject}: new, {new}".into(),
            removed: "{direction}: {subject}: removed (was {old})".into(),
            max_lines: 10,
            more: "…and {count} more changes ({lowers} of them less protection), all in the \
                   audit log"
                .into(),
        }
    }
}

impl PolicyChangeConfig {
    /// Each template with the placeholders it may use.
    fn templates(&self) -> [(&'static str, &str, &'static [&'static str]); 8] {
        const LINE: &[&str] = &["direction", "subject", "old", "new"];
        [
            ("description", &self.description, &["config"]),
            ("lowers", &self.lowers, &[]),
            ("raises", &self.raises, &[]),
            ("neutral", &self.neutral, &[]),
            ("changed", &self.changed, LINE),
            ("added", &self.added, LINE),
            ("removed", &self.removed, LINE),
            ("more", &self.more, &["count", "lowers"]),
        ]
    }
}

/// The gate's sections of the config file. Other sections belong to whoever embeds the gate:
/// [`document::parse`] reads them in the same pass and refuses a section nobody declares; this
/// type alone (rebuilding a policy approved earlier, [`GateConfig::from_sources`]) passes over
/// them.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ConfigFile {
    pub gate: GateSectionConfig,
    pub safety: SafetyConfig,
    pub timeouts: TimeoutConfig,
    pub friction: FrictionConfig,
    pub queue: QueueConfig,
    pub tokens: TokenConfig,
    pub audit: AuditConfig,
    pub state: StateConfig,
    pub session: SessionConfig,
    pub manifests: ManifestConfig,
    pub policy_change: PolicyChangeConfig,
    pub shell_risk: ShellRiskConfig,
    pub mcp: crate::mcp::McpConfig,
    /// Moved into the registry at load (compared there, not here).
    #[serde(rename = "capability", skip_serializing)]
    pub capabilities: Vec<CapabilityManifest>,
    /// Deny rules; moved into the registry at load, like capabilities.
    #[serde(rename = "rule", skip_serializing)]
    pub rules: Vec<RuleManifest>,
}

/// The order of every key of the gate's own sections, beside their types: how a change to each
/// is compared when a new policy is proposed (see `crate::policy`). A key none of these names
/// would count as lowering when it changes; a test fails for one (`document`'s tests).
pub fn gate_rules() -> Vec<KeyRule> {
    use crate::key_rule::Order::*;
    let ranked = Ranked(
        ["permissive", "moderate", "strict"]
            .map(String::from)
            .to_vec(),
    );
    vec![
        KeyRule::new("safety.level", ranked),
        KeyRule::new("gate.session_approvals", TrueLowers),
        KeyRule::new("gate.risk_label", AnyChangeLowers),
        KeyRule::new("timeouts.*", LargerLowers),
        KeyRule::new("friction.*.voice_drops_after", LargerRaises),
        KeyRule::new("friction.*.implicit_after", LargerRaises),
        KeyRule::new("friction.*.reconfirm_every", LargerLowers),
        KeyRule::new("friction.*.idle_reset_hours", LargerLowers),
        // A longer window counts more refusals toward a disconnect: stricter.
        KeyRule::new("queue.disconnect_window_seconds", LargerRaises),
        KeyRule::new("queue.*", LargerLowers),
        KeyRule::new("tokens.expiry_seconds", LargerLowers),
        KeyRule::new("audit.redact_params", TrueLowers),
        KeyRule::new("audit.group_commit_records", LargerLowers),
        KeyRule::new("audit.group_commit_ms", LargerLowers),
        KeyRule::new("audit.full_params", TrueRaises),
        KeyRule::new("audit.params_excerpt_bytes", LargerRaises),
        KeyRule::new("audit.writer_queue_batches", LargerLowers),
        KeyRule::new("state.path", AnyChangeLowers),
        KeyRule::new("session.profile", AnyChangeLowers),
        KeyRule::new("session.parent_authorizer", TrueLowers),
        KeyRule::new("manifests.dirs", MembersLower),
        KeyRule::new("policy_change.*", AnyChangeLowers),
        // A secret added raises protection and applies at once; one removed, an exemption added
        // or the built-in lists left out lowers it, and is asked first.
        KeyRule::new("shell_risk.secrets", MembersRaise),
        KeyRule::new("shell_risk.secret_env", MembersRaise),
        KeyRule::new("shell_risk.not_secrets", MembersLower),
        KeyRule::new("shell_risk.builtin_secrets", TrueRaises),
        // The reasons' wording is what the user weighs a shell command by: a replacement could
        // call `rm -rf ~` harmless. So, like `risk_label` and the policy-change wording, any
        // change to it is proposed and confirmed as lowering protection, never applied quietly.
        KeyRule::new("shell_risk.*", AnyChangeLowers),
        // An MCP prompt's words are what the user weighs a tool call by (a changed definition
        // above all); more argument names rated is more protection, fewer is less.
        KeyRule::new("mcp.command_arguments", MembersRaise),
        KeyRule::new("mcp.path_arguments", MembersRaise),
        KeyRule::new("mcp.path_suffixes", MembersRaise),
        KeyRule::new("mcp.max_rated_strings", LargerLowers),
        KeyRule::new("mcp.*", AnyChangeLowers),
    ]
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

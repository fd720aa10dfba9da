//! The plugin's part of the config file: the gate's sections, `[overlay]`, `[speech]` and
//! `[haptics]`, read from one file with errors that name the file and the place (line and
//! column where the TOML says it, else the section and key). A host reads its own sections
//! (the reference compositor's `[compositor]`) from [`PluginConfig::gate`]'s view of the file.

use std::path::Path;

use pcp_gate::GateConfig;

/// Why the config file was refused.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{0}")]
    Gate(#[from] pcp_gate::ConfigError),
    /// A section owned by another crate does not parse or fails its checks.
    #[error("{0}")]
    Section(String),
}

/// Everything the plugin reads from the config file, checked.
pub struct PluginConfig {
    /// The gate's sections, the manifests they name, and the file's other sections as tables.
    pub gate: GateConfig,
    pub overlay: pcp_overlay::Config,
    pub speech: pcp_speech::Config,
    pub haptics: pcp_haptics::Config,
}

/// What the built-in defaults are called in messages.
pub const BUILT_IN: &str = "<built-in defaults>";

/// The `[speech]` section, parsed from the whole file so that errors carry its line and column.
#[derive(serde::Deserialize, Default)]
struct SpeechSection {
    #[serde(default)]
    speech: pcp_speech::Config,
}

/// Reads and checks the config file at `path`, or the default file
/// (`$XDG_CONFIG_HOME/pcp/config.toml`) when `path` is `None`, or the built-in defaults when
/// there is none.
pub fn load(path: Option<&Path>) -> Result<PluginConfig, ConfigError> {
    let file = match path {
        Some(p) => Some(p.to_path_buf()),
        None => Some(pcp_gate::config::default_config_path()).filter(|p| p.exists()),
    };
    let Some(file) = file else {
        return Ok(PluginConfig {
            gate: GateConfig::from_str_at(Path::new(BUILT_IN), "")?,
            overlay: pcp_overlay::Config::default(),
            speech: pcp_speech::Config::default(),
            haptics: pcp_haptics::Config::default(),
        });
    };
    sections(GateConfig::load(&file)?)
}

/// The plugin's sections of the file `gate` was built from, checked: the text the gate read (so
/// every section comes from the same read of the file), or, for a policy kept in the state
/// store, the text that was approved.
pub fn sections(gate: GateConfig) -> Result<PluginConfig, ConfigError> {
    let file = gate.sources.config.path.clone();
    let text = gate.sources.config.text.clone();
    let overlay = match gate.file.overlay.clone() {
        Some(t) => t.try_into().map_err(|e: toml::de::Error| {
            ConfigError::Section(format!("{}: [overlay] {}", file.display(), e.message()))
        })?,
        None => pcp_overlay::Config::default(),
    };
    crate::ui::Shortcut::parse(&overlay.focus_shortcut)
        .map_err(|e| ConfigError::Section(format!("{}: [overlay] {e}", file.display())))?;
    let speech = toml::from_str::<SpeechSection>(&text)
        .map_err(|e| pcp_gate::ConfigError::from_toml(&file, &text, &e))?
        .speech;
    speech
        .validate()
        .map_err(|e| ConfigError::Section(format!("{}: [speech] {e}", file.display())))?;
    let haptics = pcp_haptics::Config::from_document(&text, &file)
        .map_err(|e| ConfigError::Section(format!("[haptics] {e}")))?;
    Ok(PluginConfig {
        gate,
        overlay,
        speech,
        haptics,
    })
}

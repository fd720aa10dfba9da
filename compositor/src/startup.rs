//! Turning a config file and flags into [`Options`]: the gate's sections, `[compositor]`,
//! `[overlay]`, `[speech]` and `[haptics]` read from one file, with errors that name the file and
//! the place (line and column where the TOML says it, else the section and key).

use std::path::{Path, PathBuf};

use pcp_gate::{Gate, GateConfig};

use crate::config::{CompositorConfig, OutputSpec};
use crate::state::{Options, Socket};

/// Why the config could not be turned into a running compositor.
#[derive(Debug, thiserror::Error)]
pub enum ConfigLoadError {
    #[error("{0}")]
    Gate(#[from] pcp_gate::ConfigError),
    #[error("{path}: {source}")]
    Compositor {
        path: String,
        source: crate::config::SpecError,
    },
    #[error("{path}: [overlay] {message}")]
    Overlay { path: String, message: String },
    /// A section owned by another crate does not parse or fails its checks.
    #[error("{0}")]
    Section(String),
    #[error("cannot open the state store: {0}")]
    Store(#[from] pcp_gate::StoreError),
}

/// Everything the config file says, checked.
pub struct LoadedConfig {
    pub gate: GateConfig,
    pub compositor: CompositorConfig,
    pub overlay: pcp_overlay::Config,
    pub speech: pcp_speech::Config,
    pub haptics: pcp_haptics::Config,
}

/// The `[speech]` section, parsed from the whole file so that errors carry its line and column.
#[derive(serde::Deserialize, Default)]
struct SpeechSection {
    #[serde(default)]
    speech: pcp_speech::Config,
}

/// Reads `[speech]` and `[haptics]` from the file's text (defaults without a file).
fn device_sections(
    path: Option<&Path>,
) -> Result<(pcp_speech::Config, pcp_haptics::Config), ConfigLoadError> {
    let Some(path) = path else {
        return Ok(Default::default());
    };
    let text = std::fs::read_to_string(path).map_err(|source| {
        ConfigLoadError::Gate(pcp_gate::ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })
    })?;
    let speech = toml::from_str::<SpeechSection>(&text)
        .map_err(|e| pcp_gate::ConfigError::from_toml(path, &text, &e))?
        .speech;
    speech
        .validate()
        .map_err(|e| ConfigLoadError::Section(format!("{}: [speech] {e}", path.display())))?;
    let haptics = pcp_haptics::Config::from_document(&text, path)
        .map_err(|e| ConfigLoadError::Section(format!("[haptics] {e}")))?;
    Ok((speech, haptics))
}

/// Reads and checks the whole config file (or the built-in defaults when `path` is `None` and
/// the default file does not exist).
pub fn load(path: Option<&Path>) -> Result<LoadedConfig, ConfigLoadError> {
    // The file read, if any: the built-in defaults have none for the device sections to read.
    let file = match path {
        Some(p) => Some(p.to_path_buf()),
        None => Some(pcp_gate::config::default_config_path()).filter(|p| p.exists()),
    };
    let gate = match &file {
        Some(p) => GateConfig::load(p)?,
        None => GateConfig::from_str_at(Path::new("<built-in defaults>"), "")?,
    };
    let shown = gate.path.as_ref().map_or_else(
        || "<built-in defaults>".to_string(),
        |p| p.display().to_string(),
    );
    let compositor =
        CompositorConfig::from_table(gate.file.compositor.as_ref()).map_err(|source| {
            ConfigLoadError::Compositor {
                path: shown.clone(),
                source,
            }
        })?;
    let overlay = match gate.file.overlay.clone() {
        Some(t) => t
            .try_into()
            .map_err(|e: toml::de::Error| ConfigLoadError::Overlay {
                path: shown.clone(),
                message: e.message().to_string(),
            })?,
        None => pcp_overlay::Config::default(),
    };
    let (speech, haptics) = device_sections(file.as_deref())?;
    Ok(LoadedConfig {
        gate,
        compositor,
        overlay,
        speech,
        haptics,
    })
}

/// The options for a compositor from a loaded config: `outputs` from flags win over the file's.
pub fn options(
    loaded: LoadedConfig,
    outputs: Vec<OutputSpec>,
    socket: Option<Socket>,
    config_path: Option<PathBuf>,
    input_available: bool,
) -> Result<Options, ConfigLoadError> {
    let outputs = if outputs.is_empty() {
        loaded
            .compositor
            .output_specs()
            .map_err(|source| ConfigLoadError::Compositor {
                path: config_path
                    .as_ref()
                    .map_or_else(String::new, |p| p.display().to_string()),
                source,
            })?
    } else {
        outputs
    };
    Ok(Options {
        outputs,
        socket,
        gate: Gate::open(loaded.gate)?,
        config: loaded.compositor,
        overlay: loaded.overlay,
        input_available,
        frame_timer: true,
        config_path,
        speech: loaded.speech,
        haptics: loaded.haptics,
    })
}

//! Turning a config file and flags into [`Options`]: the gate, `[compositor]` and `[overlay]`
//! sections read from one file, with errors that name the file and the section.

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
    #[error("cannot open the state store: {0}")]
    Store(#[from] pcp_gate::StoreError),
}

/// Everything the config file says, checked.
pub struct LoadedConfig {
    pub gate: GateConfig,
    pub compositor: CompositorConfig,
    pub overlay: pcp_overlay::Config,
}

/// Reads and checks the whole config file (or the built-in defaults when `path` is `None` and
/// the default file does not exist).
pub fn load(path: Option<&Path>) -> Result<LoadedConfig, ConfigLoadError> {
    let gate = match path {
        Some(p) => GateConfig::load(p)?,
        None => {
            let p = pcp_gate::config::default_config_path();
            if p.exists() {
                GateConfig::load(&p)?
            } else {
                GateConfig::from_str_at(Path::new("<built-in defaults>"), "")?
            }
        }
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
    Ok(LoadedConfig {
        gate,
        compositor,
        overlay,
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
    })
}

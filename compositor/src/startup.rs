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
    Plugin(#[from] pcp_plugin::config::ConfigError),
    #[error("{path}: {source}")]
    Compositor {
        path: String,
        source: crate::config::SpecError,
    },
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

/// Reads and checks the whole config file (or the built-in defaults when `path` is `None` and
/// the default file does not exist): the plugin's sections, then `[compositor]`.
pub fn load(path: Option<&Path>) -> Result<LoadedConfig, ConfigLoadError> {
    let plugin = pcp_plugin::config::load(path)?;
    let shown = plugin.gate.path.as_ref().map_or_else(
        || pcp_plugin::config::BUILT_IN.to_string(),
        |p| p.display().to_string(),
    );
    let compositor =
        CompositorConfig::from_table(plugin.gate.file.compositor.as_ref()).map_err(|source| {
            ConfigLoadError::Compositor {
                path: shown,
                source,
            }
        })?;
    Ok(LoadedConfig {
        gate: plugin.gate,
        compositor,
        overlay: plugin.overlay,
        speech: plugin.speech,
        haptics: plugin.haptics,
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

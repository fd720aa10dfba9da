//! Turning a config file and flags into [`Options`]. The file is read once, as one typed
//! document ([`LoadedConfig`]: the gate's sections, the plugin's and this compositor's own,
//! [`ReferenceSections`]) by the same function `pcp-compositor validate` and `pcpctl validate`
//! call. The gate opens with the policy last approved ([`pcp_config::start`]); a policy in the
//! files that differs from it is proposed once the compositor runs
//! ([`pcp_plugin::policy::start`]), and until then the approved policy is in force, every
//! section included.

use std::path::{Path, PathBuf};

use crate::config::{OutputSpec, ReferenceSections};
use crate::state::{Options, Socket};

/// The whole config file as this compositor reads it.
pub type LoadedConfig = pcp_config::Config<ReferenceSections>;

/// Why the config could not be turned into a running compositor.
#[derive(Debug, thiserror::Error)]
pub enum ConfigLoadError {
    #[error("{0}")]
    Config(#[from] pcp_gate::ConfigError),
    #[error("{path}: {source}")]
    Compositor {
        path: String,
        source: crate::config::SpecError,
    },
    #[error("cannot open the state store: {0}")]
    Store(#[from] pcp_gate::StoreError),
}

/// Reads and checks the whole config file (or the built-in defaults when `path` is `None` and
/// the default file does not exist).
pub fn load(path: Option<&Path>) -> Result<LoadedConfig, ConfigLoadError> {
    Ok(LoadedConfig::load(path)?)
}

/// The options for a compositor from a loaded config: `outputs` from flags win over the file's.
/// The gate opens with the policy last approved; when the files differ from it, the sections in
/// force are the approved ones too, and [`Options::policy`] carries the files' policy to
/// propose.
pub fn options(
    loaded: LoadedConfig,
    outputs: Vec<OutputSpec>,
    socket: Option<Socket>,
    config_path: Option<PathBuf>,
    input_available: bool,
) -> Result<Options, ConfigLoadError> {
    let now = crate::state::Clock::default().now_ms();
    let started = pcp_config::start(loaded, now)?;
    let compositor = started.host.compositor;
    let polkit = started.host.polkit;
    let outputs = if outputs.is_empty() {
        compositor
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
        gate: started.gate,
        policy: started.proposal,
        config: compositor,
        polkit,
        plugin: started.plugin,
        input_available,
        frame_timer: true,
        config_path,
    })
}

//! Turning a config file and flags into [`Options`]: the gate's sections, `[compositor]`,
//! `[overlay]`, `[speech]` and `[haptics]` read from one file, with errors that name the file and
//! the place (line and column where the TOML says it, else the section and key). The gate opens
//! with `Gate::start`: the host's sections are told to it as facts and key rules
//! ([`LoadedConfig::host_facts`], [`host_rules`]), and a policy in the files that differs from
//! the one last approved is proposed once the compositor runs ([`pcp_plugin::policy::start`]);
//! until then the approved policy is in force, this compositor's sections included.

use std::path::{Path, PathBuf};

use pcp_gate::{Gate, GateConfig, KeyRule, ProtectionFact, StartPolicy};
use pcp_plugin::policy::{Rank, section_facts, unrelated_rules};

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
    #[error("{path}: {source}")]
    Polkit {
        path: String,
        source: crate::polkit::config::PolkitConfigError,
    },
}

/// The host's sections of a config: what the compositor, the dialog, voice and haptics run
/// with.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HostSections {
    pub compositor: CompositorConfig,
    pub overlay: pcp_overlay::Config,
    pub speech: pcp_speech::Config,
    pub haptics: pcp_haptics::Config,
}

impl HostSections {
    /// The sections of `loaded`.
    pub fn of(loaded: LoadedConfig) -> HostSections {
        HostSections {
            compositor: loaded.compositor,
            overlay: loaded.overlay,
            speech: loaded.speech,
            haptics: loaded.haptics,
        }
    }
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
    from_plugin(pcp_plugin::config::load(path)?)
}

/// Every section of the file `gate` was built from (the text the gate read, or the text of the
/// policy last approved), checked.
pub fn sections(gate: GateConfig) -> Result<LoadedConfig, ConfigLoadError> {
    from_plugin(pcp_plugin::config::sections(gate)?)
}

fn from_plugin(plugin: pcp_plugin::config::PluginConfig) -> Result<LoadedConfig, ConfigLoadError> {
    let shown = plugin.gate.path.as_ref().map_or_else(
        || pcp_plugin::config::BUILT_IN.to_string(),
        |p| p.display().to_string(),
    );
    // `[polkit]` is read when the agent starts; checked here so a bad one is refused at load.
    crate::polkit::PolkitConfig::from_table(plugin.gate.file.polkit.as_ref()).map_err(
        |source| ConfigLoadError::Polkit {
            path: shown.clone(),
            source,
        },
    )?;
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

/// `[compositor]` keys that order protection: the touch scale turns touches into the
/// millimetres a double tap is judged in.
pub const COMPOSITOR_FACTS: &[(&str, Rank)] = &[("touch_dpi", Rank::AnyChangeLowers)];

/// `[compositor]` keys that have nothing to do with protection: their changes apply at once.
/// (The notices' wording is not among them: any change to it is asked about.)
pub const COMPOSITOR_UNRELATED: &[&str] = &[
    "outputs",
    "background",
    "frame_interval_ms",
    "reload_check_ms",
    "device_probe_ms",
    "voice_poll_ms",
];

impl LoadedConfig {
    /// What the host's sections say about protection, for the gate (`[overlay]`, `[speech]`
    /// with voice turned off, `[haptics]`, `[compositor]`).
    pub fn host_facts(&self) -> Vec<ProtectionFact> {
        let mut facts = section_facts("overlay", &self.overlay, pcp_plugin::policy::OVERLAY_FACTS);
        facts.extend(section_facts(
            "speech",
            &self.speech,
            pcp_plugin::policy::SPEECH_FACTS,
        ));
        facts.extend(section_facts(
            "haptics",
            &self.haptics,
            pcp_plugin::policy::HAPTICS_FACTS,
        ));
        facts.extend(section_facts(
            "compositor",
            &self.compositor,
            COMPOSITOR_FACTS,
        ));
        facts
    }
}

/// How the host's sections' keys order protection, for the gate.
pub fn host_rules() -> Vec<KeyRule> {
    let mut rules = pcp_plugin::policy::plugin_rules();
    rules.extend(unrelated_rules("compositor", COMPOSITOR_UNRELATED));
    rules
}

/// The options for a compositor from a loaded config: `outputs` from flags win over the file's.
/// The gate opens with the policy last approved; when the files differ from it, the host's
/// sections in force are the approved ones too, and [`Options::policy`] carries the files'
/// policy to propose.
pub fn options(
    loaded: LoadedConfig,
    outputs: Vec<OutputSpec>,
    socket: Option<Socket>,
    config_path: Option<PathBuf>,
    input_available: bool,
) -> Result<Options, ConfigLoadError> {
    let facts = loaded.host_facts();
    let now = crate::state::Clock::default().now_ms();
    let LoadedConfig {
        gate,
        compositor,
        overlay,
        speech,
        haptics,
    } = loaded;
    let (gate, policy) = Gate::start(gate, facts, host_rules(), now)?;
    let in_force = match &policy {
        StartPolicy::InForce => HostSections {
            compositor,
            overlay,
            speech,
            haptics,
        },
        StartPolicy::Changed(..) => {
            tracing::warn!(
                "the config differs from the policy last approved: that policy stays in force \
                 until the change is approved"
            );
            match sections(gate.config().clone()) {
                Ok(approved) => HostSections::of(approved),
                Err(e) => {
                    // The approved text no longer loads (a newer version refused a key): the
                    // sections' defaults, under a gate that denies what it cannot build.
                    tracing::warn!("the approved config's sections do not load ({e}): defaults");
                    HostSections::default()
                }
            }
        }
    };
    let outputs = if outputs.is_empty() {
        in_force
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
        gate,
        policy,
        config: in_force.compositor,
        overlay: in_force.overlay,
        input_available,
        frame_timer: true,
        config_path,
        speech: in_force.speech,
        haptics: in_force.haptics,
    })
}

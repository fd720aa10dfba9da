//! The config file as one typed document, read and parsed once: [`Config<H>`] holds the gate's
//! sections (and the capability registry they reach), the plugin's own sections
//! ([`PluginSections`]: `[overlay]`, `[speech]`, `[haptics]`) and `H`, the host's own sections,
//! typed. Every error names file:line:column and the key. Each section is a type that says what
//! it checks and how each of its keys orders protection ([`Section`]); the gate compares two
//! policies through those orders ([`Config::facts`]), so lowering a safeguard in any section is
//! asked about. `pcpctl validate`, `pcp-compositor validate` and the compositor's loader all go
//! through [`Config::load`] ([`validate`]). No Smithay and no libvosk: the CLI links it.

use std::any::Any;
use std::fmt;
use std::path::Path;

pub use pcp_gate::config::document;
use pcp_gate::config::{LoadOptions, PolicySources, default_config_path};
use pcp_gate::sources::read_trusted;
use pcp_gate::{ConfigError, Gate, GateConfig, ProtectionFact, StartPolicy, StoreError};
/// For [`sections!`]: the macro names serde's traits through this crate.
pub use serde;

mod plugin;
pub mod polkit;
pub mod reference;
pub mod section;
mod shortcut;

pub use plugin::PluginSections;
pub use section::{AnySection, Invalid, Protection, Section};
pub use shortcut::Shortcut;

/// What the built-in defaults are called in messages (no config file exists).
pub const BUILT_IN: &str = "<built-in defaults>";

/// A group of sections ([`sections!`] declares one): the document reads them, the loader checks
/// each and the gate compares their facts. `()` is no sections.
pub trait SectionGroup:
    document::Sections + Clone + PartialEq + fmt::Debug + Send + 'static
{
    /// Every section of the group.
    fn each(&self) -> Vec<&dyn AnySection>;
    /// Keys with no protection order and orders of no key, as `section.key: why`: empty for a
    /// group whose every key has been thought about (a unit test of each group says so).
    fn unordered() -> Vec<String>;
}

impl SectionGroup for () {
    fn each(&self) -> Vec<&dyn AnySection> {
        Vec::new()
    }

    fn unordered() -> Vec<String> {
        Vec::new()
    }
}

/// A whole config file, checked: the gate's part, the plugin's sections and the host's.
#[derive(Debug, Clone)]
pub struct Config<H = ()> {
    /// The gate's sections, the capability registry built from every manifest, and the text it
    /// was all read from.
    pub gate: GateConfig,
    pub plugin: PluginSections,
    pub host: H,
}

impl<H: SectionGroup> Config<H> {
    /// Reads and checks the config file at `path`, or the default file
    /// (`$XDG_CONFIG_HOME/pcp/config.toml`) when `path` is `None`, or the built-in defaults when
    /// there is none. The file and every manifest folder it reaches must be trusted (owned by
    /// the user or root, writable by nobody else).
    pub fn load(path: Option<&Path>) -> Result<Config<H>, ConfigError> {
        let file = match path {
            Some(p) => Some(p.to_path_buf()),
            None => Some(default_config_path()).filter(|p| p.exists()),
        };
        match file {
            Some(file) => Config::load_with(&file, &LoadOptions::default()),
            None => Config::from_text(Path::new(BUILT_IN), "", &LoadOptions::default()),
        }
    }

    /// [`Config::load`] of the file at `path` with the given system folders and trust rules.
    pub fn load_with(path: &Path, options: &LoadOptions) -> Result<Config<H>, ConfigError> {
        let source = read_trusted(path, &options.trust)?;
        Config::from_text(path, &source.text, options)
    }

    /// The config of `text` as if read from `path` (for messages), with the manifest folders it
    /// names read from disk.
    pub fn from_text(
        path: &Path,
        text: &str,
        options: &LoadOptions,
    ) -> Result<Config<H>, ConfigError> {
        let document = document::parse::<(PluginSections, H)>(path, text)?;
        let (plugin, host) = document.sections;
        check(path, text, &plugin, &host)?;
        let gate = GateConfig::from_document(path, text, document.gate, options)?;
        Ok(Config { gate, plugin, host })
    }

    /// Builds a config again from sources read earlier (the policy last approved, as the
    /// state store keeps it), reading no file.
    pub fn from_sources(sources: PolicySources) -> Result<Config<H>, ConfigError> {
        let (path, text) = (&sources.config.path, &sources.config.text);
        let document = document::parse::<(PluginSections, H)>(path, text)?;
        let (plugin, host) = document.sections;
        check(path, text, &plugin, &host)?;
        let gate = GateConfig::from_sources_read(sources, document.gate)?;
        Ok(Config { gate, plugin, host })
    }

    /// What the plugin's and the host's sections say about protection: one fact per key.
    pub fn facts(&self) -> Vec<ProtectionFact> {
        let sections = self.plugin.each().into_iter().chain(self.host.each());
        sections.flat_map(|s| s.facts()).collect()
    }

    /// This config as a policy to propose in place of the one in force.
    pub fn into_proposal(self) -> Proposed {
        let facts = self.facts();
        Proposed {
            gate: self.gate,
            plugin: self.plugin,
            host: Box::new(self.host),
            facts,
        }
    }

    /// Where this config came from, for messages.
    pub fn shown_path(&self) -> String {
        self.gate
            .path
            .as_ref()
            .map_or_else(|| BUILT_IN.to_string(), |p| p.display().to_string())
    }
}

/// Each section's own checks, refusals naming file:line:column and the key.
fn check(
    path: &Path,
    text: &str,
    plugin: &PluginSections,
    host: &impl SectionGroup,
) -> Result<(), ConfigError> {
    for section in plugin.each().into_iter().chain(host.each()) {
        if let Err(Invalid { key, reason }) = section.check() {
            let name = section.name();
            return Err(ConfigError::at_key(
                path,
                text,
                &format!("{name}.{key}"),
                format!("[{name}] {key}: {reason}"),
            ));
        }
    }
    Ok(())
}

/// Checks the config at `path` as [`Config::load`] reads it: what every `validate` subcommand
/// prints on success (`FILE: ok (N capabilities)`), else the refusal.
pub fn validate<H: SectionGroup>(path: Option<&Path>) -> Result<String, ConfigError> {
    let config = Config::<H>::load(path)?;
    Ok(format!(
        "{}: ok ({} capabilities)",
        config.shown_path(),
        config.gate.registry.len()
    ))
}

/// A config proposed in place of the policy in force: the gate's part, the plugin's sections
/// (the plugin applies them when the policy does), the host's (handed back to the host then)
/// and the facts the gate compares.
pub struct Proposed {
    pub gate: GateConfig,
    pub plugin: PluginSections,
    pub host: Box<dyn Any + Send>,
    pub facts: Vec<ProtectionFact>,
}

impl fmt::Debug for Proposed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Proposed")
            .field("gate", &self.gate.path)
            .field("facts", &self.facts.len())
            .finish_non_exhaustive()
    }
}

/// A gate opened at a session start, and the sections in force with it.
pub struct Started<H> {
    pub gate: Gate,
    /// The plugin's sections of the policy in force.
    pub plugin: PluginSections,
    /// The host's sections of the policy in force.
    pub host: H,
    /// The files' policy when it differs from the one last approved: propose it once the
    /// dialog can be shown and answered (`pcp_plugin::policy::propose`).
    pub proposal: Option<Proposed>,
}

/// Opens the gate with the policy last approved (`Gate::start`), `config` being the policy in
/// the files. When they differ, the approved policy is built again from its text, its sections
/// in force, and `config` waits as [`Started::proposal`].
pub fn start<H: SectionGroup>(config: Config<H>, now_ms: i64) -> Result<Started<H>, StoreError> {
    let facts = config.facts();
    let Config { gate, plugin, host } = config;
    let mut approved: Option<(PluginSections, H)> = None;
    let rebuild = |sources| {
        let config = Config::<H>::from_sources(sources)?;
        approved = Some((config.plugin, config.host));
        Ok(config.gate)
    };
    // Every key of the plugin's and the host's sections is a fact: no key rules needed.
    let (gate, found) = Gate::start_with(gate, facts, Vec::new(), now_ms, rebuild)?;
    let StartPolicy::Changed(files, facts) = found else {
        return Ok(Started {
            gate,
            plugin,
            host,
            proposal: None,
        });
    };
    tracing::warn!(
        "the config differs from the policy last approved: that policy stays in force until the \
         change is approved"
    );
    let (in_force_plugin, in_force_host) = approved.unwrap_or_else(|| {
        // The approved text no longer loads (a newer version refused a key): the sections'
        // defaults, under a gate that denies what it cannot build.
        tracing::warn!("the approved config's sections do not load: defaults until approved");
        Default::default()
    });
    Ok(Started {
        gate,
        plugin: in_force_plugin,
        host: in_force_host,
        proposal: Some(Proposed {
            gate: *files,
            plugin,
            host: Box::new(host),
            facts,
        }),
    })
}

//! A loaded config ([`GateConfig`]): the gate's sections checked, the registry built from every
//! manifest they reach (the system folders' first, as the floors) and the texts it was built
//! from, loaded from trusted files or rebuilt from sources read earlier.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{
    ConfigFile, FrictionRules, ManifestConfig, SafetyLevel, check, default_state_path, document,
};
use crate::capability::Origin;
use crate::error::ConfigError;
use crate::registry::Registry;
use crate::sources::{LoadOptions, PolicySources, SourceFile, read_folders, read_trusted};

/// A loaded config: its settings, the registry built from every manifest, and the source text.
#[derive(Debug, Clone)]
pub struct GateConfig {
    pub file: ConfigFile,
    pub registry: Registry,
    /// `[shell_risk]`'s secret lists, compiled once: every classifier rates with them.
    pub secrets: Arc<pcp_shell_risk::Secrets>,
    /// The file it came from, when it came from one.
    pub path: Option<PathBuf>,
    /// The config and manifest texts it was built from.
    pub sources: PolicySources,
}

impl GateConfig {
    /// A config from `text` as if read from `path`, with the manifest folders it names (and the
    /// system folders) read from disk: for tests, built-in defaults and embedders without a file.
    pub fn from_str_at(path: &Path, text: &str) -> Result<GateConfig, ConfigError> {
        GateConfig::from_str_with(path, text, &LoadOptions::default())
    }

    /// [`GateConfig::from_str_at`] with the given system folders and trust rules.
    pub fn from_str_with(
        path: &Path,
        text: &str,
        options: &LoadOptions,
    ) -> Result<GateConfig, ConfigError> {
        let document = document::parse::<()>(path, text)?;
        GateConfig::from_document(path, text, document.gate, options)
    }

    /// The config of `file`, the gate's sections of the `text` of `path` as
    /// [`document::parse`] read them, checked, with the manifest folders it names (and the
    /// system folders) read from disk.
    pub fn from_document(
        path: &Path,
        text: &str,
        file: ConfigFile,
        options: &LoadOptions,
    ) -> Result<GateConfig, ConfigError> {
        check::check(path, text, &file)?;
        let folders = read_folders(path, &file.manifests.dirs, options)?;
        let sources = PolicySources {
            config: SourceFile {
                path: path.to_path_buf(),
                text: text.to_string(),
            },
            folders,
        };
        GateConfig::build(sources, file)
    }

    /// Reads and checks a config file and every manifest it reaches. Each file, and every
    /// folder above it, must be owned by the user or root and writable by nobody else.
    pub fn load(path: &Path) -> Result<GateConfig, ConfigError> {
        GateConfig::load_with(path, &LoadOptions::default())
    }

    /// [`GateConfig::load`] with the given system folders and trust rules.
    pub fn load_with(path: &Path, options: &LoadOptions) -> Result<GateConfig, ConfigError> {
        let source = read_trusted(path, &options.trust)?;
        GateConfig::from_str_with(path, &source.text, options)
    }

    /// Builds a config again from sources read earlier (the last approved policy, kept in the
    /// state store), reading no file.
    pub fn from_sources(sources: PolicySources) -> Result<GateConfig, ConfigError> {
        let (path, text) = (&sources.config.path, &sources.config.text);
        // The other sections were checked by their owners when the policy was approved.
        let file: ConfigFile =
            toml::from_str(text).map_err(|e| ConfigError::from_toml(path, text, &e))?;
        GateConfig::from_sources_read(sources, file)
    }

    /// [`GateConfig::from_sources`] with the gate's sections of its text already read
    /// ([`document::parse`]).
    pub fn from_sources_read(
        sources: PolicySources,
        file: ConfigFile,
    ) -> Result<GateConfig, ConfigError> {
        check::check(&sources.config.path, &sources.config.text, &file)?;
        GateConfig::build(sources, file)
    }

    /// A policy under which every capability is unknown (and so denied), for when the last
    /// approved policy can no longer be built: nothing runs until a new one is approved.
    pub fn deny_all(sources: PolicySources) -> GateConfig {
        GateConfig {
            file: ConfigFile {
                manifests: ManifestConfig { dirs: Vec::new() },
                ..ConfigFile::default()
            },
            registry: Registry::default(),
            secrets: pcp_shell_risk::Secrets::builtin(),
            path: Some(sources.config.path.clone()),
            sources,
        }
    }

    fn build(sources: PolicySources, mut file: ConfigFile) -> Result<GateConfig, ConfigError> {
        let mut registry = Registry::default();
        // System declarations first: they are the floors the user's are checked against.
        for folder in sources.folders.iter().filter(|f| f.system) {
            registry.add_folder(folder)?;
        }
        let inline = std::mem::take(&mut file.capabilities);
        let rules = std::mem::take(&mut file.rules);
        let config = &sources.config;
        registry.add_manifests(&config.path, &config.text, inline, Origin::User)?;
        registry.add_rules(&config.path, &config.text, rules, Origin::User)?;
        for folder in sources.folders.iter().filter(|f| !f.system) {
            registry.add_folder(folder)?;
        }
        Ok(GateConfig {
            secrets: file.shell_risk.secrets(),
            file,
            registry,
            path: Some(sources.config.path.clone()),
            sources,
        })
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

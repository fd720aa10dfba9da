//! The registry: every capability and deny rule the gate knows, built from the trusted
//! manifests (the system's folders, the user's folders and config). A user's declaration may
//! replace a system one only when it keeps or raises its protection (see `lowering`).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;

use crate::capability::{Capability, CapabilityManifest, Origin, validate};
use crate::error::ConfigError;
use crate::rules::{DenyRule, RuleManifest};
use crate::sources::ManifestFolder;

/// Every capability the gate knows, by name, and every deny rule, in the order declared.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    capabilities: BTreeMap<String, Arc<Capability>>,
    rules: Vec<Arc<DenyRule>>,
}

impl Registry {
    pub fn get(&self, name: &str) -> Option<&Arc<Capability>> {
        self.capabilities.get(name)
    }

    pub fn iter(&self) -> impl Iterator<Item = &Arc<Capability>> {
        self.capabilities.values()
    }

    pub fn len(&self) -> usize {
        self.capabilities.len()
    }

    pub fn is_empty(&self) -> bool {
        self.capabilities.is_empty()
    }

    /// Every deny rule, system folders' first.
    pub fn rules(&self) -> impl Iterator<Item = &Arc<DenyRule>> {
        self.rules.iter()
    }

    /// The first deny rule that forbids running `capability` with `params`.
    pub fn deny_rule(&self, capability: &str, params: &Value) -> Option<&Arc<DenyRule>> {
        self.rules.iter().find(|r| r.matches(capability, params))
    }

    /// Adds the `[[rule]]` tables parsed from `file`, whose text is `text`. Two rules with one
    /// name are an error naming both places.
    pub fn add_rules(
        &mut self,
        file: &Path,
        text: &str,
        rules: Vec<RuleManifest>,
        origin: Origin,
    ) -> Result<(), ConfigError> {
        for manifest in rules {
            let rule = crate::rules::validate(file, text, manifest, origin)?;
            if let Some(first) = self.rules.iter().find(|r| r.name == rule.name) {
                return Err(ConfigError::Invalid {
                    location: rule.declared_at.clone(),
                    message: format!(
                        "rule `{}` is declared twice (first at {})",
                        rule.name, first.declared_at
                    ),
                });
            }
            self.rules.push(Arc::new(rule));
        }
        Ok(())
    }

    /// Replaces a capability's version (a capability update); false when it is unknown.
    pub fn set_version(&mut self, name: &str, version: u32) -> bool {
        match self.capabilities.get_mut(name) {
            Some(cap) => {
                Arc::make_mut(cap).version = version;
                true
            }
            None => false,
        }
    }

    /// Adds the manifests parsed from `file`, whose text is `text`, declared with `origin`. A
    /// second declaration of a name from the same origin is an error that names both places; a
    /// user's declaration replaces a system one only when it keeps or raises its protection
    /// (else the error names both files and what would be lowered).
    pub fn add_manifests(
        &mut self,
        file: &Path,
        text: &str,
        manifests: Vec<CapabilityManifest>,
        origin: Origin,
    ) -> Result<(), ConfigError> {
        for manifest in manifests {
            let cap = validate(file, text, manifest, origin)?;
            self.declare(cap)?;
        }
        Ok(())
    }

    fn declare(&mut self, cap: Capability) -> Result<(), ConfigError> {
        if let Some(first) = self.capabilities.get(&cap.name) {
            if first.origin == Origin::System && cap.origin == Origin::User {
                let lowered = crate::lowering::capability_lowerings(first, &cap);
                if !lowered.is_empty() {
                    return Err(ConfigError::Invalid {
                        location: cap.declared_at.clone(),
                        message: format!(
                            "capability `{}` is declared by the system manifest {}; a user's \
                             manifest or config may keep or raise its protection, never lower \
                             it, and this one would: {}",
                            cap.name,
                            first.declared_at,
                            lowered.join("; ")
                        ),
                    });
                }
            } else {
                return Err(ConfigError::Invalid {
                    location: cap.declared_at.clone(),
                    message: format!(
                        "capability `{}` is declared twice (first at {})",
                        cap.name, first.declared_at
                    ),
                });
            }
        }
        self.capabilities.insert(cap.name.clone(), Arc::new(cap));
        Ok(())
    }

    /// Adds every manifest file of a folder read earlier, in name order.
    pub fn add_folder(&mut self, folder: &ManifestFolder) -> Result<(), ConfigError> {
        let origin = if folder.system {
            Origin::System
        } else {
            Origin::User
        };
        for file in &folder.files {
            self.add_text(&file.path, &file.text, origin)?;
        }
        Ok(())
    }

    /// Adds one manifest file's text: `[[capability]]` and `[[rule]]` tables and nothing else.
    pub fn add_text(&mut self, file: &Path, text: &str, origin: Origin) -> Result<(), ConfigError> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct ManifestFile {
            #[serde(default)]
            capability: Vec<CapabilityManifest>,
            #[serde(default)]
            rule: Vec<RuleManifest>,
        }
        let parsed: ManifestFile =
            toml::from_str(text).map_err(|e| ConfigError::from_toml(file, text, &e))?;
        self.add_manifests(file, text, parsed.capability, origin)?;
        self.add_rules(file, text, parsed.rule, origin)
    }
}

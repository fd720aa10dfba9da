//! Capabilities: the trusted manifests that say what an action does and who may run it, the
//! registry built from them, description templates, and the fingerprint of an action's salient
//! parameters. A client can never declare its own risk: it names a capability, nothing more.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use toml::Spanned;

use crate::classify::{ClassesManifest, Classifier, ClassifyKind};
use crate::error::{ConfigError, Location};
use crate::rules::{DenyRule, RuleManifest};
use crate::sources::ManifestFolder;
use crate::types::{AuthLevel, RiskClass, SideEffects};

/// One `[[capability]]` table as written in a config or manifest file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CapabilityManifest {
    pub name: Spanned<String>,
    pub version: Spanned<u32>,
    pub side_effects: SideEffects,
    pub auth_level: AuthLevel,
    pub description: Spanned<String>,
    /// Template for the action's target, e.g. `"{path}"`; else the client's target hint is shown.
    #[serde(default)]
    pub target: Option<Spanned<String>>,
    /// Parameters that make two actions "the same" for friction; absent means all of them.
    #[serde(default)]
    pub salient: Option<Spanned<Vec<String>>>,
    /// A quick, low-risk action a haptic double-tap may confirm on hardware that has it.
    #[serde(default)]
    pub haptic: Option<Spanned<bool>>,
    /// The parameters a client may send; absent means those the templates and `salient` name.
    #[serde(default)]
    pub params: Option<Spanned<Vec<String>>>,
    /// What happens to parameters the manifest does not declare: refused, or shown on the prompt.
    #[serde(default)]
    pub extra_params: Option<Spanned<ExtraParams>>,
    /// The class comes from the intent's parameters, judged by the gate (see [`crate::classify`]).
    #[serde(default)]
    pub classify: Option<Spanned<ClassifyKind>>,
    /// With `classify`: the class of Safe, High and Critical (Moderate is the declared class).
    #[serde(default)]
    pub classes: Option<Spanned<ClassesManifest>>,
}

/// A manifest's rule for parameters it does not declare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExtraParams {
    /// The intent is denied `invalid_params`: nothing the token covers goes unnamed.
    #[default]
    Refuse,
    /// Allowed, and the prompt lists every one of them.
    Show,
}

impl ExtraParams {
    pub fn as_str(self) -> &'static str {
        match self {
            ExtraParams::Refuse => "refuse",
            ExtraParams::Show => "show",
        }
    }
}

/// A capability the gate knows, with where it was declared.
#[derive(Debug, Clone, PartialEq)]
pub struct Capability {
    pub name: String,
    pub version: u32,
    pub side_effects: SideEffects,
    pub auth_level: AuthLevel,
    pub description: Template,
    pub target: Option<Template>,
    pub salient: Option<Vec<String>>,
    pub haptic: bool,
    /// The parameters a client may send (explicit, or those the templates and `salient` name).
    pub params: Vec<String>,
    pub extra_params: ExtraParams,
    /// The gate classifies each intent's parameters for its class (`classify`).
    pub classifier: Option<Classifier>,
    pub declared_at: Location,
    /// A system folder's declaration, or the user's (folder or config).
    pub origin: Origin,
}

/// Where a capability was declared: the system's manifest folders, which only root should be
/// able to change, or the user's own folders and config.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Origin {
    System,
    User,
}

impl Capability {
    pub fn risk(&self) -> RiskClass {
        RiskClass::of(self.side_effects, self.auth_level)
    }

    /// The parameters that identify "the same action": the salient ones, or all.
    pub fn salient_params(&self, params: &Value) -> Value {
        match (&self.salient, params) {
            (Some(keys), Value::Object(map)) => Value::Object(
                keys.iter()
                    .map(|k| (k.clone(), map.get(k).cloned().unwrap_or(Value::Null)))
                    .collect(),
            ),
            _ => params.clone(),
        }
    }

    /// Checks `params` (an object) against the declared parameters: the first undeclared one is
    /// an error naming it, unless the manifest shows extra parameters.
    pub fn check_params(&self, params: &Value) -> Result<(), String> {
        if self.extra_params == ExtraParams::Show {
            return Ok(());
        }
        let Value::Object(map) = params else {
            return Ok(());
        };
        match map.keys().find(|k| !self.params.iter().any(|p| p == *k)) {
            Some(undeclared) => Err(format!(
                "capability `{}` does not declare the parameter `{undeclared}` (declared at {}; \
                 it declares {})",
                self.name,
                self.declared_at,
                if self.params.is_empty() {
                    "none".to_string()
                } else {
                    self.params
                        .iter()
                        .map(|p| format!("`{p}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            )),
            None => Ok(()),
        }
    }

    /// Every parameter in `params` that neither the description nor the target shows, as
    /// (name, value) in name order, so a prompt can list what its text leaves out.
    pub fn unshown_params(&self, params: &Value) -> Vec<(String, String)> {
        let Value::Object(map) = params else {
            return Vec::new();
        };
        map.iter()
            .filter(|(k, _)| {
                !self.description.names(k) && !self.target.as_ref().is_some_and(|t| t.names(k))
            })
            .map(|(k, v)| (k.clone(), display_value(v)))
            .collect()
    }
}

/// A parameter's value as a prompt shows it: a string as it is, anything else as JSON.
pub fn display_value(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A description template: text with `{param}` holes; `{{` and `}}` are literal braces.
#[derive(Debug, Clone, PartialEq)]
pub struct Template {
    parts: Vec<TemplatePart>,
}

#[derive(Debug, Clone, PartialEq)]
enum TemplatePart {
    Text(String),
    Param(String),
}

impl Template {
    /// Parses a template; the error gives the byte offset inside `text` and what is wrong.
    pub fn parse(text: &str) -> Result<Template, (usize, String)> {
        let mut parts = Vec::new();
        let mut literal = String::new();
        let mut chars = text.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            match c {
                '{' if chars.peek().map(|&(_, n)| n) == Some('{') => {
                    chars.next();
                    literal.push('{');
                }
                '}' if chars.peek().map(|&(_, n)| n) == Some('}') => {
                    chars.next();
                    literal.push('}');
                }
                '{' => {
                    let mut name = String::new();
                    let mut closed = false;
                    for (_, n) in chars.by_ref() {
                        if n == '}' {
                            closed = true;
                            break;
                        }
                        name.push(n);
                    }
                    if !closed {
                        return Err((
                            i,
                            "unclosed `{` in template (write `{{` for a brace)".into(),
                        ));
                    }
                    if !is_identifier(&name) {
                        return Err((i, format!("`{{{name}}}` is not a parameter name")));
                    }
                    if !literal.is_empty() {
                        parts.push(TemplatePart::Text(std::mem::take(&mut literal)));
                    }
                    parts.push(TemplatePart::Param(name));
                }
                '}' => return Err((i, "stray `}` in template (write `}}` for a brace)".into())),
                c => literal.push(c),
            }
        }
        if !literal.is_empty() {
            parts.push(TemplatePart::Text(literal));
        }
        Ok(Template { parts })
    }

    /// Whether the template shows parameter `name`.
    pub fn names(&self, name: &str) -> bool {
        self.params().any(|p| p == name)
    }

    /// Fills the holes from `params`; a missing parameter stays visible as `{name}`.
    pub fn render(&self, params: &Value) -> String {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                TemplatePart::Text(t) => out.push_str(t),
                TemplatePart::Param(name) => match params.get(name) {
                    Some(Value::String(s)) => out.push_str(s),
                    Some(Value::Null) | None => {
                        out.push('{');
                        out.push_str(name);
                        out.push('}');
                    }
                    Some(other) => out.push_str(&other.to_string()),
                },
            }
        }
        out
    }
}

impl std::fmt::Display for Template {
    /// The template as it would be written, holes and escaped braces included.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for part in &self.parts {
            match part {
                TemplatePart::Text(t) => f.write_str(&t.replace('{', "{{").replace('}', "}}"))?,
                TemplatePart::Param(name) => write!(f, "{{{name}}}")?,
            }
        }
        Ok(())
    }
}

impl Template {
    /// The parameter names the template fills.
    pub fn params(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|p| match p {
            TemplatePart::Param(name) => Some(name.as_str()),
            TemplatePart::Text(_) => None,
        })
    }
}

fn is_identifier(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
}

fn is_capability_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-'))
        && !name.starts_with('.')
        && !name.ends_with('.')
}

/// Canonical JSON: object keys sorted (serde_json's map is ordered), no insignificant space.
pub fn canonical_json(value: &Value) -> String {
    value.to_string()
}

/// Lowercase hex of `bytes` (a table lookup: this runs for every audit record).
pub fn lower_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    out
}

/// SHA-256 (hex) of the canonical JSON of `value`.
pub fn digest(value: &Value) -> String {
    lower_hex(&Sha256::digest(canonical_json(value).as_bytes()))
}

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
                let lowered = crate::policy::capability_lowerings(first, &cap);
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

/// Capability names the gate keeps for its own prompts (`pcp.policy.change`).
pub const RESERVED_PREFIX: &str = "pcp.";

fn validate(
    file: &Path,
    text: &str,
    m: CapabilityManifest,
    origin: Origin,
) -> Result<Capability, ConfigError> {
    let err = |span: std::ops::Range<usize>, msg: String| {
        ConfigError::invalid(file, text, span.start, msg)
    };
    // `prefix.*` declares a family (see `family`): the prefix must be a capability name.
    let base = m.name.get_ref().strip_suffix(crate::family::FAMILY_SUFFIX);
    if !is_capability_name(base.unwrap_or(m.name.get_ref())) {
        return Err(err(
            m.name.span(),
            format!(
                "`{}` is not a capability name (lowercase letters, digits, `.`, `_`, `-`)",
                m.name.get_ref()
            ),
        ));
    }
    if m.name.get_ref().starts_with(RESERVED_PREFIX) {
        return Err(err(
            m.name.span(),
            format!(
                "`{}` is reserved: names starting with `{RESERVED_PREFIX}` are the gate's own",
                m.name.get_ref()
            ),
        ));
    }
    if *m.version.get_ref() == 0 {
        return Err(err(m.version.span(), "version must be 1 or more".into()));
    }
    let template = |s: &Spanned<String>| {
        // The span covers the quoted string; +1 skips the opening quote for a basic string.
        Template::parse(s.get_ref()).map_err(|(offset, msg)| {
            ConfigError::invalid(file, text, s.span().start + 1 + offset, msg)
        })
    };
    let description = template(&m.description)?;
    if m.description.get_ref().trim().is_empty() {
        return Err(err(
            m.description.span(),
            "description must not be empty".into(),
        ));
    }
    let target = m.target.as_ref().map(template).transpose()?;
    if let Some(salient) = &m.salient
        && let Some(bad) = salient.get_ref().iter().find(|k| !is_identifier(k))
    {
        return Err(err(
            salient.span(),
            format!("`{bad}` is not a parameter name"),
        ));
    }
    let mut params = declared_params(file, text, &m, &description, target.as_ref())?;
    let classifier = crate::classify::from_manifest(file, text, &m, &mut params)?;
    let risk = RiskClass::of(m.side_effects, m.auth_level);
    let haptic = match &m.haptic {
        Some(h) if *h.get_ref() && !risk.allows_haptic_alone() => {
            return Err(err(
                h.span(),
                format!(
                    "haptic = true is not allowed for a {} capability: a double-tap is never \
                     the only confirmation of a destructive or system action",
                    risk.as_str()
                ),
            ));
        }
        Some(h) => *h.get_ref(),
        None => false,
    };
    Ok(Capability {
        declared_at: Location::at(file, text, m.name.span().start),
        name: m.name.into_inner(),
        version: m.version.into_inner(),
        side_effects: m.side_effects,
        auth_level: m.auth_level,
        description,
        target,
        salient: m.salient.map(Spanned::into_inner),
        haptic,
        origin,
        params,
        classifier,
        extra_params: m
            .extra_params
            .map_or(ExtraParams::Refuse, Spanned::into_inner),
    })
}

/// The parameters a manifest declares: its `params` list, which must include every parameter
/// its templates and `salient` name; without one, exactly those.
fn declared_params(
    file: &Path,
    text: &str,
    m: &CapabilityManifest,
    description: &Template,
    target: Option<&Template>,
) -> Result<Vec<String>, ConfigError> {
    let named = description
        .params()
        .chain(target.into_iter().flat_map(Template::params))
        .map(str::to_string)
        .chain(m.salient.iter().flat_map(|s| s.get_ref().iter().cloned()));
    let Some(list) = &m.params else {
        let mut all: Vec<String> = named.collect();
        all.sort();
        all.dedup();
        return Ok(all);
    };
    let at = |msg: String| ConfigError::invalid(file, text, list.span().start, msg);
    let mut declared: Vec<String> = Vec::with_capacity(list.get_ref().len());
    for p in list.get_ref() {
        if !is_identifier(p) {
            return Err(at(format!("`{p}` is not a parameter name")));
        }
        if declared.contains(p) {
            return Err(at(format!("parameter `{p}` is listed twice")));
        }
        declared.push(p.clone());
    }
    for name in named {
        if !declared.contains(&name) {
            return Err(at(format!(
                "`{name}` is used by the description, target or salient list but missing from \
                 params"
            )));
        }
    }
    declared.sort();
    Ok(declared)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn template_fills_params_and_keeps_missing_ones_visible() {
        let t = Template::parse("Delete {path} ({size} bytes) {{literal}}").unwrap();
        assert_eq!(
            t.render(&json!({"path": "/tmp/a", "size": 12})),
            "Delete /tmp/a (12 bytes) {literal}"
        );
        assert_eq!(
            t.render(&json!({})),
            "Delete {path} ({size} bytes) {literal}"
        );
    }

    #[test]
    fn template_errors_point_at_the_problem() {
        assert_eq!(Template::parse("ab {x").unwrap_err().0, 3);
        assert_eq!(Template::parse("ab }").unwrap_err().0, 3);
        assert!(Template::parse("{ spaced }").is_err());
    }

    #[test]
    fn lower_hex_matches_the_hex_crate() {
        let bytes: Vec<u8> = (0..=255).collect();
        assert_eq!(lower_hex(&bytes), hex::encode(&bytes));
    }

    #[test]
    fn canonical_json_sorts_keys_so_digests_ignore_order() {
        let a: Value = serde_json::from_str(r#"{"b":1,"a":{"y":2,"x":1}}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"a":{"x":1,"y":2},"b":1}"#).unwrap();
        assert_eq!(canonical_json(&a), r#"{"a":{"x":1,"y":2},"b":1}"#);
        assert_eq!(digest(&a), digest(&b));
    }
}

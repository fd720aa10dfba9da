//! Capabilities: the trusted manifests that say what an action does and who may run it, each
//! checked into a capability, description templates, and the fingerprint of an action's salient
//! parameters (the registry of them all is `registry`). A client can never declare its own risk:
//! it names a capability, nothing more.

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use toml::Spanned;

use crate::classify::{ClassManifest, ClassesManifest, Classifier, ClassifyKind};
use crate::error::{ConfigError, Location};
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

/// The suffix that makes a declaration a family (`mcp.*`, see `family`): part of how a manifest
/// names its capability, so checked here.
pub const FAMILY_SUFFIX: &str = ".*";

/// Capability names the gate keeps for its own prompts (`pcp.policy.change`).
pub const RESERVED_PREFIX: &str = "pcp.";

/// The capability manifest `m` declares, checked; errors point into `text`, the file's text.
pub(crate) fn validate(
    file: &Path,
    text: &str,
    m: CapabilityManifest,
    origin: Origin,
) -> Result<Capability, ConfigError> {
    let err = |span: std::ops::Range<usize>, msg: String| {
        ConfigError::invalid(file, text, span.start, msg)
    };
    // `prefix.*` declares a family (see `family`): the prefix must be a capability name.
    let base = m.name.get_ref().strip_suffix(FAMILY_SUFFIX);
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
    let classifier = declared_classifier(file, text, &m, &mut params)?;
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

/// The classifier a manifest declares, checked: `classes` needs `classify`; a classified
/// capability is never confirmed by a haptic tap alone; it declares (or is given) the parameters
/// the classifier reads.
fn declared_classifier(
    file: &Path,
    text: &str,
    m: &CapabilityManifest,
    params: &mut Vec<String>,
) -> Result<Option<Classifier>, ConfigError> {
    let Some(kind) = &m.classify else {
        if let Some(classes) = &m.classes {
            return Err(ConfigError::invalid(
                file,
                text,
                classes.span().start,
                "`classes` needs `classify` (\"shell\" or \"path\")",
            ));
        }
        return Ok(None);
    };
    if let Some(h) = &m.haptic
        && *h.get_ref()
    {
        return Err(ConfigError::invalid(
            file,
            text,
            h.span().start,
            "haptic = true is not allowed with `classify`: a classified action can be destructive",
        ));
    }
    let kind = *kind.get_ref();
    for needed in [kind.subject(), "cwd"] {
        if !params.iter().any(|p| p == needed) {
            if let Some(list) = &m.params {
                return Err(ConfigError::invalid(
                    file,
                    text,
                    list.span().start,
                    format!(
                        "classify = \"{}\" reads `{needed}`: add it to params",
                        kind.as_str()
                    ),
                ));
            }
            params.push(needed.to_string());
            params.sort();
        }
    }
    let moderate = ClassManifest {
        side_effects: m.side_effects,
        auth_level: m.auth_level,
    };
    let table = m.classes.as_ref().map(|c| *c.get_ref()).unwrap_or_default();
    Ok(Some(Classifier::new(kind, moderate, table)))
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

//! Explicit deny rules: `[[rule]]` tables in the config and in manifests that forbid a
//! capability (a glob on its name, optionally globs on parameter values) outright. They are
//! evaluated before anything else — a known or unknown capability, friction history, a session
//! approval — and a matching intent is denied `policy_deny` with the rule's reason.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;
use toml::Spanned;

use crate::capability::{Origin, display_value};
use crate::error::{ConfigError, Location};

/// The only decision a rule can make: rules only ever add protection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleDecision {
    Deny,
}

/// One `[[rule]]` table as written in a config or manifest file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleManifest {
    /// A name for the audit log and `explain`; default: where the rule is written.
    #[serde(default)]
    pub name: Option<Spanned<String>>,
    /// A glob on capability names: `*` any run of characters, `?` one character.
    pub capability: Spanned<String>,
    pub decision: RuleDecision,
    /// Why: the denial's reason, shown to the client and written to the audit log.
    pub reason: Spanned<String>,
    /// Globs on parameter values (strings as they are, other values as JSON): the rule matches
    /// only an intent whose parameters match every one.
    #[serde(default)]
    pub params: Option<Spanned<BTreeMap<String, String>>>,
}

/// A glob: `*` matches any run of characters (dots included), `?` exactly one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob(String);

impl Glob {
    pub fn new(pattern: &str) -> Glob {
        Glob(pattern.to_string())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `text` matches the whole pattern.
    pub fn matches(&self, text: &str) -> bool {
        let pattern: Vec<char> = self.0.chars().collect();
        let text: Vec<char> = text.chars().collect();
        // Iterative matching with one backtrack point for the last `*`: linear in practice,
        // never exponential whatever the pattern.
        let (mut p, mut t) = (0, 0);
        let mut star: Option<(usize, usize)> = None;
        while t < text.len() {
            match pattern.get(p) {
                Some('*') => {
                    star = Some((p, t));
                    p += 1;
                }
                Some('?') => {
                    p += 1;
                    t += 1;
                }
                Some(&c) if c == text[t] => {
                    p += 1;
                    t += 1;
                }
                _ => match star {
                    Some((sp, st)) => {
                        p = sp + 1;
                        t = st + 1;
                        star = Some((sp, st + 1));
                    }
                    None => return false,
                },
            }
        }
        pattern[p..].iter().all(|&c| c == '*')
    }
}

/// A deny rule the gate enforces.
#[derive(Debug, Clone, PartialEq)]
pub struct DenyRule {
    /// Its `name`, or `file:line:column` where it is written.
    pub name: String,
    pub capability: Glob,
    pub params: Vec<(String, Glob)>,
    pub reason: String,
    pub declared_at: Location,
    pub origin: Origin,
}

impl DenyRule {
    /// Whether the rule forbids running `capability` with `params`.
    pub fn matches(&self, capability: &str, params: &Value) -> bool {
        self.capability.matches(capability)
            && self.params.iter().all(|(key, glob)| {
                params
                    .get(key)
                    .is_some_and(|v| glob.matches(&display_value(v)))
            })
    }

    /// The rule as the policy comparison and `explain` show it.
    pub fn summary(&self) -> String {
        let mut out = format!("deny {}", self.capability.as_str());
        for (key, glob) in &self.params {
            out.push_str(&format!(" {key}={}", glob.as_str()));
        }
        out.push_str(&format!(": {}", self.reason));
        out
    }
}

/// Checks a `[[rule]]` table written in `file` (whose text is `text`).
pub fn validate(
    file: &Path,
    text: &str,
    m: RuleManifest,
    origin: Origin,
) -> Result<DenyRule, ConfigError> {
    let err = |span: std::ops::Range<usize>, msg: String| {
        ConfigError::invalid(file, text, span.start, msg)
    };
    let pattern = m.capability.get_ref();
    let allowed = |c: char| {
        c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-' | '*' | '?')
    };
    if pattern.is_empty() || !pattern.chars().all(allowed) {
        return Err(err(
            m.capability.span(),
            format!(
                "`{pattern}` is not a capability pattern (lowercase letters, digits, `.`, `_`, \
                 `-`, and `*` or `?` as wildcards)"
            ),
        ));
    }
    if m.reason.get_ref().trim().is_empty() {
        return Err(err(
            m.reason.span(),
            "a rule needs a reason: it is what the denial says".into(),
        ));
    }
    let declared_at = Location::at(file, text, m.capability.span().start);
    let name = match &m.name {
        Some(name) if name.get_ref().trim().is_empty() => {
            return Err(err(name.span(), "a rule's name must not be empty".into()));
        }
        Some(name) => name.get_ref().clone(),
        None => declared_at.to_string(),
    };
    let params = m
        .params
        .map(|p| {
            p.into_inner()
                .into_iter()
                .map(|(k, v)| (k, Glob::new(&v)))
                .collect()
        })
        .unwrap_or_default();
    Ok(DenyRule {
        name,
        capability: Glob::new(pattern),
        params,
        reason: m.reason.into_inner(),
        declared_at,
        origin,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn globs_match_whole_names_with_stars_and_question_marks() {
        let g = Glob::new("disk.*");
        assert!(g.matches("disk.format"));
        assert!(g.matches("disk."));
        assert!(g.matches("disk.a.b"));
        assert!(!g.matches("disks.format"));
        assert!(!g.matches("my.disk.format"));
        assert!(Glob::new("*").matches(""));
        assert!(Glob::new("file.?rite").matches("file.write"));
        assert!(!Glob::new("file.?rite").matches("file.wwrite"));
        assert!(Glob::new("*.delete").matches("file.delete"));
        assert!(Glob::new("a*b*c").matches("aXXbYYc"));
        assert!(!Glob::new("a*b*c").matches("aXXbYY"));
        assert!(Glob::new("/dev/sd*").matches("/dev/sda1"));
        // No exponential blow-up on a pathological pattern.
        let long = "a".repeat(200);
        assert!(!Glob::new(&"*a".repeat(50)).matches(&format!("{long}b")));
    }

    #[test]
    fn a_rule_with_params_matches_only_when_every_param_matches() {
        let rule = DenyRule {
            name: "r".into(),
            capability: Glob::new("disk.*"),
            params: vec![("device".into(), Glob::new("/dev/sd*"))],
            reason: "no".into(),
            declared_at: Location {
                file: "x".into(),
                line: 1,
                column: 1,
            },
            origin: Origin::User,
        };
        assert!(rule.matches("disk.format", &json!({"device": "/dev/sda"})));
        assert!(!rule.matches("disk.format", &json!({"device": "/dev/nvme0"})));
        assert!(!rule.matches("disk.format", &json!({})));
        assert!(!rule.matches("file.delete", &json!({"device": "/dev/sda"})));
    }
}

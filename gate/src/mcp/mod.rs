//! MCP tool calls (`mcp.SERVER.TOOL`, from `pcpctl mcp` and the agent hooks), rated by the gate
//! from the call's parameters like `classify` rates a shell command: a client's and a server's
//! claims can raise the class, never lower it.
//!
//! - The class starts from the capability's manifest: declared by its own name, that manifest
//!   decides; otherwise the `mcp.*` family's floor, raised by the server's own annotations
//!   (`destructiveHint: true` → destructive, `openWorldHint: true` → network; `readOnlyHint`
//!   never lowers anything).
//! - Arguments that are shell commands are rated like `shell.exec`'s `command`, paths like a
//!   file write's `path` (a tool declared read-only has its paths read, not written); see
//!   `arguments` for how they are found.
//! - The tool's definition hash (`definition`) is compared with the one the user last allowed
//!   (kept in the state store, per profile and capability); a different one, or the gateway's
//!   word that it changed, appeared mid-session or was never listed (`listing`), asks at least
//!   with a visual prompt that says so. The hash is part of the friction fingerprint, so a
//!   changed definition starts its history again.

mod arguments;
pub mod config;
mod prompt;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use pcp_shell_risk::{Assessment, Context, ReadKind, Risk, Secrets};
use serde_json::Value;

pub use config::McpConfig;
pub(crate) use prompt::prompt_lines;

use crate::capability::Capability;
use crate::classify::Classified;
use crate::types::{AuthLevel, SideEffects};
use arguments::Role;

/// The capabilities this module rates: every name under it.
pub const PREFIX: &str = "mcp.";

/// The parameters an MCP tool call may carry, whatever its manifest lists: the call's
/// `arguments`, the working folder `cwd`, and what the gateway knows of the server and the tool.
pub const CALL_PARAMS: [&str; 8] = [
    "arguments",
    "cwd",
    "server",
    "command",
    "tool",
    "definition",
    "annotations",
    "listing",
];

/// The parameters the prompt does not list as they are: shown in words, or not at all.
pub(crate) const HIDDEN_PARAMS: [&str; 7] = [
    "arguments",
    "server",
    "command",
    "tool",
    "definition",
    "annotations",
    "listing",
];

/// Longest capability name the protocol carries.
const MAX_CAPABILITY_BYTES: usize = 128;

/// A server's or a tool's name as a part of a capability name: lowercase ASCII letters, digits,
/// `_` and `-`, every other character `_` (`GitHub` → `github`, `get.issue` → `get_issue`).
pub fn capability_part(name: &str) -> String {
    let part: String = name
        .chars()
        .map(|c| {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if part.is_empty() { "_".into() } else { part }
}

/// The capability of tool `tool` of server `server`: `mcp.SERVER.TOOL`. A name longer than the
/// protocol carries keeps its start and ends with a hash of the whole, so two long names never
/// meet.
pub fn capability(server: &str, tool: &str) -> String {
    let name = format!(
        "{PREFIX}{}.{}",
        capability_part(server),
        capability_part(tool)
    );
    if name.len() <= MAX_CAPABILITY_BYTES {
        return name;
    }
    use sha2::{Digest, Sha256};
    let hash = crate::capability::lower_hex(&Sha256::digest(name.as_bytes()));
    // Every character is ASCII: any byte offset is a character boundary.
    format!("{}-{}", &name[..MAX_CAPABILITY_BYTES - 17], &hash[..16])
}

/// Whether `capability` is an MCP tool call.
pub fn is_mcp(capability: &str) -> bool {
    capability.starts_with(PREFIX)
}

/// Why a tool's definition is not simply the one allowed before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notice {
    /// It differs from the one the user last allowed, or changed during the session.
    Changed,
    /// It was not in the server's first listing of the session.
    Appeared,
    /// The server never listed it.
    Unlisted,
}

impl Notice {
    /// The words the prompt shows for it.
    pub fn text(self, config: &McpConfig) -> &str {
        match self {
            Notice::Changed => &config.changed,
            Notice::Appeared => &config.appeared,
            Notice::Unlisted => &config.unlisted,
        }
    }
}

/// The gate's rating of one MCP tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct McpRating {
    pub side_effects: SideEffects,
    pub auth_level: AuthLevel,
    /// The rating of its commands and paths, when it has any (the prompt's risk line).
    pub classified: Option<Classified>,
    pub notice: Option<Notice>,
}

/// Checks `params` against `cap`'s manifest; an MCP tool call's own parameters
/// ([`CALL_PARAMS`]) are accepted whatever the manifest lists.
pub(crate) fn check_params(cap: &Capability, params: &Value) -> Result<(), String> {
    match params {
        Value::Object(map)
            if is_mcp(&cap.name) && map.keys().any(|k| CALL_PARAMS.contains(&k.as_str())) =>
        {
            let rest: serde_json::Map<String, Value> = map
                .iter()
                .filter(|(k, _)| !CALL_PARAMS.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            cap.check_params(&Value::Object(rest))
        }
        _ => cap.check_params(params),
    }
}

/// The salient parameters an MCP tool call's friction history is kept by: the manifest's, with
/// the definition hash added (a changed definition starts its history again) and the
/// gateway's `listing` left out (a tool allowed once as new is the same tool later).
pub(crate) fn fingerprinted(salient: Value, params: &Value) -> Value {
    let Value::Object(mut map) = salient else {
        return salient;
    };
    map.remove("listing");
    if let Some(d) = params.get("definition") {
        map.insert("definition".into(), d.clone());
    }
    Value::Object(map)
}

/// The definition hash a call names, if it names one.
pub fn definition(params: &Value) -> Option<&str> {
    params.get("definition").and_then(Value::as_str)
}

/// What an MCP tool call is rated against: the `[mcp]` settings and the secret lists.
pub(crate) struct Rules<'a> {
    pub config: &'a McpConfig,
    pub secrets: &'a Arc<Secrets>,
}

/// Rates an MCP tool call of `cap` (declared by its own name when `exact`, else a family
/// member) with `params`; `pinned` is the definition the user last allowed. The error names the
/// malformed parameter.
pub(crate) fn rate(
    cap: &Capability,
    exact: bool,
    params: &Value,
    pinned: Option<&str>,
    rules: &Rules<'_>,
) -> Result<McpRating, String> {
    let call = Call::read(params)?;
    let mut class = (cap.side_effects, cap.auth_level);
    if !exact && let Some(annotations) = call.annotations {
        class = raised_by_annotations(class, annotations);
    }
    let reads_only = matches!(cap.side_effects, SideEffects::None | SideEffects::Read);
    let classified = rate_arguments(&call, reads_only, class, rules);
    if let Some(c) = &classified {
        class = raise(class, (c.side_effects, c.auth_level));
    }
    let changed = matches!((pinned, call.definition), (Some(p), Some(d)) if p != d);
    let notice = match call.listing {
        _ if changed => Some(Notice::Changed),
        Some("changed") => Some(Notice::Changed),
        Some("appeared") => Some(Notice::Appeared),
        Some("unlisted") => Some(Notice::Unlisted),
        _ => None,
    };
    if notice.is_some() {
        class = raise(class, (SideEffects::Write, AuthLevel::Privileged));
    }
    Ok(McpRating {
        side_effects: class.0,
        auth_level: class.1,
        classified,
        notice,
    })
}

/// The parameters of a call, checked.
struct Call<'a> {
    arguments: Option<&'a Value>,
    /// The working folder; `None` when unknown (every path then counts as outside it).
    cwd: Option<PathBuf>,
    annotations: Option<&'a serde_json::Map<String, Value>>,
    definition: Option<&'a str>,
    listing: Option<&'a str>,
}

impl<'a> Call<'a> {
    fn read(params: &'a Value) -> Result<Call<'a>, String> {
        let arguments = match params.get("arguments") {
            None | Some(Value::Null) => None,
            Some(v @ Value::Object(_)) => Some(v),
            Some(_) => return Err("parameter `arguments` must be a JSON object".into()),
        };
        let cwd = match params.get("cwd") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if s.starts_with('/') => Some(PathBuf::from(s)),
            Some(other) => {
                return Err(format!(
                    "parameter `cwd` must be an absolute folder or null, not {other}"
                ));
            }
        };
        let annotations = match params.get("annotations") {
            None | Some(Value::Null) => None,
            Some(Value::Object(map)) => Some(map),
            Some(_) => return Err("parameter `annotations` must be a JSON object".into()),
        };
        let definition = match params.get("definition") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if is_hash(s) => Some(s.as_str()),
            Some(_) => {
                return Err(
                    "parameter `definition` must be a SHA-256 hash in lowercase hex".into(),
                );
            }
        };
        let listing = match params.get("listing") {
            None | Some(Value::Null) => None,
            Some(Value::String(s))
                if matches!(s.as_str(), "listed" | "changed" | "appeared" | "unlisted") =>
            {
                Some(s.as_str())
            }
            Some(other) => {
                return Err(format!(
                    "parameter `listing` must be listed, changed, appeared or unlisted, not \
                     {other}"
                ));
            }
        };
        for key in ["server", "command", "tool"] {
            if let Some(v) = params.get(key)
                && !v.is_string()
            {
                return Err(format!("parameter `{key}` must be a string"));
            }
        }
        Ok(Call {
            arguments,
            cwd,
            annotations,
            definition,
            listing,
        })
    }
}

fn is_hash(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The class the server's own annotations ask for, never below `class`: only an explicit
/// `true` counts (the spec's defaults are no claim).
fn raised_by_annotations(
    class: (SideEffects, AuthLevel),
    annotations: &serde_json::Map<String, Value>,
) -> (SideEffects, AuthLevel) {
    let claims = |key: &str| annotations.get(key) == Some(&Value::Bool(true));
    let mut class = class;
    if claims("destructiveHint") {
        class = raise(class, (SideEffects::Destructive, class.1));
    }
    if claims("openWorldHint") {
        class = raise(class, (SideEffects::Network, class.1));
    }
    class
}

/// The higher of two classes: by threshold, then by side effects (friction floors), then by
/// auth level.
pub(crate) fn raise(
    a: (SideEffects, AuthLevel),
    b: (SideEffects, AuthLevel),
) -> (SideEffects, AuthLevel) {
    let rank = |(se, auth): (SideEffects, AuthLevel)| {
        let se_rank = match se {
            SideEffects::None => 0,
            SideEffects::Read => 1,
            SideEffects::Write => 2,
            SideEffects::Network => 3,
            SideEffects::Destructive => 4,
            SideEffects::System => 5,
        };
        let auth_rank = u8::from(auth == AuthLevel::Privileged);
        (crate::threshold::table(se, auth), se_rank, auth_rank)
    };
    if rank(b) > rank(a) { b } else { a }
}

/// Rates the call's commands and paths (paths as reads when the tool only reads: a secret read
/// asks, naming it): the highest level wins, and picks the class it asks for. `None` when the
/// call has none.
fn rate_arguments(
    call: &Call<'_>,
    reads_only: bool,
    base: (SideEffects, AuthLevel),
    rules: &Rules<'_>,
) -> Option<Classified> {
    let found = arguments::find(call.arguments?, rules.config);
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute());
    let cwd = call.cwd.as_deref().unwrap_or(Path::new(""));
    let ctx = Context::new(cwd, home).with_secrets(Arc::clone(rules.secrets));
    let mut reasons = Vec::new();
    let mut class = base;
    let mut risk = Risk::Moderate;
    for subject in &found.subjects {
        let (assessment, levels) = match subject.role {
            Role::Command => (rate_command(&subject.text, &ctx), COMMAND),
            Role::Path if reads_only => (
                pcp_shell_risk::classify_read(&subject.text, ReadKind::File, &ctx),
                READ,
            ),
            Role::Path if call.cwd.is_none() => (
                pcp_shell_risk::classify_path_outside(&subject.text, &ctx),
                PATH,
            ),
            Role::Path => (pcp_shell_risk::classify_path(&subject.text, &ctx), PATH),
        };
        if let Some(level) = levels[level_index(assessment.risk)] {
            class = raise(class, level);
        }
        risk = risk.max(assessment.risk);
        reasons.extend(assessment.reasons);
    }
    if found.overflow {
        risk = risk.max(Risk::High);
        class = raise(class, (SideEffects::Write, AuthLevel::Privileged));
    }
    if reasons.is_empty() && !found.overflow {
        return None;
    }
    reasons.sort_by_key(|r| std::cmp::Reverse(r.risk));
    Some(Classified {
        risk,
        side_effects: class.0,
        auth_level: class.1,
        assessment: Assessment { risk, reasons },
    })
}

/// The class each level of a command raises to (Safe and Moderate keep the tool's own).
const COMMAND: [Option<(SideEffects, AuthLevel)>; 4] = [
    None,
    None,
    Some((SideEffects::Destructive, AuthLevel::User)),
    Some((SideEffects::System, AuthLevel::Privileged)),
];
/// The class each level of a read path raises to: a secret (High) asks with the dialog; a read
/// outside the working folder (Moderate) keeps the tool's class, as the server keeps to the
/// folders it was given.
const READ: [Option<(SideEffects, AuthLevel)>; 4] = [
    None,
    None,
    Some((SideEffects::Write, AuthLevel::Privileged)),
    Some((SideEffects::System, AuthLevel::Privileged)),
];
/// The class each level of a written path raises to.
const PATH: [Option<(SideEffects, AuthLevel)>; 4] = [
    None,
    None,
    Some((SideEffects::Write, AuthLevel::Privileged)),
    Some((SideEffects::System, AuthLevel::Privileged)),
];

fn level_index(risk: Risk) -> usize {
    match risk {
        Risk::Safe => 0,
        Risk::Moderate => 1,
        Risk::High => 2,
        Risk::Critical => 3,
    }
}

/// A command's rating in the call's folder (an empty one when unknown: then only the home
/// folder, dotfiles, start-up files, system folders and devices place a path).
fn rate_command(command: &str, ctx: &Context) -> Assessment {
    pcp_shell_risk::classify(command, ctx)
}

#[cfg(test)]
mod tests;

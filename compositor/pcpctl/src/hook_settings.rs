//! What pcpctl knows of each agent CLI's own settings, read from the CLIs themselves (Claude
//! Code 2.1.197, Codex CLI 0.171.0, Gemini CLI 0.61.0; docs/agents-hooks.md): which files hold
//! hooks, in which units and with which default a hook's timeout is given, how a matcher picks
//! tools, and which of the tools the hook maps it must see. `pcpctl hook install`, `pcpctl hook
//! check` and the hook itself (to keep its deadline under the CLI's timeout) all read through
//! here; [`crate::hook_entries`] reads the hooks a file installs.

use std::path::{Path, PathBuf};

use crate::hook::Harness;

/// How a settings file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Plain JSON (Claude Code's `settings.json`, Codex's `hooks.json`).
    Json,
    /// JSON with `//` and `/* */` comments (Gemini CLI strips them before parsing).
    Jsonc,
    /// Codex's `config.toml`, whose `[hooks]` table has the shape of `hooks.json`.
    Toml,
}

/// One file a CLI reads hooks from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsFile {
    pub path: PathBuf,
    pub format: Format,
    /// Which layer it is, in words (`user`, `project`, `project, local`, `system`).
    pub layer: &'static str,
}

/// What one CLI's hooks look like.
#[derive(Debug)]
pub struct Cli {
    pub harness: Harness,
    /// The CLI's name for people.
    pub name: &'static str,
    /// `pcpctl hook`'s argument for it.
    pub arg: &'static str,
    /// The events `pcpctl hook install` adds the hook to; the first is the one that sees every
    /// tool call (the others are extra chances to answer).
    pub events: &'static [&'static str],
    /// Timeouts are in milliseconds (else seconds).
    pub millis: bool,
    /// The timeout, in seconds, of a hook that gives none (read from the CLI's code).
    pub default_timeout: f64,
    /// The matcher `pcpctl hook install` writes.
    pub matcher: &'static str,
    /// Tools of the CLI that the hook maps to a capability of their own: the matcher must let
    /// the hook see every one. `mcp__server__tool` stands for every MCP tool.
    pub required: &'static [&'static str],
    /// How the matcher is read (see [`Cli::covers`]).
    gemini_matcher: bool,
}

/// Claude Code: `timeout` in seconds, 600 when absent (`i=pp`, `pp=600000` ms in 2.1.197's
/// `executePreToolHooks`); a matcher of names and `|` is a list, anything else a JavaScript
/// regular expression tested anywhere in the name.
pub const CLAUDE_CODE: Cli = Cli {
    harness: Harness::ClaudeCode,
    name: "Claude Code",
    arg: "claude-code",
    events: &["PreToolUse"],
    millis: false,
    default_timeout: 600.0,
    matcher: "^(Bash|Write|Edit|MultiEdit|NotebookEdit|Read|Grep|Glob|LS|WebFetch|WebSearch|mcp__.*)$",
    required: &[
        "Bash",
        "Write",
        "Edit",
        "NotebookEdit",
        "Read",
        "Grep",
        "Glob",
        "WebFetch",
        "WebSearch",
        "mcp__server__tool",
    ],
    gemini_matcher: false,
};

/// Codex CLI: `timeout` in seconds, 600 when absent (`timeout_sec.unwrap_or(600).max(1)` in
/// `codex-rs/hooks/src/engine/discovery.rs`); matchers as Claude Code's (Rust regex). 0.171
/// sends shell commands and `apply_patch` alike as `Bash`.
pub const CODEX: Cli = Cli {
    harness: Harness::Codex,
    name: "Codex CLI",
    arg: "codex",
    events: &["PreToolUse", "PermissionRequest"],
    millis: false,
    default_timeout: 600.0,
    matcher: "^(Bash|apply_patch|mcp__.*)$",
    required: &["Bash"],
    gemini_matcher: false,
};

/// Gemini CLI: `timeout` in milliseconds, 60000 when absent (`DEFAULT_HOOK_TIMEOUT`); a matcher
/// is a JavaScript regular expression tested anywhere in the name (`*` or empty: every tool).
pub const GEMINI: Cli = Cli {
    harness: Harness::Gemini,
    name: "Gemini CLI",
    arg: "gemini",
    events: &["BeforeTool"],
    millis: true,
    default_timeout: 60.0,
    matcher: "^(run_shell_command|write_file|replace|read_file|read_many_files|list_directory|\
              glob|grep_search|search_file_content|web_fetch|google_web_search)$",
    required: &[
        "run_shell_command",
        "write_file",
        "replace",
        "read_file",
        "read_many_files",
        "list_directory",
        "glob",
        "web_fetch",
        "google_web_search",
    ],
    gemini_matcher: true,
};

/// The CLI `harness` names.
pub fn cli(harness: Harness) -> &'static Cli {
    match harness {
        Harness::ClaudeCode => &CLAUDE_CODE,
        Harness::Codex => &CODEX,
        Harness::Gemini => &GEMINI,
    }
}

/// The environment the CLIs find their folders by.
#[derive(Debug, Clone, Default)]
pub struct Env {
    pub home: Option<PathBuf>,
    pub claude_config_dir: Option<PathBuf>,
    pub codex_home: Option<PathBuf>,
    pub gemini_cli_home: Option<PathBuf>,
    pub gemini_system_settings: Option<PathBuf>,
}

impl Env {
    /// This process's environment.
    pub fn from_process() -> Env {
        let var = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        Env {
            home: var("HOME"),
            claude_config_dir: var("CLAUDE_CONFIG_DIR"),
            codex_home: var("CODEX_HOME"),
            gemini_cli_home: var("GEMINI_CLI_HOME"),
            gemini_system_settings: var("GEMINI_CLI_SYSTEM_SETTINGS_PATH"),
        }
    }

    fn home(&self, rest: &str) -> Option<PathBuf> {
        self.home.as_ref().map(|h| h.join(rest))
    }
}

impl Cli {
    /// The file `pcpctl hook install` writes: the user's, or the project's under `project`.
    pub fn install_file(&self, env: &Env, project: Option<&Path>) -> Option<SettingsFile> {
        let file = |path: PathBuf, layer| SettingsFile {
            path,
            format: self.json_format(),
            layer,
        };
        Some(match (self.harness, project) {
            (Harness::ClaudeCode, Some(p)) => file(p.join(".claude/settings.json"), "project"),
            (Harness::Codex, Some(p)) => file(p.join(".codex/hooks.json"), "project"),
            (Harness::Gemini, Some(p)) => file(p.join(".gemini/settings.json"), "project"),
            (Harness::ClaudeCode, None) => {
                file(self.claude_dir(env)?.join("settings.json"), "user")
            }
            (Harness::Codex, None) => file(self.codex_dir(env)?.join("hooks.json"), "user"),
            (Harness::Gemini, None) => file(self.gemini_dir(env)?.join("settings.json"), "user"),
        })
    }

    /// Every file the CLI reads hooks from, lowest precedence first: system, user, then the
    /// project's under `project` (Codex reads a project's only once it is trusted, Gemini CLI
    /// only in a trusted folder).
    pub fn files(&self, env: &Env, project: Option<&Path>) -> Vec<SettingsFile> {
        let mut out = Vec::new();
        let mut push = |path: Option<PathBuf>, format, layer| {
            if let Some(path) = path {
                out.push(SettingsFile {
                    path,
                    format,
                    layer,
                });
            }
        };
        let json = self.json_format();
        match self.harness {
            Harness::ClaudeCode => {
                let managed = PathBuf::from("/etc/claude-code/managed-settings.json");
                push(Some(managed), json, "managed");
                push(
                    self.claude_dir(env).map(|d| d.join("settings.json")),
                    json,
                    "user",
                );
                if let Some(p) = project {
                    push(Some(p.join(".claude/settings.json")), json, "project");
                    let local = p.join(".claude/settings.local.json");
                    push(Some(local), json, "project, local");
                }
            }
            Harness::Codex => {
                let dirs = [
                    (Some(PathBuf::from("/etc/codex")), "system"),
                    (self.codex_dir(env), "user"),
                    (project.map(|p| p.join(".codex")), "project"),
                ];
                for (dir, layer) in dirs {
                    push(
                        dir.as_ref().map(|d| d.join("config.toml")),
                        Format::Toml,
                        layer,
                    );
                    push(dir.map(|d| d.join("hooks.json")), json, layer);
                }
            }
            Harness::Gemini => {
                let system = env
                    .gemini_system_settings
                    .clone()
                    .unwrap_or_else(|| PathBuf::from("/etc/gemini-cli/settings.json"));
                let defaults = system.with_file_name("system-defaults.json");
                push(Some(defaults), json, "system defaults");
                push(Some(system), json, "system");
                push(
                    self.gemini_dir(env).map(|d| d.join("settings.json")),
                    json,
                    "user",
                );
                if let Some(p) = project {
                    push(Some(p.join(".gemini/settings.json")), json, "project");
                }
            }
        }
        out
    }

    fn json_format(&self) -> Format {
        if self.harness == Harness::Gemini {
            Format::Jsonc
        } else {
            Format::Json
        }
    }

    fn claude_dir(&self, env: &Env) -> Option<PathBuf> {
        env.claude_config_dir
            .clone()
            .or_else(|| env.home(".claude"))
    }

    fn codex_dir(&self, env: &Env) -> Option<PathBuf> {
        env.codex_home.clone().or_else(|| env.home(".codex"))
    }

    fn gemini_dir(&self, env: &Env) -> Option<PathBuf> {
        match &env.gemini_cli_home {
            Some(h) => Some(h.join(".gemini")),
            None => env.home(".gemini"),
        }
    }

    /// A timeout as written in a hook, in seconds.
    pub fn seconds(&self, written: f64) -> f64 {
        if self.millis {
            written / 1000.0
        } else {
            written
        }
    }

    /// The timeout `pcpctl hook install` writes for `deadline`, in the CLI's unit: a minute,
    /// or ten seconds more than a longer deadline.
    pub fn install_timeout(&self, deadline: f64) -> u64 {
        let seconds = (deadline.ceil() as u64 + 10).max(60);
        if self.millis { seconds * 1000 } else { seconds }
    }

    /// Whether a hook with `matcher` runs for the tool `tool`: `Ok(None)` when the matcher
    /// cannot be read here (a regular expression this reader does not take).
    pub fn covers(&self, matcher: Option<&str>, tool: &str) -> Result<bool, String> {
        let Some(m) = matcher else {
            return Ok(true);
        };
        let m = if self.gemini_matcher { m.trim() } else { m };
        if m.is_empty() || m == "*" {
            return Ok(true);
        }
        let plain = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '|';
        if !self.gemini_matcher && m.chars().all(plain) {
            return Ok(m.split('|').any(|name| name == tool));
        }
        if let Some(hit) = anchored_names(m, tool) {
            return Ok(hit);
        }
        match regex::Regex::new(m) {
            Ok(re) => Ok(re.is_match(tool)),
            Err(_) if self.gemini_matcher => Ok(m == tool),
            Err(e) => Err(format!("the matcher {m:?} cannot be read here: {e}")),
        }
    }
}

/// A matcher of the form `pcpctl hook install` writes, `^(A|B|prefix.*)$` with plain names,
/// read without compiling a regular expression (the hook reads it on every call): whether it
/// matches `tool` as the regular expression would; `None` for any other form.
fn anchored_names(matcher: &str, tool: &str) -> Option<bool> {
    let inner = matcher.strip_prefix("^(")?.strip_suffix(")$")?;
    let name = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    let mut hit = false;
    for alternative in inner.split('|') {
        match alternative.strip_suffix(".*") {
            // `.` matches anything but a line feed.
            Some(prefix) if name(prefix) => {
                hit |= tool
                    .strip_prefix(prefix)
                    .is_some_and(|rest| !rest.contains('\n'))
            }
            None if name(alternative) => hit |= tool == alternative,
            _ => return None,
        }
    }
    Some(hit)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn matchers_are_read_as_each_cli_reads_them() {
        let c = &CLAUDE_CODE;
        assert_eq!(c.covers(Some("Bash|Write"), "Write"), Ok(true));
        assert_eq!(c.covers(Some("Bash"), "BashOutput"), Ok(false));
        assert_eq!(c.covers(Some("mcp__.*"), "mcp__github__x"), Ok(true));
        assert_eq!(c.covers(Some("Bash,Write"), "Write"), Ok(false));
        assert_eq!(c.covers(None, "Read"), Ok(true));
        assert_eq!(c.covers(Some("*"), "Read"), Ok(true));
        assert!(c.covers(Some("(?=x)"), "Read").is_err());
        let g = &GEMINI;
        assert_eq!(g.covers(Some("write_file|replace"), "replace"), Ok(true));
        assert_eq!(g.covers(Some(" * "), "glob"), Ok(true));
        assert_eq!(g.covers(Some("file"), "read_file"), Ok(true));
        assert_eq!(g.covers(Some("(?=x)"), "(?=x)"), Ok(true));
        for cli in [&CLAUDE_CODE, &CODEX, &GEMINI] {
            for tool in cli.required {
                assert_eq!(cli.covers(Some(cli.matcher), tool), Ok(true), "{tool}");
            }
        }
    }

    #[test]
    fn the_installed_matchers_are_read_as_a_regular_expression_would() {
        let tools = [
            "Bash",
            "BashOutput",
            "mcp__",
            "mcp__x__y",
            "mcp__x\ny",
            "xmcp__a",
            "Rea",
            "read_file",
            "",
            "glob",
            "globx",
        ];
        for cli in [&CLAUDE_CODE, &CODEX, &GEMINI] {
            let re = regex::Regex::new(cli.matcher).unwrap();
            for tool in tools.iter().chain(cli.required) {
                let fast = anchored_names(cli.matcher, tool);
                assert_eq!(fast, Some(re.is_match(tool)), "{} {tool:?}", cli.name);
            }
        }
        assert_eq!(anchored_names("^(a|b+)$", "a"), None);
        assert_eq!(anchored_names("Bash|Read", "Read"), None);
    }

    #[test]
    fn every_required_tool_is_one_the_hook_maps_to_a_capability_of_its_own() {
        let input = json!({"command": "ls", "file_path": "/p/a", "notebook_path": "/p/a",
            "pattern": "x", "path": "/p", "url": "https://x", "query": "q", "paths": ["/p/a"],
            "dir_path": "/p", "absolute_path": "/p/a"});
        for cli in [&CLAUDE_CODE, &CODEX, &GEMINI] {
            for tool in cli.required {
                let cwd = Path::new("/p");
                let intents = crate::hook_tools::intents(tool, &input, Some(cwd)).unwrap();
                assert_ne!(intents[0].capability, "agent.tool", "{}: {tool}", cli.name);
            }
        }
    }

    #[test]
    fn files_follow_each_cli_s_folders() {
        let env = Env {
            home: Some("/h".into()),
            codex_home: Some("/c".into()),
            ..Env::default()
        };
        let paths = |cli: &Cli, p: Option<&Path>| -> Vec<String> {
            cli.files(&env, p)
                .iter()
                .map(|f| f.path.display().to_string())
                .collect()
        };
        let claude = paths(&CLAUDE_CODE, Some(Path::new("/p")));
        assert!(
            claude.contains(&"/h/.claude/settings.json".to_string()),
            "{claude:?}"
        );
        assert!(claude.contains(&"/p/.claude/settings.local.json".to_string()));
        let codex = paths(&CODEX, None);
        assert!(
            codex.contains(&"/c/hooks.json".to_string())
                && codex.contains(&"/c/config.toml".to_string())
        );
        let gemini = CLAUDE_CODE.install_file(&env, None).unwrap();
        assert_eq!(gemini.path, Path::new("/h/.claude/settings.json"));
        assert_eq!(
            GEMINI
                .install_file(&env, Some(Path::new("/p")))
                .unwrap()
                .format,
            Format::Jsonc
        );
        assert_eq!(GEMINI.install_timeout(50.0), 60_000);
        assert_eq!(CODEX.install_timeout(120.0), 130);
    }
}

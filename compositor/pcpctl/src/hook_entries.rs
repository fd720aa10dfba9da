//! The hooks a CLI's settings file installs ([`read_file`]), and which of them run `pcpctl
//! hook` and how ([`our_command`]): what `pcpctl hook check` and the hook itself read.

use std::path::Path;

use serde_json::Value;

use crate::hook::{DEFAULT_DEADLINE_SECONDS, Harness};
use crate::hook_settings::{Cli, Format, SettingsFile};
use crate::jsonc;

/// One hook handler a settings file installs.
#[derive(Debug, Clone, PartialEq)]
pub struct HookEntry {
    /// Where it is in the file, e.g. `hooks.PreToolUse[0].hooks[1]`.
    pub place: String,
    pub event: String,
    /// The group's index in the event's list, and the handler's in the group.
    pub group: usize,
    pub handler: usize,
    pub matcher: Option<String>,
    pub command: String,
    /// `timeout` in seconds, as written (`None`: the CLI's default).
    pub timeout: Option<f64>,
    /// The handler's `name` (Gemini CLI disables hooks by name or command).
    pub name: Option<String>,
    /// When the command runs `pcpctl hook` for this CLI: how.
    pub ours: Option<OurCommand>,
}

/// A command that runs `pcpctl hook HARNESS`.
#[derive(Debug, Clone, PartialEq)]
pub struct OurCommand {
    /// The program as written (a path, or a name found on `PATH`).
    pub program: String,
    /// `--deadline`, or its default.
    pub deadline: f64,
    /// `--timeout-margin`, when given.
    pub margin: Option<f64>,
}

/// The hooks in one settings file, and what in it turns hooks off.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileHooks {
    pub entries: Vec<HookEntry>,
    /// Settings that keep hooks from running (`disableAllHooks`, `hooksConfig.enabled`, …),
    /// each with its key.
    pub switched_off: Vec<String>,
    /// Codex's `[hooks.state]` table (trust and enabling, by hook key), from `config.toml`.
    pub codex_state: serde_json::Map<String, Value>,
    /// `hooksConfig.disabled` (Gemini CLI): names or commands of hooks that do not run.
    pub disabled: Vec<String>,
}

/// Reads the hooks `file` installs for `cli`: `Ok(None)` when there is no such file, an error
/// naming the file and the line and column of what is wrong when it cannot be read as the CLI
/// reads it.
pub fn read_file(cli: &Cli, file: &SettingsFile) -> Result<Option<FileHooks>, String> {
    let text = match std::fs::read_to_string(&file.path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: cannot read it: {e}", file.path.display())),
    };
    let value = match file.format {
        Format::Toml => {
            let table: toml::Table = toml::from_str(&text).map_err(|e| {
                let at = e.span().map_or((1, 1), |s| jsonc::position(&text, s.start));
                format!("{}:{}:{}: {}", file.path.display(), at.0, at.1, e.message())
            })?;
            serde_json::to_value(table).map_err(|e| format!("{}: {e}", file.path.display()))?
        }
        Format::Json | Format::Jsonc => {
            if text.trim().is_empty() {
                return Ok(Some(FileHooks::default()));
            }
            jsonc::parse(&text, file.format == Format::Jsonc)
                .map_err(|e| format!("{}:{e}", file.path.display()))?
                .to_value()
        }
    };
    hooks_in(cli, &value)
        .map(Some)
        .map_err(|e| format!("{}: {e}", file.path.display()))
}

/// The hooks in a settings document.
pub fn hooks_in(cli: &Cli, doc: &Value) -> Result<FileHooks, String> {
    let Value::Object(root) = doc else {
        return Err("the settings are not a JSON object".into());
    };
    let mut out = FileHooks::default();
    let off = |key: &str, v: Option<&Value>, bad: bool| {
        (v == Some(&Value::Bool(bad))).then(|| format!("{key} = {bad}"))
    };
    out.switched_off
        .extend(off("disableAllHooks", root.get("disableAllHooks"), true));
    let features = root.get("features").and_then(|f| f.get("hooks"));
    out.switched_off
        .extend(off("features.hooks", features, false));
    if let Some(config) = root.get("hooksConfig") {
        out.switched_off
            .extend(off("hooksConfig.enabled", config.get("enabled"), false));
        if let Some(Value::Array(names)) = config.get("disabled") {
            out.disabled = names
                .iter()
                .filter_map(|n| n.as_str().map(str::to_string))
                .collect();
        }
    }
    let hooks = match root.get("hooks") {
        None | Some(Value::Null) => return Ok(out),
        Some(Value::Object(h)) => h,
        Some(_) => return Err("`hooks` is not an object".into()),
    };
    if let Some(Value::Object(state)) = hooks.get("state") {
        out.codex_state = state.clone();
    }
    for (event, groups) in hooks {
        if event == "state" && cli.harness == Harness::Codex {
            continue;
        }
        let Value::Array(groups) = groups else {
            // Other keys (Gemini CLI's older `hooks.enabled`) are not events.
            if cli.events.contains(&event.as_str()) {
                return Err(format!("`hooks.{event}` is not a list"));
            }
            continue;
        };
        for (g, group) in groups.iter().enumerate() {
            let place = format!("hooks.{event}[{g}]");
            let matcher = match group.get("matcher") {
                None | Some(Value::Null) => None,
                Some(Value::String(m)) => Some(m.clone()),
                Some(_) => return Err(format!("`{place}.matcher` is not a string")),
            };
            let handlers = match group.get("hooks") {
                Some(Value::Array(h)) => h.as_slice(),
                None => &[],
                Some(_) => return Err(format!("`{place}.hooks` is not a list")),
            };
            for (h, handler) in handlers.iter().enumerate() {
                let place = format!("{place}.hooks[{h}]");
                let Some(command) = handler.get("command").and_then(Value::as_str) else {
                    continue;
                };
                let timeout = match handler.get("timeout") {
                    None | Some(Value::Null) => None,
                    Some(v) => match v.as_f64() {
                        Some(t) if t > 0.0 => Some(cli.seconds(t)),
                        _ => return Err(format!("`{place}.timeout` is not a positive number")),
                    },
                };
                out.entries.push(HookEntry {
                    place,
                    event: event.clone(),
                    group: g,
                    handler: h,
                    matcher: matcher.clone(),
                    command: command.to_string(),
                    timeout,
                    name: handler
                        .get("name")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                    ours: our_command(command, cli.arg),
                });
            }
        }
    }
    Ok(out)
}

/// How `command` runs `pcpctl hook ARG`, if it does: its program is called `pcpctl`.
pub fn our_command(command: &str, arg: &str) -> Option<OurCommand> {
    let words = split_words(command)?;
    let [program, hook, harness, flags @ ..] = words.as_slice() else {
        return None;
    };
    let name = Path::new(program).file_name()?.to_str()?;
    if name != "pcpctl" || hook != "hook" || harness != arg {
        return None;
    }
    let mut ours = OurCommand {
        program: program.clone(),
        deadline: DEFAULT_DEADLINE_SECONDS,
        margin: None,
    };
    let mut it = flags.iter();
    while let Some(flag) = it.next() {
        let (flag, inline) = match flag.split_once('=') {
            Some((f, v)) => (f, Some(v.to_string())),
            None => (flag.as_str(), None),
        };
        let mut value = || inline.clone().or_else(|| it.next().cloned());
        match flag {
            "--deadline" => ours.deadline = value()?.parse().ok()?,
            "--timeout-margin" => ours.margin = Some(value()?.parse().ok()?),
            _ => {}
        }
    }
    Some(ours)
}

/// The words of a simple shell command line (quotes and backslashes as the shell reads them);
/// `None` for anything more (variables, substitutions, several commands).
fn split_words(command: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => words.extend(word.take()),
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => w.push(c),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => w.push(chars.next()?),
                        '$' | '`' => return None,
                        c => w.push(c),
                    }
                }
            }
            '\\' => word.get_or_insert_with(String::new).push(chars.next()?),
            '$' | '`' | ';' | '&' | '|' | '<' | '>' | '(' | ')' | '\n' => return None,
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Some(words)
}

/// `word` quoted for the shell when it needs it.
pub fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::hook_settings::{CLAUDE_CODE, CODEX, GEMINI};

    #[test]
    fn our_commands_are_recognized_with_their_flags() {
        let ours = our_command("/usr/bin/pcpctl hook codex --deadline 20", "codex").unwrap();
        assert_eq!(
            (ours.program.as_str(), ours.deadline),
            ("/usr/bin/pcpctl", 20.0)
        );
        let ours = our_command(
            "'/opt/my tools/pcpctl' hook gemini --timeout-margin=3",
            "gemini",
        );
        let ours = ours.unwrap();
        assert_eq!(ours.program, "/opt/my tools/pcpctl");
        assert_eq!(
            (ours.deadline, ours.margin),
            (DEFAULT_DEADLINE_SECONDS, Some(3.0))
        );
        assert!(our_command("pcpctl hook codex", "gemini").is_none());
        assert!(our_command("/bin/echo hook codex", "codex").is_none());
        assert!(our_command("pcpctl hook codex --deadline $D", "codex").is_none());
        assert!(our_command("pcpctl hook codex --deadline", "codex").is_none());
    }

    #[test]
    fn hooks_and_switches_are_read_with_their_places() {
        let doc = json!({"disableAllHooks": true, "hooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "lint"},
             {"type": "command", "command": "pcpctl hook claude-code", "timeout": 30}]}]}});
        let found = hooks_in(&CLAUDE_CODE, &doc).unwrap();
        assert_eq!(found.switched_off, ["disableAllHooks = true"]);
        let ours: Vec<&HookEntry> = found.entries.iter().filter(|e| e.ours.is_some()).collect();
        assert_eq!(ours.len(), 1);
        assert_eq!(ours[0].place, "hooks.PreToolUse[0].hooks[1]");
        assert_eq!(ours[0].timeout, Some(30.0));
        let doc = json!({"hooks": {"BeforeTool": [{"hooks": [{"command": "x", "timeout": 5000}]}]},
            "hooksConfig": {"enabled": false, "disabled": ["x"]}});
        let found = hooks_in(&GEMINI, &doc).unwrap();
        assert_eq!(found.entries[0].timeout, Some(5.0));
        assert_eq!(found.switched_off, ["hooksConfig.enabled = false"]);
        assert_eq!(found.disabled, ["x"]);
        let bad = json!({"hooks": {"PreToolUse": [{"hooks": [{"command": "x", "timeout": "1"}]}]}});
        let e = hooks_in(&CODEX, &bad).unwrap_err();
        assert!(e.contains("hooks.PreToolUse[0].hooks[0].timeout"), "{e}");
    }
}

//! `pcpctl hook install claude-code|codex|gemini [--project DIR]`: merges the hook into the
//! CLI's own settings file instead of leaving the merge to the user. Only the hook's group is
//! added or replaced, as text, so every other byte of the file stays (other keys and hooks,
//! comments in Gemini CLI's file, key order, spacing); running it again changes nothing and
//! says so; a backup is written beside the file before it changes; a file that is not what the
//! CLI reads is refused with its line and column, and never written.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::hook::{DEFAULT_DEADLINE_SECONDS, Harness};
use crate::hook_entries::{our_command, shell_quote};
use crate::hook_settings::{self, Cli, Env, Format};
use crate::jsonc::{self, Node};

#[derive(clap::Args)]
pub struct Args {
    /// Which CLI's settings to install the hook into.
    harness: Harness,
    /// The project folder whose settings to write (`DIR/.claude/settings.json`,
    /// `DIR/.codex/hooks.json`, `DIR/.gemini/settings.json`) instead of the user's.
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// Seconds the installed hook waits for the user (its `--deadline`); the CLI's timeout is
    /// written well above it.
    #[arg(long, default_value_t = DEFAULT_DEADLINE_SECONDS)]
    deadline: f64,
}

/// What one event's list got.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// The same hook was already there.
    Unchanged {
        place: String,
    },
    Added {
        place: String,
    },
    /// Our hook was there, as the group at `index`, with other values (`old`).
    Replaced {
        place: String,
        index: usize,
        old: Value,
    },
}

pub fn run(args: Args) -> Result<ExitCode> {
    if !(args.deadline.is_finite() && args.deadline > 0.0) {
        bail!(
            "--deadline {} is not a positive number of seconds",
            args.deadline
        );
    }
    let cli = hook_settings::cli(args.harness);
    let file = cli
        .install_file(&Env::from_process(), args.project.as_deref())
        .context("no home folder to find the CLI's settings in (HOME is not set)")?;
    let exe = std::env::current_exe().context("cannot find this pcpctl's own path")?;
    let command = format!(
        "{} hook {} --deadline {}",
        shell_quote(&exe.to_string_lossy()),
        cli.arg,
        args.deadline
    );
    let group = json!({"matcher": cli.matcher, "hooks": [{
        "type": "command", "command": command, "timeout": cli.install_timeout(args.deadline)}]});
    let old = match std::fs::read_to_string(&file.path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => bail!("cannot read {}: {e}", file.path.display()),
    };
    let (text, changes) = merge(cli, old.as_deref(), file.format, &group)
        .map_err(|e| anyhow::anyhow!("{}:{e}; the file was not changed", file.path.display()))?;
    let shown = file.path.display();
    for (event, change) in cli.events.iter().zip(&changes) {
        match change {
            Change::Unchanged { place } => {
                pcp_cli::outln!("{shown}: {place}: already installed for {event}, unchanged")
            }
            Change::Added { place } => {
                pcp_cli::outln!("{shown}: added {place}:\n{}", pretty(&group))
            }
            Change::Replaced { place, old, .. } => pcp_cli::outln!(
                "{shown}: replaced {place}:\n{}\nwith:\n{}",
                pretty(old),
                pretty(&group)
            ),
        }
    }
    if old.as_deref() == Some(text.as_str()) {
        pcp_cli::outln!(
            "{shown}: nothing changed ({} {} layer)",
            cli.name,
            file.layer
        );
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(old) = &old {
        let backup = backup_path(&file.path);
        std::fs::write(&backup, old)
            .with_context(|| format!("cannot write the backup {}", backup.display()))?;
        pcp_cli::outln!("{shown}: the file as it was is in {}", backup.display());
    }
    write_atomically(&file.path, &text)?;
    if cli.harness == Harness::Codex {
        pcp_cli::outln!(
            "Codex runs a new or changed hook only once it is trusted: start `codex`, open \
             /hooks and trust it (`codex exec` skips an untrusted hook without a word)."
        );
    }
    pcp_cli::outln!("Check it with: pcpctl hook check {}", cli.arg);
    Ok(ExitCode::SUCCESS)
}

/// The settings text with `group` in each of the CLI's events, and what each event got. `text`
/// is the file as it is (`None`: there is none yet); an error names the line and column of what
/// is wrong, or the key that is not what the CLI reads.
pub fn merge(
    cli: &Cli,
    text: Option<&str>,
    format: Format,
    group: &Value,
) -> Result<(String, Vec<Change>), String> {
    let mut text = match text {
        Some(t) if !t.trim().is_empty() => t.to_string(),
        _ => "{}\n".to_string(),
    };
    let mut changes = Vec::new();
    for event in cli.events {
        let root = jsonc::parse(&text, format == Format::Jsonc).map_err(|e| e.to_string())?;
        let (edit, change) = edit_for(cli, &text, &root, event, group)?;
        if let Some((range, insert)) = edit {
            let before = root.to_value();
            text.replace_range(range, &insert);
            let after = jsonc::parse(&text, format == Format::Jsonc)
                .map_err(|e| format!("1:1: the edit made unreadable JSON ({e})"))?;
            check_only_the_group_changed(&before, &after.to_value(), event, &change, group)?;
        }
        changes.push(change);
    }
    Ok((text, changes))
}

/// The text replacement (byte range, new text) that puts `group` into `event`'s list.
type Edit = Option<(std::ops::Range<usize>, String)>;

fn edit_for(
    cli: &Cli,
    text: &str,
    root: &Node,
    event: &str,
    group: &Value,
) -> Result<(Edit, Change), String> {
    let at = |node: &Node| {
        let (l, c) = jsonc::position(text, node.span.start);
        format!("{l}:{c}")
    };
    if root.members().is_none() {
        return Err(format!("{}: the settings are not a JSON object", at(root)));
    }
    let (hooks, n) = root.get("hooks");
    if n > 1 {
        return Err(format!("{}: `hooks` is given {n} times", at(root)));
    }
    let Some(hooks) = hooks else {
        let value = json!({ event: [group] });
        let place = format!("hooks.{event}[0]");
        return Ok((
            Some(add_member(text, root, "hooks", &value)),
            Change::Added { place },
        ));
    };
    if hooks.members().is_none() {
        return Err(format!("{}: `hooks` is not an object", at(hooks)));
    }
    let (list, n) = hooks.get(event);
    if n > 1 {
        return Err(format!("{}: `hooks.{event}` is given {n} times", at(hooks)));
    }
    let Some(list) = list else {
        let place = format!("hooks.{event}[0]");
        let edit = add_member(text, hooks, event, &json!([group]));
        return Ok((Some(edit), Change::Added { place }));
    };
    let Some(items) = list.items() else {
        return Err(format!("{}: `hooks.{event}` is not a list", at(list)));
    };
    let mut ours = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let place = format!("hooks.{event}[{i}]");
        if item.to_value() == *group {
            return Ok((None, Change::Unchanged { place }));
        }
        let handlers = item.to_value()["hooks"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let is_ours = |h: &Value| {
            h["command"]
                .as_str()
                .and_then(|c| our_command(c, cli.arg))
                .is_some()
        };
        if handlers.iter().any(is_ours) {
            if handlers.len() > 1 {
                return Err(format!(
                    "{}: `{place}` holds pcpctl's hook together with other hooks; move them to \
                     a group of their own, then install again",
                    at(item)
                ));
            }
            ours.push((i, item));
        }
    }
    match ours.as_slice() {
        [] => {
            let place = format!("hooks.{event}[{}]", items.len());
            Ok((Some(add_item(text, list, group)), Change::Added { place }))
        }
        [(i, item)] => {
            let indent = line_indent(text, item.span.start);
            let new = indented(&pretty(group), &indent);
            let place = format!("hooks.{event}[{i}]");
            let change = Change::Replaced {
                place,
                index: *i,
                old: item.to_value(),
            };
            Ok((Some((item.span.clone(), new)), change))
        }
        _ => Err(format!(
            "{}: `hooks.{event}` runs pcpctl's hook {} times; remove all but one, then install \
             again",
            at(list),
            ours.len()
        )),
    }
}

/// After an edit, the document must be the one before with `group` put where `change` says:
/// anything else would mean the edit touched what it must not.
fn check_only_the_group_changed(
    before: &Value,
    after: &Value,
    event: &str,
    change: &Change,
    group: &Value,
) -> Result<(), String> {
    let mut expected = before.clone();
    let root = expected.as_object_mut().ok_or("1:1: not an object")?;
    let hooks = root.entry("hooks").or_insert_with(|| json!({}));
    let list = hooks
        .as_object_mut()
        .ok_or("1:1: `hooks` is not an object")?
        .entry(event)
        .or_insert_with(|| json!([]));
    let list = list.as_array_mut().ok_or("1:1: not a list")?;
    match change {
        Change::Added { .. } => list.push(group.clone()),
        Change::Replaced { index, .. } => match list.get_mut(*index) {
            Some(g) => *g = group.clone(),
            None => return Err("1:1: the hook to replace is gone".into()),
        },
        Change::Unchanged { .. } => {}
    }
    if *after == expected {
        Ok(())
    } else {
        Err("1:1: the edit would change more than pcpctl's hook (please report it)".into())
    }
}

/// Adds `"key": value` as the last member of the object `obj`.
fn add_member(
    text: &str,
    obj: &Node,
    key: &str,
    value: &Value,
) -> (std::ops::Range<usize>, String) {
    let key = serde_json::to_string(key).unwrap_or_default();
    match obj.members().and_then(<[_]>::last) {
        Some(last) => {
            let indent = line_indent(text, last.value.span.start);
            let body = indented(&pretty(value), &indent);
            let end = last.value.span.end;
            (end..end, format!(",\n{indent}{key}: {body}"))
        }
        None => {
            let outer = line_indent(text, obj.span.start);
            let indent = format!("{outer}  ");
            let body = indented(&pretty(value), &indent);
            (
                obj.span.clone(),
                format!("{{\n{indent}{key}: {body}\n{outer}}}"),
            )
        }
    }
}

/// Adds `value` as the last item of the list `list`.
fn add_item(text: &str, list: &Node, value: &Value) -> (std::ops::Range<usize>, String) {
    match list.items().and_then(<[_]>::last) {
        Some(last) => {
            let indent = line_indent(text, last.span.start);
            let end = last.span.end;
            (
                end..end,
                format!(",\n{indent}{}", indented(&pretty(value), &indent)),
            )
        }
        None => {
            let outer = line_indent(text, list.span.start);
            let indent = format!("{outer}  ");
            let body = indented(&pretty(value), &indent);
            (list.span.clone(), format!("[\n{indent}{body}\n{outer}]"))
        }
    }
}

/// `value` as indented JSON, a hook's keys in the order the CLIs' documents write them.
fn pretty(value: &Value) -> String {
    let mut out = String::new();
    write_pretty(value, "", &mut out);
    out
}

fn write_pretty(value: &Value, indent: &str, out: &mut String) {
    const ORDER: [&str; 5] = ["matcher", "hooks", "type", "command", "timeout"];
    let inner = format!("{indent}  ");
    match value {
        Value::Object(map) if !map.is_empty() => {
            let mut keys: Vec<&String> = map.keys().collect();
            let rank = |k: &str| ORDER.iter().position(|o| *o == k).unwrap_or(ORDER.len());
            keys.sort_by(|a, b| rank(a).cmp(&rank(b)).then(a.cmp(b)));
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                out.push_str(if i == 0 { "\n" } else { ",\n" });
                out.push_str(&inner);
                out.push_str(&Value::from(key.as_str()).to_string());
                out.push_str(": ");
                write_pretty(&map[key], &inner, out);
            }
            out.push_str(&format!("\n{indent}}}"));
        }
        Value::Array(items) if !items.is_empty() => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                out.push_str(if i == 0 { "\n" } else { ",\n" });
                out.push_str(&inner);
                write_pretty(item, &inner, out);
            }
            out.push_str(&format!("\n{indent}]"));
        }
        other => out.push_str(&other.to_string()),
    }
}

/// `text` with every line after the first indented by `indent`.
fn indented(text: &str, indent: &str) -> String {
    text.replace('\n', &format!("\n{indent}"))
}

/// The white space that starts the line holding byte `at`.
fn line_indent(text: &str, at: usize) -> String {
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    text[start..]
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect()
}

/// `FILE.pcpctl-backup-SECONDS` (a number added if that exists already).
fn backup_path(path: &Path) -> PathBuf {
    let secs = crate::common::now_ms() / 1000;
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".pcpctl-backup-{secs}"));
    let mut candidate = PathBuf::from(&name);
    let mut n = 1;
    while candidate.exists() {
        let mut numbered = name.clone();
        numbered.push(format!(".{n}"));
        candidate = PathBuf::from(numbered);
        n += 1;
    }
    candidate
}

/// Writes `text` to `path` through a temporary file in the same folder, keeping the file's
/// permissions: a reader sees the old file or the new, never half of one.
fn write_atomically(path: &Path, text: &str) -> Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("cannot write in {}", dir.display()))?;
    use std::io::Write;
    tmp.write_all(text.as_bytes())?;
    tmp.as_file().sync_all()?;
    let mode = match std::fs::metadata(path) {
        Ok(m) => m.permissions(),
        Err(_) => std::os::unix::fs::PermissionsExt::from_mode(0o644),
    };
    std::fs::set_permissions(tmp.path(), mode)?;
    tmp.persist(path)
        .with_context(|| format!("cannot replace {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hook_settings::{CLAUDE_CODE, CODEX, GEMINI};

    fn group(cli: &Cli, deadline: u32) -> Value {
        let command = format!("/usr/bin/pcpctl hook {} --deadline {deadline}", cli.arg);
        json!({"matcher": cli.matcher, "hooks": [{"type": "command", "command": command,
            "timeout": cli.install_timeout(f64::from(deadline))}]})
    }

    #[test]
    fn a_new_file_gets_the_hook_and_a_second_run_changes_nothing() {
        let g = group(&CODEX, 50);
        let (text, changes) = merge(&CODEX, None, Format::Json, &g).unwrap();
        let doc: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(doc["hooks"]["PreToolUse"][0], g);
        assert_eq!(doc["hooks"]["PermissionRequest"][0], g);
        assert!(matches!(changes[0], Change::Added { .. }), "{changes:?}");
        let (again, changes) = merge(&CODEX, Some(&text), Format::Json, &g).unwrap();
        assert_eq!(again, text);
        assert!(
            changes
                .iter()
                .all(|c| matches!(c, Change::Unchanged { .. }))
        );
    }

    #[test]
    fn everything_else_in_the_file_stays_byte_for_byte() {
        let before = "// my settings\n{\n    \"theme\": \"dark\", /* keep */\n    \"hooks\": {\n        \
                      \"AfterTool\": [{\"matcher\": \"x\", \"hooks\": []}],\n        \
                      \"BeforeTool\": [\n            {\"matcher\": \"write_file\", \"hooks\": \
                      [{\"type\": \"command\", \"command\": \"my-linter\"}]}\n        ]\n    },\n    \
                      \"unknownKey\": {\"a\": [1, 2]}\n}\n";
        let g = group(&GEMINI, 50);
        let (after, changes) = merge(&GEMINI, Some(before), Format::Jsonc, &g).unwrap();
        assert_eq!(
            changes,
            [Change::Added {
                place: "hooks.BeforeTool[1]".into()
            }]
        );
        // The file is the old one with text inserted after the linter's group, nothing else.
        let at = before.find("my-linter\"}]}").unwrap() + "my-linter\"}]}".len();
        assert!(after.starts_with(&before[..at]), "{after}");
        assert!(after.ends_with(&before[at..]), "{after}");
        let doc = jsonc::parse(&after, true).unwrap().to_value();
        assert_eq!(
            doc["hooks"]["BeforeTool"][0]["hooks"][0]["command"],
            "my-linter"
        );
        assert_eq!(doc["hooks"]["BeforeTool"][1], g);
        assert_eq!(doc["unknownKey"], json!({"a": [1, 2]}));
        assert!(after.contains("// my settings") && after.contains("/* keep */"));
    }

    #[test]
    fn an_older_install_is_replaced_in_place() {
        let old = format!(
            "{{\"hooks\": {{\"PreToolUse\": [{}, {}]}}}}",
            json!({"matcher": "Read",
            "hooks": [{"type": "command", "command": "audit-reads"}]}),
            group(&CLAUDE_CODE, 90)
        );
        let g = group(&CLAUDE_CODE, 50);
        let (text, changes) = merge(&CLAUDE_CODE, Some(&old), Format::Json, &g).unwrap();
        assert!(
            matches!(&changes[0], Change::Replaced { index: 1, old, .. }
            if old["hooks"][0]["timeout"] == 100),
            "{changes:?}"
        );
        let doc: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(doc["hooks"]["PreToolUse"][1], g);
        assert_eq!(doc["hooks"]["PreToolUse"][0]["matcher"], "Read");
    }

    #[test]
    fn a_malformed_or_unexpected_file_is_refused_with_its_place() {
        let g = group(&CLAUDE_CODE, 50);
        for (text, wanted) in [
            ("{\n  \"hooks\": {,}\n}", "2:13"),
            ("{\"a\": 1,}", "1:9"),
            ("// comment\n{}", "1:1"),
            ("[]", "the settings are not a JSON object"),
            ("{\"hooks\": []}", "`hooks` is not an object"),
            (
                "{\"hooks\": {\"PreToolUse\": {}}}",
                "`hooks.PreToolUse` is not a list",
            ),
            ("{\"hooks\": {}, \"hooks\": {}}", "`hooks` is given 2 times"),
        ] {
            let e = merge(&CLAUDE_CODE, Some(text), Format::Json, &g).unwrap_err();
            assert!(e.contains(wanted), "{text:?}: {e}");
        }
        let shared = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"command": "lint"}, {"command": "pcpctl hook claude-code"}]}]}});
        let e = merge(&CLAUDE_CODE, Some(&shared.to_string()), Format::Json, &g).unwrap_err();
        assert!(e.contains("together with other hooks"), "{e}");
    }

    #[test]
    fn empty_objects_and_lists_get_the_hook_indented() {
        let (text, _) = merge(
            &GEMINI,
            Some("{\"hooks\": {\"BeforeTool\": []}}"),
            Format::Jsonc,
            &group(&GEMINI, 50),
        )
        .unwrap();
        assert!(text.contains("[\n  {"), "{text}");
        let (text, _) = merge(&GEMINI, Some("{}"), Format::Jsonc, &group(&GEMINI, 50)).unwrap();
        assert!(text.starts_with("{\n  \"hooks\": {"), "{text}");
    }
}

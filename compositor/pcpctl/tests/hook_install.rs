//! `pcpctl hook install` and `pcpctl hook check` through the real binary, in a home folder of
//! the test's own: installing keeps the rest of the file and says what changed, a second run
//! changes nothing, a backup comes before a change, a malformed file is refused with its place
//! and left alone; the check refuses — naming file and key — a timeout the deadline does not
//! fit under (given, or the CLI's default), a matcher that misses a mapped tool, a hook program
//! that does not exist, hooks switched off in any layer, and a Codex hook never trusted.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

fn pcpctl(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pcpctl"))
        .args(args)
        .env("HOME", home)
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .env_remove("GEMINI_CLI_HOME")
        .env(
            "GEMINI_CLI_SYSTEM_SETTINGS_PATH",
            home.join("no-system-settings.json"),
        )
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn backups(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().contains(".pcpctl-backup-"))
        .collect()
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn install_merges_keeps_the_rest_and_a_second_run_changes_nothing() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join(".claude");
    std::fs::create_dir_all(&dir).unwrap();
    let settings = dir.join("settings.json");
    let before = json!({"model": "opus", "permissions": {"deny": ["Bash(curl:*)"]},
        "hooks": {"PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command",
        "command": "prettier"}]}]}, "someFutureKey": [1, {"x": null}]});
    std::fs::write(&settings, serde_json::to_string_pretty(&before).unwrap()).unwrap();

    let o = pcpctl(home.path(), &["hook", "install", "claude-code"]);
    assert!(o.status.success(), "{o:?}");
    let said = stdout(&o);
    assert!(said.contains("added hooks.PreToolUse[0]"), "{said}");
    let after = read(&settings);
    for key in ["model", "permissions", "someFutureKey"] {
        assert_eq!(after[key], before[key], "{key}");
    }
    assert_eq!(
        after["hooks"]["PostToolUse"],
        before["hooks"]["PostToolUse"]
    );
    let ours = &after["hooks"]["PreToolUse"][0]["hooks"][0];
    let command = ours["command"].as_str().unwrap();
    assert!(
        command.ends_with("hook claude-code --deadline 50"),
        "{command}"
    );
    assert_eq!(ours["timeout"], 60);
    // The backup is the file as it was.
    let saved = backups(&dir);
    assert_eq!(saved.len(), 1, "{saved:?}");
    assert_eq!(read(&saved[0]), before);

    let text = std::fs::read_to_string(&settings).unwrap();
    let o = pcpctl(home.path(), &["hook", "install", "claude-code"]);
    assert!(o.status.success(), "{o:?}");
    assert!(stdout(&o).contains("nothing changed"), "{}", stdout(&o));
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), text);
    assert_eq!(backups(&dir).len(), 1, "no backup for no change");

    // What it installed passes the check.
    let o = pcpctl(home.path(), &["hook", "check", "claude-code"]);
    assert!(o.status.success(), "{}", stdout(&o));
}

#[test]
fn a_malformed_file_is_refused_with_its_place_and_left_alone() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join(".gemini");
    std::fs::create_dir_all(&dir).unwrap();
    let settings = dir.join("settings.json");
    let text = "{\n  // comments are fine here\n  \"ui\": {\"theme\": \"dark\",}\n}\n";
    std::fs::write(&settings, text).unwrap();
    let o = pcpctl(home.path(), &["hook", "install", "gemini"]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&format!("{}:3:", settings.display())), "{err}");
    assert!(err.contains("not changed"), "{err}");
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), text);
    assert!(backups(&dir).is_empty());
    // The comments of a good file stay.
    let text = "{\n  // my theme\n  \"ui\": {\"theme\": \"dark\"}\n}\n";
    std::fs::write(&settings, text).unwrap();
    let o = pcpctl(home.path(), &["hook", "install", "gemini"]);
    assert!(o.status.success(), "{o:?}");
    let after = std::fs::read_to_string(&settings).unwrap();
    assert!(after.contains("// my theme"), "{after}");
    assert!(after.contains("\"timeout\": 60000"), "{after}");
}

/// Writes our hook into `file` with `timeout` (none: the CLI's default) and `matcher`.
fn write_hook(file: &Path, event: &str, harness: &str, program: &str, hook: Value) {
    let mut handler = json!({"type": "command",
        "command": format!("{program} hook {harness} --deadline 50")});
    if let Value::Object(extra) = hook {
        handler.as_object_mut().unwrap().extend(extra);
    }
    let doc = json!({"hooks": {event: [{"matcher": null, "hooks": [handler]}]}});
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, doc.to_string()).unwrap();
}

fn refused(home: &Path, args: &[&str], because: &[&str]) {
    let o = pcpctl(home, args);
    let said = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{args:?}: {said}");
    for b in because {
        assert!(said.contains(b), "{args:?}: {b:?} not in {said}");
    }
}

#[test]
fn check_refuses_settings_that_let_the_cli_run_what_the_hook_never_answered() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let me = env!("CARGO_BIN_EXE_pcpctl");
    let claude = h.join(".claude/settings.json");
    // A timeout below the deadline (in seconds), and Gemini's default of 60 000 ms.
    write_hook(
        &claude,
        "PreToolUse",
        "claude-code",
        me,
        json!({"timeout": 30}),
    );
    refused(
        h,
        &["hook", "check", "claude-code"],
        &[
            &format!("{}: hooks.PreToolUse[0].hooks[0].timeout", claude.display()),
            "kills the hook after 30 s",
        ],
    );
    let gemini = h.join(".gemini/settings.json");
    let slow = format!("{me} hook gemini --deadline 59");
    std::fs::create_dir_all(gemini.parent().unwrap()).unwrap();
    std::fs::write(
        &gemini,
        json!({"hooks": {"BeforeTool": [{"hooks": [
        {"type": "command", "command": slow}]}]}})
        .to_string(),
    )
    .unwrap();
    refused(
        h,
        &["hook", "check", "gemini"],
        &["its default", "at least 61000 ms"],
    );
    // No timeout in Claude Code is its default of 600 s: fine; a matcher of Bash alone misses
    // the edits, reads and MCP tools.
    write_hook(
        &claude,
        "PreToolUse",
        "claude-code",
        me,
        json!({"matcher": "Bash"}),
    );
    let doc = read(&claude);
    let mut narrowed = doc.clone();
    narrowed["hooks"]["PreToolUse"][0]["matcher"] = json!("Bash");
    std::fs::write(&claude, narrowed.to_string()).unwrap();
    refused(
        h,
        &["hook", "check", "claude-code"],
        &["Write", "Read", "MCP tools", ".matcher"],
    );
    // A hook program that is not there.
    write_hook(
        &claude,
        "PreToolUse",
        "claude-code",
        "/nowhere/pcpctl",
        json!({}),
    );
    refused(
        h,
        &["hook", "check", "claude-code"],
        &["/nowhere/pcpctl", ".command"],
    );
    // Every layer counts: a project's local file that turns hooks off.
    write_hook(&claude, "PreToolUse", "claude-code", me, json!({}));
    let project = h.join("proj");
    let local = project.join(".claude/settings.local.json");
    std::fs::create_dir_all(local.parent().unwrap()).unwrap();
    std::fs::write(&local, r#"{"disableAllHooks": true}"#).unwrap();
    let dir = project.to_string_lossy().into_owned();
    refused(
        h,
        &["hook", "check", "claude-code", "--project", &dir],
        &["disableAllHooks"],
    );
    assert!(
        pcpctl(h, &["hook", "check", "claude-code"])
            .status
            .success()
    );
}

#[test]
fn a_codex_hook_must_be_trusted_or_its_runs_must_bypass_trust() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    assert!(pcpctl(h, &["hook", "install", "codex"]).status.success());
    let hooks = h.join(".codex/hooks.json");
    refused(h, &["hook", "check", "codex"], &["never trusted", "/hooks"]);
    let o = pcpctl(h, &["hook", "check", "codex", "--trust-bypassed"]);
    assert!(o.status.success(), "{}", stdout(&o));
    // Trust recorded the way Codex's /hooks records it passes without the flag.
    let key = |event: &str| format!("{}:{event}:0:0", hooks.display());
    let state = format!(
        "[hooks.state.\"{}\"]\ntrusted_hash = \"sha256:x\"\n[hooks.state.\"{}\"]\ntrusted_hash = \"sha256:y\"\n",
        key("pre_tool_use"),
        key("permission_request")
    );
    std::fs::write(h.join(".codex/config.toml"), state).unwrap();
    let o = pcpctl(h, &["hook", "check", "codex"]);
    assert!(o.status.success(), "{}", stdout(&o));
    // Hooks turned off in config.toml are refused.
    std::fs::write(h.join(".codex/config.toml"), "[features]\nhooks = false\n").unwrap();
    refused(
        h,
        &["hook", "check", "codex", "--trust-bypassed"],
        &["features.hooks = false"],
    );
    // Nothing installed anywhere: refused too.
    let empty = tempfile::tempdir().unwrap();
    refused(
        empty.path(),
        &["hook", "check"],
        &["no pcpctl hook is installed"],
    );
}

//! Wall time of `pcpctl hook claude-code` for a routine tool call against a running headless
//! compositor, process start included, beside `pcpctl submit` of the same intent (budget: the
//! hook ≤ 5 ms more than submit, DESIGN.md), with no Claude Code settings to read and with the
//! user's and the project's `settings.json` holding the installed hook (which the hook reads to
//! keep its deadline under Claude Code's timeout). The compositor runs on its own thread.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use pcp_compositor::startup;
use pcp_compositor::state::{Compositor, Socket};

fn start(dir: PathBuf, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    let (tx, rx) = std::sync::mpsc::channel();
    let handle = std::thread::spawn(move || {
        let assets = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets");
        let config = dir.join("config.toml");
        let text = format!(
            "[manifests]\ndirs = [{:?}]\n[state]\npath = {:?}\n[overlay]\nsystem_fonts = false\n\
             [speech]\nenabled = false\n",
            assets.join("capabilities.d"),
            dir.join("state.sqlite3")
        );
        std::fs::write(&config, text).expect("config");
        let loaded = startup::load(Some(&config)).expect("load");
        let mut options = startup::options(
            loaded,
            vec!["800x600@0,0".parse().expect("output")],
            Some(Socket::Path(dir.join("wl"))),
            Some(config),
            true,
        )
        .expect("options");
        options.frame_timer = false;
        let mut compositor = Compositor::new(options).expect("compositor");
        let _ = tx.send(());
        while !stop.load(Ordering::Relaxed) {
            let _ = compositor.dispatch(Some(Duration::from_millis(20)));
        }
    });
    let _ = rx.recv();
    handle
}

fn run(dir: &Path, home: &Path, args: &[&str], stdin: &[u8]) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_pcpctl"))
        .args(args)
        .env("WAYLAND_DISPLAY", dir.join("wl"))
        .env("HOME", home)
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CLAUDE_PROJECT_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn pcpctl");
    if let Some(mut input) = child.stdin.take() {
        let _ = input.write_all(stdin);
    }
    let status = child.wait().expect("wait");
    assert!(status.success(), "pcpctl {args:?} was not approved");
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).expect("0700");
    let stop = Arc::new(AtomicBool::new(false));
    let compositor = start(dir.path().to_path_buf(), Arc::clone(&stop));
    let cwd = dir.path().to_string_lossy().into_owned();
    let file = format!("{cwd}/README.md");
    let event = serde_json::json!({
        "hook_event_name": "PreToolUse", "tool_name": "Read", "cwd": cwd,
        "tool_input": {"file_path": file}
    })
    .to_string();
    let params = serde_json::json!({"tool": "Read", "target": file, "cwd": cwd}).to_string();
    // A home without settings, and one (with the project) where the hook is installed as
    // `pcpctl hook install` writes it, beside settings of other kinds.
    let bare = dir.path().join("bare-home");
    let home = dir.path().join("home");
    let command = format!(
        "{} hook claude-code --deadline 50",
        env!("CARGO_BIN_EXE_pcpctl")
    );
    let settings = serde_json::json!({"model": "opus", "permissions": {"allow": ["Bash(ls:*)"]},
        "hooks": {"PreToolUse": [{"matcher":
        "^(Bash|Write|Edit|MultiEdit|NotebookEdit|Read|Grep|Glob|LS|WebFetch|WebSearch|mcp__.*)$",
        "hooks": [{"type": "command", "command": command, "timeout": 60}]}],
        "PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "fmt"}]}]}});
    let project = dir.path().join("project");
    for d in [&bare, &home.join(".claude"), &project.join(".claude")] {
        std::fs::create_dir_all(d).expect("settings folder");
    }
    for folder in [&home, &project] {
        let file = folder.join(".claude/settings.json");
        std::fs::write(file, settings.to_string()).expect("settings");
    }
    let in_project = serde_json::json!({
        "hook_event_name": "PreToolUse", "tool_name": "Read", "cwd": project,
        "tool_input": {"file_path": project.join("README.md")}
    })
    .to_string();
    let mut group = c.benchmark_group("agent_hook");
    group.sample_size(50);
    group.bench_function("pcpctl_submit_routine", |b| {
        b.iter(|| {
            run(
                dir.path(),
                &bare,
                &["submit", "agent.read", "--params", &params],
                b"",
            )
        })
    });
    group.bench_function("pcpctl_hook_claude_code_routine", |b| {
        b.iter(|| {
            run(
                dir.path(),
                &bare,
                &["hook", "claude-code"],
                event.as_bytes(),
            )
        })
    });
    group.bench_function("pcpctl_hook_claude_code_routine_with_settings", |b| {
        b.iter(|| {
            run(
                dir.path(),
                &home,
                &["hook", "claude-code"],
                in_project.as_bytes(),
            )
        })
    });
    group.finish();
    stop.store(true, Ordering::Relaxed);
    let _ = compositor.join();
}

criterion_group!(benches, bench);
criterion_main!(benches);

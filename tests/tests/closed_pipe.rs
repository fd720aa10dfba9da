//! No program of the project panics when its reader goes away (`pcpctl audit | head`): every
//! binary of the workspace is run, as built, with its stdout a pipe whose reading end is already
//! closed, doing something that prints. Each must end quietly — killed by SIGPIPE, as a Unix
//! filter is, or exiting with its own status — with nothing on stderr about a panic. A binary
//! added to the workspace without a case here fails the test (`xtask` is the developers' tool
//! and `pcp-guest` runs only inside the session test's VM, writing to the host's channel, not
//! stdout).

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// Binaries that are not products run by users.
const EXEMPT: &[&str] = &["xtask", "pcp-guest"];

fn cargo() -> Command {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| env!("CARGO").into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"));
    cmd
}

/// Builds with `args` in this test's target folder and profile; the executables cargo reports,
/// by target name.
fn build(args: &[&str]) -> Vec<(String, PathBuf)> {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(Path::parent).unwrap();
    let mut cmd = cargo();
    cmd.arg("build").args(args);
    cmd.arg("--message-format=json-render-diagnostics");
    if profile_dir.file_name().and_then(|n| n.to_str()) == Some("release") {
        cmd.arg("--release");
    }
    if let Some(target) = profile_dir.parent() {
        cmd.arg("--target-dir").arg(target);
    }
    let out = cmd.stderr(Stdio::inherit()).output().unwrap();
    assert!(out.status.success(), "{cmd:?} failed: see above");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact")
        .filter_map(|m| {
            let name = m["target"]["name"].as_str()?.to_string();
            Some((name, PathBuf::from(m["executable"].as_str()?)))
        })
        .collect()
}

/// Every binary target of the workspace.
fn workspace_binaries() -> Vec<String> {
    let out = cargo()
        .args([
            "metadata",
            "--offline",
            "--no-deps",
            "--format-version",
            "1",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let metadata: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut names = Vec::new();
    for package in metadata["packages"].as_array().unwrap() {
        for target in package["targets"].as_array().unwrap() {
            if target["kind"]
                .as_array()
                .unwrap()
                .iter()
                .any(|k| k == "bin")
            {
                names.push(target["name"].as_str().unwrap().to_string());
            }
        }
    }
    names
}

/// Runs `exe args` with stdout a pipe nobody reads any more.
fn with_closed_stdout(exe: &Path, args: &[&str]) -> Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    Command::new(exe)
        .args(args)
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

fn assets() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets")
}

#[test]
fn no_program_panics_when_its_reader_has_gone() {
    let mut exes = build(&[
        "-p",
        "pcpctl",
        "-p",
        "pcp-compositor",
        "-p",
        "pcp-overlay",
        "-p",
        "pcp-speech",
        "--features",
        "pcp-speech/vosk",
        "--bins",
    ]);
    exes.extend(build(&["-p", "pcp-tests", "--example", "pcp-harness"]));
    let exe = |name: &str| -> PathBuf {
        exes.iter()
            .find(|(n, _)| n == name)
            .map(|(_, p)| p.clone())
            .unwrap_or_else(|| panic!("{name} was not built"))
    };

    let dir = tempfile::tempdir().unwrap();
    let d = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
    let config = d("config.toml");
    std::fs::write(
        &config,
        format!(
            "[manifests]\ndirs = [{:?}]\n[state]\npath = {:?}\n",
            assets().join("capabilities.d"),
            d("state.sqlite3")
        ),
    )
    .unwrap();
    let trace = d("trace.jsonl");
    let line = r#"{"at_ms":0,"capability":"file.read","params":{"path":"/etc/hostname"}}"#;
    std::fs::write(&trace, format!("{line}\n").repeat(200)).unwrap();
    let content = d("content.json");
    std::fs::write(
        &content,
        r#"{"requester":{"unconfined":{"executable":"/usr/bin/a","pid":7}},"action":"x","risk":"routine"}"#,
    )
    .unwrap();
    let png = d("out.png");
    // A state with records to print: a replay into it.
    let state = ["--state", &d("state.sqlite3")];
    let seeded = Command::new(exe("pcpctl"))
        .args(["replay", "--config", &config, &trace])
        .args(state)
        .output()
        .unwrap();
    assert!(seeded.status.success(), "{seeded:?}");

    let cases: &[(&str, Vec<&str>)] = &[
        ("pcpctl", vec!["validate", "--config", &config]),
        (
            "pcpctl",
            vec![
                "explain",
                "file.read",
                "--params",
                "{}",
                "--config",
                &config,
            ],
        ),
        ("pcpctl", vec!["replay", "--config", &config, &trace]),
        ("pcpctl", vec!["audit", "--state", state[1]]),
        ("pcpctl", vec!["audit", "--json", "--state", state[1]]),
        ("pcpctl", vec!["audit", "verify", "--state", state[1]]),
        ("pcpctl", vec!["hook", "claude-code", "--print-config"]),
        ("pcpctl", vec!["--generate", "bash-completion"]),
        ("pcpctl", vec!["--help"]),
        ("pcp-compositor", vec!["validate", "--config", &config]),
        ("pcp-compositor", vec!["--generate", "bash-completion"]),
        ("pcp-compositor", vec!["--help"]),
        (
            "pcp-overlay-render",
            vec!["--content", &content, "--size", "800x600", "--out", &png],
        ),
        ("pcp-listen", vec!["--help"]),
        ("pcp-harness", vec!["--", "true"]),
    ];
    let covered: Vec<&str> = cases.iter().map(|(name, _)| *name).collect();
    for name in workspace_binaries() {
        assert!(
            EXEMPT.contains(&name.as_str()) || covered.contains(&name.as_str()),
            "{name} is a binary of the workspace with no case here"
        );
    }
    for (name, args) in cases {
        let out = with_closed_stdout(&exe(name), args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let quiet = out.status.signal() == Some(libc::SIGPIPE) || out.status.code().is_some();
        assert!(quiet, "{name} {args:?}: {:?}", out.status);
        assert!(
            !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
            "{name} {args:?} ({:?}): {stderr}",
            out.status
        );
        // A failure of its own would say so; none of these fails.
        assert!(
            out.status.signal() == Some(libc::SIGPIPE) || out.status.success(),
            "{name} {args:?}: {:?} {stderr}",
            out.status
        );
    }
}

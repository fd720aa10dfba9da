//! `pcp-harness` as an agent developer runs it: the built binary with a scripted user file, a
//! real protocol client, the JSON lines it prints, the audit log it leaves, and its errors for a
//! bad script. The script parser's own tests run here too (`script::tests`). The binary these
//! tests start is built by them from the current sources (see [`binary`]).

#[path = "../examples/pcp_harness/script.rs"]
#[allow(dead_code)]
mod script;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use pcp_gate::store::Store;
use pcp_protocol::client::{Decision, IntentClient, Submission};
use serde_json::{Value, json};

/// The `pcp-harness` example as the sources are now: built once per test run by the cargo that
/// runs these tests (`$CARGO`), in the same target folder and profile, so a filtered
/// `cargo test --test scripted_user` never starts a binary left from older sources. Its path is
/// the one cargo reports for the built example.
fn binary() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(build_harness).clone()
}

fn build_harness() -> PathBuf {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| env!("CARGO").into());
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "-p", "pcp-tests", "--example", "pcp-harness"])
        .arg("--message-format=json-render-diagnostics")
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    // This test's own profile: <target>/<profile>/deps/scripted_user-<hash>.
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(Path::parent).unwrap();
    match profile_dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") | None => {}
        Some("release") => {
            cmd.arg("--release");
        }
        Some(other) => {
            cmd.args(["--profile", other]);
        }
    }
    // The same target folder (`--target-dir` or $CARGO_TARGET_DIR), so nothing is built twice
    // (a host build: the harness runs a compositor here, never cross-compiled).
    if let Some(target) = profile_dir.parent() {
        cmd.arg("--target-dir").arg(target);
    }
    let out = cmd.stderr(Stdio::inherit()).output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}): see its errors above",
        out.status
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == "pcp-harness")
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .unwrap_or_else(|| panic!("{cmd:?} reported no pcp-harness executable"))
}

struct Running {
    child: Child,
    lines: Receiver<Value>,
    ready: Value,
}

impl Running {
    fn start(dir: &Path, script: &str, extra: &[&str]) -> Running {
        let user = dir.join("user.toml");
        std::fs::write(&user, script).unwrap();
        let mut child = Command::new(binary())
            .arg("--user")
            .arg(&user)
            .arg("--state")
            .arg(dir.join("state.sqlite3"))
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let line = line.unwrap();
                let value: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("not a JSON line ({e}): {line}"));
                if tx.send(value).is_err() {
                    return;
                }
            }
        });
        let mut running = Running {
            child,
            lines,
            ready: Value::Null,
        };
        running.ready = running.next("ready");
        running
    }

    /// The next line of `event`, skipping others.
    fn next(&mut self, event: &str) -> Value {
        let start = Instant::now();
        loop {
            let left = Duration::from_secs(60).saturating_sub(start.elapsed());
            let line = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|e| panic!("no `{event}` line: {e}"));
            if line["event"] == event {
                return line;
            }
        }
    }

    fn socket(&self) -> PathBuf {
        PathBuf::from(self.ready["wayland_display"].as_str().unwrap())
    }

    /// Submits on a new connection and waits for the decision on a thread.
    fn submit(&self, capability: &str, params: Value) -> mpsc::Receiver<Decision> {
        let socket = self.socket();
        let submission = Submission {
            capability: capability.into(),
            params,
            target: None,
            steps: Vec::new(),
        };
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut client = IntentClient::connect_to(&socket).unwrap();
            let handle = client.submit(&submission).unwrap();
            let _ = tx.send(client.wait(&handle).unwrap());
        });
        rx
    }

    fn say(&mut self, line: &str) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// Ends the harness by closing its stdin (with `--stdin`) or by SIGTERM; its exit line.
    fn stop(mut self, by_signal: bool) -> Value {
        if by_signal {
            unsafe {
                libc::kill(self.child.id() as i32, libc::SIGTERM);
            }
        } else {
            drop(self.child.stdin.take());
        }
        let exit = self.next("exit");
        let status = self.child.wait().unwrap();
        assert!(status.success(), "pcp-harness exited {status}");
        exit
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        // A failed test must not leave its compositor behind.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn decided(rx: &mpsc::Receiver<Decision>) -> Decision {
    rx.recv_timeout(Duration::from_secs(60)).unwrap()
}

const SCRIPT: &str = r#"
[[answer]]
capability = "network.*"
do = "approve"

[[answer]]
capability = "output.configure"
do = "deny"
delay_ms = 300
"#;

#[test]
fn the_scripted_user_approves_and_denies_and_every_line_and_record_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = Running::start(dir.path(), SCRIPT, &[]);
    assert_eq!(h.ready["outputs"][0]["name"], "HEADLESS-1");

    let share = json!({"path": "/home/alice/report.pdf", "recipient": "bob@example.org"});
    let d = decided(&h.submit("network.share", share.clone()));
    assert_eq!(d.resolution, "user_approved");
    assert!(d.token.is_some(), "an approval carries its token");
    let prompt = h.next("prompt");
    assert_eq!(
        (&prompt["capability"], &prompt["threshold"]),
        (&json!("network.share"), &json!("visual"))
    );
    // What the user was shown: the requester, the parameters, the buttons.
    let text: Vec<&str> = prompt["text"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    for shown in [
        "/home/alice/report.pdf",
        "bob@example.org",
        "Deny",
        "Approve",
    ] {
        assert!(text.iter().any(|t| t.contains(shown)), "{shown}: {text:?}");
    }
    let line = h.next("decision");
    assert_eq!(line["capability"], "network.share");
    assert_eq!(line["resolution"], "user_approved");
    assert_eq!(line["approved"], true);
    assert_eq!(line["scripted"], true);
    assert_eq!(line["user"], json!(["approve"]));
    assert_eq!(line["params"], share);

    let d = decided(&h.submit(
        "output.configure",
        json!({"output": "HEADLESS-1", "mode": "1280x720"}),
    ));
    assert_eq!(d.resolution, "user_denied", "{d:?}");
    let line = h.next("decision");
    assert_eq!(
        (&line["resolution"], &line["user"]),
        (&json!("user_denied"), &json!(["deny"]))
    );

    // No prompt, no scripted user: a routine write is allowed and its line says it was not
    // scripted.
    let d = decided(&h.submit("file.write", json!({"path": "/home/alice/notes.txt"})));
    assert_eq!(d.resolution, "policy_allow");
    let line = h.next("decision");
    assert_eq!(
        (&line["resolution"], &line["user"]),
        (&json!("policy_allow"), &json!([]))
    );
    assert!(line.get("scripted").is_none());

    h.stop(true);
    let store = Store::open_read_only(&dir.path().join("state.sqlite3")).unwrap();
    assert!(matches!(store.verify_audit(), Ok(Ok(_))), "the chain holds");
    let records = store.audit_since(0).unwrap();
    let scripted: Vec<(&str, bool)> = records
        .iter()
        .filter(|r| r.capability != pcp_gate::POLICY_CAPABILITY)
        .map(|r| (r.resolution.as_str(), r.scripted))
        .collect();
    assert_eq!(
        scripted,
        [
            ("user_approved", true),
            ("user_denied", true),
            ("policy_allow", false)
        ]
    );
}

#[test]
fn a_test_can_answer_live_on_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let pngs = dir.path().join("pngs");
    let mut h = Running::start(
        dir.path(),
        "",
        &["--stdin", "--capture", pngs.to_str().unwrap()],
    );
    let rx = h.submit("network.share", json!({"path": "/a", "recipient": "bob"}));
    let prompt = h.next("prompt");
    assert_eq!(
        prompt["scripted"], false,
        "no answer in the script: it waits for stdin"
    );
    h.next("capture");
    h.say("capture before/deny");
    let capture = h.next("capture");
    assert_eq!(
        capture["path"],
        json!(pngs.join("before_deny-output-0.png")),
        "a name stays in the capture folder"
    );
    assert!(pngs.join("before_deny-output-0.png").exists());
    h.say("wave");
    let error = h.next("error");
    assert_eq!(error["at"], "stdin:2:1", "the second line");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("unknown command `wave`")
    );
    h.say("deny");
    let d = decided(&rx);
    assert_eq!(d.resolution, "user_denied", "{d:?}");
    let line = h.next("decision");
    assert_eq!(
        (&line["user"], &line["scripted"]),
        (&json!(["deny"]), &json!(true))
    );
    h.stop(false);
}

#[test]
fn a_bad_script_is_refused_with_its_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let user = dir.path().join("user.toml");
    std::fs::write(
        &user,
        "[[answer]]\ncapability = \"file.*\"\ndo = [\"approve\", \"shrug\"]\n",
    )
    .unwrap();
    let out = Command::new(binary())
        .arg("--user")
        .arg(&user)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("{}:3:6: unknown action 'shrug'", user.display())),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "no compositor started");
}

#[test]
fn a_double_tap_allow_until_logout_and_captures_of_every_output() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("extra.toml");
    std::fs::write(&config, "[gate]\nsession_approvals = true\n").unwrap();
    let pngs = dir.path().join("pngs");
    let script = r#"
[[answer]]
capability = "settings.change"
do = "double-tap"

[[answer]]
capability = "network.share"
do = "allow-session"
"#;
    let config = config.to_str().unwrap();
    let pngs_arg = pngs.to_str().unwrap();
    let mut h = Running::start(
        dir.path(),
        script,
        &[
            "--config",
            config,
            "--capture",
            pngs_arg,
            "--output",
            "1280x800",
            "--output",
            "800x600*2@1280,0",
        ],
    );
    assert_eq!(h.ready["outputs"][1]["name"], "HEADLESS-2");

    let d = decided(&h.submit("settings.change", json!({"key": "theme", "value": "dark"})));
    assert_eq!(d.resolution, "user_approved", "{d:?}");
    assert_eq!(
        d.modalities,
        ["haptic"],
        "the recording haptic device answers"
    );
    let line = h.next("decision");
    assert_eq!(line["user"], json!(["double-tap"]));

    let share = json!({"path": "/a", "recipient": "bob"});
    let d = decided(&h.submit("network.share", share.clone()));
    assert_eq!(d.resolution, "user_approved", "{d:?}");
    let line = h.next("decision");
    assert_eq!(line["user"], json!(["allow-session"]));
    let d = decided(&h.submit("network.share", share));
    assert_eq!(d.resolution, "user_approved_for_session", "{d:?}");
    let line = h.next("decision");
    assert_eq!((&line["user"], line.get("scripted")), (&json!([]), None));

    let exit = h.stop(true);
    assert!(
        exit["haptic_calls"].as_u64().unwrap() > 0,
        "the cue was played"
    );
    let mut names: Vec<String> = std::fs::read_dir(&pngs)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "001-settings.change-output-0.png",
            "001-settings.change-output-1.png",
            "002-network.share-output-0.png",
            "002-network.share-output-1.png"
        ]
    );
    let png = std::fs::read(pngs.join("002-network.share-output-1.png")).unwrap();
    assert_eq!(&png[1..4], b"PNG");
}

#[test]
fn a_command_after_the_options_runs_against_the_harness_and_gives_its_status() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(binary())
        .arg("--state")
        .arg(dir.path().join("state.sqlite3"))
        .args([
            "--",
            "sh",
            "-c",
            "test -S \"$WAYLAND_DISPLAY\" && test -d \"$XDG_RUNTIME_DIR\" && \
             test -f \"$PCP_CONFIG\" && echo agent output && exit 3",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let events: Vec<String> = stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["event"].to_string())
        .collect();
    assert_eq!(events, ["\"ready\"", "\"exit\""]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("agent output"));
}

#[test]
fn a_bad_manifest_or_config_is_one_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("caps");
    std::fs::create_dir(&manifests).unwrap();
    std::fs::write(
        manifests.join("agent.toml"),
        "[[capability]]\nname = \"notes.save\"\nversion = 1\nside_effects = \"sometimes\"\n",
    )
    .unwrap();
    let out = Command::new(binary())
        .arg("--manifests")
        .arg(&manifests)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("pcp-harness: the compositor did not start:")
            && stderr.contains("agent.toml:4:"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");

    let config = dir.path().join("extra.toml");
    std::fs::write(&config, "[speech]\nenabled = true\n").unwrap();
    let out = Command::new(binary())
        .arg("--config")
        .arg(&config)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("[speech] is set by the harness"),
        "{stderr}"
    );
}

#[test]
fn a_phrase_said_on_stdin_answers_the_next_dialog_by_voice() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = Running::start(dir.path(), "", &["--stdin", "--voice"]);
    assert_eq!(h.ready["voice"], true);
    h.say("say 네, {challenge}");
    let rx = h.submit("file.delete", json!({"path": "/home/alice/draft.txt"}));
    let prompt = h.next("prompt");
    assert_eq!(prompt["plan"], json!(["voice", "visual"]));
    h.say("approve");
    let d = decided(&rx);
    assert_eq!(d.resolution, "user_approved", "{d:?}");
    let line = h.next("decision");
    let said = line["user"][0].as_str().unwrap();
    assert!(said.starts_with("say 네,"), "{line}");
    assert_eq!(line["user"][1], "approve");
    let mut results: Vec<(&str, &str)> = line["modality_results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["modality"].as_str().unwrap(),
                r["result"].as_str().unwrap(),
            )
        })
        .collect();
    results.sort();
    assert_eq!(results, [("visual", "approve"), ("voice", "approve")]);
    h.stop(false);
}

/// Runs the harness with `args` (and `env`) to its end: its exit code and stderr.
fn run_to_end(args: &[&std::ffi::OsStr], env: &[(&str, &Path)]) -> (Option<i32>, String) {
    let mut cmd = Command::new(binary());
    cmd.args(args).stdin(Stdio::null());
    for (key, value) in env {
        cmd.env(key, value);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The capture line of the first dialog a harness run shows: its texts and the characters it
/// drew as empty boxes.
fn first_capture(h: &mut Running) -> (Vec<String>, Vec<String>) {
    let capture = h.next("capture");
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap().to_string())
            .collect()
    };
    (
        strings(&capture["text"]),
        strings(&capture["missing_glyphs"]),
    )
}

/// The harness draws with the session's fonts: a Korean (and Chinese) file name is legible in a
/// capture, where the test fixtures' bundled font alone would draw empty boxes; with voice the
/// Korean pack's "네" is legible too.
#[test]
fn a_harness_capture_of_a_korean_prompt_is_legible() {
    let dir = tempfile::tempdir().unwrap();
    let pngs = dir.path().join("pngs");
    let mut h = Running::start(dir.path(), "", &["--capture", pngs.to_str().unwrap()]);
    let _rx = h.submit(
        "network.share",
        json!({"path": "/home/alice/보고서-報告.pdf", "recipient": "bob"}),
    );
    let (text, boxes) = first_capture(&mut h);
    assert!(text.iter().any(|t| t.contains("보고서-報告")), "{text:?}");
    assert_eq!(boxes, Vec::<String>::new(), "drawn as empty boxes");
    h.stop(true);

    let dir = tempfile::tempdir().unwrap();
    let pngs = dir.path().join("pngs");
    let mut h = Running::start(
        dir.path(),
        "",
        &["--voice", "--capture", pngs.to_str().unwrap()],
    );
    let _rx = h.submit("file.delete", json!({"path": "/home/alice/보고서.txt"}));
    let (text, boxes) = first_capture(&mut h);
    assert!(text.iter().any(|t| t.contains("“네”")), "{text:?}");
    assert_eq!(boxes, Vec::<String>::new(), "drawn as empty boxes");
    h.stop(true);
}

#[test]
fn the_compositors_own_log_lines_go_to_stderr_under_rust_log() {
    let dir = tempfile::tempdir().unwrap();
    let extra = dir.path().join("extra.toml");
    std::fs::write(&extra, "[polkit]\nenabled = true\n").unwrap();
    let no_bus = dir.path().join("no-system-bus");
    let run = |filter: &str| {
        let out = Command::new(binary())
            .arg("--config")
            .arg(&extra)
            .args(["--", "true"])
            .env("RUST_LOG", filter)
            .env(
                "DBUS_SYSTEM_BUS_ADDRESS",
                format!("unix:path={}", no_bus.display()),
            )
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let info = run("info");
    assert!(info.contains("polkit agent not started"), "{info}");
    assert!(info.contains(" INFO "), "{info}");
    let quiet = run("error");
    assert!(!quiet.contains("polkit agent not started"), "{quiet}");
}

#[test]
fn a_bad_output_spec_is_one_clear_error_with_status_2() {
    for (spec, why) in [
        ("10x10", "each side must be 64 to 16384 pixels"),
        ("1920x1080*9", "the scale must be between 0.5 and 4"),
        ("1920x1080@left", "the position is not X,Y"),
        ("wide", "no WxH size"),
    ] {
        let (code, stderr) = run_to_end(
            &[
                "--output".as_ref(),
                "1280x720".as_ref(),
                "--output".as_ref(),
                spec.as_ref(),
            ],
            &[],
        );
        assert_eq!(code, Some(2), "{spec}: {stderr}");
        assert!(
            stderr.starts_with(&format!("pcp-harness: --output: output `{spec}`: {why}")),
            "{spec}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{spec}: {stderr}");
    }
}

#[test]
fn a_state_path_the_gate_cannot_open_is_one_clear_error_with_status_2() {
    let dir = tempfile::tempdir().unwrap();
    // A folder where the state file should be: the gate cannot open it as a database. (Inside
    // a private folder: `/tmp` itself, a shared folder, is refused before that.)
    let not_a_file = dir.path().join("db");
    std::fs::create_dir(&not_a_file).unwrap();
    let (code, stderr) = run_to_end(&["--state".as_ref(), not_a_file.as_os_str()], &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.starts_with("pcp-harness: the compositor did not start:")
            && stderr.contains(&not_a_file.display().to_string()),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_phrase_espeak_ng_cannot_speak_is_an_error_naming_the_command_and_its_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let user = dir.path().join("user.toml");
    std::fs::write(
        &user,
        "[[answer]]\ncapability = \"file.*\"\ndo = [\"say\"]\nsay = \"네\"\n",
    )
    .unwrap();
    // espeak-ng without its data (a broken install): it fails and says why on stderr.
    let no_data = dir.path().join("no-espeak-data");
    std::fs::create_dir(&no_data).unwrap();
    let (code, stderr) = run_to_end(
        &["--user".as_ref(), user.as_os_str()],
        &[("ESPEAK_DATA_PATH", &no_data)],
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.starts_with(
            "pcp-harness: cannot speak \"네\" into the microphone: `espeak-ng -v ko -w"
        ) && stderr.contains("phontab"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

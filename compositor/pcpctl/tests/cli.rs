//! `pcpctl` as a user runs it: exit codes, JSON output and error messages.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use pcp_gate::{ClientIdentity, Decision, Gate, GateConfig, Intent};
use serde_json::{Value, json};

fn pcpctl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pcpctl"))
        .args(args)
        .output()
        .unwrap()
}

fn assets() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets")
}

fn config_in(dir: &Path) -> PathBuf {
    let path = dir.join("config.toml");
    let text = format!(
        "[manifests]\ndirs = [{:?}]\n[state]\npath = {:?}\n",
        assets().join("capabilities.d"),
        dir.join("state.sqlite3")
    );
    std::fs::write(&path, text).unwrap();
    path
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn validate_accepts_a_good_config_and_names_the_place_of_a_bad_one() {
    let dir = tempfile::tempdir().unwrap();
    let good = config_in(dir.path());
    let o = pcpctl(&["validate", "--config", good.to_str().unwrap()]);
    assert!(o.status.success(), "{o:?}");
    assert!(stdout(&o).contains("ok ("));
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[safety]\nlevel = \"lax\"\n").unwrap();
    let o = pcpctl(&["validate", "--config", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&format!("{}:2:", bad.display())), "{err}");
}

#[test]
fn explain_prints_threshold_plan_and_why_and_records_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let config = config_in(dir.path());
    let o = pcpctl(&[
        "explain",
        "file.delete",
        "--params",
        r#"{"path":"/a"}"#,
        "--config",
        config.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{o:?}");
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["threshold"], "voice+visual");
    assert_eq!(v["plan"], json!(["voice", "visual"]));
    assert_eq!(v["would"], "confirm");
    assert!(
        !dir.path().join("state.sqlite3").exists(),
        "explain created no state"
    );
    let o = pcpctl(&[
        "explain",
        "file.delete",
        "--available",
        "visual",
        "--config",
        config.to_str().unwrap(),
    ]);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["plan"], json!(["visual"]));
    assert_eq!(v["press_and_hold"], true);
    let o = pcpctl(&[
        "explain",
        "file.delete",
        "--params",
        "[1]",
        "--config",
        config.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("JSON object"));
}

#[test]
fn explain_prints_the_deny_rule_that_matched() {
    let dir = tempfile::tempdir().unwrap();
    let config = config_in(dir.path());
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(
        "[[rule]]\nname = \"no-disks\"\ncapability = \"disk.*\"\ndecision = \"deny\"\nreason = \"never here\"\n",
    );
    std::fs::write(&config, text).unwrap();
    let o = pcpctl(&[
        "explain",
        "disk.format",
        "--config",
        config.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{o:?}");
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["would"], "deny");
    assert_eq!(v["resolution"], "policy_deny");
    assert_eq!(v["rule"]["name"], "no-disks");
    assert_eq!(v["rule"]["reason"], "never here");
    let at = v["rule"]["declared_at"].as_str().unwrap();
    assert!(at.starts_with(&format!("{}:", config.display())), "{at}");
}

/// `pcpctl explain shell.exec …` for `rm -rf /tmp/x`, with `reasons` added to the config.
fn explain_rm_rf(dir: &Path, reasons: &str) -> Value {
    let config = config_in(dir);
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(reasons);
    std::fs::write(&config, text).unwrap();
    let params = r#"{"command":"rm -rf /tmp/x","cwd":"/home/u"}"#;
    let args = ["explain", "shell.exec", "--params", params, "--config"];
    let o = pcpctl(&[&args[..], &[config.to_str().unwrap()]].concat());
    assert!(o.status.success(), "{o:?}");
    serde_json::from_str(&stdout(&o)).unwrap()
}

#[test]
fn explain_words_the_gate_s_reasons_as_the_config_says() {
    let dir = tempfile::tempdir().unwrap();
    let english = explain_rm_rf(dir.path(), "");
    let rates = "the gate rates it high — deletes recursively and without asking outside the \
                 working folder (/tmp/x)";
    assert!(
        english["why"].as_array().unwrap().contains(&json!(rates)),
        "{english}"
    );
    let reworded = explain_rm_rf(
        dir.path(),
        "[shell_risk.reasons]\n\
         deletes_recursively_without_asking = \"löscht rekursiv ohne Rückfrage\"\n\
         deletes_outside = \"{how} außerhalb des Arbeitsordners ({path})\"\n\
         level_high = \"hoch\"\n",
    );
    let rates = "the gate rates it hoch — löscht rekursiv ohne Rückfrage außerhalb des \
                 Arbeitsordners (/tmp/x)";
    assert!(
        reworded["why"].as_array().unwrap().contains(&json!(rates)),
        "{reworded}"
    );
    let reason = &reworded["reasons"][0];
    assert_eq!(
        reason["why"],
        "löscht rekursiv ohne Rückfrage außerhalb des Arbeitsordners (/tmp/x)"
    );
    // The phrase and its arguments stay beside, for a client that words it itself.
    assert_eq!(reason["message"]["key"], "deletes_outside");
    assert_eq!(reason["message"]["args"]["path"], "/tmp/x");
    assert_eq!(
        reason["message"]["args"]["how"]["key"],
        "deletes_recursively_without_asking"
    );
    assert_eq!(
        reworded["risk"], english["risk"],
        "wording changes no level"
    );
}

#[test]
fn replay_prints_one_line_per_intent() {
    let dir = tempfile::tempdir().unwrap();
    let config = config_in(dir.path());
    let trace = dir.path().join("t.jsonl");
    std::fs::write(
        &trace,
        concat!(
            r#"{"at_ms": 0, "capability": "file.delete", "params": {"path": "/home/u/a.txt"}, "client": "files", "profile": "alice", "available": ["visual", "voice", "haptic"], "answers": [{"modality": "voice", "answer": "approve", "after_ms": 900}, {"modality": "visual", "answer": "approve", "after_ms": 1500}]}"#,
            "\n",
            r#"{"at_ms": 60000, "event": "switch_profile", "profile": "bob"}"#,
            "\n",
            r#"{"at_ms": 90000, "event": "update_capability", "capability": "file.delete", "version": 2}"#,
            "\n",
            r#"{"at_ms": 100000, "capability": "file.delete", "params": {"path": "/x"}}"#,
            "\n",
        ),
    )
    .unwrap();
    let o = pcpctl(&[
        "replay",
        trace.to_str().unwrap(),
        "--config",
        config.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{o:?}");
    let lines: Vec<Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["threshold"], "voice+visual");
    assert_eq!(lines[0]["plan"], json!(["voice", "visual"]));
    assert_eq!(lines[0]["prompted"], true);
    assert_eq!(lines[0]["outcome"], "approved");
    assert_eq!(lines[0]["resolution"], "user_approved");
    assert_eq!(lines[1]["resolution"], "confirmation.timeout");
    assert!(
        !dir.path().join("state.sqlite3").exists(),
        "a fresh state unless --state"
    );
}

#[test]
fn replay_names_the_bad_trace_line() {
    let dir = tempfile::tempdir().unwrap();
    let config = config_in(dir.path());
    let trace = dir.path().join("t.jsonl");
    std::fs::write(
        &trace,
        "{\"at_ms\": 0, \"capability\": \"file.read\"}\n{\"at_ms\": \"soon\"}\n",
    )
    .unwrap();
    let o = pcpctl(&[
        "replay",
        trace.to_str().unwrap(),
        "--config",
        config.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("trace line 2"));
}

#[test]
fn audit_lists_and_verifies_and_finds_tampering() {
    let dir = tempfile::tempdir().unwrap();
    let config = config_in(dir.path());
    let trace = dir.path().join("t.jsonl");
    std::fs::write(&trace, "{\"at_ms\": 0, \"capability\": \"file.read\", \"params\": {\"path\": \"/a\"}}\n{\"at_ms\": 5, \"capability\": \"nope\"}\n").unwrap();
    let state = dir.path().join("state.sqlite3");
    let (c, s, t) = (
        config.to_str().unwrap(),
        state.to_str().unwrap(),
        trace.to_str().unwrap(),
    );
    assert!(
        pcpctl(&["replay", t, "--config", c, "--state", s])
            .status
            .success()
    );
    let o = pcpctl(&["audit", "--json", "--state", s]);
    let records: Vec<Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 2);
    assert_eq!(records[1]["resolution"], "unknown_capability");
    assert!(pcpctl(&["audit", "verify", "--state", s]).status.success());
    let conn = rusqlite::Connection::open(&state).unwrap();
    conn.execute_batch("DROP TRIGGER audit_no_update;").unwrap();
    conn.execute(
        "UPDATE audit SET record = replace(record, 'nope', 'yes') WHERE seq = 2",
        [],
    )
    .unwrap();
    let o = pcpctl(&["audit", "verify", "--state", s]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("record 2"), "{}", stdout(&o));
}

#[test]
fn token_verify_accepts_once_then_says_replayed_mismatch_or_forged() {
    let dir = tempfile::tempdir().unwrap();
    let config = config_in(dir.path());
    let mint = || {
        let mut gate = Gate::open(GateConfig::load(&config).unwrap()).unwrap();
        let intent = Intent::new(
            "file.write",
            json!({"path": "/a"}),
            ClientIdentity::named("t"),
        );
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64;
        match gate.submit(intent, now) {
            Decision::Execute(o) => o.token.unwrap(),
            other => panic!("{other:?}"),
        }
    };
    let token = mint();
    let c = config.to_str().unwrap();
    let verify = |tok: &str, params: &str| {
        pcpctl(&[
            "token",
            "verify",
            tok,
            "--capability",
            "file.write",
            "--params",
            params,
            "--config",
            c,
        ])
    };
    let o = verify(&token, r#"{"path":"/b"}"#);
    assert_eq!((o.status.code(), stdout(&o).trim()), (Some(1), "mismatch"));
    // The token names the app it was given to; --app checks it.
    let with_app = |app: &str| {
        pcpctl(&[
            "token",
            "verify",
            &token,
            "--capability",
            "file.write",
            "--params",
            r#"{"path":"/a"}"#,
            "--app",
            app,
            "--config",
            c,
        ])
    };
    let o = with_app("connection:someone-else");
    assert_eq!((o.status.code(), stdout(&o).trim()), (Some(1), "wrong_app"));
    let o = with_app("connection:t");
    assert!(o.status.success(), "{o:?}");
    let token = mint();
    let o = verify(&token, r#"{"path":"/a"}"#);
    assert!(o.status.success(), "{o:?}");
    let o = verify(&token, r#"{"path":"/a"}"#);
    assert_eq!((o.status.code(), stdout(&o).trim()), (Some(1), "replayed"));
    let forged = format!("{token}x");
    let o = verify(&forged, r#"{"path":"/a"}"#);
    assert_eq!((o.status.code(), stdout(&o).trim()), (Some(1), "forged"));
}

#[test]
fn the_example_trace_in_assets_replays_as_its_comments_say() {
    let assets = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/replay");
    let o = pcpctl(&[
        "replay",
        assets.join("trace.jsonl").to_str().unwrap(),
        "--config",
        assets.join("config.toml").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{o:?}");
    let resolutions: Vec<String> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["resolution"].to_string())
        .map(|r| r.trim_matches('"').to_string())
        .collect();
    assert_eq!(
        resolutions,
        [
            "policy_allow",
            "user_approved",
            "user_approved",
            "confirmation.timeout",
            "user_approved",
            "user_approved",
            "confirmed_by_history",
            "user_denied",
            "user_approved",
            "user_approved",
            "confirmation_unavailable",
            "unknown_capability",
            "user_approved",
        ]
    );
}

/// The man page and the bash completion the package installs are made from the clap definition:
/// every subcommand is in both, and the man page documents the exit codes and the voice model.
#[test]
fn the_man_page_and_bash_completion_come_from_the_command_line_definition() {
    let dir = tempfile::tempdir().unwrap();
    let out = pcpctl(&["--generate", "man", dir.path().to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    let man = std::fs::read_to_string(dir.path().join("pcpctl.1")).unwrap();
    assert!(man.contains(".TH pcpctl 1"), "{man}");
    for word in [
        "validate", "explain", "replay", "audit", "submit", "run", "token",
    ] {
        assert!(
            man.contains(&format!("pcpctl\\-{word}(1)")),
            "no {word} in {man}"
        );
        let page = std::fs::read_to_string(dir.path().join(format!("pcpctl-{word}.1"))).unwrap();
        assert!(page.contains(".SH OPTIONS"), "{page}");
    }
    assert!(
        dir.path().join("pcpctl-audit-verify.1").exists(),
        "nested subcommands get pages too"
    );
    assert!(man.contains("Exit status"), "{man}");
    assert!(man.contains("Vosk"), "{man}");
    let bash = pcpctl(&["--generate", "bash-completion"]);
    assert!(bash.status.success());
    let bash = String::from_utf8_lossy(&bash.stdout);
    assert!(bash.contains("complete -F _pcpctl"), "{bash}");
    assert!(bash.contains("submit"), "{bash}");
    let unknown = pcpctl(&["--generate", "fish"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("--generate fish"));
}

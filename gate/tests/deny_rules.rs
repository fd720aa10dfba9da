//! Explicit deny rules: evaluated before everything else, denied `policy_deny` with the rule's
//! reason, named in the audit log and by `explain`; no history, session approval or open prompt
//! gets past one.

mod support;

use pcp_gate::{
    Answer, ClientIdentity, Decision, Gate, GateConfig, Intent, Modality, ModalityEvent, Outcome,
    Resolution, Step,
};
use serde_json::json;
use support::{config, gate, intent};

const S: i64 = 1000;

const NO_DISKS: &str = r#"
[[rule]]
name = "no-disks"
capability = "disk.*"
decision = "deny"
reason = "Disks are never formatted or wiped on this machine"
"#;

fn denied(d: Decision) -> Outcome {
    match d {
        Decision::Deny(o) => o,
        other => panic!("expected a denial, got {other:?}"),
    }
}

fn approve_visual(g: &mut Gate, d: Decision, at: i64) -> Outcome {
    let Decision::Confirm { id, .. } = d else {
        panic!("expected a prompt, got {d:?}");
    };
    g.respond(
        id,
        ModalityEvent::Answer(Modality::Visual, Answer::Approve),
        at,
    )
    .unwrap()
    .unwrap()
}

/// A rule forbidding `capability`, written into the config.
fn rule_for(capability: &str) -> String {
    format!(
        "[[rule]]\nname = \"no-{capability}\"\ncapability = \"{capability}\"\ndecision = \"deny\"\nreason = \"not here\"\n"
    )
}

/// An unconfined program, so its identity is verified.
fn program(exe: &str) -> ClientIdentity {
    ClientIdentity {
        id: format!("wl-{exe}"),
        pid: Some(7),
        uid: Some(1000),
        executable: Some(exe.to_string()),
        ..Default::default()
    }
}

#[test]
fn a_matching_intent_is_denied_policy_deny_with_the_rules_reason_and_the_audit_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), NO_DISKS);
    // Undeclared: without the rule it would be `unknown_capability`, which nobody can tell from
    // a typo.
    let o = denied(g.submit(intent("disk.format", json!({"device": "/dev/sda"})), 0));
    assert_eq!(o.resolution, Resolution::PolicyDeny);
    assert_eq!(
        o.reason,
        "Disks are never formatted or wiped on this machine"
    );
    assert_eq!(
        denied(g.submit(intent("disks.format", json!({})), S)).resolution,
        Resolution::UnknownCapability,
        "the glob matches whole names"
    );
    g.flush().unwrap();
    let records = g.store().audit_since(0).unwrap();
    assert_eq!(records[0].resolution, Resolution::PolicyDeny);
    assert_eq!(records[0].rule.as_deref(), Some("no-disks"));
    assert!(
        records[0]
            .notes
            .iter()
            .any(|n| n.contains("no-disks") && n.contains("config.toml:")),
        "{:?}",
        records[0].notes
    );
    assert_eq!(records[1].rule, None);
}

#[test]
fn a_rule_on_parameters_denies_only_the_matching_values() {
    let dir = tempfile::tempdir().unwrap();
    let rule = r#"
[[rule]]
capability = "file.*"
decision = "deny"
reason = "nothing under /etc"
params = { path = "/etc/*" }
"#;
    let mut g = gate(dir.path(), rule);
    let o = denied(g.submit(intent("file.write", json!({"path": "/etc/passwd"})), 0));
    assert_eq!(o.resolution, Resolution::PolicyDeny);
    assert!(matches!(
        g.submit(intent("file.write", json!({"path": "/home/u/etc"})), S),
        Decision::Execute(_)
    ));
    g.flush().unwrap();
    // Without a name, the audit names the rule by where it is written.
    let record = &g.store().audit_since(0).unwrap()[0];
    let name = record.rule.as_deref().unwrap();
    assert!(name.contains("config.toml:"), "{name}");
}

#[test]
fn a_step_the_rule_forbids_denies_the_whole_intent() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), &rule_for("file.delete"));
    let mut i = intent("file.write", json!({"path": "/a"}));
    i.steps = vec![Step {
        capability: "file.delete".into(),
        params: json!({"path": "/b"}),
    }];
    assert_eq!(denied(g.submit(i, 0)).resolution, Resolution::PolicyDeny);
}

#[test]
fn a_deny_rule_beats_a_history_that_would_have_confirmed() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "");
    let move_it = || intent("window.move", json!({"window": "w", "output": "left"}));
    for i in 0..3 {
        let d = g.submit(move_it(), i * 60 * S);
        assert!(approve_visual(&mut g, d, i * 60 * S + S).approved);
    }
    let ex = g.explain(&move_it(), 200 * S);
    assert_eq!(ex.resolution, Some("confirmed_by_history"));
    g.reload(config(dir.path(), &rule_for("window.move")))
        .unwrap();
    let o = denied(g.submit(move_it(), 300 * S));
    assert_eq!(o.resolution, Resolution::PolicyDeny);
    assert_eq!(o.reason, "not here");
}

#[test]
fn a_deny_rule_beats_a_session_approval() {
    let dir = tempfile::tempdir().unwrap();
    let on = "[gate]\nsession_approvals = true\n";
    let mut g = gate(dir.path(), on);
    let ask = || {
        Intent::new(
            "settings.change",
            json!({"key": "theme", "value": "dark"}),
            program("/usr/bin/agent"),
        )
    };
    let Decision::Confirm { id, .. } = g.submit(ask(), 0) else {
        panic!("expected a prompt");
    };
    assert!(g.prompt(id).unwrap().offers_session());
    g.respond(id, ModalityEvent::ApproveForSession, S)
        .unwrap()
        .unwrap();
    match g.submit(ask(), 2 * S) {
        Decision::Execute(o) => assert_eq!(o.resolution, Resolution::UserApprovedForSession),
        other => panic!("{other:?}"),
    }
    g.reload(config(
        dir.path(),
        &format!("{on}{}", rule_for("settings.*")),
    ))
    .unwrap();
    assert_eq!(
        denied(g.submit(ask(), 3 * S)).resolution,
        Resolution::PolicyDeny
    );
}

#[test]
fn a_prompt_open_when_a_rule_arrives_is_denied_when_approved() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "");
    let d = g.submit(
        intent("window.move", json!({"window": "w", "output": "o"})),
        0,
    );
    g.reload(config(dir.path(), &rule_for("window.move")))
        .unwrap();
    let o = approve_visual(&mut g, d, S);
    assert!(!o.approved);
    assert_eq!(o.resolution, Resolution::PolicyDeny);
    assert!(o.token.is_none());
}

#[test]
fn explain_reports_the_rule_that_matched() {
    let dir = tempfile::tempdir().unwrap();
    let g = gate(dir.path(), NO_DISKS);
    let ex = g.explain(&intent("disk.wipe", json!({})), 0);
    assert_eq!(ex.would, "deny");
    assert_eq!(ex.resolution, Some("policy_deny"));
    let rule = ex.rule.expect("the rule is named");
    assert_eq!(rule.name, "no-disks");
    assert_eq!(rule.capability, "disk.*");
    assert!(rule.declared_at.contains("config.toml:"), "{rule:?}");
    let text = serde_json::to_string(&g.explain(&intent("disk.wipe", json!({})), 0)).unwrap();
    assert!(text.contains("\"rule\""), "{text}");
    assert!(g.explain(&intent("file.read", json!({})), 0).rule.is_none());
}

#[test]
fn rules_in_a_manifest_folder_apply_too() {
    let dir = tempfile::tempdir().unwrap();
    let caps = dir.path().join("caps");
    std::fs::create_dir(&caps).unwrap();
    std::fs::write(caps.join("rules.toml"), NO_DISKS).unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(
        &path,
        format!(
            "[manifests]\ndirs = [\"caps\"]\n[state]\npath = {:?}\n",
            dir.path().join("state.sqlite3")
        ),
    )
    .unwrap();
    let mut g = Gate::open(GateConfig::load(&path).unwrap()).unwrap();
    let o = denied(g.submit(intent("disk.format", json!({})), 0));
    assert_eq!(o.resolution, Resolution::PolicyDeny);
}

#[test]
fn malformed_rules_are_refused_with_their_place() {
    let dir = tempfile::tempdir().unwrap();
    let load = |text: &str| {
        let path = dir.path().join("config.toml");
        std::fs::write(&path, format!("[manifests]\ndirs = []\n{text}")).unwrap();
        GateConfig::load(&path).unwrap_err().to_string()
    };
    let e = load("[[rule]]\ncapability = \"Disk Format\"\ndecision = \"deny\"\nreason = \"x\"\n");
    assert!(e.contains(":4:") && e.contains("Disk Format"), "{e}");
    let e = load("[[rule]]\ncapability = \"disk.*\"\ndecision = \"allow\"\nreason = \"x\"\n");
    assert!(e.contains(":5:") && e.contains("allow"), "{e}");
    let e = load("[[rule]]\ncapability = \"disk.*\"\ndecision = \"deny\"\nreason = \" \"\n");
    assert!(e.contains(":6:") && e.contains("reason"), "{e}");
    let e = load("[[rule]]\ncapability = \"disk.*\"\ndecision = \"deny\"\n");
    assert!(e.contains("reason"), "{e}");
    let twice = format!("{NO_DISKS}{NO_DISKS}");
    let e = load(&twice);
    assert!(e.contains("declared twice"), "{e}");
}

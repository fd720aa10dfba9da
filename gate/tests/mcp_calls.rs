//! MCP tool calls through the real gate and state store: a routine read declared by name runs
//! unasked and pins its definition; the same tool with another definition asks, says why and
//! starts its friction history again; a denial keeps the old pin; the pin outlives the gate;
//! the audit record names the server, the tool and the definition whatever `[audit]` keeps.

mod support;

use pcp_gate::{
    Answer, ClientIdentity, Decision, Gate, Intent, IntentId, McpCall, Modality, ModalityEvent,
    Resolution, Threshold,
};
use serde_json::json;
use support::gate;

const S: i64 = 1000;
const HASH_A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const HASH_B: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
const HASH_C: &str = "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc";

/// A manifest that declares the filesystem server's `read_text_file` a routine read.
const READ_MANIFEST: &str = r#"
[[capability]]
name = "mcp.fs.read_text_file"
version = 1
side_effects = "read"
auth_level = "user"
description = "Read a file through the filesystem server"
"#;

fn gateway() -> ClientIdentity {
    ClientIdentity {
        id: "wl-gateway".into(),
        pid: Some(9),
        uid: Some(1000),
        executable: Some("/usr/bin/pcpctl".into()),
        ..Default::default()
    }
}

fn read(definition: &str) -> Intent {
    Intent::new(
        "mcp.fs.read_text_file",
        json!({"arguments": {"path": "/p/a.txt"}, "cwd": "/p", "server": "fs",
               "command": "mcp-server-filesystem /p", "tool": "read_text_file",
               "definition": definition, "listing": "listed"}),
        gateway(),
    )
}

fn answer(g: &mut Gate, id: IntentId, answer: Answer, at: i64) -> bool {
    let event = ModalityEvent::Answer(Modality::Visual, answer);
    g.respond(id, event, at).unwrap().unwrap().approved
}

fn last_record(g: &mut Gate) -> pcp_gate::AuditRecord {
    g.flush().unwrap();
    g.store().audit_since(0).unwrap().pop().unwrap()
}

#[test]
fn a_changed_definition_asks_once_and_a_denial_keeps_the_old_pin() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), READ_MANIFEST);
    let Decision::Execute(o) = g.submit(read(HASH_A), 0) else {
        panic!("a declared routine read runs unasked");
    };
    assert_eq!(o.resolution, Resolution::PolicyAllow);
    assert_eq!(
        g.store()
            .mcp_pin("default", "mcp.fs.read_text_file")
            .unwrap()
            .as_deref(),
        Some(HASH_A)
    );
    // The server changed the tool's definition: asked, and the prompt says so.
    let Decision::Confirm { id, threshold, .. } = g.submit(read(HASH_B), S) else {
        panic!("a changed definition asks");
    };
    assert_eq!(threshold, Threshold::Visual);
    let p = g.prompt(id).unwrap();
    assert!(
        p.extra
            .iter()
            .any(|(l, v)| l == "notice" && v.contains("changed since you last allowed")),
        "{:?}",
        p.extra
    );
    assert!(
        p.extra
            .iter()
            .any(|(l, v)| l == "server" && v == "fs — mcp-server-filesystem /p")
    );
    assert!(
        p.extra
            .iter()
            .any(|(l, v)| l == "arguments.path" && v == "/p/a.txt")
    );
    assert!(
        !p.extra.iter().any(|(_, v)| v.contains(HASH_B)),
        "no hash on the dialog"
    );
    assert!(!answer(&mut g, id, Answer::Deny, 2 * S));
    // Denied: the old pin stays, so it asks again.
    assert_eq!(
        g.store()
            .mcp_pin("default", "mcp.fs.read_text_file")
            .unwrap()
            .as_deref(),
        Some(HASH_A)
    );
    let Decision::Confirm { id, .. } = g.submit(read(HASH_B), 3 * S) else {
        panic!("still changed after a denial");
    };
    assert!(answer(&mut g, id, Answer::Approve, 5 * S));
    // Allowed: B is pinned and the read is routine again.
    let Decision::Execute(_) = g.submit(read(HASH_B), 6 * S) else {
        panic!("the allowed definition is routine again");
    };
    // Pins live in the state store: a new gate over it still knows B, and C asks.
    drop(g);
    let mut g = gate(dir.path(), READ_MANIFEST);
    let Decision::Execute(_) = g.submit(read(HASH_B), 7 * S) else {
        panic!("the pin survives the gate");
    };
    let Decision::Confirm { .. } = g.submit(read(HASH_C), 8 * S) else {
        panic!("another definition asks after a restart");
    };
}

#[test]
fn a_changed_definition_starts_the_friction_history_again() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "");
    let call = |definition: &str| {
        Intent::new(
            "mcp.other.tool",
            json!({"arguments": {}, "server": "other", "tool": "tool", "definition": definition}),
            gateway(),
        )
    };
    // Three approvals of the undeclared (visual) tool make the fourth implicit...
    for i in 0..3 {
        let Decision::Confirm { id, .. } = g.submit(call(HASH_A), i * 10 * S) else {
            panic!("asks");
        };
        assert!(answer(&mut g, id, Answer::Approve, i * 10 * S + 2 * S));
    }
    let Decision::Execute(o) = g.submit(call(HASH_A), 40 * S) else {
        panic!("history stands in for the prompt");
    };
    assert_eq!(o.resolution, Resolution::ConfirmedByHistory);
    // ...but not for another definition of the same tool.
    let Decision::Confirm { .. } = g.submit(call(HASH_B), 50 * S) else {
        panic!("a new definition is asked in full");
    };
}

#[test]
fn the_audit_record_names_server_tool_and_definition_even_redacted() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(
        dir.path(),
        &format!("[audit]\nredact_params = true\n{READ_MANIFEST}"),
    );
    let Decision::Execute(_) = g.submit(read(HASH_A), 0) else {
        panic!("runs");
    };
    let r = last_record(&mut g);
    assert!(r.params.is_none());
    let call = r.mcp.clone().unwrap();
    assert_eq!(call.server.as_deref(), Some("fs"));
    assert_eq!(call.tool.as_deref(), Some("read_text_file"));
    assert_eq!(call.definition.as_deref(), Some(HASH_A));
    assert!(McpCall::is_server(&r, "fs"));
    assert!(!McpCall::is_server(&r, "other"));
}

#[test]
fn a_hook_s_mcp_call_has_no_definition_and_is_still_rated() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "");
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let intent = Intent::new(
        "mcp.filesystem.write_file",
        json!({"arguments": {"path": format!("{home}/.bashrc"), "content": "x"}, "cwd": "/p"}),
        gateway(),
    );
    let Decision::Confirm { threshold, id, .. } = g.submit(intent, 0) else {
        panic!("a start-up file write asks");
    };
    assert_eq!(threshold, Threshold::VoiceVisual);
    let p = g.prompt(id).unwrap();
    let (label, why): &(String, String) = &p.extra[0];
    assert_eq!(label, "risk");
    assert!(why.starts_with("critical"), "{why}");
}

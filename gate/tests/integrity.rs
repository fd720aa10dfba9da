//! Integrity: tokens refuse tampering, expiry, replay and mismatch; the audit chain finds edits;
//! a store killed mid-write opens and verifies.

mod support;

use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Stdio};
use std::time::Duration;

use pcp_gate::store::{GroupCommit, Store};
use pcp_gate::token::{Grant, TokenKey, TokenRejection};
use pcp_gate::{Decision, Resolution};
use serde_json::json;
use support::{gate, intent};

fn approved_token(dir: &std::path::Path) -> (pcp_gate::Gate, String) {
    let mut g = gate(dir, "");
    match g.submit(intent("file.write", json!({"path": "/a"})), 1_000) {
        Decision::Execute(o) => (g, o.token.unwrap()),
        other => panic!("{other:?}"),
    }
}

fn verify(
    g: &mut pcp_gate::Gate,
    token: &str,
    cap: &str,
    params: serde_json::Value,
    now: i64,
) -> Result<(), TokenRejection> {
    g.verify_token(token, cap, &params, &[], None, now)
        .unwrap()
        .map(|_| ())
}

fn grant<'a>(params: &'a serde_json::Value, profile: &'a str) -> Grant<'a> {
    Grant {
        capability: "file.write",
        version: 1,
        params,
        steps: "",
        profile,
        app: "test-client",
    }
}

#[test]
fn a_token_verifies_once_then_is_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let (mut g, token) = approved_token(dir.path());
    assert_eq!(
        verify(&mut g, &token, "file.write", json!({"path": "/a"}), 2_000),
        Ok(())
    );
    assert_eq!(
        verify(&mut g, &token, "file.write", json!({"path": "/a"}), 3_000),
        Err(TokenRejection::Replayed)
    );
}

#[test]
fn a_token_expires_after_five_minutes() {
    let dir = tempfile::tempdir().unwrap();
    let (mut g, token) = approved_token(dir.path());
    let after = 1_000 + 300_000 + 1;
    assert_eq!(
        verify(&mut g, &token, "file.write", json!({"path": "/a"}), after),
        Err(TokenRejection::Expired)
    );
}

#[test]
fn a_token_for_other_params_or_capability_is_a_mismatch() {
    let dir = tempfile::tempdir().unwrap();
    let (mut g, token) = approved_token(dir.path());
    assert_eq!(
        verify(&mut g, &token, "file.write", json!({"path": "/b"}), 2_000),
        Err(TokenRejection::Mismatch)
    );
    assert_eq!(
        verify(&mut g, &token, "file.delete", json!({"path": "/a"}), 2_000),
        Err(TokenRejection::Mismatch)
    );
    // A mismatch does not spend the token.
    assert_eq!(
        verify(&mut g, &token, "file.write", json!({"path": "/a"}), 2_000),
        Ok(())
    );
}

#[test]
fn a_tampered_or_foreign_token_is_forged() {
    let dir = tempfile::tempdir().unwrap();
    let (mut g, token) = approved_token(dir.path());
    let mut bytes = token.clone().into_bytes();
    let mid = token.find('.').unwrap() + 5;
    bytes[mid] = if bytes[mid] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(bytes).unwrap();
    assert_eq!(
        verify(
            &mut g,
            &tampered,
            "file.write",
            json!({"path": "/a"}),
            2_000
        ),
        Err(TokenRejection::Forged)
    );
    let other = TokenKey::from_bytes([7; 32]).unwrap();
    let foreign = other
        .issue(&grant(&json!({"path": "/a"}), "default"), 10_000_000)
        .unwrap();
    assert_eq!(
        verify(&mut g, &foreign, "file.write", json!({"path": "/a"}), 2_000),
        Err(TokenRejection::Forged)
    );
    assert_eq!(
        verify(&mut g, "garbage", "file.write", json!({}), 2_000),
        Err(TokenRejection::Forged)
    );
}

#[test]
fn the_token_key_is_created_0600_and_a_readable_key_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let _ = gate(dir.path(), "");
    let key = dir.path().join("token.key");
    let mode = std::fs::metadata(&key).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let err = TokenKey::load_or_create(&key).unwrap_err().to_string();
    assert!(err.contains("0600"), "{err}");
}

#[test]
fn an_edited_audit_record_is_found() {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut g = gate(dir.path(), "");
        for i in 0..5 {
            g.submit(intent("file.write", json!({"path": format!("/f{i}")})), i);
        }
        g.submit(intent("nope", json!({})), 10);
    }
    let db = dir.path().join("state.sqlite3");
    let conn = rusqlite::Connection::open(&db).unwrap();
    // The triggers keep the log append-only through SQL...
    assert!(
        conn.execute("UPDATE audit SET record = 'x' WHERE seq = 3", [])
            .is_err()
    );
    assert!(conn.execute("DELETE FROM audit WHERE seq = 3", []).is_err());
    // ...and someone who drops them is caught by the chain.
    conn.execute_batch("DROP TRIGGER audit_no_update; DROP TRIGGER audit_no_delete;")
        .unwrap();
    conn.execute(
        "UPDATE audit SET record = replace(record, '/f2', '/etc') WHERE seq = 3",
        [],
    )
    .unwrap();
    let store = Store::open(
        &db,
        GroupCommit {
            max_records: 1,
            max_age_ms: 0,
        },
    )
    .unwrap();
    let err = store.verify_audit().unwrap().unwrap_err();
    assert_eq!(err.seq, 3);
    assert!(err.reason.contains("edited"), "{}", err.reason);
    drop(store);
    // Opening the store put the triggers back.
    conn.execute_batch("DROP TRIGGER audit_no_update; DROP TRIGGER audit_no_delete;")
        .unwrap();
    conn.execute("DELETE FROM audit WHERE seq = 3", []).unwrap();
    let store = Store::open(
        &db,
        GroupCommit {
            max_records: 1,
            max_age_ms: 0,
        },
    )
    .unwrap();
    let err = store.verify_audit().unwrap().unwrap_err();
    assert_eq!(err.seq, 4);
    assert!(err.reason.contains("missing"), "{}", err.reason);
}

#[test]
fn approvals_are_durable_before_they_return_and_routine_records_are_grouped() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "");
    g.submit(intent("file.read", json!({"path": "/a"})), 0);
    assert_eq!(
        g.store().buffered(),
        1,
        "routine records wait for the group commit"
    );
    let db = dir.path().join("state.sqlite3");
    let count = || -> i64 {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.query_row("SELECT count(*) FROM audit", [], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(count(), 0);
    match g.submit(
        intent("window.move", json!({"window": "w", "output": "o"})),
        10,
    ) {
        Decision::Confirm { id, .. } => {
            let o = g
                .respond(
                    id,
                    pcp_gate::ModalityEvent::Answer(
                        pcp_gate::Modality::Visual,
                        pcp_gate::Answer::Approve,
                    ),
                    20,
                )
                .unwrap()
                .unwrap();
            assert_eq!(o.resolution, Resolution::UserApproved);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        count(),
        2,
        "the approval and the routine record before it are committed"
    );
    g.submit(intent("file.read", json!({"path": "/b"})), 30);
    assert!(g.tick(30 + 249).is_empty());
    assert_eq!(count(), 2);
    g.tick(30 + 250);
    assert_eq!(count(), 3, "the group commit is due after group_commit_ms");
}

#[test]
fn records_the_writer_has_not_chained_yet_at_exit_are_all_committed_in_order() {
    // The writer chains and encodes records itself: at exit it may still hold many unencoded
    // batches in its queue (small batches, a long queue), and an approval among them.
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(
        dir.path(),
        "[audit]\ngroup_commit_records = 2\nwriter_queue_batches = 512\n",
    );
    let mut expected = 0;
    for i in 0..600 {
        g.submit(intent("file.read", json!({"path": format!("/f{i}")})), i);
        expected += 1;
        if i == 300 {
            // A durable write in the middle (an approval): it waits for everything before it.
            let asked = g.submit(
                intent("window.move", json!({"window": "w", "output": "o"})),
                i,
            );
            let Decision::Confirm { id, .. } = asked else {
                panic!("{asked:?}")
            };
            let answer = pcp_gate::ModalityEvent::Answer(
                pcp_gate::Modality::Visual,
                pcp_gate::Answer::Approve,
            );
            let o = g.respond(id, answer, i).unwrap().unwrap();
            assert_eq!(o.resolution, Resolution::UserApproved);
            expected += 1;
        }
    }
    drop(g);
    let store = Store::open_read_only(&dir.path().join("state.sqlite3")).unwrap();
    assert_eq!(store.verify_audit().unwrap(), Ok(expected));
    let records = store.audit_since(0).unwrap();
    let paths: Vec<String> = records
        .iter()
        .filter(|r| r.capability == "file.read")
        .map(|r| {
            r.params.as_ref().unwrap()["path"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let in_order: Vec<String> = (0..600).map(|i| format!("/f{i}")).collect();
    assert_eq!(paths, in_order, "every record, in the order decided");
}

/// The child side of the crash test: writes approvals and routine records until killed.
#[test]
#[ignore = "run by sigkill_mid_write_leaves_a_store_that_opens_and_verifies"]
fn crash_child_writer() {
    let Ok(dir) = std::env::var("PCP_CRASH_DIR") else {
        return;
    };
    let mut g = gate(
        std::path::Path::new(&dir),
        "[audit]\ngroup_commit_records = 8\n",
    );
    std::fs::write(std::path::Path::new(&dir).join("started"), b"1").unwrap();
    for i in 0.. {
        g.submit(intent("file.read", json!({"path": format!("/r{i}")})), i);
        if let Decision::Confirm { id, .. } = g.submit(intent_for(i), i) {
            let _ = g.respond(
                id,
                pcp_gate::ModalityEvent::Answer(
                    pcp_gate::Modality::Visual,
                    pcp_gate::Answer::Approve,
                ),
                i,
            );
        }
    }
}

fn intent_for(i: i64) -> pcp_gate::Intent {
    support::intent_from(
        &format!("c{i}"),
        "window.move",
        json!({"window": format!("w{i}"), "output": "o"}),
    )
}

#[test]
fn sigkill_mid_write_leaves_a_store_that_opens_and_verifies() {
    let dir = tempfile::tempdir().unwrap();
    for round in 0..3 {
        let started = dir.path().join("started");
        let _ = std::fs::remove_file(&started);
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "crash_child_writer", "--ignored", "--nocapture"])
            .env("PCP_CRASH_DIR", dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        while !started.exists() {
            assert!(
                child.try_wait().unwrap().is_none(),
                "the writer exited early"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        std::thread::sleep(Duration::from_millis(300 + 100 * round));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let store = Store::open(
            &dir.path().join("state.sqlite3"),
            GroupCommit {
                max_records: 8,
                max_age_ms: 250,
            },
        )
        .unwrap();
        let n = store
            .verify_audit()
            .unwrap()
            .expect("the chain verifies after a crash");
        assert!(
            n > 0,
            "round {round}: records were committed before the kill"
        );
    }
}

#[test]
fn tokens_for_the_same_action_never_repeat_a_nonce() {
    let key = TokenKey::from_bytes([3; 32]).unwrap();
    let clone = key.clone();
    let mut nonces = std::collections::HashSet::new();
    for k in [&key, &clone].into_iter().cycle().take(2000) {
        let t = k.issue(&grant(&json!({"path": "/a"}), "p"), 1).unwrap();
        assert!(nonces.insert(k.open(&t).unwrap().nonce), "a nonce repeated");
    }
    let other_load = TokenKey::from_bytes([3; 32]).unwrap();
    let t = other_load
        .issue(&grant(&json!({"path": "/a"}), "p"), 1)
        .unwrap();
    assert!(
        nonces.insert(other_load.open(&t).unwrap().nonce),
        "another load repeated a nonce"
    );
}

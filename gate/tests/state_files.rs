//! The state folder and files are private (0700, 0600), a state folder pcp did not make is never
//! changed (a shared one is refused), and a key or database someone else owns or may read is
//! refused by name; friction history is kept per verified app, and a database
//! from before that loses its (shared) history but keeps its audit log.

mod support;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use pcp_gate::store::{GroupCommit, Store};
use pcp_gate::{
    Answer, ClientIdentity, Decision, Gate, Intent, ModalityEvent, Resolution, StoreError,
};
use serde_json::json;

const S: i64 = 1000;

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn open_error(dir: &Path) -> String {
    match Gate::open(support::config(dir, "")) {
        Ok(_) => panic!("the gate opened"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_new_state_folder_is_0700_and_its_files_0600() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("pcp");
    let text = format!(
        "[manifests]\ndirs = [{:?}]\n[state]\npath = {:?}\n",
        support::assets().join("capabilities.d"),
        state.join("state.sqlite3")
    );
    std::fs::write(dir.path().join("config.toml"), text).unwrap();
    let gate =
        Gate::open(pcp_gate::GateConfig::load(&dir.path().join("config.toml")).unwrap()).unwrap();
    assert_eq!(mode(&state), 0o700);
    for name in [
        "state.sqlite3",
        "state.sqlite3-wal",
        "state.sqlite3-shm",
        "token.key",
    ] {
        assert_eq!(mode(&state.join(name)), 0o600, "{name}");
    }
    drop(gate);
}

#[test]
fn a_named_state_folder_is_left_as_it_is_and_a_readable_wal_is_fixed() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir(&state).unwrap();
    chmod(&state, 0o755);
    let path = state.join("state.sqlite3");
    drop(Store::open(&path, group()).unwrap());
    // Not pcp's to change: it did not make it, and it is not the default folder.
    assert_eq!(mode(&state), 0o755);
    // A WAL left readable (by an older version) is made private at the next open.
    let wal = state.join("state.sqlite3-wal");
    std::fs::write(&wal, "").unwrap();
    chmod(&wal, 0o644);
    let store = Store::open(&path, group()).unwrap();
    assert_eq!(mode(&wal), 0o600);
    drop(store);
}

#[test]
fn a_state_path_or_key_in_a_shared_folder_is_refused_and_the_folder_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path().join("scratch");
    std::fs::create_dir(&shared).unwrap();
    for bits in [0o1777, 0o777, 0o770] {
        chmod(&shared, bits);
        let path = shared.join("state.sqlite3");
        let err = match Store::open(&path, group()) {
            Ok(_) => panic!("opened in a {bits:o} folder"),
            Err(e) => e.to_string(),
        };
        assert!(
            err.starts_with(&format!("{}: it is a shared folder", shared.display())),
            "{err}"
        );
        let err = match pcp_gate::token::TokenKey::load_or_create(&shared.join("token.key")) {
            Ok(_) => panic!("a key made in a {bits:o} folder"),
            Err(e) => e.to_string(),
        };
        assert!(err.contains("it is a shared folder"), "{err}");
        assert_eq!(
            std::fs::metadata(&shared).unwrap().permissions().mode() & 0o7777,
            bits
        );
        assert_eq!(
            std::fs::read_dir(&shared).unwrap().count(),
            0,
            "nothing made"
        );
    }
}

#[test]
fn a_world_readable_token_key_is_refused_with_its_name_and_mode() {
    let dir = tempfile::tempdir().unwrap();
    drop(Gate::open(support::config(dir.path(), "")).unwrap());
    let key = dir.path().join("token.key");
    chmod(&key, 0o644);
    let err = open_error(dir.path());
    assert!(err.starts_with(&key.display().to_string()), "{err}");
    assert!(err.contains("mode 0644"), "{err}");
    assert!(err.contains("mint approvals"), "{err}");
    // A group-readable key is refused too: it cannot be un-read.
    chmod(&key, 0o640);
    assert!(open_error(dir.path()).contains("mode 0640"));
}

#[test]
fn a_readable_database_or_one_owned_by_someone_else_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    drop(Gate::open(support::config(dir.path(), "")).unwrap());
    let db = dir.path().join("state.sqlite3");
    chmod(&db, 0o644);
    let err = open_error(dir.path());
    assert!(err.starts_with(&db.display().to_string()), "{err}");
    assert!(err.contains("mode 0644"), "{err}");
    chmod(&db, 0o600);
    assert!(Gate::open(support::config(dir.path(), "")).is_ok());
    if pcp_gate::trust::current_uid() == 0 {
        std::os::unix::fs::chown(&db, Some(4242), None).unwrap();
        let err = open_error(dir.path());
        assert!(err.starts_with(&db.display().to_string()), "{err}");
        assert!(err.contains("owned by uid 4242"), "{err}");
    } else {
        let rules = pcp_gate::trust::TrustRules { uid: 4242 };
        let err = match Store::open_with(&db, group(), &rules) {
            Ok(_) => panic!("opened"),
            Err(e) => e.to_string(),
        };
        let owner = std::fs::metadata(&db).unwrap().uid();
        assert!(err.contains(&format!("owned by uid {owner}")), "{err}");
    }
}

fn group() -> GroupCommit {
    GroupCommit {
        max_records: 1,
        max_age_ms: 0,
    }
}

fn app(exe: &str, connection: &str) -> ClientIdentity {
    ClientIdentity {
        id: connection.into(),
        pid: Some(100),
        uid: Some(1000),
        executable: Some(exe.into()),
        start_time: Some(5),
        ..ClientIdentity::default()
    }
}

fn settings_change(client: ClientIdentity) -> Intent {
    Intent::new("settings.change", json!({"key": "a", "value": "b"}), client)
}

/// Submits and approves the visual prompt, or reports that none was asked.
fn approve_or_history(gate: &mut Gate, intent: Intent, at: i64) -> Resolution {
    match gate.submit(intent, at) {
        Decision::Confirm { id, .. } => {
            gate.respond(
                id,
                ModalityEvent::Answer(pcp_gate::Modality::Visual, Answer::Approve),
                at,
            )
            .unwrap()
            .unwrap()
            .resolution
        }
        Decision::Execute(o) => o.resolution,
        Decision::Deny(o) => panic!("denied: {o:?}"),
    }
}

#[test]
fn approvals_given_to_app_a_do_not_lower_app_bs_threshold() {
    let dir = tempfile::tempdir().unwrap();
    let mut gate = support::gate(dir.path(), "");
    let a = || app("/usr/bin/agent-a", "wl-1");
    for i in 0..3 {
        assert_eq!(
            approve_or_history(&mut gate, settings_change(a()), i * S),
            Resolution::UserApproved
        );
    }
    assert_eq!(
        approve_or_history(&mut gate, settings_change(a()), 4 * S),
        Resolution::ConfirmedByHistory,
        "app A has earned its implicit pass"
    );
    // Another program asking the very same thing is asked in full, even if it calls itself A.
    let b = ClientIdentity {
        declared_app_id: Some("agent-a".into()),
        ..app("/usr/bin/agent-b", "wl-2")
    };
    assert!(matches!(
        gate.submit(settings_change(b), 5 * S),
        Decision::Confirm { .. }
    ));
    // The same program on another connection, in another session, is the same app.
    drop(gate);
    let mut gate = support::gate(dir.path(), "");
    assert_eq!(
        approve_or_history(
            &mut gate,
            settings_change(app("/usr/bin/agent-a", "wl-9")),
            6 * S
        ),
        Resolution::ConfirmedByHistory
    );
}

#[test]
fn an_unknown_client_never_inherits_another_connections_history() {
    let dir = tempfile::tempdir().unwrap();
    let mut gate = support::gate(dir.path(), "");
    let unknown = |id: &str| ClientIdentity {
        declared_app_id: Some("org.example".into()),
        ..ClientIdentity::named(id)
    };
    for i in 0..3 {
        approve_or_history(&mut gate, settings_change(unknown("wl-1")), i * S);
    }
    assert!(matches!(
        gate.submit(settings_change(unknown("wl-2")), 4 * S),
        Decision::Confirm { .. }
    ));
}

/// A database as the version before friction was kept per app wrote it.
fn write_old_database(path: &Path) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(
        "CREATE TABLE friction (profile TEXT NOT NULL, capability TEXT NOT NULL,
             version INTEGER NOT NULL, fingerprint TEXT NOT NULL, approvals INTEGER NOT NULL,
             implicit_passes INTEGER NOT NULL, last_approved_ms INTEGER NOT NULL,
             PRIMARY KEY (profile, capability, version, fingerprint)) WITHOUT ROWID;
         CREATE TABLE capability_versions (capability TEXT PRIMARY KEY,
             version INTEGER NOT NULL) WITHOUT ROWID;
         CREATE TABLE audit (seq INTEGER PRIMARY KEY, time_ms INTEGER NOT NULL,
             record TEXT NOT NULL, hash TEXT NOT NULL);
         CREATE TABLE token_nonces (nonce TEXT PRIMARY KEY, expires_ms INTEGER NOT NULL)
             WITHOUT ROWID;",
    )
    .unwrap();
    // One audit record in the old format (the client's app id under `app_id`), chained.
    let record = json!({
        "seq": 1, "time_ms": 1, "profile": "default",
        "client": {"id": "wl-1", "pid": 7, "uid": 1000, "executable": "/bin/x",
                   "app_id": "org.old"},
        "capability": "settings.change", "params_digest": "00", "plan": ["visual"],
        "outcome": "approved", "resolution": "user_approved",
        "prev_hash": pcp_gate::audit::GENESIS_HASH,
    })
    .to_string();
    let hash = pcp_gate::audit::chain_hash(&record);
    conn.execute(
        "INSERT INTO audit (seq, time_ms, record, hash) VALUES (1, 1, ?1, ?2)",
        rusqlite::params![record, hash],
    )
    .unwrap();
    for fingerprint in ["f1", "f2"] {
        conn.execute(
            "INSERT INTO friction VALUES ('default', 'settings.change', 1, ?1, 5, 0, 1)",
            [fingerprint],
        )
        .unwrap();
    }
}

#[test]
fn an_old_database_loses_its_shared_history_and_keeps_its_audit_log() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.sqlite3");
    write_old_database(&path);
    chmod(&path, 0o600);
    // Read-only tools see no history in it before the migration.
    let read_only = Store::open_read_only(&path).unwrap();
    let key = pcp_gate::store::FrictionKey {
        profile: "default".into(),
        app: "exe:1000:/bin/x".into(),
        capability: "settings.change".into(),
        version: 1,
        fingerprint: "f1".into(),
    };
    assert_eq!(read_only.history(&key).unwrap(), None);
    drop(read_only);

    let store = Store::open(&path, group()).unwrap();
    assert_eq!(store.verify_audit().unwrap(), Ok(1));
    let old = &store.audit_since(0).unwrap()[0];
    assert_eq!(old.client.declared_app_id.as_deref(), Some("org.old"));
    assert_eq!(store.history(&key).unwrap(), None);
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let rows: i64 = conn
        .query_row("SELECT count(*) FROM friction", [], |r| r.get(0))
        .unwrap();
    assert_eq!(rows, 0);
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, 1);
}

#[test]
fn a_database_from_a_newer_version_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.sqlite3");
    drop(Store::open(&path, group()).unwrap());
    rusqlite::Connection::open(&path)
        .unwrap()
        .pragma_update(None, "user_version", 99)
        .unwrap();
    let err = match Store::open(&path, group()) {
        Ok(_) => panic!("opened"),
        Err(e @ StoreError::File { .. }) => e.to_string(),
        Err(e) => panic!("{e}"),
    };
    assert!(err.contains("schema version 99"), "{err}");
}

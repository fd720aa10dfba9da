//! The state database's files and schema: the folder and files made private (someone else's
//! refused), the tables, and the migration from an older schema version.

use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use rusqlite::Connection;

use crate::error::StoreError;
use crate::trust::{Narrow, TrustRules};

/// The schema this code writes. 1: friction history is keyed by the verified app identity too
/// (history from before is dropped: it was shared by every app).
pub(super) const SCHEMA_VERSION: i64 = 1;

pub(super) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS friction (
    profile TEXT NOT NULL,
    app TEXT NOT NULL,
    capability TEXT NOT NULL,
    version INTEGER NOT NULL,
    fingerprint TEXT NOT NULL,
    approvals INTEGER NOT NULL,
    implicit_passes INTEGER NOT NULL,
    last_approved_ms INTEGER NOT NULL,
    PRIMARY KEY (profile, app, capability, version, fingerprint)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS capability_versions (
    capability TEXT PRIMARY KEY,
    version INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS audit (
    seq INTEGER PRIMARY KEY,
    time_ms INTEGER NOT NULL,
    record TEXT NOT NULL,
    hash TEXT NOT NULL
);
CREATE TRIGGER IF NOT EXISTS audit_no_update BEFORE UPDATE ON audit
    BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
CREATE TRIGGER IF NOT EXISTS audit_no_delete BEFORE DELETE ON audit
    BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
CREATE TABLE IF NOT EXISTS approved_policy (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    digest TEXT NOT NULL,
    policy TEXT NOT NULL,
    approved_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS token_nonces (
    nonce TEXT PRIMARY KEY,
    expires_ms INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS token_clock (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    latest_ms INTEGER NOT NULL
);
";

/// The state folder (created 0700 if needed; a shared or foreign one refused, see
/// [`TrustRules::secret_folder`]), the database (0600 when new; refused when someone else owns
/// it or may read it) and SQLite's `-wal` and `-shm` files (made 0600).
pub(super) fn prepare_files(path: &Path, trust: &TrustRules) -> Result<(), StoreError> {
    let file_err = |path: &Path, message: String| StoreError::File {
        path: path.to_path_buf(),
        message,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        let narrow = if !dir.exists() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(|e| file_err(dir, format!("cannot create the state folder: {e}")))?;
            Narrow::Allowed
        } else if is_default_state_folder(dir) {
            Narrow::Allowed
        } else {
            Narrow::Never
        };
        trust.secret_folder(dir, narrow)?;
    }
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        // An empty file is a new database to SQLite.
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => trust.check_secret(path)?,
        Err(e) => return Err(file_err(path, format!("cannot create the database: {e}"))),
    }
    for suffix in ["-wal", "-shm"] {
        let mut side = path.as_os_str().to_owned();
        side.push(suffix);
        let side = PathBuf::from(side);
        if side.exists() {
            trust.make_private(&side, 0o600)?;
        }
    }
    Ok(())
}

/// Whether `dir` is the default state folder, `$XDG_STATE_HOME/pcp` (or `~/.local/state/pcp`):
/// pcp's own, so a mode wider than 0700 (an older pcp, a user's mkdir) may be narrowed.
fn is_default_state_folder(dir: &Path) -> bool {
    let default = crate::config::default_state_path();
    let Some(default_dir) = default.parent() else {
        return false;
    };
    match (
        std::fs::canonicalize(dir),
        std::fs::canonicalize(default_dir),
    ) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Brings the schema to [`SCHEMA_VERSION`] in one transaction. A database from before version
/// 1 loses its friction history (it was shared by every app) and keeps everything else.
pub(super) fn migrate(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
    let sql = |source| StoreError::Sqlite {
        path: path.to_path_buf(),
        source,
    };
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .map_err(sql)?;
    if version > SCHEMA_VERSION {
        return Err(StoreError::File {
            path: path.to_path_buf(),
            message: format!(
                "the database has schema version {version}, newer than this pcp's \
                 {SCHEMA_VERSION}: it was written by a newer version"
            ),
        });
    }
    let tx = conn.transaction().map_err(sql)?;
    if version < 1 {
        let old_rows: i64 = tx
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'friction'",
                [],
                |r| r.get(0),
            )
            .map_err(sql)?;
        if old_rows > 0 {
            tx.execute_batch("DROP TABLE friction;").map_err(sql)?;
            tracing::info!(
                "{}: friction history is now kept per app; the history kept before is reset",
                path.display()
            );
        }
    }
    tx.execute_batch(SCHEMA).map_err(sql)?;
    tx.pragma_update(None, "user_version", SCHEMA_VERSION)
        .map_err(sql)?;
    tx.commit().map_err(sql)
}

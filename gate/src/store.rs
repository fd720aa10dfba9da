//! The state store: one SQLite file (WAL) holding friction history, the hash-chained audit log,
//! spent token nonces and the last approved policy. Approvals are committed (and synced) before they are returned; routine
//! records are group-committed, so a crash loses at most the routine records still buffered.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, params};

use crate::audit::{AuditRecord, ChainBreak, GENESIS_HASH, chain_hash, verify_chain};
use crate::error::StoreError;
use crate::friction::History;
use crate::policy_prompt::ApprovedPolicy;
use crate::writer::{Pending, Writer};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS friction (
    profile TEXT NOT NULL,
    capability TEXT NOT NULL,
    version INTEGER NOT NULL,
    fingerprint TEXT NOT NULL,
    approvals INTEGER NOT NULL,
    implicit_passes INTEGER NOT NULL,
    last_approved_ms INTEGER NOT NULL,
    PRIMARY KEY (profile, capability, version, fingerprint)
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
";

/// The friction key: (profile, capability, version, fingerprint of the salient params).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FrictionKey {
    pub profile: String,
    pub capability: String,
    pub version: u32,
    pub fingerprint: String,
}

/// A change to friction history that commits together with its audit record.
#[derive(Debug, Clone)]
pub enum FrictionUpdate {
    Set(FrictionKey, History),
    Clear(FrictionKey),
}

/// Group-commit limits for routine records.
#[derive(Debug, Clone, Copy)]
pub struct GroupCommit {
    pub max_records: usize,
    pub max_age_ms: i64,
}

/// The open state store.
pub struct Store {
    conn: Connection,
    path: PathBuf,
    writer: Option<Writer>,
    /// Routine records not yet handed to the writer (no syscall per routine decision).
    batch: Vec<Pending>,
    oldest_pending_ms: Option<i64>,
    head_seq: u64,
    head_hash: String,
    group: GroupCommit,
}

impl Store {
    /// Opens (creating if needed) the store at `path`, in WAL mode.
    pub fn open(path: &Path, group: GroupCommit) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| StoreError::File {
                path: dir.to_path_buf(),
                message: format!("cannot create the state folder: {e}"),
            })?;
        }
        let sql = |source| StoreError::Sqlite {
            path: path.to_path_buf(),
            source,
        };
        let conn = Connection::open(path).map_err(sql)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(sql)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(sql)?;
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(sql)?;
        conn.execute_batch(SCHEMA).map_err(sql)?;
        let head: Option<(u64, String)> = conn
            .query_row(
                "SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(sql)?;
        let (head_seq, head_hash) = head.unwrap_or((0, GENESIS_HASH.to_string()));
        let writer = Writer::start(path)?;
        Ok(Store {
            conn,
            path: path.to_path_buf(),
            writer: Some(writer),
            batch: Vec::new(),
            oldest_pending_ms: None,
            head_seq,
            head_hash,
            group,
        })
    }

    /// Opens an existing store for reading only (no schema, no pragmas, nothing written); a
    /// missing file gives an empty in-memory store.
    pub fn open_read_only(path: &Path) -> Result<Store, StoreError> {
        let sql = |source| StoreError::Sqlite {
            path: path.to_path_buf(),
            source,
        };
        let conn = if path.exists() {
            Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
                .map_err(sql)?
        } else {
            let conn = Connection::open_in_memory().map_err(sql)?;
            conn.execute_batch(SCHEMA).map_err(sql)?;
            conn
        };
        Ok(Store {
            conn,
            path: path.to_path_buf(),
            writer: None,
            batch: Vec::new(),
            oldest_pending_ms: None,
            head_seq: 0,
            head_hash: GENESIS_HASH.to_string(),
            group: GroupCommit {
                max_records: 1,
                max_age_ms: 0,
            },
        })
    }

    fn sql(&self, source: rusqlite::Error) -> StoreError {
        StoreError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The friction history of `key`, if any.
    pub fn history(&self, key: &FrictionKey) -> Result<Option<History>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT approvals, implicit_passes, last_approved_ms FROM friction
                 WHERE profile = ?1 AND capability = ?2 AND version = ?3 AND fingerprint = ?4",
            )
            .map_err(|e| self.sql(e))?;
        stmt.query_row(
            params![key.profile, key.capability, key.version, key.fingerprint],
            |r| {
                Ok(History {
                    approvals: r.get(0)?,
                    implicit_passes: r.get(1)?,
                    last_approved_ms: r.get(2)?,
                })
            },
        )
        .optional()
        .map_err(|e| self.sql(e))
    }

    /// Records that `capability` is now at `version`; when it changed, its history is reset.
    /// Returns true when history was reset.
    pub fn note_capability_version(
        &mut self,
        capability: &str,
        version: u32,
    ) -> Result<bool, StoreError> {
        let known: Option<u32> = self
            .conn
            .query_row(
                "SELECT version FROM capability_versions WHERE capability = ?1",
                [capability],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.sql(e))?;
        if known == Some(version) {
            return Ok(false);
        }
        let path = self.path.clone();
        let sql = move |source| StoreError::Sqlite {
            path: path.clone(),
            source,
        };
        let tx = self.conn.transaction().map_err(&sql)?;
        let reset = known.is_some();
        let run = |tx: &rusqlite::Transaction<'_>| -> rusqlite::Result<()> {
            tx.execute("DELETE FROM friction WHERE capability = ?1", [capability])?;
            tx.execute(
                "INSERT INTO capability_versions (capability, version) VALUES (?1, ?2)
                 ON CONFLICT(capability) DO UPDATE SET version = excluded.version",
                params![capability, version],
            )?;
            Ok(())
        };
        run(&tx).map_err(&sql)?;
        tx.commit().map_err(&sql)?;
        Ok(reset)
    }

    fn writer(&self) -> Result<&Writer, StoreError> {
        self.writer.as_ref().ok_or_else(|| StoreError::File {
            path: self.path.clone(),
            message: "the store is open read-only".into(),
        })
    }

    /// Appends an audit record (its `seq` and `prev_hash` are filled here) with an optional
    /// friction change. `durable` commits it, and everything buffered before it, before returning;
    /// otherwise it joins the group-commit buffer of the writer thread. Returns its sequence number.
    pub fn append(
        &mut self,
        mut record: AuditRecord,
        friction: Option<FrictionUpdate>,
        durable: bool,
    ) -> Result<u64, StoreError> {
        let seq = self.head_seq + 1;
        record.seq = seq;
        record.prev_hash = self.head_hash.clone();
        let text = serde_json::to_string(&record).map_err(|e| StoreError::Encode {
            seq,
            message: e.to_string(),
        })?;
        let hash = chain_hash(&text);
        let entry = Pending {
            seq,
            time_ms: record.time_ms,
            text,
            hash: hash.clone(),
        };
        if durable || friction.is_some() {
            // The head moves only once the record is committed: a failed commit leaves the
            // chain where it was (the batch before it stays with the writer for a retry).
            let before = std::mem::take(&mut self.batch);
            self.oldest_pending_ms = None;
            self.writer()?.durable(before, entry, friction)?;
        } else {
            self.writer()?;
            self.batch.push(entry);
            self.oldest_pending_ms.get_or_insert(record.time_ms);
            if self.batch.len() >= self.group.max_records {
                let full = std::mem::take(&mut self.batch);
                self.oldest_pending_ms = None;
                self.writer()?.batch(full)?;
            }
        }
        self.head_seq = seq;
        self.head_hash = hash;
        Ok(seq)
    }

    /// Commits buffered routine records when the oldest has waited long enough.
    pub fn flush_if_due(&mut self, now_ms: i64) -> Result<(), StoreError> {
        match self.oldest_pending_ms {
            Some(oldest) if now_ms.saturating_sub(oldest) >= self.group.max_age_ms => self.flush(),
            _ => Ok(()),
        }
    }

    /// Commits every buffered record.
    pub fn flush(&mut self) -> Result<(), StoreError> {
        let Some(writer) = &self.writer else {
            return Ok(());
        };
        let records = std::mem::take(&mut self.batch);
        self.oldest_pending_ms = None;
        writer.flush(records)
    }

    /// Routine records waiting for their group commit.
    pub fn buffered(&self) -> usize {
        self.batch.len()
    }

    /// Marks a token nonce as spent; false when it already was (a replay).
    pub fn spend_nonce(
        &mut self,
        nonce: &str,
        expires_ms: i64,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        let run = |conn: &Connection| -> rusqlite::Result<bool> {
            conn.prepare_cached("DELETE FROM token_nonces WHERE expires_ms < ?1")?
                .execute([now_ms])?;
            let inserted = conn
                .prepare_cached(
                    "INSERT INTO token_nonces (nonce, expires_ms) VALUES (?1, ?2)
                     ON CONFLICT(nonce) DO NOTHING",
                )?
                .execute(params![nonce, expires_ms])?;
            Ok(inserted == 1)
        };
        run(&self.conn).map_err(|e| self.sql(e))
    }

    /// The policy last approved (or recorded at the first start), if any.
    pub fn approved_policy(&self) -> Result<Option<ApprovedPolicy>, StoreError> {
        let text: Option<String> = self
            .conn
            .query_row("SELECT policy FROM approved_policy WHERE id = 1", [], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| self.sql(e))?;
        text.map(|t| {
            serde_json::from_str(&t).map_err(|e| StoreError::File {
                path: self.path.clone(),
                message: format!("the approved policy is unreadable: {e}"),
            })
        })
        .transpose()
    }

    /// Records `policy` as the one approved (replacing the one before).
    pub fn set_approved_policy(&mut self, policy: &ApprovedPolicy) -> Result<(), StoreError> {
        let text = serde_json::to_string(policy).map_err(|e| StoreError::File {
            path: self.path.clone(),
            message: format!("the approved policy cannot be encoded: {e}"),
        })?;
        self.conn
            .execute(
                "INSERT INTO approved_policy (id, digest, policy, approved_ms) VALUES (1, ?1, ?2, ?3)
                 ON CONFLICT(id) DO UPDATE SET digest = excluded.digest,
                     policy = excluded.policy, approved_ms = excluded.approved_ms",
                params![policy.digest, text, policy.approved_ms],
            )
            .map_err(|e| self.sql(e))?;
        Ok(())
    }

    /// Audit records at or after `since_ms`, in order (committed ones only).
    pub fn audit_since(&self, since_ms: i64) -> Result<Vec<AuditRecord>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT seq, record FROM audit WHERE time_ms >= ?1 ORDER BY seq")
            .map_err(|e| self.sql(e))?;
        let rows = stmt
            .query_map([since_ms], |r| {
                Ok((r.get::<_, u64>(0)?, r.get::<_, String>(1)?))
            })
            .map_err(|e| self.sql(e))?;
        let mut out = Vec::new();
        for row in rows {
            let (seq, text) = row.map_err(|e| self.sql(e))?;
            let record = serde_json::from_str(&text).map_err(|e| StoreError::Encode {
                seq,
                message: format!("stored record is unreadable: {e}"),
            })?;
            out.push(record);
        }
        Ok(out)
    }

    /// Verifies the whole committed chain: the number of records, or the first break.
    pub fn verify_audit(&self) -> Result<Result<u64, ChainBreak>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT seq, record, hash FROM audit ORDER BY seq")
            .map_err(|e| self.sql(e))?;
        let rows: Vec<(u64, String, String)> = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .map_err(|e| self.sql(e))?
            .collect::<Result<_, _>>()
            .map_err(|e| self.sql(e))?;
        Ok(verify_chain(
            rows.iter().map(|(s, t, h)| (*s, t.as_str(), h.as_str())),
        ))
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        if let Err(e) = self.flush() {
            tracing::error!("audit records could not be committed at shutdown: {e}");
        }
    }
}

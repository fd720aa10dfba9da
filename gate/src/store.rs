//! The state store: one SQLite file (WAL) holding friction history, the hash-chained audit log,
//! spent token nonces and the last approved policy. Approvals, and denials that change history,
//! are committed (and synced) before they are returned; routine records and other denials are
//! group-committed, so a crash loses at most the records still buffered. The folder is 0700 and
//! the files 0600: a database someone else owns or may read is refused. Schema versions are
//! `PRAGMA user_version`; a migration keeps the audit log (`store/schema.rs`).

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};

use crate::audit::{AuditRecord, ChainBreak, GENESIS_HASH, verify_chain};
use crate::error::StoreError;
use crate::fact::ProtectionFact;
use crate::friction::History;
use crate::sources::PolicySources;
use crate::trust::TrustRules;
use crate::writer::{Pending, Writer};

// The friction history's key and changes are friction's own types; the store keeps them.
pub use crate::friction::{FrictionKey, FrictionUpdate};

mod schema;
use schema::{SCHEMA, SCHEMA_VERSION, migrate, prepare_files};

/// What spending a token's nonce found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NonceSpend {
    /// First use: the nonce is spent now.
    Spent,
    /// The nonce was spent before.
    Replayed,
    /// The token expired by the token clock (which never runs back).
    Expired,
}

/// The policy last approved, as the state store keeps it: enough to build it again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovedPolicy {
    pub digest: String,
    pub sources: PolicySources,
    pub facts: Vec<ProtectionFact>,
    /// When it was approved (or first recorded), ms since the epoch.
    pub approved_ms: i64,
}

/// Group-commit limits for routine records.
#[derive(Debug, Clone, Copy)]
pub struct GroupCommit {
    pub max_records: usize,
    pub max_age_ms: i64,
}

/// Full batches the audit writer may have waiting before `append` waits for it, unless the
/// config says otherwise (`[audit] writer_queue_batches`).
pub const DEFAULT_WRITER_QUEUE: usize = 16;

/// The open state store.
pub struct Store {
    conn: Connection,
    path: PathBuf,
    writer: Option<Writer>,
    /// Routine records not yet handed to the writer (no syscall per routine decision).
    batch: Vec<Pending>,
    oldest_pending_ms: Option<i64>,
    /// The last record numbered (its chain hash is the writer's to keep).
    head_seq: u64,
    group: GroupCommit,
    /// Opened read-only on a database from before friction was kept per app: its history does
    /// not count (it is dropped at the next start).
    stale_friction: bool,
}

impl Store {
    /// Opens (creating if needed) the store at `path`, in WAL mode. A folder it makes is 0700
    /// and a new database 0600; a shared folder or someone else's is refused and never changed
    /// (see [`TrustRules::secret_folder`]), and so is an existing database someone else owns or
    /// may read, naming it and its mode or owner.
    pub fn open(path: &Path, group: GroupCommit) -> Result<Store, StoreError> {
        Store::open_with(path, group, &TrustRules::default())
    }

    /// [`Store::open`] checking ownership against `trust`.
    pub fn open_with(
        path: &Path,
        group: GroupCommit,
        trust: &TrustRules,
    ) -> Result<Store, StoreError> {
        Store::open_with_queue(path, group, trust, DEFAULT_WRITER_QUEUE)
    }

    /// [`Store::open_with`] with room for `writer_queue` full batches in the audit writer's
    /// queue.
    pub fn open_with_queue(
        path: &Path,
        group: GroupCommit,
        trust: &TrustRules,
        writer_queue: usize,
    ) -> Result<Store, StoreError> {
        prepare_files(path, trust)?;
        let sql = |source| StoreError::Sqlite {
            path: path.to_path_buf(),
            source,
        };
        let mut conn = Connection::open(path).map_err(sql)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(sql)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(sql)?;
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(sql)?;
        migrate(&mut conn, path)?;
        let head: Option<(u64, String)> = conn
            .query_row(
                "SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(sql)?;
        let (head_seq, head_hash) = head.unwrap_or((0, GENESIS_HASH.to_string()));
        let writer = Writer::start(path, writer_queue, head_hash)?;
        Ok(Store {
            conn,
            path: path.to_path_buf(),
            writer: Some(writer),
            batch: Vec::with_capacity(group.max_records),
            oldest_pending_ms: None,
            head_seq,
            group,
            stale_friction: false,
        })
    }

    /// Opens an existing store for reading only (no schema, no pragmas, nothing written); a
    /// missing file gives an empty in-memory store.
    pub fn open_read_only(path: &Path) -> Result<Store, StoreError> {
        let sql = |source| StoreError::Sqlite {
            path: path.to_path_buf(),
            source,
        };
        let (conn, stale_friction) = if path.exists() {
            let conn =
                Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
                    .map_err(sql)?;
            let version: i64 = conn
                .pragma_query_value(None, "user_version", |r| r.get(0))
                .map_err(sql)?;
            (conn, version < SCHEMA_VERSION)
        } else {
            let conn = Connection::open_in_memory().map_err(sql)?;
            conn.execute_batch(SCHEMA).map_err(sql)?;
            (conn, false)
        };
        Ok(Store {
            conn,
            path: path.to_path_buf(),
            writer: None,
            batch: Vec::new(),
            oldest_pending_ms: None,
            head_seq: 0,
            group: GroupCommit {
                max_records: 1,
                max_age_ms: 0,
            },
            stale_friction,
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
        if self.stale_friction {
            return Ok(None);
        }
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT approvals, implicit_passes, last_approved_ms FROM friction
                 WHERE profile = ?1 AND app = ?2 AND capability = ?3 AND version = ?4
                 AND fingerprint = ?5",
            )
            .map_err(|e| self.sql(e))?;
        stmt.query_row(
            params![
                key.profile,
                key.app,
                key.capability,
                key.version,
                key.fingerprint
            ],
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

    /// Appends an audit record (its `seq` is filled here; the writer thread chains it to the
    /// record before and encodes it, in order) with an optional friction change. `durable` commits it, and everything buffered before it, before returning;
    /// otherwise it joins the group-commit buffer of the writer thread. Returns its sequence number.
    pub fn append(
        &mut self,
        mut record: AuditRecord,
        friction: Option<FrictionUpdate>,
        durable: bool,
    ) -> Result<u64, StoreError> {
        let seq = self.head_seq + 1;
        record.seq = seq;
        let time_ms = record.time_ms;
        // While the writer cannot commit, nothing more joins its retry buffer: every record
        // waits for a commit of its own and fails (closed) with it.
        let failing = self.writer.as_ref().is_some_and(Writer::failing);
        if durable || friction.is_some() || failing {
            // The sequence moves only once the record is committed: a failed commit leaves the
            // chain where it was (the batch before it stays with the writer for a retry).
            let before = self.take_batch();
            self.oldest_pending_ms = None;
            self.writer()?.durable(before, record, friction)?;
        } else {
            self.writer()?;
            self.batch.push(record);
            self.oldest_pending_ms.get_or_insert(time_ms);
            if self.batch.len() >= self.group.max_records {
                let full = self.take_batch();
                self.oldest_pending_ms = None;
                self.writer()?.batch(full)?;
            }
        }
        self.head_seq = seq;
        Ok(seq)
    }

    /// The buffered routine records, leaving room for a full batch: a routine append then never
    /// grows the buffer (records are large, and regrowing it showed in profiles).
    fn take_batch(&mut self) -> Vec<Pending> {
        if self.batch.is_empty() {
            // Nothing to hand over: the buffer keeps its room.
            return Vec::new();
        }
        // The writer's sealed records are freed here, on this thread, and one of their vectors
        // holds the next batch.
        let next = self
            .writer
            .as_ref()
            .and_then(Writer::reclaim)
            .filter(|spare| spare.capacity() >= self.group.max_records)
            .unwrap_or_else(|| Vec::with_capacity(self.group.max_records));
        std::mem::replace(&mut self.batch, next)
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
        if self.writer.is_none() {
            return Ok(());
        }
        let records = self.take_batch();
        self.oldest_pending_ms = None;
        self.writer()?.flush(records)
    }

    /// When the buffered routine records are due for their group commit (Unix ms); `None`
    /// when nothing waits. `flush_if_due` at that time commits them.
    pub fn flush_due_at(&self) -> Option<i64> {
        self.oldest_pending_ms
            .map(|oldest| oldest.saturating_add(self.group.max_age_ms))
    }

    /// Routine records waiting for their group commit.
    pub fn buffered(&self) -> usize {
        self.batch.len()
    }

    /// Bytes of record text (and hash) waiting for their group commit in this process's buffer.
    /// The writer encodes records, so this encodes each buffered one again: for diagnostics,
    /// not for the decision path.
    pub fn buffered_bytes(&self) -> usize {
        self.batch.iter().map(crate::writer::encoded_len).sum()
    }

    /// Spends a token nonce at `now_ms`.
    ///
    /// Time here is the token clock: the latest `now_ms` any verification has seen, kept in the
    /// store, so it never runs back when the wall clock does. A token is expired when its expiry
    /// is before the token clock, and a nonce is forgotten only once its token is expired by it:
    /// a spent nonce therefore never becomes usable again, whatever the wall clock does.
    pub fn spend_nonce(
        &mut self,
        nonce: &str,
        expires_ms: i64,
        now_ms: i64,
    ) -> Result<NonceSpend, StoreError> {
        let path = self.path.clone();
        let sql = move |source| StoreError::Sqlite {
            path: path.clone(),
            source,
        };
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(&sql)?;
        let run = |tx: &rusqlite::Transaction<'_>| -> rusqlite::Result<NonceSpend> {
            let latest: Option<i64> = tx
                .prepare_cached("SELECT latest_ms FROM token_clock WHERE id = 1")?
                .query_row([], |r| r.get(0))
                .optional()?;
            let clock = latest.map_or(now_ms, |latest| latest.max(now_ms));
            tx.prepare_cached(
                "INSERT INTO token_clock (id, latest_ms) VALUES (1, ?1)
                 ON CONFLICT(id) DO UPDATE SET latest_ms = excluded.latest_ms",
            )?
            .execute([clock])?;
            tx.prepare_cached("DELETE FROM token_nonces WHERE expires_ms < ?1")?
                .execute([clock])?;
            if clock > expires_ms {
                return Ok(NonceSpend::Expired);
            }
            let inserted = tx
                .prepare_cached(
                    "INSERT INTO token_nonces (nonce, expires_ms) VALUES (?1, ?2)
                     ON CONFLICT(nonce) DO NOTHING",
                )?
                .execute(params![nonce, expires_ms])?;
            Ok(if inserted == 1 {
                NonceSpend::Spent
            } else {
                NonceSpend::Replayed
            })
        };
        let spend = run(&tx).map_err(&sql)?;
        tx.commit().map_err(&sql)?;
        Ok(spend)
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

//! The audit writer: a thread with its own SQLite connection that chains, encodes and commits
//! audit records and friction changes. Records arrive numbered and in order as plain structs;
//! the writer links each to the hash of the one before and hashes its text, so the decision
//! path pays for neither. Routine records arrive in batches and are committed without the
//! decision path waiting for a disk sync; durable writes wait for their commit.
//!
//! The records the writer has sealed go back to the dispatch thread to be freed there. Freed by
//! the writer, every allocation the dispatch thread made would take the allocator's lock of the
//! thread that made it: with the two threads on two cores, glibc's malloc then spent a fifth of
//! the decision path waking the other thread for that lock.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};
use std::thread::JoinHandle;

use rusqlite::{Connection, params};

use crate::audit::{AuditRecord, chain_hash};
use crate::error::StoreError;
use crate::friction::FrictionUpdate;

/// One numbered record (its `seq` set by the store), not yet chained: the writer fills its
/// `prev_hash` and encodes it.
pub(crate) type Pending = AuditRecord;

/// One chained record, ready to insert.
struct Sealed {
    seq: u64,
    time_ms: i64,
    text: String,
    hash: String,
}

/// Links `record` to `prev_hash` and encodes it. The record keeps nothing the writer allocated,
/// so the dispatch thread can free it.
fn seal(record: &mut AuditRecord, prev_hash: &str) -> Result<Sealed, String> {
    record.prev_hash = prev_hash.to_string();
    let encoded = serde_json::to_string(&*record);
    drop(std::mem::take(&mut record.prev_hash));
    let text =
        encoded.map_err(|e| format!("audit record {} cannot be encoded: {e}", record.seq))?;
    let hash = chain_hash(&text);
    Ok(Sealed {
        seq: record.seq,
        time_ms: record.time_ms,
        text,
        hash,
    })
}

/// The encoded length of `record` as the writer will store it, for the buffer's accounting.
pub(crate) fn encoded_len(record: &AuditRecord) -> usize {
    serde_json::to_string(record).map_or(0, |t| t.len()) + crate::audit::GENESIS_HASH.len()
}

type Ack = SyncSender<Result<(), String>>;

enum Message {
    /// A full batch of routine records: commit it without anyone waiting.
    Batch(Vec<Pending>),
    /// Commit these routine records and this one (with its friction change), then acknowledge.
    Durable(Vec<Pending>, Box<Pending>, Option<FrictionUpdate>, Ack),
    /// Commit these routine records, then acknowledge.
    Flush(Vec<Pending>, Ack),
}

pub(crate) struct Writer {
    /// Bounded: a writer that falls behind makes its callers wait instead of queueing without
    /// limit.
    sender: Option<SyncSender<Message>>,
    thread: Option<JoinHandle<()>>,
    path: PathBuf,
    /// The last commit failed and records wait for a retry: callers then send every record as
    /// a durable write, which waits for a commit and fails closed, so the retry buffer cannot
    /// grow without bound while the disk refuses.
    failing: Arc<AtomicBool>,
    /// Records the writer has sealed, handed back to be freed on this thread.
    sealed: Receiver<Vec<Pending>>,
}

impl Writer {
    /// Starts the writer on its own connection to `path` (already set up by the store), with
    /// room for `queue` messages before senders wait; the next record follows `head_hash`.
    pub fn start(path: &Path, queue: usize, head_hash: String) -> Result<Writer, StoreError> {
        let conn = Connection::open(path).map_err(|source| StoreError::Sqlite {
            path: path.to_path_buf(),
            source,
        })?;
        let setup = conn
            .busy_timeout(std::time::Duration::from_secs(5))
            .and_then(|()| conn.pragma_update(None, "synchronous", "FULL"));
        setup.map_err(|source| StoreError::Sqlite {
            path: path.to_path_buf(),
            source,
        })?;
        let queue = queue.max(1);
        let (sender, receiver) = sync_channel(queue);
        let (give_back, sealed) = channel();
        let thread_path = path.to_path_buf();
        let failing = Arc::new(AtomicBool::new(false));
        let thread_failing = Arc::clone(&failing);
        let thread = std::thread::Builder::new()
            .name("pcp-audit-writer".into())
            .spawn(move || {
                run(
                    conn,
                    receiver,
                    &give_back,
                    thread_path,
                    queue,
                    head_hash,
                    &thread_failing,
                )
            })
            .map_err(|e| StoreError::File {
                path: path.to_path_buf(),
                message: format!("cannot start the audit writer: {e}"),
            })?;
        Ok(Writer {
            sender: Some(sender),
            thread: Some(thread),
            path: path.to_path_buf(),
            failing,
            sealed,
        })
    }

    /// Frees the records the writer has sealed since the last call, on the calling thread, and
    /// returns one of their vectors, emptied, to hold the next batch.
    pub fn reclaim(&self) -> Option<Vec<Pending>> {
        let mut spare = None;
        while let Ok(mut records) = self.sealed.try_recv() {
            records.clear();
            spare = Some(records);
        }
        spare
    }

    /// Whether the last commit failed (records wait in the writer for a retry).
    pub fn failing(&self) -> bool {
        self.failing.load(Ordering::Acquire)
    }

    fn gone(&self) -> StoreError {
        StoreError::File {
            path: self.path.clone(),
            message: "the audit writer has stopped".into(),
        }
    }

    fn send(&self, message: Message) -> Result<(), StoreError> {
        match &self.sender {
            Some(s) => s.send(message).map_err(|_| self.gone()),
            None => Err(self.gone()),
        }
    }

    fn wait(&self, receiver: Receiver<Result<(), String>>) -> Result<(), StoreError> {
        match receiver.recv() {
            Ok(Ok(())) => Ok(()),
            Ok(Err(message)) => Err(StoreError::File {
                path: self.path.clone(),
                message,
            }),
            Err(_) => Err(self.gone()),
        }
    }

    /// Hands over a full batch of routine records; does not wait.
    pub fn batch(&self, records: Vec<Pending>) -> Result<(), StoreError> {
        self.send(Message::Batch(records))
    }

    /// Commits `before` and `record` (with its friction change) and waits for the commit.
    pub fn durable(
        &self,
        before: Vec<Pending>,
        record: Pending,
        friction: Option<FrictionUpdate>,
    ) -> Result<(), StoreError> {
        let (ack, done) = sync_channel(1);
        self.send(Message::Durable(before, Box::new(record), friction, ack))?;
        self.wait(done)
    }

    /// Commits `records` and everything the writer still holds, and waits for the commit.
    pub fn flush(&self, records: Vec<Pending>) -> Result<(), StoreError> {
        let (ack, done) = sync_channel(1);
        self.send(Message::Flush(records, ack))?;
        self.wait(done)
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        // Closing the channel makes the thread commit what it holds and exit.
        self.sender = None;
        if let Some(thread) = self.thread.take()
            && thread.join().is_err()
        {
            tracing::error!("the audit writer panicked");
        }
    }
}

/// Chains and encodes routine records onto the buffer, moving the head past each. A record
/// that cannot be encoded (no audit record holds anything JSON cannot say, so this is a bug)
/// is logged and leaves a gap that `verify` reports.
fn seal_into(
    buffer: &mut Vec<Sealed>,
    records: &mut [Pending],
    head_hash: &mut String,
    path: &Path,
) {
    for record in records {
        match seal(record, head_hash) {
            Ok(sealed) => {
                head_hash.clone_from(&sealed.hash);
                buffer.push(sealed);
            }
            Err(e) => tracing::error!("{}: {e}; it is missing from the log", path.display()),
        }
    }
}

fn run(
    mut conn: Connection,
    receiver: Receiver<Message>,
    give_back: &Sender<Vec<Pending>>,
    path: PathBuf,
    queue: usize,
    mut head_hash: String,
    failing: &AtomicBool,
) {
    // Records whose commit failed wait here for the next commit: nothing decided is dropped
    // while the process lives.
    let mut buffer: Vec<Sealed> = Vec::new();
    while let Ok(first) = receiver.recv() {
        // Every full batch already waiting joins this commit: a writer that has fallen behind
        // catches up with one disk sync for all of them instead of one each. The dispatch
        // thread waits after a durable write or a flush, so one of those can only come last.
        let mut waiting_for_ack = None;
        let mut next = Some(first);
        let mut batches = 0;
        while let Some(message) = next.take() {
            match message {
                Message::Batch(mut records) => {
                    seal_into(&mut buffer, &mut records, &mut head_hash, &path);
                    // A dispatch thread that has gone away frees nothing more: drop them here.
                    let _ = give_back.send(records);
                    batches += 1;
                    if batches < queue {
                        next = receiver.try_recv().ok();
                    }
                }
                acked => waiting_for_ack = Some(acked),
            }
        }
        // A durable record is chained tentatively: the head moves past it only once it is
        // committed, so a failed commit leaves the chain where it was.
        let (last, friction, ack) = match waiting_for_ack {
            Some(Message::Durable(mut before, mut record, friction, ack)) => {
                seal_into(&mut buffer, &mut before, &mut head_hash, &path);
                let sealed = seal(&mut record, &head_hash);
                before.push(*record);
                let _ = give_back.send(before);
                (Some(sealed), friction, Some(ack))
            }
            Some(Message::Flush(mut records, ack)) => {
                seal_into(&mut buffer, &mut records, &mut head_hash, &path);
                let _ = give_back.send(records);
                (None, None, Some(ack))
            }
            Some(Message::Batch(_)) | None => (None, None, None),
        };
        // A durable record that cannot be encoded is refused with its friction change; the
        // records before it are committed all the same.
        let (last, friction, refused) = match last {
            Some(Ok(sealed)) => (Some(sealed), friction, None),
            Some(Err(e)) => (None, None, Some(e)),
            None => (None, friction, None),
        };
        let committed = commit(&mut conn, &buffer, last.as_ref(), friction.as_ref());
        let stored = committed.is_ok();
        if stored && let Some(last) = &last {
            head_hash.clone_from(&last.hash);
        }
        let result = committed
            .map_err(|e| format!("cannot commit the audit log: {e}"))
            .and_then(|()| refused.map_or(Ok(()), Err));
        match ack {
            // On failure a durable record is dropped (its approval becomes a denial) and the
            // routine records stay for the next commit.
            Some(ack) => {
                let _ = ack.send(result.clone());
            }
            None => {
                if let Err(e) = &result {
                    tracing::warn!(
                        "{}: audit group commit failed, will retry: {e}",
                        path.display()
                    );
                }
            }
        }
        if stored {
            buffer.clear();
        }
        failing.store(!stored, Ordering::Release);
    }
    if !buffer.is_empty()
        && let Err(e) = commit(&mut conn, &buffer, None, None)
    {
        tracing::error!(
            "{}: {} audit records could not be committed at shutdown: {e}",
            path.display(),
            buffer.len()
        );
    }
}

fn commit(
    conn: &mut Connection,
    buffer: &[Sealed],
    last: Option<&Sealed>,
    friction: Option<&FrictionUpdate>,
) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    {
        let mut insert = tx.prepare_cached(
            "INSERT INTO audit (seq, time_ms, record, hash) VALUES (?1, ?2, ?3, ?4)",
        )?;
        for p in buffer.iter().chain(last) {
            insert.execute(params![p.seq, p.time_ms, p.text, p.hash])?;
        }
    }
    match friction {
        Some(FrictionUpdate::Set(key, h)) => {
            tx.prepare_cached(
                "INSERT INTO friction (profile, app, capability, version, fingerprint,
                     approvals, implicit_passes, last_approved_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                 ON CONFLICT(profile, app, capability, version, fingerprint) DO UPDATE SET
                     approvals = excluded.approvals,
                     implicit_passes = excluded.implicit_passes,
                     last_approved_ms = excluded.last_approved_ms",
            )?
            .execute(params![
                key.profile,
                key.app,
                key.capability,
                key.version,
                key.fingerprint,
                h.approvals,
                h.implicit_passes,
                h.last_approved_ms
            ])?;
        }
        Some(FrictionUpdate::Clear(key)) => {
            tx.prepare_cached(
                "DELETE FROM friction WHERE profile = ?1 AND app = ?2 AND capability = ?3
                 AND version = ?4 AND fingerprint = ?5",
            )?
            .execute(params![
                key.profile,
                key.app,
                key.capability,
                key.version,
                key.fingerprint
            ])?;
        }
        None => {}
    }
    tx.commit()
}

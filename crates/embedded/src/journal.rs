//! Group commit: one writer thread turns many requests' changes into one
//! log record and one `fdatasync`.
//!
//! Requests hand their changes to [`Journal::submit`] while they still hold
//! their queue's lock, so the journal sees each queue's changes in the order
//! the index made them. The writer drains everything pending, applies it to
//! redb in one transaction without durability (visible to reads at once),
//! appends it to the write-ahead log ([`crate::wal`]) and syncs the log,
//! then wakes every request in the batch. A request answers its client only
//! after its [`Ticket`] resolves: no response before its changes are
//! durable.
//!
//! Every so often (a time or a log size, whichever comes first) the writer
//! checkpoints: one durable redb commit writes out what the log holds, and
//! the log starts again. Start-up replays the log's records that redb does
//! not hold yet ([`recover`]).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use sluice_core::{ErrorCode, SqsError};
use tokio::sync::oneshot;

use crate::log_record;
use crate::store::{Change, Store, StoreError};
use crate::wal::{Log, LogError};

/// Most changes one commit takes before the writer commits and comes back
/// for more; bounds the latency a huge backlog of work adds to one batch.
const MAX_CHANGES_PER_COMMIT: usize = 20_000;

/// Most bytes of log between checkpoints: with the interval, bounds how
/// much a restart replays and how much redb holds in memory waiting for a
/// durable commit.
const CHECKPOINT_BYTES: u64 = 64 << 20;

/// A record buffer grown past this is given back after its commit.
const KEPT_BUFFER_BYTES: usize = 4 << 20;

struct Pending {
    changes: Vec<Change>,
    done: oneshot::Sender<Result<(), String>>,
}

/// Where changes go: nowhere (in-memory mode) or the group-commit writer.
pub enum Journal {
    /// Not durable: changes are dropped, tickets resolve at once.
    Memory,
    /// Durable: changes are committed by the writer thread.
    Durable(Writer),
}

/// The handle to the writer thread.
pub struct Writer {
    tx: Option<mpsc::Sender<Pending>>,
    failed: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// A promise that submitted changes are durable.
pub struct Ticket(Option<Result<oneshot::Receiver<Result<(), String>>, ()>>);

impl Ticket {
    /// Waits until the changes are on disk.
    pub async fn wait(self) -> Result<(), SqsError> {
        let unavailable = |why: String| {
            SqsError::new(
                ErrorCode::ServiceUnavailable,
                format!("The storage could not record this change: {why}"),
            )
        };
        match self.0 {
            None => Ok(()),
            Some(Err(())) => Err(unavailable(StoreError::Failed.to_string())),
            Some(Ok(rx)) => match rx.await {
                Ok(Ok(())) => Ok(()),
                Ok(Err(why)) => Err(unavailable(why)),
                Err(_) => Err(unavailable("the writer stopped".into())),
            },
        }
    }
}

impl Journal {
    /// Starts the writer thread over an open store and its recovered log;
    /// it checkpoints at least every `checkpoint_interval`.
    pub fn durable(recovered: Recovered, checkpoint_interval: Duration) -> Self {
        let (tx, rx) = mpsc::channel::<Pending>();
        let failed = Arc::new(AtomicBool::new(false));
        let thread_failed = failed.clone();
        let writer = LogWriter {
            store: recovered.store,
            log: recovered.log,
            next_lsn: recovered.next_lsn,
            buf: Vec::new(),
            dirty_since: None,
            interval: checkpoint_interval,
        };
        let thread = std::thread::Builder::new()
            .name("sluice-journal".into())
            .spawn(move || write_loop(writer, rx, thread_failed))
            .ok();
        Journal::Durable(Writer {
            tx: Some(tx),
            failed,
            thread,
        })
    }

    /// True when changes are recorded; engines skip encoding them otherwise.
    pub fn is_durable(&self) -> bool {
        matches!(self, Journal::Durable(_))
    }

    /// Queues changes for the next commit. Call while holding the lock
    /// under which the changes were made, so commits keep their order.
    pub fn submit(&self, changes: Vec<Change>) -> Ticket {
        match self {
            Journal::Memory => Ticket(None),
            Journal::Durable(w) => w.send(changes),
        }
    }
}

impl Writer {
    fn send(&self, changes: Vec<Change>) -> Ticket {
        if self.failed.load(Ordering::Acquire) {
            return Ticket(Some(Err(())));
        }
        let (done, rx) = oneshot::channel();
        match &self.tx {
            Some(tx) if tx.send(Pending { changes, done }).is_ok() => Ticket(Some(Ok(rx))),
            _ => Ticket(Some(Err(()))),
        }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        // Closing the channel lets the writer finish what is queued and exit.
        self.tx.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A store with its log, ready for the writer: what [`recover`] returns.
pub struct Recovered {
    store: Store,
    log: Log,
    next_lsn: u64,
    /// Log records replayed into the store.
    pub replayed: usize,
}

/// Opens the log at `path` and replays into `store` the records after the
/// last one it holds, then checkpoints so the log can start again.
pub fn recover(store: Store, path: &Path) -> Result<Recovered, StoreError> {
    let log_err = |e: LogError| StoreError::Log(e.to_string());
    let applied = store.applied_lsn()?;
    let (log, records) = Log::open(path, applied).map_err(log_err)?;
    let replayed = records.len();
    let mut last = applied;
    let mut chunk: Vec<Change> = Vec::new();
    for record in records {
        chunk.extend(log_record::decode(&record.payload)?);
        last = record.lsn;
        if chunk.len() >= MAX_CHANGES_PER_COMMIT {
            store.apply(chunk.iter(), last, None)?;
            chunk.clear();
        }
    }
    if !chunk.is_empty() || last != applied {
        store.apply(chunk.iter(), last, None)?;
    }
    if replayed > 0 {
        // The writer's first record goes over the ones just replayed.
        store.checkpoint()?;
        tracing::info!(
            records = replayed,
            last_lsn = last,
            "replayed the write-ahead log"
        );
    }
    Ok(Recovered {
        store,
        log,
        next_lsn: last + 1,
        replayed,
    })
}

/// The writer thread's side: the store, the log, and where they stand.
struct LogWriter {
    store: Store,
    log: Log,
    next_lsn: u64,
    /// The record being built; kept between commits to save allocations.
    buf: Vec<u8>,
    /// When the oldest change redb holds only in memory was applied.
    dirty_since: Option<Instant>,
    /// Longest time between a change and its checkpoint.
    interval: Duration,
}

impl LogWriter {
    /// Applies the changes to the store and makes them durable in the log.
    fn commit<'a>(&mut self, changes: impl Iterator<Item = &'a Change>) -> Result<(), String> {
        let lsn = self.next_lsn;
        Log::start_record(&mut self.buf);
        self.store
            .apply(changes, lsn, Some(&mut self.buf))
            .map_err(|e| e.to_string())?;
        // Once applied, `lsn` is taken even if the log write fails: a later
        // durable commit (redb's own, at close) may still write it out.
        self.next_lsn += 1;
        self.dirty_since.get_or_insert_with(Instant::now);
        let written = self.log.append(lsn, &mut self.buf);
        if self.buf.capacity() > KEPT_BUFFER_BYTES {
            self.buf = Vec::new();
        }
        written.map_err(|e| format!("write-ahead log: {e}"))
    }

    fn checkpoint_due(&self) -> bool {
        self.dirty_since.is_some_and(|since| {
            since.elapsed() >= self.interval || self.log.written() >= CHECKPOINT_BYTES
        })
    }

    /// Makes the store durable up to the last record, then starts the log
    /// again.
    fn checkpoint(&mut self) -> Result<(), String> {
        self.store.checkpoint().map_err(|e| e.to_string())?;
        self.dirty_since = None;
        self.log
            .rewind()
            .map_err(|e| format!("write-ahead log: {e}"))
    }
}

fn write_loop(mut writer: LogWriter, rx: mpsc::Receiver<Pending>, failed: Arc<AtomicBool>) {
    let mut batch: Vec<Pending> = Vec::new();
    loop {
        // An idle writer still checkpoints once the interval is up.
        let due = writer
            .dirty_since
            .and_then(|since| since.checked_add(writer.interval));
        let first = match due {
            Some(due) => match rx.recv_timeout(due.saturating_duration_since(Instant::now())) {
                Ok(first) => Some(first),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => break,
            },
            None => match rx.recv() {
                Ok(first) => Some(first),
                Err(_) => break,
            },
        };
        if let Some(first) = first {
            let mut count = first.changes.len();
            batch.push(first);
            while count < MAX_CHANGES_PER_COMMIT {
                match rx.try_recv() {
                    Ok(next) => {
                        count += next.changes.len();
                        batch.push(next);
                    }
                    Err(_) => break,
                }
            }
            let result = if failed.load(Ordering::Acquire) {
                Err(StoreError::Failed.to_string())
            } else if count == 0 {
                Ok(())
            } else {
                writer.commit(batch.iter().flat_map(|p| p.changes.iter()))
            };
            if let Err(e) = &result {
                fail(&failed, e);
            }
            for pending in batch.drain(..) {
                let _ = pending.done.send(result.clone());
            }
        }
        if !failed.load(Ordering::Acquire)
            && writer.checkpoint_due()
            && let Err(e) = writer.checkpoint()
        {
            fail(&failed, &e);
        }
    }
    // A clean stop leaves nothing for the next start to replay.
    if !failed.load(Ordering::Acquire)
        && writer.dirty_since.is_some()
        && let Err(e) = writer.checkpoint()
    {
        tracing::error!(error = %e, "final checkpoint failed; the next start replays the log");
    }
}

/// After a failed write the index is ahead of the disk; refuse further
/// writes rather than answer from state that may vanish.
fn fail(failed: &AtomicBool, error: &str) {
    tracing::error!(error = %error, "commit failed; refusing further writes");
    failed.store(true, Ordering::Release);
}

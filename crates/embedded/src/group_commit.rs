//! The two threads behind the journal: the applier and the syncer.
//!
//! The applier drains pending changes, applies them to redb in one
//! transaction without durability and encodes them as one log record,
//! which it hands to the syncer. The syncer writes every record handed to
//! it since its last sync, syncs the log once, then resolves their tickets.
//! So redb's work on one batch overlaps the disk's work on the one before,
//! and a slow sync gathers many records instead of holding up the applier.
//!
//! Checkpoints are the applier's: a durable redb commit, then a rewind the
//! syncer carries out in order, after writing and syncing every record
//! before it. A checkpoint may make redb durable ahead of the log's sync of
//! its last records; those are not acknowledged before their sync, and a
//! crash in between keeps them, as a crash just after a sync would.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use crate::journal::{Outcome, Pending};
use crate::store::{Store, StoreError};
use crate::wal::Log;

/// Most changes one commit takes before the applier commits and comes back
/// for more; bounds the latency a huge backlog of work adds to one batch.
pub const MAX_CHANGES_PER_COMMIT: usize = 20_000;

/// Most bytes of log between checkpoints: with the interval, bounds how
/// much a restart replays and how much redb holds in memory waiting for a
/// durable commit.
const CHECKPOINT_BYTES: u64 = 64 << 20;

/// Most records the syncer writes before it syncs, so that a steady
/// stream of records cannot hold back the tickets already written.
const MAX_RECORDS_PER_SYNC: usize = 256;

/// What the applier hands the syncer.
enum ToSyncer {
    /// A record to write; the payload follows the header room in `buf`.
    Record {
        lsn: u64,
        buf: Vec<u8>,
        done: Vec<oneshot::Sender<Outcome>>,
    },
    /// redb is durable up to every record handed over so far: start the
    /// log again.
    Rewind,
}

/// Starts the applier (which starts the syncer); joining it joins both.
pub fn spawn(
    store: Store,
    log: Log,
    next_lsn: u64,
    interval: Duration,
    rx: Receiver<Pending>,
    failed: Arc<AtomicBool>,
) -> Option<JoinHandle<()>> {
    let (to_syncer, from_applier) = mpsc::channel();
    let syncer_failed = failed.clone();
    let syncer = std::thread::Builder::new()
        .name("sluice-log-sync".into())
        .spawn(move || sync_loop(log, from_applier, syncer_failed))
        .ok()?;
    let applier = Applier {
        store,
        next_lsn,
        to_syncer,
        dirty_since: None,
        log_bytes: 0,
        interval,
        failed,
    };
    std::thread::Builder::new()
        .name("sluice-journal".into())
        .spawn(move || {
            applier.run(rx);
            let _ = syncer.join();
        })
        .ok()
}

struct Applier {
    store: Store,
    next_lsn: u64,
    to_syncer: Sender<ToSyncer>,
    /// When the oldest change redb holds only in memory was applied.
    dirty_since: Option<Instant>,
    /// Bytes of records handed over since the last rewind.
    log_bytes: u64,
    /// Longest time between a change and its checkpoint.
    interval: Duration,
    failed: Arc<AtomicBool>,
}

impl Applier {
    fn run(mut self, rx: Receiver<Pending>) {
        let mut batch: Vec<Pending> = Vec::new();
        loop {
            // An idle applier still checkpoints once the interval is up.
            let due = self
                .dirty_since
                .and_then(|since| since.checked_add(self.interval));
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
                self.commit(&mut batch, count);
            }
            if self.checkpoint_due() {
                self.checkpoint();
            }
        }
        // A clean stop leaves nothing for the next start to replay.
        if self.dirty_since.is_some() {
            self.checkpoint();
        }
    }

    /// Applies `batch` and hands its record to the syncer, or fails its
    /// tickets.
    fn commit(&mut self, batch: &mut Vec<Pending>, count: usize) {
        let done = batch.drain(..).map(|p| (p.changes, p.done));
        let (changes, done): (Vec<_>, Vec<_>) = done.unzip();
        if self.failed.load(Ordering::Acquire) {
            return resolve(done, Err(StoreError::Failed.to_string()));
        }
        if count == 0 {
            return resolve(done, Ok(()));
        }
        let lsn = self.next_lsn;
        let mut buf = Vec::new();
        Log::start_record(&mut buf);
        if let Err(e) = self
            .store
            .apply(changes.iter().flatten(), lsn, Some(&mut buf))
        {
            let e = e.to_string();
            fail(&self.failed, &e);
            return resolve(done, Err(e));
        }
        // Once applied, `lsn` is taken even if the log fails: a later
        // durable commit (redb's own, at close) may still write it out.
        self.next_lsn += 1;
        self.dirty_since.get_or_insert_with(Instant::now);
        self.log_bytes += buf.len() as u64;
        if let Err(mpsc::SendError(ToSyncer::Record { done, .. })) =
            self.to_syncer.send(ToSyncer::Record { lsn, buf, done })
        {
            let e = "the log writer stopped".to_string();
            fail(&self.failed, &e);
            resolve(done, Err(e));
        }
    }

    fn checkpoint_due(&self) -> bool {
        self.dirty_since.is_some_and(|since| {
            since.elapsed() >= self.interval || self.log_bytes >= CHECKPOINT_BYTES
        })
    }

    /// Makes redb durable up to the last record, then has the syncer start
    /// the log again. Nothing more is made durable after a failure.
    fn checkpoint(&mut self) {
        if self.failed.load(Ordering::Acquire) {
            return;
        }
        if let Err(e) = self.store.checkpoint() {
            return fail(&self.failed, &e.to_string());
        }
        self.dirty_since = None;
        self.log_bytes = 0;
        let _ = self.to_syncer.send(ToSyncer::Rewind);
    }
}

fn sync_loop(mut log: Log, rx: Receiver<ToSyncer>, failed: Arc<AtomicBool>) {
    let mut waiting: Vec<oneshot::Sender<Outcome>> = Vec::new();
    // The first failure, answered to every later record too.
    let mut broken: Option<String> = None;
    while let Ok(first) = rx.recv() {
        let mut next = Some(first);
        let mut records = 0;
        while let Some(message) = next.take() {
            match message {
                ToSyncer::Record { lsn, mut buf, done } => {
                    if broken.is_none()
                        && let Err(e) = log.write(lsn, &mut buf)
                    {
                        broken = Some(format!("write-ahead log: {e}"));
                    }
                    waiting.extend(done);
                    records += 1;
                }
                ToSyncer::Rewind => {
                    flush(&mut log, &mut waiting, &mut broken, &failed);
                    if broken.is_none()
                        && let Err(e) = log.rewind()
                    {
                        broken = Some(format!("write-ahead log: {e}"));
                    }
                }
            }
            if records < MAX_RECORDS_PER_SYNC {
                next = rx.try_recv().ok();
            }
        }
        flush(&mut log, &mut waiting, &mut broken, &failed);
    }
}

/// Syncs what was written and resolves the tickets waiting on it.
fn flush(
    log: &mut Log,
    waiting: &mut Vec<oneshot::Sender<Outcome>>,
    broken: &mut Option<String>,
    failed: &AtomicBool,
) {
    if waiting.is_empty() && broken.is_none() {
        return;
    }
    if broken.is_none()
        && let Err(e) = log.sync()
    {
        *broken = Some(format!("write-ahead log: {e}"));
    }
    let outcome = match broken.as_ref() {
        Some(e) => {
            if !failed.swap(true, Ordering::AcqRel) {
                tracing::error!(error = %e, "log write failed; refusing further writes");
            }
            Err(e.clone())
        }
        None => Ok(()),
    };
    resolve(waiting.drain(..), outcome);
}

fn resolve(done: impl IntoIterator<Item = oneshot::Sender<Outcome>>, outcome: Outcome) {
    for done in done {
        let _ = done.send(outcome.clone());
    }
}

/// After a failed write the index is ahead of the disk; refuse further
/// writes rather than answer from state that may vanish.
fn fail(failed: &AtomicBool, error: &str) {
    tracing::error!(error = %error, "commit failed; refusing further writes");
    failed.store(true, Ordering::Release);
}

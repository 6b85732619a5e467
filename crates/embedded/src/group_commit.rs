//! The two threads behind the journal: the log writer and the applier.
//!
//! The writer drains pending changes, encodes them as one log record, hands
//! the changes to the applier, then writes the record and syncs the log.
//! Once synced, a ticket resolves: its changes are durable, and the apply to
//! redb (without durability) runs beside the sync and after it, off the
//! path of the answer. So an acknowledged change may not be in redb yet:
//! anything that reads redb first waits, through the [`Gate`], until
//! every record handed over is applied (`Journal::readable`); the
//! index and the body cache answer everything else. A batch holding a
//! dead-letter move of a body on disk is encoded by the applier (what the
//! move writes depends on what redb holds), and written once applied.
//!
//! Checkpoints are the writer's: after the last record before it, it asks
//! the applier for a durable redb commit, which applies everything before
//! it first, then starts the log again. Nothing is written in between, so
//! the rewind only ever writes over records redb holds durably. That wait
//! also bounds how far the applier can fall behind, and so the changes
//! queued for it in memory: one checkpoint's worth (its interval, or
//! [`CHECKPOINT_BYTES`] of log).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tokio::sync::oneshot;

use crate::journal::{Outcome, Pending};
use crate::log_record;
use crate::store::{Change, Store, StoreError};
use crate::wal::Log;

/// Most changes one commit takes before the writer commits and comes back
/// for more; bounds the latency a huge backlog of work adds to one batch.
pub const MAX_CHANGES_PER_COMMIT: usize = 20_000;

/// How long the applier gathers records before it applies them as one
/// redb transaction. Each transaction copies every page it touches
/// (redb's pages are copy-on-write): the root-to-leaf paths of the leaves
/// it changes, in each table. A send, a receive and a delete of the same
/// message, or of messages next to each other, in one transaction copy
/// those paths once instead of once each; with millions of messages the
/// paths are deeper and the pages colder, and this copying was most of
/// the applier's work. Nothing waits for it on an answer's path: replies
/// wait for the log, and reads of redb first look without waiting (see
/// `Journal::readable`).
const APPLY_WINDOW: Duration = Duration::from_millis(4);

/// Most bytes of log between checkpoints: with the interval, bounds how
/// much a restart replays and how much redb holds in memory waiting for a
/// durable commit.
const CHECKPOINT_BYTES: u64 = 64 << 20;

/// Where readers of redb wait until the records before them are applied.
#[derive(Default)]
pub(crate) struct Gate {
    /// The last record applied to redb (the applier applies in order).
    applied: u64,
    /// The last record handed to the applier.
    handed: u64,
    /// Why applying failed, once it has: every later waiter's answer.
    failed: Option<String>,
    /// Waiters for records handed over but not yet applied, by record.
    waiting: Vec<(u64, Vec<oneshot::Sender<Outcome>>)>,
}

impl Gate {
    /// A gate over a store that holds every record up to `applied`.
    pub(crate) fn new(applied: u64) -> Self {
        Gate {
            applied,
            handed: applied,
            ..Gate::default()
        }
    }

    /// A receiver that resolves once every record handed over so far is
    /// applied, or `None` when they are already.
    pub(crate) fn readable(
        gate: &Mutex<Gate>,
    ) -> Result<Option<oneshot::Receiver<Outcome>>, String> {
        let mut g = gate.lock();
        if let Some(e) = &g.failed {
            return Err(e.clone());
        }
        if g.applied >= g.handed {
            return Ok(None);
        }
        let (tx, rx) = oneshot::channel();
        let at = g.handed;
        g.waiting.push((at, vec![tx]));
        Ok(Some(rx))
    }

    /// Record `lsn` goes to the applier.
    fn handed(gate: &Mutex<Gate>, lsn: u64) {
        gate.lock().handed = lsn;
    }

    /// The applier has applied every record up to `lsn`: resolves the
    /// waiters for those.
    fn applied(gate: &Mutex<Gate>, lsn: u64) {
        let ready = {
            let mut g = gate.lock();
            g.applied = lsn;
            if g.waiting.is_empty() {
                return;
            }
            let (ready, held): (Vec<_>, Vec<_>) =
                g.waiting.drain(..).partition(|(at, _)| *at <= lsn);
            g.waiting = held;
            ready
        };
        for (_, done) in ready {
            resolve(done, Ok(()));
        }
    }

    /// Applying failed: resolves every waiter, and every later one, with
    /// `error`.
    fn apply_failed(gate: &Mutex<Gate>, error: &str) {
        let held = {
            let mut g = gate.lock();
            g.failed = Some(error.to_string());
            std::mem::take(&mut g.waiting)
        };
        for (_, done) in held {
            resolve(done, Err(error.to_string()));
        }
    }
}

/// What the writer hands the applier.
enum ToApplier {
    /// Changes to apply as record `lsn`.
    Apply {
        lsn: u64,
        changes: Vec<Vec<Change>>,
        /// Set when the record depends on what redb holds (a move of a
        /// body on disk): the applier encodes it as it applies it and
        /// sends it back here, header room first.
        encode: Option<SyncSender<Result<Vec<u8>, String>>>,
    },
    /// Make redb durable up to every record handed over so far.
    Checkpoint(SyncSender<Result<(), String>>),
}

/// Starts the writer (which starts the applier); joining it joins both.
pub(crate) fn spawn(
    store: Store,
    log: Log,
    next_lsn: u64,
    interval: Duration,
    rx: Receiver<Pending>,
    failed: Arc<AtomicBool>,
    gate: Arc<Mutex<Gate>>,
) -> Option<JoinHandle<()>> {
    let (to_applier, from_writer) = mpsc::channel();
    let applier = Applier {
        store,
        gate: gate.clone(),
        failed: failed.clone(),
        broken: None,
    };
    let applier = std::thread::Builder::new()
        .name("sluice-apply".into())
        .spawn(move || applier.run(from_writer))
        .ok()?;
    let writer = LogWriter {
        log,
        gate,
        next_lsn,
        to_applier,
        dirty_since: None,
        log_bytes: 0,
        interval,
        failed,
    };
    std::thread::Builder::new()
        .name("sluice-journal".into())
        .spawn(move || {
            writer.run(rx);
            let _ = applier.join();
        })
        .ok()
}

struct LogWriter {
    log: Log,
    gate: Arc<Mutex<Gate>>,
    next_lsn: u64,
    to_applier: Sender<ToApplier>,
    /// When the oldest record redb does not hold durably was written.
    dirty_since: Option<Instant>,
    /// Bytes of records written since the last rewind.
    log_bytes: u64,
    /// Longest time between a change and its checkpoint.
    interval: Duration,
    failed: Arc<AtomicBool>,
}

impl LogWriter {
    /// Commits until every sender of `rx` is gone; dropping `self` at the
    /// end stops the applier.
    fn run(mut self, rx: Receiver<Pending>) {
        let mut batch: Vec<Pending> = Vec::new();
        loop {
            // An idle writer still checkpoints once the interval is up.
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

    /// Hands `batch` to the applier, writes and syncs its record, then
    /// resolves its tickets.
    fn commit(&mut self, batch: &mut Vec<Pending>, count: usize) {
        let (changes, done): (Vec<_>, Vec<_>) =
            batch.drain(..).map(|p| (p.changes, p.done)).unzip();
        if self.failed.load(Ordering::Acquire) {
            return resolve(done, Err(StoreError::Failed.to_string()));
        }
        if count == 0 {
            return resolve(done, Ok(()));
        }
        let lsn = self.next_lsn;
        let moves = changes
            .iter()
            .flatten()
            .any(|c| matches!(c, Change::MoveMessage { .. }));
        let mut buf = Vec::new();
        Log::start_record(&mut buf);
        let (encode, encoded) = if moves {
            let (tx, rx) = mpsc::sync_channel(1);
            (Some(tx), Some(rx))
        } else {
            for change in changes.iter().flatten() {
                log_record::encode(change, &mut buf);
            }
            (None, None)
        };
        // Handed over before the write, so the apply runs beside the sync.
        Gate::handed(&self.gate, lsn);
        let handed = self.to_applier.send(ToApplier::Apply {
            lsn,
            changes,
            encode,
        });
        if handed.is_err() {
            return self.stopped(done);
        }
        // Taken even if the log fails: redb may hold it already.
        self.next_lsn += 1;
        if let Some(encoded) = encoded {
            match encoded.recv() {
                Ok(Ok(record)) => buf = record,
                Ok(Err(e)) => return resolve(done, Err(e)),
                Err(_) => return self.stopped(done),
            }
        }
        self.dirty_since.get_or_insert_with(Instant::now);
        self.log_bytes += buf.len() as u64;
        match self.log.write(lsn, &mut buf).and_then(|()| self.log.sync()) {
            Ok(()) => resolve(done, Ok(())),
            Err(e) => {
                let e = format!("write-ahead log: {e}");
                fail(&self.failed, &e);
                resolve(done, Err(e));
            }
        }
    }

    /// The applier is gone: fails `done`, every later write, and every
    /// reader waiting for an apply.
    fn stopped(&self, done: Vec<oneshot::Sender<Outcome>>) {
        let e = "the store's applier stopped".to_string();
        fail(&self.failed, &e);
        Gate::apply_failed(&self.gate, &e);
        resolve(done, Err(e));
    }

    fn checkpoint_due(&self) -> bool {
        self.dirty_since.is_some_and(|since| {
            since.elapsed() >= self.interval || self.log_bytes >= CHECKPOINT_BYTES
        })
    }

    /// Has the applier make redb durable up to the last record written,
    /// then starts the log again. Nothing more is made durable after a
    /// failure.
    fn checkpoint(&mut self) {
        if self.failed.load(Ordering::Acquire) {
            return;
        }
        let (tx, rx) = mpsc::sync_channel(1);
        let durable = match self.to_applier.send(ToApplier::Checkpoint(tx)) {
            Ok(()) => rx
                .recv()
                .unwrap_or_else(|_| Err("the store's applier stopped".into())),
            Err(_) => Err("the store's applier stopped".into()),
        };
        let rewound = durable.and_then(|()| {
            self.log
                .rewind()
                .map_err(|e| format!("write-ahead log: {e}"))
        });
        if let Err(e) = rewound {
            return fail(&self.failed, &e);
        }
        self.dirty_since = None;
        self.log_bytes = 0;
    }
}

struct Applier {
    store: Store,
    gate: Arc<Mutex<Gate>>,
    failed: Arc<AtomicBool>,
    /// The first failed apply: nothing is applied, nor made durable, after it.
    broken: Option<String>,
}

impl Applier {
    fn run(mut self, rx: Receiver<ToApplier>) {
        let mut next = None;
        loop {
            let message = match next.take() {
                Some(message) => message,
                None => match rx.recv() {
                    Ok(message) => message,
                    Err(_) => break,
                },
            };
            match message {
                ToApplier::Checkpoint(reply) => {
                    let durable = match &self.broken {
                        Some(e) => Err(e.clone()),
                        None => self.store.checkpoint().map_err(|e| e.to_string()),
                    };
                    let _ = reply.send(durable);
                }
                ToApplier::Apply {
                    lsn,
                    changes,
                    encode: Some(reply),
                } => {
                    let mut buf = Vec::new();
                    Log::start_record(&mut buf);
                    let applied = self.apply(changes.iter().flatten(), lsn, Some(&mut buf));
                    let _ = reply.send(applied.map(|()| buf));
                }
                ToApplier::Apply {
                    lsn,
                    changes,
                    encode: None,
                } => {
                    // Records that queued up behind this one, or that come
                    // within the window, go in the same transaction.
                    let mut last = lsn;
                    let mut count: usize = changes.iter().map(Vec::len).sum();
                    let mut records = vec![changes];
                    let until = Instant::now() + APPLY_WINDOW;
                    while count < MAX_CHANGES_PER_COMMIT {
                        match rx.recv_timeout(until.saturating_duration_since(Instant::now())) {
                            Ok(ToApplier::Apply {
                                lsn,
                                changes,
                                encode: None,
                            }) => {
                                count += changes.iter().map(Vec::len).sum::<usize>();
                                records.push(changes);
                                last = lsn;
                            }
                            Ok(other) => {
                                next = Some(other);
                                break;
                            }
                            Err(_) => break,
                        }
                    }
                    let _ = self.apply(records.iter().flatten().flatten(), last, None);
                }
            }
        }
    }

    /// Applies changes as record `lsn` (and every one before it) and opens
    /// the gate up to it; the first failure stops every later write.
    fn apply<'a>(
        &mut self,
        changes: impl Iterator<Item = &'a Change>,
        lsn: u64,
        log: Option<&mut Vec<u8>>,
    ) -> Result<(), String> {
        if let Some(e) = &self.broken {
            return Err(e.clone());
        }
        match self.store.apply(changes, lsn, log) {
            Ok(()) => {
                Gate::applied(&self.gate, lsn);
                Ok(())
            }
            Err(e) => {
                let e = e.to_string();
                fail(&self.failed, &e);
                Gate::apply_failed(&self.gate, &e);
                self.broken = Some(e.clone());
                Err(e)
            }
        }
    }
}

fn resolve(done: impl IntoIterator<Item = oneshot::Sender<Outcome>>, outcome: Outcome) {
    for done in done {
        let _ = done.send(outcome.clone());
    }
}

/// After a failed write the index is ahead of the disk; refuse further
/// writes rather than answer from state that may vanish.
fn fail(failed: &AtomicBool, error: &str) {
    if !failed.swap(true, Ordering::AcqRel) {
        tracing::error!(error = %error, "commit failed; refusing further writes");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader waits for every record handed over to be applied, and no
    /// longer: applied records let it through at once.
    #[test]
    fn a_reader_waits_for_the_records_handed_over() {
        let gate = Mutex::new(Gate::new(0));
        assert!(matches!(Gate::readable(&gate), Ok(None)));
        Gate::handed(&gate, 1);
        Gate::handed(&gate, 2);
        let mut rx = Gate::readable(&gate)
            .unwrap()
            .expect("record 2 is not applied");
        Gate::applied(&gate, 1);
        assert!(rx.try_recv().is_err(), "answered before record 2 applied");
        Gate::applied(&gate, 2);
        assert_eq!(rx.try_recv(), Ok(Ok(())));
        assert!(matches!(Gate::readable(&gate), Ok(None)));
    }

    /// A failed apply answers the readers waiting and every later one
    /// with its error.
    #[test]
    fn a_failed_apply_answers_waiting_and_later_readers_with_its_error() {
        let gate = Mutex::new(Gate::new(0));
        Gate::handed(&gate, 1);
        let mut rx = Gate::readable(&gate).unwrap().unwrap();
        Gate::apply_failed(&gate, "disk full");
        assert_eq!(rx.try_recv(), Ok(Err("disk full".to_string())));
        assert_eq!(Gate::readable(&gate).unwrap_err(), "disk full");
    }
}

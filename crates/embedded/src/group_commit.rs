//! The two threads behind the journal: the log writer and the applier.
//!
//! The writer drains pending changes, encodes them as one log record, writes
//! it, hands the changes to the applier, then syncs the log. Each put of a
//! message learns where its data lies in the log, and redb keeps that
//! position instead of the data: a message is written once. Once synced, a
//! ticket resolves: its changes are durable, and the apply to redb (without
//! durability) runs beside the sync and after it, off the path of the
//! answer. So an acknowledged change may not be in redb yet: anything that
//! reads redb first waits, through the [`Gate`], until every record handed
//! over is applied (`Journal::readable`); the index and the body cache
//! answer everything else. A batch holding a dead-letter move of a body on
//! disk is encoded by the applier (what the move writes depends on what
//! redb holds), and written once applied; its puts keep their data in redb.
//!
//! Checkpoints are the writer's: after the last record before it, it asks
//! the applier for a durable redb commit, which applies everything before
//! it first; then the writer starts a new log segment and deletes the older
//! ones in which redb, durably, needs no message's data any more. That wait
//! also bounds how far the applier can fall behind, and so the changes
//! queued for it in memory: one checkpoint's worth (its interval, or
//! [`CHECKPOINT_BYTES`] of log). An older segment of which less than half
//! is still needed, and that lost nothing since the previous checkpoint
//! (consumers are not draining it), is compacted: the applier copies the
//! data of its remaining messages into redb, a few hundred at a time
//! between applies, and it goes at the checkpoint after.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender, TryRecvError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tokio::sync::oneshot;

use crate::change::Change;
use crate::log_record;
use crate::store::{Store, StoreError};
use crate::wal::{BodyAt, Log, Segments};

/// What one resolved ticket learns: durable, or why not.
pub(crate) type Outcome = Result<(), String>;

/// Changes waiting for the applier, with the ticket to resolve.
pub(crate) struct Pending {
    pub(crate) changes: Vec<Change>,
    pub(crate) done: oneshot::Sender<Outcome>,
}

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

/// Most messages one step of compaction copies into redb: a step runs
/// between applies, which wait for it.
const COMPACT_STEP: usize = 500;

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
    /// Make redb durable up to every record handed over so far, and answer
    /// the segments that still hold a stored message's data. `current` is
    /// the segment being written, the last the writer writes to.
    Checkpoint {
        current: u64,
        reply: SyncSender<Result<Checkpointed, String>>,
    },
}

/// What a checkpoint tells the writer.
struct Checkpointed {
    /// The segments that still hold a stored message's data.
    live: BTreeSet<u64>,
    /// Whether compaction has work, or sparse segments are still being
    /// drained: its result is made durable, the segments it emptied
    /// deleted, and drained ones seen to settle, only by another checkpoint.
    compacting: bool,
}

/// Starts the writer (which starts the applier); joining it joins both.
#[allow(clippy::too_many_arguments)]
pub(crate) fn spawn(
    store: Store,
    log: Log,
    on_disk: BTreeSet<u64>,
    next_lsn: u64,
    interval: Duration,
    rx: Receiver<Pending>,
    failed: Arc<AtomicBool>,
    gate: Arc<Mutex<Gate>>,
) -> Option<JoinHandle<()>> {
    let (to_applier, from_writer) = mpsc::channel();
    let segments = store.segments().clone();
    let applier = Applier {
        store,
        gate: gate.clone(),
        failed: failed.clone(),
        broken: None,
        compacting: VecDeque::new(),
        compacted: BTreeSet::new(),
        lengths: BTreeMap::new(),
        live_before: BTreeMap::new(),
    };
    let applier = std::thread::Builder::new()
        .name("sluice-apply".into())
        .spawn(move || applier.run(from_writer))
        .ok()?;
    let writer = LogWriter {
        log,
        on_disk,
        segments,
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
    /// The segments on disk, the one being written included.
    on_disk: BTreeSet<u64>,
    /// The readers' open segment files, closed before a segment goes.
    segments: Arc<Segments>,
    gate: Arc<Mutex<Gate>>,
    next_lsn: u64,
    to_applier: Sender<ToApplier>,
    /// When the oldest record redb does not hold durably was written.
    dirty_since: Option<Instant>,
    /// Bytes of records written since the last checkpoint.
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
        let mut changes = changes;
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
            // Each put learns where its data lies, which redb keeps
            // instead of the data.
            let (segment, base) = (self.log.segment(), self.log.end());
            for change in changes.iter_mut().flatten() {
                if let Some(start) = log_record::encode(change, &mut buf)
                    && let Change::PutMessage { data, in_log, .. } = change
                {
                    *in_log = Some(BodyAt {
                        segment,
                        offset: base + start as u64,
                        len: data.len() as u32,
                    });
                }
            }
            (None, None)
        };
        self.dirty_since.get_or_insert_with(Instant::now);
        if !moves {
            // Written before redb learns where: a reader that follows a
            // put's position finds its bytes (synced or not yet).
            self.log_bytes += buf.len() as u64;
            if let Err(e) = self.log.write(lsn, &mut buf) {
                return self.log_failed(e, done);
            }
        }
        // Handed over before the sync, so the apply runs beside it.
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
            self.log_bytes += buf.len() as u64;
            if let Err(e) = self.log.write(lsn, &mut buf) {
                return self.log_failed(e, done);
            }
        }
        match self.log.sync() {
            Ok(()) => resolve(done, Ok(())),
            Err(e) => self.log_failed(e, done),
        }
    }

    /// Writing or syncing the log failed: fails `done` and every later
    /// write.
    fn log_failed(&self, e: std::io::Error, done: Vec<oneshot::Sender<Outcome>>) {
        let e = format!("write-ahead log: {e}");
        fail(&self.failed, &e);
        resolve(done, Err(e));
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
    /// then starts a new segment and deletes the older ones that no stored
    /// message needs any more. Nothing more is made durable after a
    /// failure.
    fn checkpoint(&mut self) {
        if self.failed.load(Ordering::Acquire) {
            return;
        }
        // The applier reads the segment's length: without the zeros made
        // ready ahead.
        if let Err(e) = self.log.finish() {
            return fail(&self.failed, &format!("write-ahead log: {e}"));
        }
        let (reply, rx) = mpsc::sync_channel(1);
        let stopped = || "the store's applier stopped".to_string();
        let checkpoint = ToApplier::Checkpoint {
            current: self.log.segment(),
            reply,
        };
        let checkpointed = match self.to_applier.send(checkpoint) {
            Ok(()) => rx.recv().unwrap_or_else(|_| Err(stopped())),
            Err(_) => Err(stopped()),
        };
        let rolled = checkpointed.and_then(|done| {
            self.log
                .next_segment()
                .map(|()| done)
                .map_err(|e| format!("write-ahead log: {e}"))
        });
        let Checkpointed { live, compacting } = match rolled {
            Ok(done) => done,
            Err(e) => return fail(&self.failed, &e),
        };
        // An idle writer checkpoints again after the interval when
        // compaction has work.
        self.dirty_since = compacting.then(Instant::now);
        self.log_bytes = 0;
        let current = self.log.segment();
        self.on_disk.insert(current);
        let dead: Vec<u64> = (self.on_disk.iter().copied())
            .filter(|id| *id != current && !live.contains(id))
            .collect();
        for id in dead {
            self.segments.forget(id);
            match self.log.remove(id) {
                Ok(()) => {
                    self.on_disk.remove(&id);
                }
                // Tried again at the next checkpoint, and at a start.
                Err(e) => {
                    tracing::warn!(segment = id, error = %e, "could not delete a log segment")
                }
            }
        }
    }
}

struct Applier {
    store: Store,
    gate: Arc<Mutex<Gate>>,
    failed: Arc<AtomicBool>,
    /// The first failed apply: nothing is applied, nor made durable, after it.
    broken: Option<String>,
    /// Segments mostly dead whose remaining messages' data is being copied
    /// into redb, each with where to go on from.
    compacting: VecDeque<(u64, (u64, u64))>,
    /// Segments compaction went all through, not to be queued again: one
    /// still in use after that holds messages it could not find.
    compacted: BTreeSet<u64>,
    /// The file lengths of the segments up to the last checkpoint's, which
    /// never change: read once each, not at every checkpoint (a backlog
    /// spans hundreds of segments, and the writer waits for the answer).
    lengths: BTreeMap<u64, u64>,
    /// Each segment's bytes still needed at the last checkpoint.
    live_before: BTreeMap<u64, u64>,
}

/// Whether a segment of `len` bytes, `live` of them still needed, and
/// `before` at the previous checkpoint, is worth compacting now: less than
/// half is needed, and nothing was freed since the previous checkpoint.
/// One still losing messages is being drained by consumers (the head of a
/// backlog), and copying its remaining data into redb would be wasted on
/// messages deleted moments later; it is left to drain, and compacted once
/// what is left stops moving.
fn worth_compacting(live: u64, before: Option<u64>, len: u64) -> bool {
    live.saturating_mul(2) < len && before.is_some_and(|before| live >= before)
}

impl Applier {
    fn run(mut self, rx: Receiver<ToApplier>) {
        let mut next = None;
        loop {
            let message = match next.take() {
                Some(message) => message,
                // Compaction runs when nothing else waits.
                None if !self.compacting.is_empty() => match rx.try_recv() {
                    Ok(message) => message,
                    Err(TryRecvError::Empty) => {
                        self.compact_step();
                        continue;
                    }
                    Err(TryRecvError::Disconnected) => break,
                },
                None => match rx.recv() {
                    Ok(message) => message,
                    Err(_) => break,
                },
            };
            match message {
                ToApplier::Checkpoint { current, reply } => {
                    let live = match &self.broken {
                        Some(e) => Err(e.clone()),
                        None => self.checkpoint(current).map_err(|e| e.to_string()),
                    };
                    let _ = reply.send(live);
                    // Under steady load the applier is seldom idle: one
                    // step per checkpoint at least.
                    self.compact_step();
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

    /// Makes redb durable; returns the segments still holding a stored
    /// message's data, and queues for compaction those up to `current` in
    /// which less than half the bytes are still needed.
    fn checkpoint(&mut self, current: u64) -> Result<Checkpointed, StoreError> {
        self.store.checkpoint()?;
        let used = self.store.segment_use()?;
        let segments = self.store.segments();
        self.lengths.retain(|id, _| used.contains_key(id));
        self.compacted.retain(|id| {
            let stuck = used.contains_key(id);
            if stuck {
                tracing::warn!(segment = id, "compaction left messages in a log segment");
            }
            stuck
        });
        let before = std::mem::take(&mut self.live_before);
        // Sparse segments left to drain: checkpoints go on while there are
        // any, even on an idle server, to see them settle.
        let mut draining = false;
        // The segment being written is done too: the writer starts the
        // next one as soon as this returns.
        for (&id, used) in used.range(..=current) {
            let len = *self.lengths.entry(id).or_insert_with(|| segments.len(id));
            if self.compacted.contains(&id) || self.compacting.iter().any(|(q, _)| *q == id) {
                continue;
            }
            if worth_compacting(used.bytes, before.get(&id).copied(), len) {
                self.compacting.push_back((id, (0, 0)));
            } else if used.bytes.saturating_mul(2) < len {
                draining = true;
            }
        }
        self.live_before = used.iter().map(|(&id, u)| (id, u.bytes)).collect();
        Ok(Checkpointed {
            live: used.into_keys().collect(),
            compacting: !self.compacting.is_empty() || draining,
        })
    }

    /// Copies the data of the next few messages of the first segment
    /// being compacted into redb.
    fn compact_step(&mut self) {
        let Some(&(segment, from)) = self.compacting.front() else {
            return;
        };
        if self.broken.is_some() {
            self.compacting.clear();
            return;
        }
        match self.store.take_in(segment, from, COMPACT_STEP) {
            Ok(Some(next)) => self.compacting[0].1 = next,
            Ok(None) => {
                self.compacting.pop_front();
                self.compacted.insert(segment);
            }
            Err(e) => {
                let e = e.to_string();
                fail(&self.failed, &e);
                Gate::apply_failed(&self.gate, &e);
                self.broken = Some(e);
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

    /// Only a segment mostly dead and no longer shrinking is compacted:
    /// one whose messages consumers are still deleting (the head of a
    /// backlog) is left to drain, and one just seen for the first time
    /// waits a checkpoint to show which it is.
    #[test]
    fn d1_a_segment_still_being_drained_is_not_compacted() {
        let len = 1000;
        assert!(worth_compacting(400, Some(400), len), "settled, sparse");
        assert!(worth_compacting(0, Some(0), len));
        assert!(!worth_compacting(400, Some(450), len), "still draining");
        assert!(!worth_compacting(400, None, len), "first seen");
        assert!(!worth_compacting(600, Some(600), len), "mostly needed");
        assert!(!worth_compacting(500, Some(500), len), "exactly half");
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

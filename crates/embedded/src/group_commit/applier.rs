//! The applier thread: applying records to redb without durability,
//! checkpoint commits, and compacting mostly empty segments.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::gate::Gate;
use super::handoff::Failure;
use super::handoff::{Checkpointed, MAX_CHANGES_PER_COMMIT, ToApplier};
use crate::change::Change;
use crate::store::{Store, StoreError};
use crate::wal::Log;

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
pub(super) const APPLY_WINDOW: Duration = Duration::from_millis(4);

/// Most messages one step of compaction copies into redb: a step runs
/// between applies, which wait for it.
pub(super) const COMPACT_STEP: usize = 500;

pub(super) struct Applier {
    pub(super) store: Store,
    pub(super) gate: Arc<Mutex<Gate>>,
    pub(super) failed: Arc<Failure>,
    /// The first failed apply: nothing is applied, nor made durable, after it.
    pub(super) broken: Option<String>,
    /// Segments mostly dead whose remaining messages' data is being copied
    /// into redb, each with where to go on from.
    pub(super) compacting: VecDeque<(u64, (u64, u64))>,
    /// Segments compaction went all through, not to be queued again: one
    /// still in use after that holds messages it could not find.
    pub(super) compacted: BTreeSet<u64>,
    /// The file lengths of the segments up to the last checkpoint's, which
    /// never change: read once each, not at every checkpoint (a backlog
    /// spans hundreds of segments, and the writer waits for the answer).
    pub(super) lengths: BTreeMap<u64, u64>,
    /// Each segment's bytes still needed at the last checkpoint.
    pub(super) live_before: BTreeMap<u64, u64>,
}

/// Whether a segment of `len` bytes, `live` of them still needed, and
/// `before` at the previous checkpoint, is worth compacting now: less than
/// half is needed, and nothing was freed since the previous checkpoint.
/// One still losing messages is being drained by consumers (the head of a
/// backlog), and copying its remaining data into redb would be wasted on
/// messages deleted moments later; it is left to drain, and compacted once
/// what is left stops moving.
pub(super) fn worth_compacting(live: u64, before: Option<u64>, len: u64) -> bool {
    live.saturating_mul(2) < len && before.is_some_and(|before| live >= before)
}

impl Applier {
    pub(super) fn run(mut self, rx: Receiver<ToApplier>) {
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
    pub(super) fn checkpoint(&mut self, current: u64) -> Result<Checkpointed, StoreError> {
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
    pub(super) fn compact_step(&mut self) {
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
                self.failed.fail(&e);
                Gate::apply_failed(&self.gate, &e);
                self.broken = Some(e);
            }
        }
    }

    /// Applies changes as record `lsn` (and every one before it) and opens
    /// the gate up to it; the first failure stops every later write.
    pub(super) fn apply<'a>(
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
                self.failed.fail(&e);
                Gate::apply_failed(&self.gate, &e);
                self.broken = Some(e.clone());
                Err(e)
            }
        }
    }
}

//! The log writer thread: draining pending changes into one record,
//! writing and syncing it, handing it to the applier, and checkpoints.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tokio::sync::oneshot;

use super::gate::Gate;
use super::handoff::{
    Checkpointed, Failure, MAX_CHANGES_PER_COMMIT, Outcome, Pending, ToApplier, resolve,
};
use crate::change::Change;
use crate::log_record;
use crate::wal::{BodyAt, Log, Segments};

/// Most bytes of log between checkpoints: with the interval, bounds how
/// much a restart replays and how much redb holds in memory waiting for a
/// durable commit.
pub(super) const CHECKPOINT_BYTES: u64 = 64 << 20;

pub(super) struct LogWriter {
    pub(super) log: Log,
    /// The segments on disk, the one being written included.
    pub(super) on_disk: BTreeSet<u64>,
    /// The readers' open segment files, closed before a segment goes.
    pub(super) segments: Arc<Segments>,
    pub(super) gate: Arc<Mutex<Gate>>,
    pub(super) next_lsn: u64,
    pub(super) to_applier: Sender<ToApplier>,
    /// When the oldest record redb does not hold durably was written.
    pub(super) dirty_since: Option<Instant>,
    /// Bytes of records written since the last checkpoint.
    pub(super) log_bytes: u64,
    /// Longest time between a change and its checkpoint.
    pub(super) interval: Duration,
    pub(super) failed: Arc<Failure>,
}

impl LogWriter {
    /// Commits until every sender of `rx` is gone; dropping `self` at the
    /// end stops the applier.
    pub(super) fn run(mut self, rx: Receiver<Pending>) {
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
    pub(super) fn commit(&mut self, batch: &mut Vec<Pending>, count: usize) {
        let (changes, done): (Vec<_>, Vec<_>) =
            batch.drain(..).map(|p| (p.changes, p.done)).unzip();
        if self.failed.is_set() {
            return resolve(done, Err(self.failed.refusal()));
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
    pub(super) fn log_failed(&self, e: std::io::Error, done: Vec<oneshot::Sender<Outcome>>) {
        let e = format!("write-ahead log: {e}");
        self.failed.fail(&e);
        resolve(done, Err(e));
    }

    /// The applier is gone: fails `done`, every later write, and every
    /// reader waiting for an apply.
    pub(super) fn stopped(&self, done: Vec<oneshot::Sender<Outcome>>) {
        let e = "the store's applier stopped".to_string();
        self.failed.fail(&e);
        Gate::apply_failed(&self.gate, &e);
        resolve(done, Err(e));
    }

    pub(super) fn checkpoint_due(&self) -> bool {
        self.dirty_since.is_some_and(|since| {
            since.elapsed() >= self.interval || self.log_bytes >= CHECKPOINT_BYTES
        })
    }

    /// Has the applier make redb durable up to the last record written,
    /// then starts a new segment and deletes the older ones that no stored
    /// message needs any more. Nothing more is made durable after a
    /// failure.
    pub(super) fn checkpoint(&mut self) {
        if self.failed.is_set() {
            return;
        }
        // The applier reads the segment's length: without the zeros made
        // ready ahead.
        if let Err(e) = self.log.finish() {
            return self.failed.fail(&format!("write-ahead log: {e}"));
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
            Err(e) => return self.failed.fail(&e),
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

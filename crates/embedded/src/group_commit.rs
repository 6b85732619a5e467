//! The two threads behind the journal: the applier and the syncer.
//!
//! The applier drains pending changes, encodes them as one log record,
//! hands it to the syncer, then applies them to redb in one transaction
//! without durability. The syncer writes every record handed to it since
//! its last sync and syncs the log once. A ticket resolves when both are
//! done with its record ([`Gate`]): durable in the log, and readable from
//! redb. So a batch's apply overlaps its own sync (a send waits for the
//! longer of the two, not their sum), and a slow sync gathers many records
//! instead of holding up the applier. A batch holding a dead-letter move
//! of a body on disk is encoded while it is applied (what the move writes
//! depends on what redb holds), so it is handed over once applied.
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

use parking_lot::Mutex;
use tokio::sync::oneshot;

use crate::journal::{Outcome, Pending};
use crate::log_record;
use crate::store::{Change, Store, StoreError};
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

/// Where a record's tickets wait for the later of its apply and its sync.
#[derive(Default)]
struct Gate {
    /// The last record applied to redb (the applier applies in order).
    applied: u64,
    /// Why applying failed, once it has: every later ticket's answer.
    failed: Option<String>,
    /// Tickets of records synced but not yet applied, by record.
    synced: Vec<(u64, Vec<oneshot::Sender<Outcome>>)>,
}

impl Gate {
    /// The applier has applied every record up to `lsn`: resolves the
    /// tickets of those already synced.
    fn applied(gate: &Mutex<Gate>, lsn: u64) {
        let ready = {
            let mut g = gate.lock();
            g.applied = lsn;
            let (ready, held): (Vec<_>, Vec<_>) =
                g.synced.drain(..).partition(|(at, _)| *at <= lsn);
            g.synced = held;
            ready
        };
        for (_, done) in ready {
            resolve(done, Ok(()));
        }
    }

    /// Applying failed: resolves every held ticket, and every later one,
    /// with `error`.
    fn apply_failed(gate: &Mutex<Gate>, error: &str) {
        let held = {
            let mut g = gate.lock();
            g.failed = Some(error.to_string());
            std::mem::take(&mut g.synced)
        };
        for (_, done) in held {
            resolve(done, Err(error.to_string()));
        }
    }

    /// Record `lsn` is durable: its tickets resolve now if it is applied,
    /// else when it is.
    fn synced(gate: &Mutex<Gate>, lsn: u64, done: Vec<oneshot::Sender<Outcome>>) {
        let outcome = {
            let mut g = gate.lock();
            match &g.failed {
                Some(e) => Err(e.clone()),
                None if lsn <= g.applied => Ok(()),
                None => {
                    g.synced.push((lsn, done));
                    return;
                }
            }
        };
        resolve(done, outcome);
    }
}

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
    // Records before `next_lsn` are in redb already (recovery applied them).
    let gate = Arc::new(Mutex::new(Gate {
        applied: next_lsn.saturating_sub(1),
        ..Gate::default()
    }));
    let syncer_gate = gate.clone();
    let syncer = std::thread::Builder::new()
        .name("sluice-log-sync".into())
        .spawn(move || sync_loop(log, from_applier, syncer_failed, syncer_gate))
        .ok()?;
    let applier = Applier {
        gate,
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
    gate: Arc<Mutex<Gate>>,
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
        // Encoded ahead of the apply, and synced while it runs, unless a
        // move's record depends on what redb holds: then encoded by the
        // apply and handed over after it.
        let ahead = !changes
            .iter()
            .flatten()
            .any(|c| matches!(c, Change::MoveMessage { .. }));
        let mut buf = Vec::new();
        Log::start_record(&mut buf);
        let mut later = Some(done);
        if ahead {
            for change in changes.iter().flatten() {
                log_record::encode(change, &mut buf);
            }
            let done = later.take().unwrap_or_default();
            self.hand_over(lsn, std::mem::take(&mut buf), done);
        }
        let log = if ahead { None } else { Some(&mut buf) };
        if let Err(e) = self.store.apply(changes.iter().flatten(), lsn, log) {
            let e = e.to_string();
            fail(&self.failed, &e);
            Gate::apply_failed(&self.gate, &e);
            if let Some(done) = later {
                resolve(done, Err(e));
            }
            return;
        }
        // Once applied, `lsn` is taken even if the log fails: a later
        // durable commit (redb's own, at close) may still write it out.
        self.next_lsn += 1;
        self.dirty_since.get_or_insert_with(Instant::now);
        Gate::applied(&self.gate, lsn);
        if let Some(done) = later {
            self.hand_over(lsn, buf, done);
        }
    }

    /// Hands record `lsn` to the syncer, or fails its tickets if the
    /// syncer is gone.
    fn hand_over(&mut self, lsn: u64, buf: Vec<u8>, done: Vec<oneshot::Sender<Outcome>>) {
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

fn sync_loop(
    mut log: Log,
    rx: Receiver<ToSyncer>,
    failed: Arc<AtomicBool>,
    gate: Arc<Mutex<Gate>>,
) {
    let mut waiting: Vec<(u64, Vec<oneshot::Sender<Outcome>>)> = Vec::new();
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
                    waiting.push((lsn, done));
                    records += 1;
                }
                ToSyncer::Rewind => {
                    flush(&mut log, &mut waiting, &mut broken, &failed, &gate);
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
        flush(&mut log, &mut waiting, &mut broken, &failed, &gate);
    }
}

/// Syncs what was written and passes each record's tickets to the gate,
/// which resolves them once the record is applied too; after a failure,
/// resolves them with it.
fn flush(
    log: &mut Log,
    waiting: &mut Vec<(u64, Vec<oneshot::Sender<Outcome>>)>,
    broken: &mut Option<String>,
    failed: &AtomicBool,
    gate: &Mutex<Gate>,
) {
    if waiting.is_empty() && broken.is_none() {
        return;
    }
    if broken.is_none()
        && let Err(e) = log.sync()
    {
        *broken = Some(format!("write-ahead log: {e}"));
    }
    match broken.as_ref() {
        Some(e) => {
            if !failed.swap(true, Ordering::AcqRel) {
                tracing::error!(error = %e, "log write failed; refusing further writes");
            }
            for (_, done) in waiting.drain(..) {
                resolve(done, Err(e.clone()));
            }
        }
        None => {
            for (lsn, done) in waiting.drain(..) {
                Gate::synced(gate, lsn, done);
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
    tracing::error!(error = %error, "commit failed; refusing further writes");
    failed.store(true, Ordering::Release);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ticket() -> (oneshot::Sender<Outcome>, oneshot::Receiver<Outcome>) {
        oneshot::channel()
    }

    /// A record synced before it is applied answers only once applied: a
    /// send must not be answered before a receive can read its body.
    #[test]
    fn a_ticket_waits_for_both_its_sync_and_its_apply() {
        let gate = Mutex::new(Gate::default());
        let (tx, mut rx) = ticket();
        Gate::synced(&gate, 1, vec![tx]);
        assert!(rx.try_recv().is_err(), "answered before applied");
        Gate::applied(&gate, 1);
        assert_eq!(rx.try_recv(), Ok(Ok(())));

        // Applied first: the sync answers at once.
        let (tx, mut rx) = ticket();
        Gate::applied(&gate, 2);
        Gate::synced(&gate, 2, vec![tx]);
        assert_eq!(rx.try_recv(), Ok(Ok(())));

        // Records applied in order release only those up to the mark.
        let (tx3, mut rx3) = ticket();
        let (tx4, mut rx4) = ticket();
        Gate::synced(&gate, 3, vec![tx3]);
        Gate::synced(&gate, 4, vec![tx4]);
        Gate::applied(&gate, 3);
        assert_eq!(rx3.try_recv(), Ok(Ok(())));
        assert!(rx4.try_recv().is_err(), "record 4 is not applied");
    }

    /// A failed apply answers the tickets it holds and every later one
    /// with its error, synced or not.
    #[test]
    fn a_failed_apply_answers_held_and_later_tickets_with_its_error() {
        let gate = Mutex::new(Gate::default());
        let (tx, mut rx) = ticket();
        Gate::synced(&gate, 1, vec![tx]);
        Gate::apply_failed(&gate, "disk full");
        assert_eq!(rx.try_recv(), Ok(Err("disk full".to_string())));
        let (tx, mut rx) = ticket();
        Gate::synced(&gate, 2, vec![tx]);
        assert_eq!(rx.try_recv(), Ok(Err("disk full".to_string())));
    }
}

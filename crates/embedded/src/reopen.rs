//! Reopening the storage in process after a failed write (rule D5).
//!
//! After a failed write or sync the engine refuses writes (rule D3): the
//! index may be ahead of the disk (it can show a batch that was never
//! acknowledged), and the log is never synced again to carry on. Once the
//! storage takes writes again, a refused write (or the sweeper) starts an
//! attempt, at most one every `reopen_interval`, on a thread of its own:
//!
//! 1. a probe file is written and synced: while the disk is still full,
//!    the attempt ends there and the engine stays as it is, serving what
//!    needs no write;
//! 2. the current store and writer are taken out (writes are refused, and
//!    reads of bodies not in memory answer ServiceUnavailable, meanwhile)
//!    and closed once the last request using them lets go: redb refuses
//!    all work after an I/O error until it is opened again, and holds a
//!    lock on its file until it is closed;
//! 3. the storage is opened as at a start: the log replayed from what is
//!    on disk, a new segment begun, the index read back;
//! 4. the index read back replaces each queue's, under every queue's lock
//!    and the registry's at once, and the new store and writer go in: each
//!    change either went to the old writer (refused) before its queue was
//!    replaced, or comes after, made on the index read back. Long polls
//!    are woken to look again.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::body_cache::BodyBudget;
use crate::change::Change;
use crate::engine::{Inner, QueueCell};
use crate::journal::{Core, Ticket};
use crate::open::{Opened, open_storage};
use crate::storage::probe;

/// Longest wait for the requests using the failed store to let it go: a
/// read waiting for redb's applier is the longest, and none waits for
/// more than an apply.
const RELEASE_WAIT: Duration = Duration::from_secs(30);

impl Inner {
    /// Hands `changes` to the journal; a refusal (an earlier write failed)
    /// starts an attempt to reopen the storage when one is due.
    pub(crate) fn submit(&self, changes: Vec<Change>) -> Ticket {
        let ticket = self.journal.submit(changes);
        if ticket.refused() {
            self.reopen_if_due();
        }
        ticket
    }

    /// Starts an attempt to reopen the storage, on its own thread, if a
    /// write failed, none is under way and the last ended at least
    /// `reopen_interval` ago.
    pub(crate) fn reopen_if_due(&self) {
        let Some(r) = &self.reopener else { return };
        if r.running.load(Ordering::Acquire) || self.journal.failure().is_none() {
            return;
        }
        {
            let last = r.last_attempt.lock();
            if last.is_some_and(|at| at.elapsed() < r.options.reopen_interval)
                || r.running.swap(true, Ordering::AcqRel)
            {
                return;
            }
        }
        let Some(inner) = self.me.upgrade() else {
            r.running.store(false, Ordering::Release);
            return;
        };
        let spawned = std::thread::Builder::new()
            .name("sluice-reopen".into())
            .spawn(move || {
                match inner.reopen() {
                    Ok(()) => {}
                    Err(e) => {
                        tracing::warn!(error = %e, "the storage could not be reopened yet; writes stay refused")
                    }
                }
                if let Some(r) = &inner.reopener {
                    *r.last_attempt.lock() = Some(Instant::now());
                    r.running.store(false, Ordering::Release);
                }
            });
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "could not start the thread that reopens the storage");
            r.running.store(false, Ordering::Release);
        }
    }

    /// One attempt (see the module's doc).
    fn reopen(&self) -> Result<(), String> {
        let Some(r) = &self.reopener else {
            return Ok(());
        };
        let Some(cause) = self.journal.failure() else {
            return Ok(());
        };
        probe(&*r.storage, &r.dir)
            .map_err(|e| format!("the storage does not take writes yet: {e}"))?;
        tracing::info!(cause = %cause, "reopening the storage after a failed write");
        let Some(old) = self.journal.replace(Core::closed(&cause, None)) else {
            return Ok(());
        };
        // A data key made just before the failure may never have been
        // stored: the next seal of each queue makes (and stores) a new one.
        self.data_keys.forget_current();
        if let Err(old) = release(old) {
            self.journal.restore(old);
            return Err("requests still hold the failed store".into());
        }
        let budget = (self.budget.clone())
            .unwrap_or_else(|| Arc::new(BodyBudget::new(r.options.body_cache_bytes)));
        match open_storage(
            &r.storage,
            &r.dir,
            &r.options,
            &self.data_keys,
            &budget,
            self.now(),
        ) {
            Ok(opened) => {
                let replayed = opened.stats.log_records;
                self.install(opened);
                // Read back, but the log could not be begun (rule D6).
                if let Some(why) = self.journal.failure() {
                    return Err(why);
                }
                tracing::info!(
                    log_records = replayed,
                    "reopened the storage: writes are accepted again"
                );
                Ok(())
            }
            Err(e) => {
                // The newer cause is what a refused write now names.
                let why = format!("reopening the storage failed: {e}");
                drop(self.journal.replace(Core::closed(&why, None)));
                Err(why)
            }
        }
    }

    /// Puts the index read back in place of each queue's, and the new
    /// store and writer in place of the closed ones, under every lock a
    /// change is made under (see the module's doc).
    fn install(&self, opened: Opened) {
        let Opened { core, index, .. } = opened;
        let mut core = Some(core);
        let mut loaded = index.queues;
        let mut loaded_tasks = Some(index.tasks);
        let mut loaded_idempotency = Some(index.idempotency);
        let cells = loop {
            let mut queues = self.queues.write();
            let mut tasks = self.tasks.lock();
            let mut idempotency = self.idempotency.lock();
            let cells: Vec<(String, Arc<QueueCell>)> = queues
                .iter()
                .map(|(name, cell)| (name.clone(), cell.clone()))
                .collect();
            // A request may hold one queue's lock while it waits for
            // another's: take none rather than wait, and try again.
            let guards: Option<Vec<_>> = cells.iter().map(|(_, c)| c.state.try_lock()).collect();
            let Some(mut guards) = guards else {
                drop((idempotency, tasks, queues));
                std::thread::sleep(Duration::from_millis(1));
                continue;
            };
            for ((name, cell), st) in cells.iter().zip(guards.iter_mut()) {
                st.clear();
                match loaded.remove(name) {
                    Some((id, state)) if id == cell.id => {
                        **st = state;
                        cell.publish_policy(st);
                    }
                    other => {
                        // Made or replaced by a change that was refused.
                        st.deleted = true;
                        queues.remove(name);
                        if let Some((id, state)) = other {
                            queues.insert(name.clone(), Arc::new(QueueCell::new(id, state)));
                        }
                    }
                }
            }
            for (name, (id, state)) in std::mem::take(&mut loaded) {
                queues.insert(name, Arc::new(QueueCell::new(id, state)));
            }
            self.next_seq.fetch_max(index.next_seq, Ordering::SeqCst);
            self.next_queue_id
                .fetch_max(index.next_queue_id, Ordering::SeqCst);
            *tasks = loaded_tasks.take().unwrap_or_default();
            *idempotency = loaded_idempotency
                .take()
                .unwrap_or_default()
                .into_iter()
                .collect();
            if let Some(core) = core.take() {
                drop(self.journal.replace(core));
            }
            drop(guards);
            break cells
                .iter()
                .map(|(_, cell)| cell.clone())
                .collect::<Vec<_>>();
        };
        for cell in cells {
            cell.arrivals.notify_waiters();
        }
    }
}

/// Closes `core` once no request uses it any more (its threads stop, its
/// store shuts); gives it back after [`RELEASE_WAIT`].
fn release(mut core: Arc<Core>) -> Result<(), Arc<Core>> {
    let began = Instant::now();
    loop {
        match Arc::try_unwrap(core) {
            Ok(core) => {
                drop(core);
                return Ok(());
            }
            Err(held) if began.elapsed() < RELEASE_WAIT => {
                core = held;
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(held) => return Err(held),
        }
    }
}

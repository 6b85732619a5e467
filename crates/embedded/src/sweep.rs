//! The background sweeper: retention, due timers and idle cache entries of
//! every queue, even when no request comes.

use std::sync::{Arc, Weak};
use std::time::Duration;

use sluice_core::clock::Millis;

use crate::engine::{EmbeddedBroker, Inner, QueueCell};

/// How often the background sweeper applies retention and wakes waiters.
const SWEEP_INTERVAL: Duration = Duration::from_secs(1);

/// A cached body older than this may go when the budget is over half used,
/// so queues nobody reads give the budget back to those being read.
const CACHE_IDLE_MS: Millis = 10_000;

impl EmbeddedBroker {
    /// Starts the background task that applies retention and wakes long
    /// polls whose messages became visible, even when no request comes.
    /// Must be called inside a Tokio runtime; stops when the engine is dropped.
    pub fn start_sweeper(&self) -> tokio::task::JoinHandle<()> {
        start(&self.inner)
    }

    /// Applies retention and due timers to every queue now.
    pub fn sweep(&self) {
        self.inner.sweep();
    }
}

/// Starts the task that sweeps `inner` every [`SWEEP_INTERVAL`]; it ends
/// when the engine is dropped.
pub(crate) fn start(inner: &Arc<Inner>) -> tokio::task::JoinHandle<()> {
    let weak: Weak<Inner> = Arc::downgrade(inner);
    tokio::spawn(async move {
        let mut interval = tokio::time::interval(SWEEP_INTERVAL);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            interval.tick().await;
            let Some(inner) = weak.upgrade() else { break };
            inner.sweep();
        }
    })
}

impl Inner {
    pub(crate) fn sweep(&self) {
        // A failed write is followed by attempts to reopen the storage
        // even when no write comes to start one.
        self.reopen_if_due();
        let now = self.now();
        let cells: Vec<Arc<QueueCell>> = self.queues.read().values().cloned().collect();
        for cell in cells {
            let woke = {
                let mut st = cell.state.lock();
                let mut changes = Vec::new();
                let woke = self.tick(&cell, &mut st, now, &mut changes);
                st.trim_cache(now.saturating_sub(CACHE_IDLE_MS));
                // Retention deletes need no waiter: nobody answers from them.
                // An idle queue sends the writer nothing.
                if !changes.is_empty() {
                    drop(self.submit(changes));
                }
                woke
            };
            if woke {
                cell.arrivals.notify_waiters();
            }
        }
        self.expire_data_keys(now);
        self.expire_idempotency(now);
    }
}

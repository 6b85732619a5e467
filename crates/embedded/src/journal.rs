//! Group commit: one writer thread turns many requests' changes into one
//! transaction and one fsync.
//!
//! Requests hand their changes to [`Journal::submit`] while they still hold
//! their queue's lock, so the journal sees each queue's changes in the order
//! the index made them. The writer drains everything pending, commits it at
//! once, then wakes every request in the batch. A request answers its client
//! only after its [`Ticket`] resolves: no response before its changes are
//! durable.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;

use sluice_core::{ErrorCode, SqsError};
use tokio::sync::oneshot;

use crate::store::{Change, Store, StoreError};

/// Most changes one commit takes before the writer commits and comes back
/// for more; bounds the latency a huge backlog of work adds to one batch.
const MAX_CHANGES_PER_COMMIT: usize = 20_000;

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
    /// Starts the writer thread over an open store.
    pub fn durable(store: Store) -> Self {
        let (tx, rx) = mpsc::channel::<Pending>();
        let failed = Arc::new(AtomicBool::new(false));
        let thread_failed = failed.clone();
        let thread = std::thread::Builder::new()
            .name("sluice-journal".into())
            .spawn(move || write_loop(store, rx, thread_failed))
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

fn write_loop(store: Store, rx: mpsc::Receiver<Pending>, failed: Arc<AtomicBool>) {
    let mut batch: Vec<Pending> = Vec::new();
    while let Ok(first) = rx.recv() {
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
            store
                .apply(batch.iter().flat_map(|p| p.changes.iter()))
                .map_err(|e| e.to_string())
        };
        if let Err(e) = &result {
            // After a failed commit the index is ahead of the disk; refuse
            // further writes rather than answer from state that may vanish.
            tracing::error!(error = %e, "commit failed; refusing further writes");
            failed.store(true, Ordering::Release);
        }
        for pending in batch.drain(..) {
            let _ = pending.done.send(result.clone());
        }
    }
}

//! What passes between the journal, the log writer and the applier:
//! pending changes and their tickets' outcomes, the applier's work, and
//! how a failure is reported.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::SyncSender;

use parking_lot::Mutex;
use tokio::sync::oneshot;

use crate::change::Change;

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

/// What the writer hands the applier.
pub(super) enum ToApplier {
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
pub(super) struct Checkpointed {
    /// The segments that still hold a stored message's data.
    pub(super) live: BTreeSet<u64>,
    /// Whether compaction has work, or sparse segments are still being
    /// drained: its result is made durable, the segments it emptied
    /// deleted, and drained ones seen to settle, only by another checkpoint.
    pub(super) compacting: bool,
}

pub(super) fn resolve(done: impl IntoIterator<Item = oneshot::Sender<Outcome>>, outcome: Outcome) {
    for done in done {
        let _ = done.send(outcome.clone());
    }
}

/// Whether a write to storage failed, and the first failure's cause.
///
/// After a failed write or sync the index is ahead of the disk, and after
/// a failed `fdatasync` what the log holds is unknown: the kernel may have
/// dropped the pages it could not write and will report the next sync as
/// a success without them. So the log is never synced again to carry on
/// (that would acknowledge records after a hole): every later write is
/// refused, and the log is read back from what is on disk when the engine
/// reopens its storage (`crate::reopen`).
#[derive(Debug, Default)]
pub(crate) struct Failure {
    failed: AtomicBool,
    why: Mutex<Option<String>>,
}

impl Failure {
    /// Records that a write failed with `error` (the first one counts).
    pub(crate) fn fail(&self, error: &str) {
        let mut why = self.why.lock();
        if why.is_none() {
            tracing::error!(error = %error, "commit failed; refusing further writes");
            *why = Some(error.to_string());
        }
        self.failed.store(true, Ordering::Release);
    }

    /// Whether a write failed.
    pub(crate) fn is_set(&self) -> bool {
        self.failed.load(Ordering::Acquire)
    }

    /// The first failure's cause, once a write failed.
    pub(crate) fn cause(&self) -> Option<String> {
        if self.is_set() {
            self.why.lock().clone()
        } else {
            None
        }
    }

    /// The answer to a write refused after the failure.
    pub(crate) fn refusal(&self) -> String {
        let why = self.why.lock().clone().unwrap_or_default();
        crate::store::StoreError::Failed(why).to_string()
    }
}

//! Queue rows as this node last read them, for at most [`QUEUE_TTL`]: the
//! hot actions (send, receive, delete) and GetQueue (which the server calls
//! before every send and receive) read a queue from here instead of a
//! statement each. SQS itself documents that attribute
//! changes take a while to reach every server; here another node's change
//! shows within [`QUEUE_TTL`], this node's own at once. A send to a queue
//! deleted meanwhile still fails: its insert finds no queue row to hold.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::rows::QueueRow;

/// How long a node trusts a queue row it read.
pub(crate) const QUEUE_TTL: Duration = Duration::from_secs(1);

/// Queue rows by name, each with when it was read.
#[derive(Default)]
pub(crate) struct QueueCache {
    rows: Mutex<HashMap<String, (Arc<QueueRow>, Instant)>>,
}

impl QueueCache {
    /// The row of `name` if read less than [`QUEUE_TTL`] ago.
    pub fn get(&self, name: &str) -> Option<Arc<QueueRow>> {
        let rows = self.rows.lock();
        let (row, at) = rows.get(name)?;
        (at.elapsed() < QUEUE_TTL).then(|| row.clone())
    }

    /// Remembers a row just read.
    pub fn put(&self, row: Arc<QueueRow>) {
        let mut rows = self.rows.lock();
        // Forget rows nobody asked for lately, so deleted queues leave.
        if rows.len() > 1024 {
            rows.retain(|_, (_, at)| at.elapsed() < QUEUE_TTL);
        }
        rows.insert(row.name.clone(), (row, Instant::now()));
    }

    /// Forgets `name` (changed or deleted by this node).
    pub fn forget(&self, name: &str) {
        self.rows.lock().remove(name);
    }

    /// Marks `name` fair (this node just sent it a grouped message).
    pub fn mark_fair(&self, name: &str) {
        if let Some((row, _)) = self.rows.lock().get_mut(name) {
            Arc::make_mut(row).fair = true;
        }
    }
}

//! What a node has added to the shared activity totals so far: the state
//! its flushes keep (the flushing is activity_sync.rs's).

use std::collections::HashMap;

/// The counters, in the order of the table's columns.
pub(crate) type Counts = [u64; 8];

/// What a node counted and has not yet added to the shared totals.
#[derive(Default)]
pub(crate) struct Flusher {
    /// The counters as last added, by queue id.
    pub(crate) flushed: HashMap<i64, Counts>,
}

//! Per-queue activity counters of this node since it started (rule M1),
//! kept in memory: with several nodes each counts what it served.

use std::sync::atomic::{AtomicU64, Ordering};

/// Counters of one queue.
#[derive(Debug, Default)]
pub struct Activity {
    /// Messages stored by sends, and moved in by dead-lettering or redrive.
    pub sent: AtomicU64,
    /// Bytes of messages sent.
    pub sent_bytes: AtomicU64,
    /// Messages delivered.
    pub received: AtomicU64,
    /// Messages deleted by consumers.
    pub deleted: AtomicU64,
    /// Receives that returned nothing.
    pub empty_receives: AtomicU64,
    /// Messages moved to the dead-letter queue.
    pub dead_lettered: AtomicU64,
    /// Messages moved out by a redrive.
    pub redriven: AtomicU64,
    /// Messages deleted by retention.
    pub expired: AtomicU64,
}

/// Adds `n` to a counter.
pub fn add(counter: &AtomicU64, n: u64) {
    if n > 0 {
        counter.fetch_add(n, Ordering::Relaxed);
    }
}

/// Reads a counter.
pub fn get(counter: &AtomicU64) -> u64 {
    counter.load(Ordering::Relaxed)
}

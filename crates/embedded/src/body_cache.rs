//! The byte budget of message bodies the durable engine keeps in memory.
//!
//! In durable mode the index holds a body only while it is recent: a send
//! caches it so a receive soon after needs no read from disk, and each queue
//! drops its oldest cached bodies (first in, first out) whenever the total
//! across queues is over the budget. A message without a cached body is
//! read from disk (its log segment, or redb for older records) when a
//! receive, peek or redrive needs it. In-memory mode
//! has no budget: there the index is the only copy.

use std::sync::atomic::{AtomicUsize, Ordering};

use sluice_core::message::message_size;

use crate::message::MessageData;

/// Per-body overhead counted on top of the body and attributes: the struct,
/// its allocations and the allocator's headers, roughly.
const OVERHEAD: usize = 160;

/// The shared budget of cached body bytes.
#[derive(Debug)]
pub struct BodyBudget {
    limit: usize,
    used: AtomicUsize,
}

impl BodyBudget {
    /// A budget of `limit` bytes.
    pub fn new(limit: usize) -> Self {
        Self {
            limit,
            used: AtomicUsize::new(0),
        }
    }

    /// The bytes a cached body counts for.
    pub fn weight(data: &MessageData) -> usize {
        message_size(&data.body, &data.attributes)
            + message_size("", &data.system_attributes)
            + OVERHEAD
    }

    /// Counts a body in.
    pub fn add(&self, bytes: usize) {
        self.used.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Counts a body out.
    pub fn sub(&self, bytes: usize) {
        self.used.fetch_sub(bytes, Ordering::Relaxed);
    }

    /// True when a body of `weight` bytes queued behind `ahead` ready
    /// messages could still be cached when a receive reaches it: bodies
    /// leave the cache oldest first, so behind more messages than the
    /// budget holds it would be evicted unread, after costing its insert
    /// and the eviction of another body.
    pub fn reachable(&self, ahead: usize, weight: usize) -> bool {
        ahead.saturating_mul(weight) <= self.limit
    }

    /// True while more is cached than the budget allows.
    pub fn over(&self) -> bool {
        self.used.load(Ordering::Relaxed) > self.limit
    }

    /// True while more than half the budget is in use.
    pub fn over_half(&self) -> bool {
        self.used.load(Ordering::Relaxed) > self.limit / 2
    }

    /// Bytes cached now.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }
}

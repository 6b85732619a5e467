//! Per-queue activity counters since the server started (rule M1), kept
//! outside any queue lock so that reading them never waits. Each engine
//! keeps them in memory; with several nodes each counts what it served.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::types::{FairStats, QueueCounts, QueueStats};

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
    /// Of those, the ones whose last failure had a class, by class (rule X7).
    dead_lettered_by_class: Mutex<BTreeMap<String, u64>>,
    /// Messages moved out by a redrive.
    pub redriven: AtomicU64,
    /// Messages deleted by retention.
    pub expired: AtomicU64,
    /// FIFO sends answered as duplicates.
    pub deduplicated: AtomicU64,
}

impl Activity {
    /// The queue's statistics: these counters with its counts and the age
    /// of its oldest message (the engine adds its groups in flight).
    pub fn stats(&self, counts: QueueCounts, oldest_age_ms: u64) -> QueueStats {
        QueueStats {
            counts,
            oldest_age_ms,
            sent: get(&self.sent),
            sent_bytes: get(&self.sent_bytes),
            received: get(&self.received),
            deleted: get(&self.deleted),
            empty_receives: get(&self.empty_receives),
            dead_lettered: get(&self.dead_lettered),
            dead_lettered_by_class: self.dead_lettered_by_class(),
            redriven: get(&self.redriven),
            expired: get(&self.expired),
            deduplicated: get(&self.deduplicated),
            groups_in_flight: 0,
            awaiting_archive: 0,
            fair: FairStats::default(),
        }
    }
}

impl Activity {
    /// Counts one message moved to the dead-letter queue, whose last
    /// failure had `class` (rule X7).
    pub fn dead_lettered_as(&self, class: Option<&str>) {
        add(&self.dead_lettered, 1);
        if let Some(class) = class {
            *self.by_class().entry(class.to_string()).or_default() += 1;
        }
    }

    /// The messages moved to the dead-letter queue with a class, by class.
    pub fn dead_lettered_by_class(&self) -> Vec<(String, u64)> {
        self.by_class()
            .iter()
            .map(|(class, n)| (class.clone(), *n))
            .collect()
    }

    fn by_class(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, u64>> {
        // A panic elsewhere while counting leaves the counts usable.
        self.dead_lettered_by_class
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
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

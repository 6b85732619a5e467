//! Time: due timers making messages ready, retention, visibility changes.

use sluice_core::clock::Millis;

use super::entry::{Entry, Phase};
use super::state::QueueState;

/// What [`QueueState::tick`] did.
#[derive(Debug, Default)]
pub struct Tick {
    /// Sequences retention removed, to delete durably.
    pub expired: Vec<u64>,
    /// Messages retention removed and held for the archive (rule X8).
    pub held: usize,
    /// True when a message became ready.
    pub woke: bool,
}

impl QueueState {
    /// Moves due timers to ready and removes messages past retention:
    /// deleted, or held for the archive when the queue keeps what expires
    /// (rule X8).
    pub fn tick(&mut self, now: Millis) -> Tick {
        if let Some(fair) = &mut self.fair {
            fair.observe(now);
        }
        let retention_ms = u64::from(self.meta.config.message_retention_period) * 1000;
        let archive = self.meta.config.archive_expired;
        let mut expired = Vec::new();
        let mut held = 0;
        while let Some(&(enqueued_at, seq)) = self.by_age.first() {
            if enqueued_at.saturating_add(retention_ms) > now {
                break;
            }
            match self.remove(seq) {
                // Rule X8: kept, out of the queue, until the archive has it.
                Some(removed) if archive => {
                    self.expired.insert(seq, removed);
                    held += 1;
                }
                Some(_) => expired.push(seq),
                None => {
                    // Not indexed: drop the stray age entry rather than spin.
                    self.by_age.pop_first();
                    expired.push(seq);
                }
            }
        }
        let mut woke = false;
        while let Some(&(due, seq)) = self.timers.first() {
            if due > now {
                break;
            }
            self.timers.pop_first();
            if let Some(mut entry) = self.entries.remove(&seq) {
                match entry.phase {
                    Phase::Delayed => self.delayed -= 1,
                    Phase::InFlight => {
                        self.in_flight -= 1;
                        self.left_flight(&entry);
                    }
                    Phase::Ready => {}
                }
                self.make_ready(seq, &mut entry);
                self.place(seq, &entry);
                self.entries.insert(seq, entry);
                woke = true;
            }
        }
        Tick {
            expired,
            held,
            woke,
        }
    }

    /// Marks a message ready, at the back of the queue if it has earned it.
    pub(super) fn make_ready(&mut self, seq: u64, entry: &mut Entry) {
        entry.phase = Phase::Ready;
        if entry.at_back {
            self.sent_back += 1;
            let order = (self.newest_seq, self.sent_back);
            self.back_order.insert(seq, order);
            self.back_seq.insert(order, seq);
        }
    }

    /// When the next delayed or in-flight message becomes ready.
    pub fn next_due(&self) -> Option<Millis> {
        self.timers.first().map(|&(due, _)| due)
    }

    /// Sets an in-flight message's visibility to end at `visible_at`
    /// (rule V5); at or before `now` it is ready at once.
    pub fn set_visibility(&mut self, seq: u64, visible_at: Millis, now: Millis) {
        let Some(mut entry) = self.entries.remove(&seq) else {
            return;
        };
        self.unplace(seq, &entry);
        entry.visible_at = visible_at;
        if visible_at <= now {
            self.make_ready(seq, &mut entry);
        } else {
            entry.phase = Phase::InFlight;
        }
        self.place(seq, &entry);
        self.entries.insert(seq, entry);
    }
}

//! Verification: which messages were acknowledged, received (how often) and
//! deleted, one byte per message.
//!
//! Producers and consumers update it once per batch under one lock; at the
//! batch rates a 2-core machine reaches this costs microseconds per second.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::body::MessageKey;

/// The send was acknowledged.
const ACKED: u8 = 0x80;
/// A delete of the message succeeded.
const DELETED: u8 = 0x40;
/// How many times the message was received (saturating).
const COUNT: u8 = 0x3f;

/// The state of every message of a run.
pub struct Tracker {
    /// Per producer: how many counters it has handed out, so a body naming a
    /// counter not yet issued is not ours and cannot make the state grow.
    issued: Vec<AtomicU64>,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// Per producer, per counter: the state bits.
    states: Vec<Vec<u8>>,
    acked: u64,
    /// Messages both acknowledged and deleted.
    complete: u64,
}

/// The verdict at the end of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Verdict {
    /// Acknowledged sends never received.
    pub lost: u64,
    /// Messages received more than once.
    pub duplicates: u64,
    /// Messages received whose send had not been acknowledged (the send
    /// failed or timed out after the server stored it).
    pub received_unacked: u64,
    /// Messages acknowledged, received and deleted.
    pub complete: u64,
}

impl Tracker {
    /// A tracker for `producers` producers.
    pub fn new(producers: usize) -> Self {
        Self {
            issued: (0..producers).map(|_| AtomicU64::new(0)).collect(),
            inner: Mutex::new(Inner {
                states: vec![Vec::new(); producers],
                ..Inner::default()
            }),
        }
    }

    /// Producer `producer` is about to send counters below `upto`.
    pub fn issue(&self, producer: u32, upto: u64) {
        if let Some(issued) = self.issued.get(producer as usize) {
            issued.fetch_max(upto, Ordering::Release);
        }
    }

    /// Whether `key` names a message a producer of this run has sent.
    pub fn is_issued(&self, key: MessageKey) -> bool {
        self.issued
            .get(key.producer as usize)
            .is_some_and(|issued| key.counter < issued.load(Ordering::Acquire))
    }

    /// The endpoint acknowledged these sends.
    pub fn acked(&self, keys: impl IntoIterator<Item = MessageKey>) {
        let mut inner = self.lock();
        for key in keys {
            let state = inner.slot(key);
            if *state & ACKED == 0 {
                *state |= ACKED;
                let finished = *state & DELETED != 0;
                inner.acked += 1;
                if finished {
                    inner.complete += 1;
                }
            }
        }
    }

    /// These messages were received (each key once per delivery).
    pub fn received(&self, keys: impl IntoIterator<Item = MessageKey>) {
        let mut inner = self.lock();
        for key in keys {
            let state = inner.slot(key);
            if *state & COUNT < COUNT {
                *state += 1;
            }
        }
    }

    /// Deletes of these messages succeeded.
    pub fn deleted(&self, keys: impl IntoIterator<Item = MessageKey>) {
        let mut inner = self.lock();
        for key in keys {
            let state = inner.slot(key);
            if *state & DELETED == 0 {
                *state |= DELETED;
                let finished = *state & ACKED != 0;
                if finished {
                    inner.complete += 1;
                }
            }
        }
    }

    /// Whether every acknowledged message has been deleted.
    pub fn all_complete(&self) -> bool {
        let inner = self.lock();
        inner.complete >= inner.acked
    }

    /// Counts lost, duplicated and unexpected messages.
    pub fn verdict(&self) -> Verdict {
        let inner = self.lock();
        let mut verdict = Verdict {
            complete: inner.complete,
            ..Verdict::default()
        };
        for state in inner.states.iter().flatten() {
            let count = state & COUNT;
            let acked = state & ACKED != 0;
            if acked && count == 0 {
                verdict.lost += 1;
            }
            if count > 1 {
                verdict.duplicates += 1;
            }
            if !acked && count > 0 {
                verdict.received_unacked += 1;
            }
        }
        verdict
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panicking worker cannot leave the bytes half-updated in a way
        // that matters for counting, so a poisoned lock is still usable.
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Inner {
    /// The state byte of `key`, growing the producer's vector as needed.
    /// Callers only pass keys that [`Tracker::is_issued`] accepted (or that a
    /// producer sent), so growth is bounded by what was sent.
    fn slot(&mut self, key: MessageKey) -> &mut u8 {
        let producer = key.producer as usize;
        if producer >= self.states.len() {
            self.states.resize_with(producer + 1, Vec::new);
        }
        let states = &mut self.states[producer];
        let index = usize::try_from(key.counter).unwrap_or(usize::MAX);
        if index >= states.len() {
            states.resize(index.saturating_add(1), 0);
        }
        &mut states[index]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(producer: u32, counter: u64) -> MessageKey {
        MessageKey { producer, counter }
    }

    #[test]
    fn lost_duplicates_and_unacked() {
        let t = Tracker::new(2);
        t.issue(0, 4);
        t.issue(1, 1);
        t.acked([key(0, 0), key(0, 1), key(0, 2)]);
        t.received([key(0, 0), key(0, 1), key(0, 1), key(1, 0)]);
        t.deleted([key(0, 0), key(0, 1), key(1, 0)]);
        assert!(!t.all_complete());
        let v = t.verdict();
        assert_eq!(v.lost, 1, "0/2 was acknowledged and never received");
        assert_eq!(v.duplicates, 1, "0/1 was received twice");
        assert_eq!(v.received_unacked, 1, "1/0 was never acknowledged");
        assert_eq!(v.complete, 2);
    }

    #[test]
    fn a_receive_before_the_ack_counts_once_acked() {
        let t = Tracker::new(1);
        t.issue(0, 1);
        t.received([key(0, 0)]);
        t.deleted([key(0, 0)]);
        t.acked([key(0, 0)]);
        assert!(t.all_complete());
        assert_eq!(t.verdict().complete, 1);
        assert_eq!(t.verdict().lost, 0);
    }

    #[test]
    fn only_issued_keys_are_ours() {
        let t = Tracker::new(1);
        t.issue(0, 10);
        assert!(t.is_issued(key(0, 9)));
        assert!(!t.is_issued(key(0, 10)));
        assert!(!t.is_issued(key(1, 0)));
    }
}

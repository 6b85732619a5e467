//! The FIFO deduplication window (rule F2): a deduplication id seen in the
//! last five minutes maps to the message it first enqueued, whether or not
//! that message still exists.

use std::collections::{BTreeSet, HashMap};

use sluice_core::clock::Millis;

/// How long a deduplication id is remembered.
pub const WINDOW_MS: u64 = 5 * 60 * 1000;

/// What a deduplication id first enqueued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen {
    /// The first message's id.
    pub message_id: [u8; 16],
    /// The first message's sequence number.
    pub seq: u64,
    /// When the id is forgotten.
    pub expires_at: Millis,
}

impl Seen {
    /// The durable form.
    pub fn encode(&self) -> [u8; 32] {
        let mut out = [0u8; 32];
        out[..16].copy_from_slice(&self.message_id);
        out[16..24].copy_from_slice(&self.seq.to_be_bytes());
        out[24..].copy_from_slice(&self.expires_at.to_be_bytes());
        out
    }

    /// Reads the durable form.
    pub fn decode(bytes: &[u8]) -> Option<Self> {
        if bytes.len() != 32 {
            return None;
        }
        Some(Self {
            message_id: bytes[..16].try_into().ok()?,
            seq: u64::from_be_bytes(bytes[16..24].try_into().ok()?),
            expires_at: u64::from_be_bytes(bytes[24..].try_into().ok()?),
        })
    }
}

/// One queue's window.
#[derive(Debug, Default)]
pub struct DedupWindow {
    seen: HashMap<String, Seen>,
    by_expiry: BTreeSet<(Millis, String)>,
}

impl DedupWindow {
    /// The key of a deduplication id in a scope: the whole queue, or the
    /// message group (`DeduplicationScope=messageGroup`).
    pub fn key(per_group: bool, group: &str, dedup_id: &str) -> String {
        if per_group {
            format!("{group}\u{0}{dedup_id}")
        } else {
            dedup_id.to_string()
        }
    }

    /// The message a live key first enqueued.
    pub fn get(&self, key: &str, now: Millis) -> Option<Seen> {
        self.seen.get(key).filter(|s| s.expires_at > now).copied()
    }

    /// Remembers a key.
    pub fn insert(&mut self, key: String, seen: Seen) {
        if let Some(old) = self.seen.insert(key.clone(), seen) {
            self.by_expiry.remove(&(old.expires_at, key.clone()));
        }
        self.by_expiry.insert((seen.expires_at, key));
    }

    /// Forgets every key and returns them (PurgeQueue, rule F11).
    pub fn clear(&mut self) -> Vec<String> {
        self.by_expiry.clear();
        self.seen.drain().map(|(key, _)| key).collect()
    }

    /// Forgets expired keys and returns them.
    pub fn expire(&mut self, now: Millis) -> Vec<String> {
        let mut gone = Vec::new();
        while let Some((at, _)) = self.by_expiry.first() {
            if *at > now {
                break;
            }
            if let Some((_, key)) = self.by_expiry.pop_first() {
                self.seen.remove(&key);
                gone.push(key);
            }
        }
        gone
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f2_window_edges() {
        let mut w = DedupWindow::default();
        let seen = Seen {
            message_id: [1; 16],
            seq: 7,
            expires_at: 1000 + WINDOW_MS,
        };
        w.insert("k".into(), seen);
        assert_eq!(w.get("k", 1000 + WINDOW_MS - 1), Some(seen));
        assert_eq!(w.get("k", 1000 + WINDOW_MS), None);
        assert!(w.expire(1000 + WINDOW_MS - 1).is_empty());
        assert_eq!(w.expire(1000 + WINDOW_MS), vec!["k".to_string()]);
        assert_eq!(Seen::decode(&seen.encode()), Some(seen));
        assert_ne!(
            DedupWindow::key(true, "g", "d"),
            DedupWindow::key(false, "g", "d")
        );
    }
}

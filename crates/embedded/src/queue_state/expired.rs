//! The messages retention took out of a queue that keeps what expires
//! (rule X8), held until the archive has them.

use super::entry::Removed;
use super::state::QueueState;

impl QueueState {
    /// Up to `max` held expired messages, oldest sequence first.
    pub fn expired_held(&self, max: usize) -> Vec<Removed> {
        self.expired.values().take(max).cloned().collect()
    }

    /// How many expired messages wait for the archive.
    pub fn expired_count(&self) -> usize {
        self.expired.len()
    }

    /// Forgets held expired messages (the archive has them); returns the
    /// sequences that were held, to delete durably.
    pub fn forget_expired(&mut self, seqs: &[u64]) -> Vec<u64> {
        seqs.iter()
            .copied()
            .filter(|seq| self.expired.remove(seq).is_some())
            .collect()
    }
}

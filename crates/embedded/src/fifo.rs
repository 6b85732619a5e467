//! FIFO queues' per-group order (rule F1): each group's messages in send
//! order. A group delivers only from its head, and not at all while its
//! head is in flight (rule F13).

use std::collections::{HashMap, VecDeque};

/// The groups of one FIFO queue.
#[derive(Debug, Default)]
pub struct Lanes {
    lanes: HashMap<String, VecDeque<u64>>,
}

impl Lanes {
    /// Adds a message to its group, keeping the group in sequence order.
    pub fn insert(&mut self, group: &str, seq: u64) {
        let lane = self.lanes.entry(group.to_string()).or_default();
        // Sends append; only recovery and dead-letter put-backs go elsewhere.
        if lane.back().is_none_or(|&last| last < seq) {
            lane.push_back(seq);
        } else {
            let at = lane.partition_point(|&s| s < seq);
            lane.insert(at, seq);
        }
    }

    /// Removes a message from its group.
    pub fn remove(&mut self, group: &str, seq: u64) {
        if let Some(lane) = self.lanes.get_mut(group) {
            if lane.front() == Some(&seq) {
                lane.pop_front();
            } else if let Some(at) = lane.iter().position(|&s| s == seq) {
                lane.remove(at);
            }
            if lane.is_empty() {
                self.lanes.remove(group);
            }
        }
    }

    /// The sequence at `position` in the group's order.
    pub fn at(&self, group: &str, position: usize) -> Option<u64> {
        self.lanes.get(group)?.get(position).copied()
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.lanes.clear();
    }
}

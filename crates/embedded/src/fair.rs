//! Fair delivery for standard queues whose messages carry a
//! `MessageGroupId` (SQS "fair queues"): ready messages are served one group
//! at a time in turn, so a group that floods the queue cannot make the
//! others wait behind its backlog. Messages without a group form one group.

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};

/// Ready messages (by their place in the queue, `K`) by group, and the
/// order in which groups take turns.
#[derive(Debug)]
pub struct FairReady<K> {
    by_group: HashMap<String, BTreeSet<K>>,
    turns: VecDeque<String>,
    queued: HashSet<String>,
}

impl<K> Default for FairReady<K> {
    fn default() -> Self {
        Self {
            by_group: HashMap::new(),
            turns: VecDeque::new(),
            queued: HashSet::new(),
        }
    }
}

impl<K: Ord + Copy> FairReady<K> {
    /// A message became ready.
    pub fn add(&mut self, group: &str, seq: K) {
        self.by_group
            .entry(group.to_string())
            .or_default()
            .insert(seq);
        if self.queued.insert(group.to_string()) {
            self.turns.push_back(group.to_string());
        }
    }

    /// A message stopped being ready.
    pub fn remove(&mut self, group: &str, seq: K) {
        if let Some(set) = self.by_group.get_mut(group) {
            set.remove(&seq);
            if set.is_empty() {
                // Its turn entry is dropped lazily when it comes up.
                self.by_group.remove(group);
            }
        }
    }

    /// The oldest ready message of the group whose turn it is; that group
    /// goes to the back of the line.
    pub fn next(&mut self) -> Option<K> {
        while let Some(group) = self.turns.pop_front() {
            match self
                .by_group
                .get(&group)
                .and_then(|set| set.first().copied())
            {
                Some(seq) => {
                    self.turns.push_back(group);
                    return Some(seq);
                }
                None => {
                    self.queued.remove(&group);
                }
            }
        }
        None
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.by_group.clear();
        self.turns.clear();
        self.queued.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_take_turns() {
        let mut f = FairReady::<u64>::default();
        for seq in 1..=5 {
            f.add("noisy", seq);
        }
        f.add("quiet", 6);
        let mut order = Vec::new();
        while let Some(seq) = f.next() {
            order.push(seq);
            let group = if seq == 6 { "quiet" } else { "noisy" };
            f.remove(group, seq);
        }
        assert_eq!(order, [1, 6, 2, 3, 4, 5]);
    }
}

//! The queue's side of the body cache: counting its cached bodies
//! against the shared budget, evicting the oldest, trimming idle ones.

use sluice_core::clock::Millis;

use super::entry::Entry;
use super::state::QueueState;
use crate::body_cache::BodyBudget;

impl QueueState {
    pub(super) fn count_cached(&mut self, seq: u64, entry: &Entry, now: Millis) {
        let (Some(cache), Some(body)) = (&self.cache, &entry.body) else {
            return;
        };
        cache.add(BodyBudget::weight(body));
        self.cached.push_back((seq, now));
        self.cached_live += 1;
        // Deleted messages leave stale sequences behind; sweep them out
        // before they outnumber the live ones.
        if self.cached.len() > 2 * self.cached_live + 1024 {
            let entries = &self.entries;
            self.cached
                .retain(|(s, _)| *s == seq || entries.get(s).is_some_and(|e| e.body.is_some()));
        }
    }

    pub(super) fn uncount_cached(&mut self, entry: &Entry) {
        if let (Some(cache), Some(body)) = (&self.cache, &entry.body) {
            cache.sub(BodyBudget::weight(body));
            self.cached_live -= 1;
        }
    }

    /// Drops this queue's oldest cached bodies while the budget is over.
    pub(super) fn evict_over_budget(&mut self) {
        while self.cache.as_ref().is_some_and(|c| c.over()) {
            if !self.evict_oldest() {
                break;
            }
        }
    }

    /// Drops the oldest cached body; false when none is left.
    pub(super) fn evict_oldest(&mut self) -> bool {
        while let Some((seq, _)) = self.cached.pop_front() {
            if let Some(entry) = self.entries.get_mut(&seq)
                && let Some(body) = entry.body.take()
            {
                if let Some(cache) = &self.cache {
                    cache.sub(BodyBudget::weight(&body));
                }
                self.cached_live -= 1;
                return true;
            }
        }
        false
    }

    /// Lets go of bodies cached before `before` while more than half the
    /// budget is in use, so a queue nobody reads does not keep the budget
    /// from the busy ones. Returns how many were dropped.
    pub fn trim_cache(&mut self, before: Millis) -> usize {
        let mut dropped = 0;
        while self.cache.as_ref().is_some_and(|c| c.over_half())
            && self.cached.front().is_some_and(|&(_, at)| at < before)
        {
            if !self.evict_oldest() {
                break;
            }
            dropped += 1;
        }
        dropped
    }

    /// Bodies cached now (for tests).
    #[cfg(test)]
    pub(super) fn cached_bodies(&self) -> usize {
        self.cached_live
    }
}

//! Queue policies as parsed, by queue: the access check reads the policy
//! of every queue a request names, and parsing a document costs far more
//! than comparing it with the one parsed before. An entry is keyed by the
//! document's text, which the engine gives with the queue, so a policy
//! changed anywhere (through another node too) is parsed again the first
//! time it is read: there is nothing to invalidate, and no request is
//! checked against a policy the engine no longer holds.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::document::{Policy, Refused};

/// How many queues' policies are kept; past it, all are dropped and read
/// again (deleted queues leave that way too).
const MAX_QUEUES: usize = 1024;

/// A parsed document, or why it cannot be enforced.
pub type Parsed = Arc<Result<Policy, Refused>>;

/// The parsed policy of each queue whose policy was read, with its text.
#[derive(Debug, Default)]
pub struct PolicyCache {
    by_queue: Mutex<HashMap<String, (String, Parsed)>>,
}

impl PolicyCache {
    /// `document`, the policy of the queue stored under `queue_key`, as
    /// [`Policy::parse`] reads it; parsed only when it is not the text
    /// parsed for that queue last.
    pub fn parsed(&self, queue_key: &str, document: &str) -> Parsed {
        if let Some((text, parsed)) = self.queues().get(queue_key)
            && text == document
        {
            return parsed.clone();
        }
        let parsed = Arc::new(Policy::parse(document));
        let mut by_queue = self.queues();
        if by_queue.len() >= MAX_QUEUES {
            by_queue.clear();
        }
        by_queue.insert(
            queue_key.to_string(),
            (document.to_string(), parsed.clone()),
        );
        parsed
    }

    fn queues(&self) -> MutexGuard<'_, HashMap<String, (String, Parsed)>> {
        // A panic while it was held leaves a map of whole entries.
        self.by_queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How many queues' policies are kept.
    pub fn len(&self) -> usize {
        self.queues().len()
    }

    /// True when none is.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn allow(account: &str) -> String {
        json!({"Version": "2012-10-17", "Statement": [{
            "Effect": "Allow",
            "Principal": {"AWS": account},
            "Action": "sqs:SendMessage"
        }]})
        .to_string()
    }

    /// A6: a queue's policy is read as parsed from its current text: the
    /// same text gives the same parse, a changed text (on this node or
    /// another) its own, a document that cannot be enforced its reason.
    #[test]
    fn a6_policies_follow_their_text() {
        let cache = PolicyCache::default();
        let first = cache.parsed("q", &allow("111122223333"));
        assert_eq!(*first, Policy::parse(&allow("111122223333")));
        assert!(Arc::ptr_eq(
            &first,
            &cache.parsed("q", &allow("111122223333"))
        ));
        let changed = cache.parsed("q", &allow("444455556666"));
        assert_eq!(*changed, Policy::parse(&allow("444455556666")));
        assert_ne!(*changed, *first);
        assert!(cache.parsed("q", "not json").is_err());
        assert_eq!(*cache.parsed("other", &allow("111122223333")), *first);
        assert_eq!(cache.len(), 2);
    }

    /// The cache stays bounded however many queues are read.
    #[test]
    fn the_cache_is_bounded() {
        let cache = PolicyCache::default();
        for i in 0..(MAX_QUEUES * 2 + 3) {
            cache.parsed(&format!("q{i}"), "{}");
            assert!(cache.len() <= MAX_QUEUES);
        }
    }
}

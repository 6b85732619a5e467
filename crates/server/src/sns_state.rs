//! What the SNS handler keeps beside the engine (rules N3, N4, N7): the
//! key that signs envelopes (derived at the first signature from the
//! storage's secret, so every node sharing the storage, and the server
//! after a restart, signs with the same key), the filter policies as parsed,
//! and each FIFO topic's sequence numbers and five-minute deduplication
//! window.
//!
//! The deduplication window lives in the node's memory: a publish retried
//! on another node of a PostgreSQL cluster, or after a restart, within the
//! five minutes is delivered again (docs/sns.md says so).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;
use sluice_broker::{Subscription, Topic};
use sluice_core::clock::Millis;
use sluice_sns::filter::{FilterPolicy, Scope};
use sluice_sns::signing::{SigningError, SigningKey};

/// How long a FIFO topic remembers a deduplication id.
const DEDUP_WINDOW_MS: Millis = 5 * 60 * 1000;

/// The SNS handler's state.
#[derive(Default)]
pub struct SnsState {
    key: tokio::sync::OnceCell<Arc<SigningKey>>,
    /// Filter policies by subscription id, with the text they were parsed
    /// from.
    filters: Mutex<HashMap<String, (String, Arc<FilterPolicy>)>>,
    /// Each FIFO topic's deduplication ids and what they were answered.
    dedup: Mutex<HashMap<String, HashMap<String, Remembered>>>,
    /// The last sequence number given.
    sequence: AtomicU64,
    /// Set once the outbox of HTTP/S deliveries exists (rule N6).
    pub outbox_ready: tokio::sync::OnceCell<()>,
    /// Set once this service's deliverer of HTTP/S deliveries runs.
    pub deliverer_started: std::sync::atomic::AtomicBool,
}

/// What [`SnsState::assign`] gave a published message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assigned {
    /// Its message id.
    pub message_id: String,
    /// Its sequence number, on a FIFO topic.
    pub sequence_number: Option<String>,
    /// False for a repeat of a message of the last five minutes.
    pub fresh: bool,
}

/// A FIFO publish remembered for its deduplication window.
struct Remembered {
    message_id: String,
    sequence_number: Option<String>,
    until: Millis,
}

impl SnsState {
    /// The signing key, derived from the storage's `secret` at the first
    /// call (on a blocking thread: it takes a fraction of a second).
    pub async fn signing_key<F>(&self, secret: F) -> Result<Arc<SigningKey>, SigningError>
    where
        F: Future<Output = Result<[u8; 32], String>>,
    {
        self.key
            .get_or_try_init(|| async {
                let secret = secret.await.map_err(SigningError::Generate)?;
                let made = tokio::task::spawn_blocking(move || SigningKey::derive(&secret))
                    .await
                    .map_err(|e| SigningError::Generate(e.to_string()))??;
                Ok(Arc::new(made))
            })
            .await
            .cloned()
    }

    /// The subscription's filter policy, parsed once per text; `None`
    /// without one (or when it no longer parses, which a stored policy
    /// always does).
    pub fn filter(&self, subscription: &Subscription) -> Option<Arc<FilterPolicy>> {
        let text = subscription.attributes.get("FilterPolicy")?;
        let mut cache = self.filters.lock();
        if let Some((cached, policy)) = cache.get(&subscription.id)
            && cached == text
        {
            return Some(policy.clone());
        }
        let scope = (subscription.attributes.get("FilterPolicyScope"))
            .and_then(|name| Scope::from_name(name))
            .unwrap_or(Scope::MessageAttributes);
        let policy = Arc::new(FilterPolicy::parse(text, scope).ok()?);
        cache.insert(subscription.id.clone(), (text.clone(), policy.clone()));
        Some(policy)
    }

    /// A published message's id and, on a FIFO topic (one whose message has
    /// a deduplication id), its sequence number; `fresh` false when it
    /// repeats a message of the last five minutes: it then has that
    /// message's id and sequence number, and is delivered to nobody
    /// (recorded: LocalStack test_publish_batch_messages_from_fifo_topic_to_fifo_queue).
    pub fn assign(
        &self,
        topic: &Topic,
        group_id: Option<&str>,
        dedup_id: Option<&str>,
        now: Millis,
    ) -> Assigned {
        let message_id = uuid::Uuid::new_v4().to_string();
        let Some(dedup_id) = dedup_id else {
            return Assigned {
                message_id,
                sequence_number: None,
                fresh: true,
            };
        };
        let scope = match topic
            .attributes
            .get("FifoThroughputScope")
            .map(String::as_str)
        {
            Some("MessageGroup") => format!("{}\u{0}{dedup_id}", group_id.unwrap_or_default()),
            _ => dedup_id.to_string(),
        };
        let mut dedup = self.dedup.lock();
        let window = dedup.entry(topic.key.clone()).or_default();
        window.retain(|_, r| r.until > now);
        if let Some(r) = window.get(&scope) {
            return Assigned {
                message_id: r.message_id.clone(),
                sequence_number: r.sequence_number.clone(),
                fresh: false,
            };
        }
        let sequence_number = Some(self.next_sequence(now));
        window.insert(
            scope,
            Remembered {
                message_id: message_id.clone(),
                sequence_number: sequence_number.clone(),
                until: now + DEDUP_WINDOW_MS,
            },
        );
        Assigned {
            message_id,
            sequence_number,
            fresh: true,
        }
    }

    /// Forgets a deduplication id [`Self::assign`] remembered, for a
    /// message that was not delivered after all.
    pub fn forget(&self, topic: &Topic, group_id: Option<&str>, dedup_id: &str) {
        let scope = dedup_scope(topic, group_id, dedup_id);
        if let Some(window) = self.dedup.lock().get_mut(&topic.key) {
            window.remove(&scope);
        }
    }

    /// A FIFO sequence number: 20 digits, growing, and growing across
    /// restarts (it counts from the clock's milliseconds).
    fn next_sequence(&self, now: Millis) -> String {
        let floor = now.saturating_mul(1000);
        let mut current = self.sequence.load(Ordering::Relaxed);
        loop {
            let next = current.max(floor) + 1;
            match self.sequence.compare_exchange(
                current,
                next,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return format!("{}", 10_000_000_000_000_000_000u64 + next),
                Err(seen) => current = seen,
            }
        }
    }
}

/// What a deduplication id is unique within: the topic, or with
/// `FifoThroughputScope` `MessageGroup` its message group.
fn dedup_scope(topic: &Topic, group_id: Option<&str>, dedup_id: &str) -> String {
    match topic
        .attributes
        .get("FifoThroughputScope")
        .map(String::as_str)
    {
        Some("MessageGroup") => format!("{}\u{0}{dedup_id}", group_id.unwrap_or_default()),
        _ => dedup_id.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// N3: the key is the secret's: the same on every node and after a
    /// restart, another for another secret.
    #[tokio::test]
    async fn n3_the_signing_key_is_the_secrets() {
        let name = |secret: [u8; 32]| async move {
            let state = SnsState::default();
            let key = state.signing_key(async move { Ok(secret) }).await.unwrap();
            key.certificate_name().to_string()
        };
        assert_eq!(name([7; 32]).await, name([7; 32]).await);
        assert_ne!(name([7; 32]).await, name([8; 32]).await);
    }

    /// N7: a deduplication id is a repeat within its window, and not once
    /// forgotten (a publish that failed).
    #[test]
    fn n7_a_forgotten_id_is_fresh_again() {
        let state = SnsState::default();
        let topic = Topic {
            key: "t.fifo".into(),
            attributes: Default::default(),
            tags: Default::default(),
            created_at: 0,
        };
        let now = 1_796_000_000_000;
        let first = state.assign(&topic, Some("g"), Some("d"), now);
        assert!(first.fresh);
        let again = state.assign(&topic, Some("g"), Some("d"), now + 1);
        assert!(!again.fresh);
        assert_eq!(again.message_id, first.message_id);
        state.forget(&topic, Some("g"), "d");
        assert!(state.assign(&topic, Some("g"), Some("d"), now + 2).fresh);
        assert!(
            state
                .assign(&topic, Some("g"), Some("e"), now + DEDUP_WINDOW_MS + 3)
                .fresh
        );
        assert!(
            state
                .assign(&topic, Some("g"), Some("d"), now + DEDUP_WINDOW_MS + 3)
                .fresh,
            "window over"
        );
    }

    /// N7: sequence numbers are 20 digits and grow.
    #[test]
    fn n7_sequence_numbers_grow() {
        let state = SnsState::default();
        let a = state.next_sequence(1_796_000_000_000);
        let b = state.next_sequence(1_796_000_000_000);
        let c = state.next_sequence(1_700_000_000_000);
        assert_eq!(a.len(), 20);
        assert!(a < b && b < c, "{a} {b} {c}");
    }
}

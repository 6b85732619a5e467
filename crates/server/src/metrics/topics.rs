//! What happened to the messages published to each topic (rules N2–N6),
//! counted on this node since it started: published per topic, and per
//! subscription delivered, filtered out, failed (an attempt that did not
//! deliver), dead-lettered (sent to the subscription's dead-letter queue)
//! and dropped (undeliverable with no dead-letter queue to take it).
//! Exported on `/metrics`, and read by DescribeTopics (for the console
//! and `sluice doctor`).

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

/// What became of one message for one subscription.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// It reached the endpoint.
    Delivered,
    /// The subscription's filter policy let it pass by.
    FilteredOut,
    /// An attempt to deliver it failed (it may be retried).
    Failed,
    /// It went to the subscription's dead-letter queue.
    DeadLettered,
    /// It could not be delivered and nothing took it.
    Dropped,
}

impl Outcome {
    /// Every outcome, in the order DescribeTopics lists their counts.
    pub const ALL: [Outcome; 5] = [
        Outcome::Delivered,
        Outcome::FilteredOut,
        Outcome::Failed,
        Outcome::DeadLettered,
        Outcome::Dropped,
    ];

    /// The outcome's label value.
    pub const fn as_str(self) -> &'static str {
        match self {
            Outcome::Delivered => "delivered",
            Outcome::FilteredOut => "filtered_out",
            Outcome::Failed => "failed",
            Outcome::DeadLettered => "dead_lettered",
            Outcome::Dropped => "dropped",
        }
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TopicLabels {
    topic: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct SubscriptionLabels {
    topic: String,
    subscription: String,
    protocol: String,
    outcome: String,
}

/// The counters. Clones count into the same families.
#[derive(Clone, Default)]
pub struct TopicMetrics {
    published: Family<TopicLabels, Counter>,
    messages: Family<SubscriptionLabels, Counter>,
}

impl TopicMetrics {
    /// `n` messages published to the topic stored under `topic`.
    pub fn published(&self, topic: &str, n: u64) {
        self.published
            .get_or_create(&TopicLabels {
                topic: topic.to_string(),
            })
            .inc_by(n);
    }

    /// `n` messages of the topic `topic` met `outcome` at subscription
    /// `subscription` (its id) of `protocol`.
    pub fn count(&self, topic: &str, subscription: &str, protocol: &str, outcome: Outcome, n: u64) {
        if n == 0 {
            return;
        }
        self.messages
            .get_or_create(&SubscriptionLabels {
                topic: topic.to_string(),
                subscription: subscription.to_string(),
                protocol: protocol.to_string(),
                outcome: outcome.as_str().to_string(),
            })
            .inc_by(n);
    }

    /// Messages published to `topic` on this node.
    pub fn published_count(&self, topic: &str) -> u64 {
        self.published
            .get(&TopicLabels {
                topic: topic.to_string(),
            })
            .map_or(0, |c| c.get())
    }

    /// Messages of `topic` that met `outcome` at subscription
    /// `subscription` of `protocol`, on this node.
    pub fn outcome_count(
        &self,
        topic: &str,
        subscription: &str,
        protocol: &str,
        outcome: Outcome,
    ) -> u64 {
        self.messages
            .get(&SubscriptionLabels {
                topic: topic.to_string(),
                subscription: subscription.to_string(),
                protocol: protocol.to_string(),
                outcome: outcome.as_str().to_string(),
            })
            .map_or(0, |c| c.get())
    }

    /// Adds the families to `registry`.
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "sluice_topic_published",
            "Messages published to each topic, on this node",
            self.published.clone(),
        );
        registry.register(
            "sluice_subscription_messages",
            "Published messages by topic, subscription and outcome: delivered, filtered_out (its filter policy let it pass by), failed (an attempt that did not deliver), dead_lettered (to the subscription's dead-letter queue), dropped (undeliverable, no dead-letter queue), on this node",
            self.messages.clone(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// N4: what is counted is read back per subscription and outcome, and
    /// exported.
    #[test]
    fn n4_counts_are_kept_per_subscription_and_outcome() {
        let m = TopicMetrics::default();
        m.published("orders", 3);
        m.count("orders", "s1", "sqs", Outcome::Delivered, 2);
        m.count("orders", "s1", "sqs", Outcome::FilteredOut, 1);
        m.count("orders", "s1", "sqs", Outcome::Dropped, 0);
        assert_eq!(m.published_count("orders"), 3);
        assert_eq!(
            m.outcome_count("orders", "s1", "sqs", Outcome::Delivered),
            2
        );
        assert_eq!(
            m.outcome_count("orders", "s1", "sqs", Outcome::FilteredOut),
            1
        );
        assert_eq!(
            m.outcome_count("orders", "s2", "sqs", Outcome::Delivered),
            0
        );
        let mut registry = Registry::default();
        m.register(&mut registry);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        assert!(
            text.contains("sluice_topic_published_total{topic=\"orders\"} 3"),
            "{text}"
        );
        assert!(
            text.contains("sluice_subscription_messages_total{topic=\"orders\",subscription=\"s1\",protocol=\"sqs\",outcome=\"filtered_out\"} 1"),
            "{text}"
        );
        assert!(
            !text.contains("outcome=\"dropped\""),
            "a zero count makes no series: {text}"
        );
    }
}

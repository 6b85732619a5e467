//! The push consumers' metrics (rules C8, M6): per consumer, batches
//! delivered, their messages and sizes, the handler's answer times,
//! failures by kind, the batches in flight and the concurrency limit.

use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ConsumerLabels {
    consumer: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ConsumerFailureLabels {
    consumer: String,
    kind: String,
}

/// Every consumer's counters, gauges and histograms; clones count into the
/// same families.
#[derive(Clone, Debug)]
pub struct ConsumerMetrics {
    deliveries: Family<ConsumerLabels, Counter>,
    messages: Family<ConsumerLabels, Counter>,
    deleted: Family<ConsumerLabels, Counter>,
    dead_lettered: Family<ConsumerLabels, Counter>,
    filtered: Family<ConsumerLabels, Counter>,
    skipped_completed: Family<ConsumerLabels, Counter>,
    failures: Family<ConsumerFailureLabels, Counter>,
    batch_size: Family<ConsumerLabels, Histogram>,
    handler_latency: Family<ConsumerLabels, Histogram>,
    in_flight: Family<ConsumerLabels, Gauge>,
    limit: Family<ConsumerLabels, Gauge>,
}

/// Upper bounds of the batch-size buckets: from one message to Lambda's
/// largest batch of a standard queue (10,000).
const BATCH_SIZE_BUCKETS: [f64; 13] = [
    1.0, 2.0, 5.0, 10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1000.0, 2500.0, 5000.0, 10000.0,
];

impl Default for ConsumerMetrics {
    fn default() -> Self {
        Self {
            deliveries: Family::default(),
            messages: Family::default(),
            deleted: Family::default(),
            dead_lettered: Family::default(),
            filtered: Family::default(),
            skipped_completed: Family::default(),
            failures: Family::default(),
            batch_size: Family::new_with_constructor(|| {
                Histogram::new(BATCH_SIZE_BUCKETS.iter().copied())
            }),
            handler_latency: Family::new_with_constructor(|| {
                // 1 ms to ~9 min: a handler's time limit is at most 15 min.
                Histogram::new(exponential_buckets(0.001, 2.0, 20))
            }),
            in_flight: Family::default(),
            limit: Family::default(),
        }
    }
}

/// One batch of a consumer in flight, counted in its gauge until dropped
/// (an aborted delivery included).
#[derive(Debug)]
pub struct BatchInFlight {
    gauge: Gauge,
}

impl Drop for BatchInFlight {
    fn drop(&mut self) {
        self.gauge.dec();
    }
}

fn consumer_labels(consumer: &str) -> ConsumerLabels {
    ConsumerLabels {
        consumer: consumer.to_string(),
    }
}

impl ConsumerMetrics {
    /// A batch of `messages` was POSTed to `consumer`'s handler, which
    /// answered (or timed out) after `took`.
    pub fn delivered(&self, consumer: &str, messages: usize, took: Duration) {
        let labels = consumer_labels(consumer);
        self.deliveries.get_or_create(&labels).inc();
        self.messages
            .get_or_create(&labels)
            .inc_by(u64::try_from(messages).unwrap_or(u64::MAX));
        self.batch_size
            .get_or_create(&labels)
            .observe(messages as f64);
        self.handler_latency
            .get_or_create(&labels)
            .observe(took.as_secs_f64());
    }

    /// A consumer starts: its series show from now on, at zero (rates
    /// over them then start from its start); its failures show by kind
    /// once one happens.
    pub fn started(&self, consumer: &str) {
        let labels = consumer_labels(consumer);
        for counter in [
            &self.deliveries,
            &self.messages,
            &self.deleted,
            &self.dead_lettered,
            &self.filtered,
            &self.skipped_completed,
        ] {
            drop(counter.get_or_create(&labels));
        }
        drop(self.batch_size.get_or_create(&labels));
        drop(self.handler_latency.get_or_create(&labels));
        drop(self.in_flight.get_or_create(&labels));
        drop(self.limit.get_or_create(&labels));
    }

    /// A batch of `consumer` was received: in flight until the value
    /// returned is dropped.
    pub fn batch_in_flight(&self, consumer: &str) -> BatchInFlight {
        let gauge = self
            .in_flight
            .get_or_create(&consumer_labels(consumer))
            .clone();
        gauge.inc();
        BatchInFlight { gauge }
    }

    /// Batches of `consumer` in flight now.
    pub fn in_flight(&self, consumer: &str) -> u32 {
        let n = self
            .in_flight
            .get_or_create(&consumer_labels(consumer))
            .get();
        u32::try_from(n).unwrap_or(0)
    }

    /// The batches `consumer` may have in flight now (rule C7).
    pub fn set_limit(&self, consumer: &str, limit: u32) {
        self.limit
            .get_or_create(&consumer_labels(consumer))
            .set(i64::from(limit));
    }

    /// `messages` of `consumer`'s batches were deleted as handled.
    pub fn deleted(&self, consumer: &str, messages: usize) {
        self.deleted
            .get_or_create(&consumer_labels(consumer))
            .inc_by(u64::try_from(messages).unwrap_or(u64::MAX));
    }

    /// One of `consumer`'s messages, marked permanent, went to the DLQ.
    pub fn dead_lettered(&self, consumer: &str) {
        self.dead_lettered
            .get_or_create(&consumer_labels(consumer))
            .inc();
    }

    /// `messages` matched none of `consumer`'s filter patterns and were
    /// deleted without delivery.
    pub fn filtered(&self, consumer: &str, messages: usize) {
        self.filtered
            .get_or_create(&consumer_labels(consumer))
            .inc_by(u64::try_from(messages).unwrap_or(u64::MAX));
    }

    /// `messages` of `consumer` had a completed idempotency key and were
    /// deleted without delivery (rule I1).
    pub fn skipped_completed(&self, consumer: &str, messages: usize) {
        self.skipped_completed
            .get_or_create(&consumer_labels(consumer))
            .inc_by(u64::try_from(messages).unwrap_or(u64::MAX));
    }

    /// A batch of `consumer` failed: `kind` is `partial` (some items) or
    /// why the whole batch failed.
    pub fn failed(&self, consumer: &str, kind: &str) {
        self.failures
            .get_or_create(&ConsumerFailureLabels {
                consumer: consumer.to_string(),
                kind: kind.to_string(),
            })
            .inc();
    }

    /// Adds every family to `registry`, the server's `/metrics` exposition.
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "sluice_consumer_deliveries",
            "Batches POSTed to each push consumer's handler",
            self.deliveries.clone(),
        );
        registry.register(
            "sluice_consumer_messages",
            "Messages in the batches POSTed to each push consumer's handler",
            self.messages.clone(),
        );
        registry.register(
            "sluice_consumer_deleted_messages",
            "Messages each push consumer deleted as handled",
            self.deleted.clone(),
        );
        registry.register(
            "sluice_consumer_dead_lettered_messages",
            "Messages each push consumer's handler marked permanent, moved to the dead-letter queue",
            self.dead_lettered.clone(),
        );
        registry.register(
            "sluice_consumer_filtered_messages",
            "Messages each push consumer deleted without delivery: they matched none of its filter patterns",
            self.filtered.clone(),
        );
        registry.register(
            "sluice_consumer_skipped_completed_messages",
            "Messages each push consumer deleted without delivery: their idempotency key was completed (skip_completed)",
            self.skipped_completed.clone(),
        );
        registry.register(
            "sluice_consumer_failures",
            "Failed batches by kind: partial (some items), status, function_error, timeout, connection, bad_response, throttled (the whole batch)",
            self.failures.clone(),
        );
        registry.register(
            "sluice_consumer_batch_size",
            "Messages in each batch POSTed to each push consumer's handler",
            self.batch_size.clone(),
        );
        registry.register(
            "sluice_consumer_handler_duration_seconds",
            "Time from each POST to the handler's answer (a timeout counts its whole time limit)",
            self.handler_latency.clone(),
        );
        registry.register(
            "sluice_consumer_in_flight_batches",
            "Batches each push consumer has received and not yet finished with",
            self.in_flight.clone(),
        );
        registry.register(
            "sluice_consumer_concurrency_limit",
            "Batches each push consumer may have in flight now (grows with a backlog, halves on failures)",
            self.limit.clone(),
        );
    }
}

/// Every metric name a push consumer adds to the exposition (with the
/// suffixes of counters and histograms).
pub fn consumer_metric_names() -> Vec<String> {
    let mut names: Vec<String> = [
        "deliveries",
        "messages",
        "deleted_messages",
        "dead_lettered_messages",
        "filtered_messages",
        "skipped_completed_messages",
        "failures",
    ]
    .iter()
    .map(|n| format!("sluice_consumer_{n}_total"))
    .collect();
    for histogram in [
        "sluice_consumer_batch_size",
        "sluice_consumer_handler_duration_seconds",
    ] {
        for suffix in ["_bucket", "_sum", "_count"] {
            names.push(format!("{histogram}{suffix}"));
        }
    }
    names.push("sluice_consumer_in_flight_batches".into());
    names.push("sluice_consumer_concurrency_limit".into());
    names
}

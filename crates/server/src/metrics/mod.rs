//! Prometheus metrics (rule M1): request counts and latency by action,
//! protocol and outcome, per-queue gauges and counters read from the
//! broker at scrape time, what became of each topic's messages
//! ([`topics`]) and what encryption at rest does ([`encryption`]).
//! Served as OpenMetrics text on `GET /metrics`.

pub mod archive;
pub mod encryption;
pub mod topics;

use std::collections::HashMap;
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use sluice_broker::{Broker, QueueStats, StorageStats};
use sluice_core::queue_name::{SNS_HTTP_OUTBOX, internal_key};

use crate::long_polls::LongPolls;
use sluice_alarms::Alarms;
use sluice_alarms::definition::AlarmState;

pub use sluice_consumers::metrics::{ConsumerMetrics, consumer_metric_names};

/// The content type of the exposition.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    action: String,
    protocol: String,
    code: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LatencyLabels {
    action: String,
    protocol: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct QueueLabels {
    queue: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct AlarmLabels {
    alarm: String,
    queue: String,
    state: String,
}

/// The server's request metrics, and the push consumers' counters.
pub struct Metrics {
    requests: Family<RequestLabels, Counter>,
    latency: Family<LatencyLabels, Histogram>,
    /// Counted by the push consumers, exported with the rest.
    pub consumers: ConsumerMetrics,
    /// The long polls waiting now, and their cap (rule H5).
    pub long_polls: LongPolls,
    /// What became of each topic's messages, per subscription.
    pub topics: topics::TopicMetrics,
    /// Messages archived and restored, failed archive passes (rule X8).
    pub archive: archive::ArchiveMetrics,
}

/// Per push consumer: batches POSTed, messages in them, messages deleted,
/// whole-batch failures by kind, the sizes of the batches and the
/// handler's answer times, and the batches in flight. Clones count into
/// the same families.
impl Default for Metrics {
    fn default() -> Self {
        Self {
            requests: Family::default(),
            latency: Family::new_with_constructor(|| {
                // 0.1 ms to ~3.3 s: the range between a cached reply and a long fsync.
                Histogram::new(exponential_buckets(0.0001, 2.0, 16))
            }),
            consumers: ConsumerMetrics::default(),
            long_polls: LongPolls::default(),
            topics: topics::TopicMetrics::default(),
            archive: archive::ArchiveMetrics::default(),
        }
    }
}

impl Metrics {
    /// Records one request: its action, protocol, outcome (`ok` or the
    /// error's code) and how long it took.
    pub fn record(&self, action: &str, protocol: &str, code: &str, elapsed: Duration) {
        let action = if action.is_empty() { "unknown" } else { action };
        self.requests
            .get_or_create(&RequestLabels {
                action: action.to_string(),
                protocol: protocol.to_string(),
                code: code.to_string(),
            })
            .inc();
        self.latency
            .get_or_create(&LatencyLabels {
                action: action.to_string(),
                protocol: protocol.to_string(),
            })
            .observe(elapsed.as_secs_f64());
    }

    /// The whole exposition: request metrics, every queue's metrics,
    /// every alarm's state, the storage's gauges, the topics' counts, the
    /// HTTP/S deliveries waiting in SNS's outbox, encryption at rest, and
    /// the archive (`archive_usage`: its bytes and files, when it is kept).
    pub async fn render<B: Broker>(
        &self,
        broker: &B,
        alarms: &Alarms<B>,
        archive_usage: Option<(u64, u64)>,
    ) -> String {
        let mut registry = Registry::default();
        self.register_requests(&mut registry);
        self.archive.register(&mut registry, archive_usage);
        self.consumers.register(&mut registry);
        self.topics.register(&mut registry);
        register_outbox(&mut registry, broker).await;
        let sealing = register_queues(&mut registry, broker).await;
        register_alarms(&mut registry, alarms);
        if let Some(storage) = broker.storage_stats() {
            register_storage(&mut registry, &storage);
        }
        encryption::register(&mut registry, broker, &sealing);
        let mut out = String::new();
        if encode(&mut out, &registry).is_err() {
            out.clear();
        }
        out
    }

    /// Requests, their latency, and the long polls.
    fn register_requests(&self, registry: &mut Registry) {
        registry.register(
            "sluice_requests",
            "API requests (SQS, SNS, sluice's own) by action, protocol and outcome (ok or the error code)",
            self.requests.clone(),
        );
        registry.register(
            "sluice_request_duration_seconds",
            "Time to answer API requests, long polls included",
            self.latency.clone(),
        );
        let waiting = Gauge::<i64>::default();
        waiting.set(i64::try_from(self.long_polls.waiting()).unwrap_or(i64::MAX));
        registry.register(
            "sluice_long_polls_waiting",
            "ReceiveMessage long polls waiting now (capped by --max-long-polls)",
            waiting,
        );
        let capped = Counter::<u64>::default();
        capped.inc_by(self.long_polls.capped());
        registry.register(
            "sluice_long_polls_capped",
            "Receives that would have waited but answered at once: --max-long-polls were waiting",
            capped,
        );
    }
}

/// Every queue's gauges and counters, and how many queues dead-letter
/// into each; returns the key each queue's messages are sealed with, for
/// the queues whose messages are sealed (see [`Broker::sealing_key`]).
async fn register_queues<B: Broker>(
    registry: &mut Registry,
    broker: &B,
) -> Vec<(String, Option<String>)> {
    let mut stats = Vec::new();
    let mut sources: HashMap<String, i64> = HashMap::new();
    let mut sealing = Vec::new();
    for name in broker.list_queues().await.unwrap_or_default() {
        if let Ok(meta) = broker.get_queue(&name).await {
            let c = &meta.config;
            if let Some(key) =
                broker.sealing_key(c.sqs_managed_sse_enabled, c.kms_master_key_id.as_deref())
            {
                sealing.push((name.clone(), key));
            }
            for target in c.dead_letter_targets() {
                if let Some(dlq) = target.rsplit(':').next() {
                    *sources.entry(dlq.to_string()).or_default() += 1;
                }
            }
        }
        if let Ok(s) = broker.queue_stats(&name).await {
            stats.push((name, s));
        }
    }
    register_queue_metrics(registry, &stats);
    let dlq = Family::<QueueLabels, Gauge>::default();
    for (queue, _) in &stats {
        dlq.get_or_create(&QueueLabels {
            queue: queue.clone(),
        })
        .set(sources.get(queue).copied().unwrap_or(0));
    }
    registry.register(
        "sluice_queue_dead_letter_sources",
        "Queues whose RedrivePolicy or SluiceDeadLetterRoutes targets this queue (above 0: a dead-letter queue)",
        dlq,
    );
    sealing
}

/// The HTTP/S deliveries not yet made: waiting for a node, being
/// attempted, or waiting for a retry. The outbox is shared by the nodes
/// on one storage, so every node shows the same number; none before the
/// first HTTP/S subscription.
async fn register_outbox<B: Broker>(registry: &mut Registry, broker: &B) {
    let pending = Gauge::<i64>::default();
    if let Ok(c) = broker.queue_counts(&internal_key(SNS_HTTP_OUTBOX)).await {
        let total = c.visible + c.in_flight + c.delayed;
        pending.set(i64::try_from(total).unwrap_or(i64::MAX));
    }
    registry.register(
        "sluice_sns_http_deliveries_pending",
        "HTTP/S subscription deliveries stored and not yet made (waiting, being attempted or waiting for a retry), shared by the nodes on one storage",
        pending,
    );
}

/// Every alarm's state, the notifications' outcomes, and whether this
/// node evaluates them.
fn register_alarms<B: Broker>(registry: &mut Registry, alarms: &Alarms<B>) {
    let states = Family::<AlarmLabels, Gauge>::default();
    for e in alarms.store().entries() {
        for s in [
            AlarmState::Ok,
            AlarmState::Alarm,
            AlarmState::InsufficientData,
        ] {
            states
                .get_or_create(&AlarmLabels {
                    alarm: e.def.name.clone(),
                    queue: e.def.queue.clone(),
                    state: s.as_str().to_string(),
                })
                .set(i64::from(e.state == s));
        }
    }
    let outcomes = Family::<OutcomeLabels, Counter>::default();
    for (outcome, n) in alarms.notification_counts() {
        outcomes
            .get_or_create(&OutcomeLabels {
                outcome: outcome.to_string(),
            })
            .inc_by(n);
    }
    registry.register(
        "sluice_alarm_notifications",
        "Alarm notifications by outcome: delivered, retried (a failed try to be repeated), failed (given up), dropped (too many waiting)",
        outcomes,
    );
    registry.register(
        "sluice_alarm_state",
        "1 for the state each alarm is in (OK, ALARM, INSUFFICIENT_DATA), 0 for the others",
        states,
    );
    let evaluator = Gauge::<i64>::default();
    evaluator.set(i64::from(alarms.is_evaluating()));
    registry.register(
        "sluice_alarm_evaluator",
        "1 on the node that evaluates alarms and sends their notifications (one of the nodes sharing a database), else 0",
        evaluator,
    );
}

/// The embedded engine's storage gauges.
fn register_storage(registry: &mut Registry, storage: &StorageStats) {
    for (name, help, value) in storage_gauges(storage) {
        let gauge = Gauge::<i64>::default();
        gauge.set(i64::try_from(value).unwrap_or(i64::MAX));
        registry.register(name, help, gauge);
    }
    let refused = Gauge::<i64>::default();
    refused.set(i64::from(storage.writes_refused));
    registry.register(
        "sluice_storage_writes_refused",
        "1 while the embedded engine refuses writes after a failed write to storage (a full disk, a failed fsync), until it has reopened its storage; else 0",
        refused,
    );
}

type Field = fn(&QueueStats) -> u64;

/// The engine's storage gauges: name, help, value. The log's are left
/// out while the storage is closed (no sample rather than a wrong one).
fn storage_gauges(s: &StorageStats) -> Vec<(&'static str, &'static str, u64)> {
    let mut gauges = Vec::with_capacity(3);
    if let Some((segments, bytes)) = s.log {
        gauges.push((
            "sluice_storage_log_segments",
            "Write-ahead log segment files on disk (embedded engine; 0 in memory)",
            segments,
        ));
        gauges.push((
            "sluice_storage_log_bytes",
            "Bytes of the write-ahead log's segment files on disk (embedded engine)",
            bytes,
        ));
    }
    gauges.push((
        "sluice_storage_cached_body_bytes",
        "Bytes of message bodies the durable embedded engine keeps in memory (--body-cache-mib)",
        s.cached_body_bytes,
    ));
    gauges
}

/// Per-queue gauges: name, help, value.
const GAUGES: &[(&str, &str, Field)] = &[
    (
        "sluice_queue_messages_visible",
        "Messages available for retrieval (ApproximateNumberOfMessages)",
        |s| s.counts.visible,
    ),
    (
        "sluice_queue_messages_not_visible",
        "Messages in flight (ApproximateNumberOfMessagesNotVisible)",
        |s| s.counts.in_flight,
    ),
    (
        "sluice_queue_messages_delayed",
        "Messages waiting for their delay (ApproximateNumberOfMessagesDelayed)",
        |s| s.counts.delayed,
    ),
    (
        "sluice_queue_messages_awaiting_archive",
        "Messages past the queue's retention held until the archive has them (SluiceArchiveExpired); above 0 for long, the archive is failing",
        |s| s.awaiting_archive,
    ),
    (
        "sluice_queue_groups_with_inflight_messages",
        "FIFO message groups with a message in flight (ApproximateNumberOfGroupsWithInflightMessages); 0 for standard queues",
        |s| s.groups_in_flight,
    ),
    (
        "sluice_queue_noisy_groups",
        "Fair queues: message groups noisy now, served after the quiet ones (ApproximateNumberOfNoisyGroups)",
        |s| s.fair.noisy_groups,
    ),
    (
        "sluice_queue_quiet_group_messages_visible",
        "Fair queues: quiet groups' messages available for retrieval (ApproximateNumberOfMessagesVisibleInQuietGroups)",
        |s| s.fair.quiet_visible,
    ),
    (
        "sluice_queue_quiet_group_messages_not_visible",
        "Fair queues: quiet groups' messages in flight (ApproximateNumberOfMessagesNotVisibleInQuietGroups)",
        |s| s.fair.quiet_in_flight,
    ),
    (
        "sluice_queue_quiet_group_messages_delayed",
        "Fair queues: quiet groups' delayed messages (ApproximateNumberOfMessagesDelayedInQuietGroups)",
        |s| s.fair.quiet_delayed,
    ),
];

/// Per-queue ages in seconds, from milliseconds: name, help, value.
const AGES: &[(&str, &str, Field)] = &[
    (
        "sluice_queue_oldest_message_age_seconds",
        "Age of the oldest message in the queue (ApproximateAgeOfOldestMessage)",
        |s| s.oldest_age_ms,
    ),
    (
        "sluice_queue_quiet_group_oldest_message_age_seconds",
        "Fair queues: age of the oldest quiet group's message waiting (ApproximateAgeOfOldestMessageInQuietGroups)",
        |s| s.fair.quiet_oldest_age_ms,
    ),
];

/// Per-queue counters: name (without `_total`), help, value.
const COUNTERS: &[(&str, &str, Field)] = &[
    (
        "sluice_queue_messages_sent",
        "Messages added to the queue (NumberOfMessagesSent)",
        |s| s.sent,
    ),
    (
        "sluice_queue_sent_message_bytes",
        "Bytes of messages sent (SentMessageSize)",
        |s| s.sent_bytes,
    ),
    (
        "sluice_queue_messages_received",
        "Messages delivered by receives (NumberOfMessagesReceived)",
        |s| s.received,
    ),
    (
        "sluice_queue_messages_deleted",
        "Messages deleted by consumers (NumberOfMessagesDeleted)",
        |s| s.deleted,
    ),
    (
        "sluice_queue_empty_receives",
        "Receives that returned no message (NumberOfEmptyReceives)",
        |s| s.empty_receives,
    ),
    (
        "sluice_queue_messages_dead_lettered",
        "Messages moved from this queue to its dead-letter queue",
        |s| s.dead_lettered,
    ),
    (
        "sluice_queue_messages_redriven",
        "Messages moved out of this queue by a redrive",
        |s| s.redriven,
    ),
    (
        "sluice_queue_messages_expired",
        "Messages deleted by the retention period",
        |s| s.expired,
    ),
    (
        "sluice_queue_messages_deduplicated",
        "FIFO sends answered as duplicates, nothing stored (NumberOfDeduplicatedSentMessages)",
        |s| s.deduplicated,
    ),
];

fn register_queue_metrics(registry: &mut Registry, stats: &[(String, QueueStats)]) {
    for &(name, help, field) in GAUGES {
        let family = Family::<QueueLabels, Gauge>::default();
        for (queue, s) in stats {
            family
                .get_or_create(&QueueLabels {
                    queue: queue.clone(),
                })
                .set(field(s) as i64);
        }
        registry.register(name, help, family);
    }
    for &(name, help, field) in AGES {
        let age = Family::<QueueLabels, Gauge<f64, std::sync::atomic::AtomicU64>>::default();
        for (queue, s) in stats {
            age.get_or_create(&QueueLabels {
                queue: queue.clone(),
            })
            .set(field(s) as f64 / 1000.0);
        }
        registry.register(name, help, age);
    }
    for &(name, help, field) in COUNTERS {
        let family = Family::<QueueLabels, Counter>::default();
        for (queue, s) in stats {
            family
                .get_or_create(&QueueLabels {
                    queue: queue.clone(),
                })
                .inc_by(field(s));
        }
        registry.register(name, help, family);
    }
    let by_class = Family::<QueueClassLabels, Counter>::default();
    for (queue, s) in stats {
        for (class, n) in &s.dead_lettered_by_class {
            by_class
                .get_or_create(&QueueClassLabels {
                    queue: queue.clone(),
                    class: class.clone(),
                })
                .inc_by(*n);
        }
    }
    registry.register(
        DEAD_LETTERED_BY_CLASS,
        "Messages moved from this queue to a dead-letter queue whose last failure had a class, by class (rule X7), counted by this node",
        by_class,
    );
}

/// The per-class dead-letter counter, which has samples only for classes
/// that moved a message.
const DEAD_LETTERED_BY_CLASS: &str = "sluice_queue_messages_dead_lettered_by_class";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct QueueClassLabels {
    queue: String,
    class: String,
}

/// Every metric name the exposition can contain (with the `_total`,
/// `_bucket`, `_sum` and `_count` suffixes added), for checking dashboards
/// and alert rules against; the consumers' ([`consumer_metric_names`])
/// show only once a consumer runs, and the per-queue encryption ones
/// ([`encryption::QUEUE_METRICS`]) only for queues that seal.
pub fn metric_names() -> Vec<String> {
    let mut names: Vec<String> = GAUGES
        .iter()
        .chain(AGES)
        .map(|(n, _, _)| n.to_string())
        .collect();
    names.push("sluice_queue_dead_letter_sources".into());
    names.push("sluice_alarm_state".into());
    names.push("sluice_alarm_notifications_total".into());
    names.extend(COUNTERS.iter().map(|(n, _, _)| format!("{n}_total")));
    names.push(format!("{DEAD_LETTERED_BY_CLASS}_total"));
    names.extend(
        storage_gauges(&StorageStats::default())
            .iter()
            .map(|(n, _, _)| n.to_string()),
    );
    names.push("sluice_requests_total".into());
    for suffix in ["_bucket", "_sum", "_count"] {
        names.push(format!("sluice_request_duration_seconds{suffix}"));
    }
    names.extend(encryption::metric_names());
    names.extend(consumer_metric_names());
    names.extend(archive::metric_names());
    names
}

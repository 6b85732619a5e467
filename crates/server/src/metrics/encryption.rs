//! Encryption at rest on `/metrics`: whether this server seals the
//! messages of queues that ask for server-side encryption, the data keys
//! it made since it started (new queues' and rotations), and which
//! keyring key each such queue seals with, by name: key material never
//! reaches the exposition.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use sluice_broker::Broker;

/// The per-queue metrics, which have samples only for queues that ask for
/// server-side encryption on a server that seals.
pub const QUEUE_METRICS: [&str; 2] = [
    "sluice_queue_encryption_key",
    "sluice_queue_encryption_key_missing",
];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct QueueKeyLabels {
    queue: String,
    key: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct QueueLabels {
    queue: String,
}

/// Registers the encryption metrics of `broker`, with `sealing`: each
/// queue whose messages are sealed and the name of the key that seals
/// them (`None`: its `KmsMasterKeyId` names no live key).
pub(super) fn register<B: Broker>(
    registry: &mut Registry,
    broker: &B,
    sealing: &[(String, Option<String>)],
) {
    let at_rest = Gauge::<i64>::default();
    at_rest.set(i64::from(broker.encrypts_at_rest()));
    registry.register(
        "sluice_encryption_at_rest",
        "1 when the messages of queues with server-side encryption (SqsManagedSseEnabled or a KmsMasterKeyId) are sealed at rest (a server with a keyring, not in memory), else 0",
        at_rest,
    );
    let stats = broker.encryption_stats().unwrap_or_default();
    let made = Counter::<u64>::default();
    made.inc_by(stats.data_keys_made);
    registry.register(
        "sluice_data_keys_generated",
        "Data keys made since the server started: a queue's first sealed message, then each rotation (KmsDataKeyReusePeriodSeconds over, or the queue's key changed)",
        made,
    );
    let keys = Family::<QueueKeyLabels, Gauge>::default();
    let missing = Family::<QueueLabels, Gauge>::default();
    for (queue, key) in sealing {
        if let Some(key) = key {
            keys.get_or_create(&QueueKeyLabels {
                queue: queue.clone(),
                key: key.clone(),
            })
            .set(1);
        }
        missing
            .get_or_create(&QueueLabels {
                queue: queue.clone(),
            })
            .set(i64::from(key.is_none()));
    }
    registry.register(
        QUEUE_METRICS[0],
        "1 for each queue with server-side encryption, labelled with the name of the keyring key that seals its new messages (never its material)",
        keys,
    );
    registry.register(
        QUEUE_METRICS[1],
        "1 for a queue whose KmsMasterKeyId names no live key of the keyring (sends to it are refused with KmsNotFound), 0 for the other queues with server-side encryption",
        missing,
    );
}

/// Every name [`register`] exports (a counter with its `_total`).
pub(super) fn metric_names() -> Vec<String> {
    let mut names = vec![
        "sluice_encryption_at_rest".to_string(),
        "sluice_data_keys_generated_total".to_string(),
    ];
    names.extend(QUEUE_METRICS.iter().map(|n| n.to_string()));
    names
}

//! The archive of expired messages (rule X8), counted on this node since
//! it started: messages archived and restored per queue, failed archive
//! passes, and the archive's size on disk.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct QueueLabels {
    queue: String,
}

/// Counters of the archive. Clones count into the same families.
#[derive(Clone, Debug, Default)]
pub struct ArchiveMetrics {
    archived: Family<QueueLabels, Counter>,
    restored: Family<QueueLabels, Counter>,
    failures: Counter,
}

impl ArchiveMetrics {
    /// `n` messages of `queue` are in the archive and gone from the queue.
    pub fn archived(&self, queue: &str, n: usize) {
        self.archived
            .get_or_create(&QueueLabels {
                queue: queue.to_string(),
            })
            .inc_by(n as u64);
    }

    /// `n` archived messages of `queue` were sent back to a queue.
    pub fn restored(&self, queue: &str, n: usize) {
        self.restored
            .get_or_create(&QueueLabels {
                queue: queue.to_string(),
            })
            .inc_by(n as u64);
    }

    /// An archive pass failed; its messages wait in their queues' engine.
    pub fn failed(&self) {
        self.failures.inc();
    }

    /// Failed archive passes so far.
    pub fn failures(&self) -> u64 {
        self.failures.get()
    }

    /// Adds the archive's families, and its size (`usage`: bytes and
    /// segment files) when known.
    pub fn register(&self, registry: &mut Registry, usage: Option<(u64, u64)>) {
        registry.register(
            "sluice_archived_messages",
            "Messages past their queue's retention written to the archive, then dropped from the queue, by queue",
            self.archived.clone(),
        );
        registry.register(
            "sluice_restored_messages",
            "Archived messages sent back to a queue (RestoreArchivedMessages), by archived queue",
            self.restored.clone(),
        );
        registry.register(
            "sluice_archive_failures",
            "Archive passes that failed (the archive could not be written or the engine not read): their messages stay held until a pass succeeds",
            self.failures.clone(),
        );
        if let Some((bytes, files)) = usage {
            let size = Gauge::<i64>::default();
            size.set(i64::try_from(bytes).unwrap_or(i64::MAX));
            registry.register(
                "sluice_archive_bytes",
                "Bytes the archive takes on disk",
                size,
            );
            let segments = Gauge::<i64>::default();
            segments.set(i64::try_from(files).unwrap_or(i64::MAX));
            registry.register(
                "sluice_archive_segments",
                "Segment files in the archive",
                segments,
            );
        }
    }
}

/// The archive's metric names as exposed (counters with `_total`).
pub fn metric_names() -> Vec<String> {
    [
        "sluice_archived_messages_total",
        "sluice_restored_messages_total",
        "sluice_archive_failures_total",
        "sluice_archive_bytes",
        "sluice_archive_segments",
    ]
    .map(String::from)
    .to_vec()
}

//! The archive of expired messages (rule X8), counted on this node since
//! it started: messages archived and restored per queue, failed archive
//! passes, the archive's size on disk, and its copies to a bucket.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

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
    /// Set once the archive is copied to a bucket: the upload families
    /// are shown only then.
    copied: Arc<AtomicBool>,
    uploaded: Counter,
    upload_failures: Counter,
    awaiting_upload: Gauge,
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

    /// The archive is copied to a bucket: show the upload families.
    pub fn copied_to_bucket(&self) {
        self.copied.store(true, Ordering::Relaxed);
    }

    /// A segment is in the bucket.
    pub fn uploaded(&self) {
        self.uploaded.inc();
    }

    /// Segments copied to the bucket so far.
    pub fn uploads(&self) -> u64 {
        self.uploaded.get()
    }

    /// A segment could not be copied; it is tried again on the next pass.
    pub fn upload_failed(&self) {
        self.upload_failures.inc();
    }

    /// Failed segment copies so far.
    pub fn upload_failures(&self) -> u64 {
        self.upload_failures.get()
    }

    /// `n` rotated segments of this node are not in the bucket yet.
    pub fn set_awaiting_upload(&self, n: usize) {
        self.awaiting_upload
            .set(i64::try_from(n).unwrap_or(i64::MAX));
    }

    /// Rotated segments of this node not in the bucket yet, as last counted.
    pub fn awaiting_upload(&self) -> usize {
        usize::try_from(self.awaiting_upload.get()).unwrap_or(0)
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
        if self.copied.load(Ordering::Relaxed) {
            registry.register(
                "sluice_archive_uploaded_segments",
                "Archive segments this node copied to the archive's bucket",
                self.uploaded.clone(),
            );
            registry.register(
                "sluice_archive_upload_failures",
                "Archive segment copies to the bucket that failed (tried again on the next pass)",
                self.upload_failures.clone(),
            );
            registry.register(
                "sluice_archive_segments_awaiting_upload",
                "Rotated archive segments of this node not yet in the bucket; growing, the copies are failing",
                self.awaiting_upload.clone(),
            );
        }
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
        "sluice_archive_uploaded_segments_total",
        "sluice_archive_upload_failures_total",
        "sluice_archive_segments_awaiting_upload",
    ]
    .map(String::from)
    .to_vec()
}

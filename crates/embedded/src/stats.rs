//! Statistics: a queue's counts and activity, the engine's disk and cache use.

use sluice_broker::EngineError;
use sluice_broker::{QueueStats, StorageStats};

use crate::engine::EmbeddedBroker;

/// The log's disk use (none while the log is closed or cannot be listed),
/// the body cache's size, and whether writes are refused.
pub(crate) fn storage_stats(broker: &EmbeddedBroker) -> Option<StorageStats> {
    let log = match broker.inner.journal.store() {
        // Closed: refusing writes, or being reopened.
        Err(_) => None,
        Ok(Some(store)) => match store.segments().disk_use() {
            Ok(used) => Some(used),
            // Better no sample than a wrong one.
            Err(e) => {
                tracing::warn!(error = %e, "listing the log's segments failed");
                None
            }
        },
        Ok(None) => Some((0, 0)),
    };
    Some(StorageStats {
        log,
        cached_body_bytes: broker.cached_body_bytes() as u64,
        writes_refused: broker.storage_failure().is_some(),
    })
}

/// A queue's counts and activity (rule M1).
pub(crate) async fn queue_stats(
    broker: &EmbeddedBroker,
    name: &str,
) -> Result<QueueStats, EngineError> {
    let cell = broker.queue(name)?;
    let inner = &broker.inner;
    let now = inner.now();
    let (counts, oldest, groups_in_flight, awaiting_archive, fair) = {
        let st = inner.lock_current(&cell, now)?;
        let fair = st.fair_stats(now);
        (
            st.counts(),
            st.oldest_enqueued_at(),
            st.groups_in_flight(),
            st.expired_count() as u64,
            fair,
        )
    };
    Ok(QueueStats {
        groups_in_flight,
        awaiting_archive,
        fair,
        ..cell
            .activity
            .stats(counts, oldest.map_or(0, |t| now.saturating_sub(t)))
    })
}

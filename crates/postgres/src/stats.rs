//! A queue's counts and the age of its oldest message, for
//! GetQueueAttributes and the metrics (rule M1), and a fair queue's counts
//! outside its noisy tenants (rule V10).

use sluice_broker::{EngineError, FairStats, QueueCounts};

use crate::engine::{PostgresBroker, expire, query, queue_row};
use crate::error;
use crate::rows::{UNGROUPED_IN_FAIR_QUEUE, col};

/// What [`PostgresBroker::queue_stats_inner`] reads of a queue.
pub(crate) struct Snapshot {
    pub(crate) counts: QueueCounts,
    pub(crate) oldest_age_ms: u64,
    pub(crate) id: i64,
    /// FIFO: groups with a message in flight.
    pub(crate) groups_in_flight: u64,
    /// Messages past retention held for the archive (rule X8).
    pub(crate) awaiting_archive: u64,
    pub(crate) fair: FairStats,
}

impl PostgresBroker {
    /// Counts, oldest message age, the queue's id, for a FIFO queue its
    /// groups with a message in flight, and for a fair queue its noisy
    /// tenants and the quiet ones' counts.
    pub(crate) async fn queue_stats_inner(&self, name: &str) -> Result<Snapshot, EngineError> {
        let inner = &self.inner;
        let now = inner.now();
        let mut client = inner.client().await?;
        let q = {
            let tx = client.transaction().await.map_err(error::db)?;
            let q = queue_row(&tx, name, "").await?;
            expire(inner, &tx, &q, now).await?;
            tx.commit().await.map_err(error::db)?;
            q
        };
        let fair = q.fair && !q.config.fifo;
        let noisy = match fair.then(|| inner.fair.known(q.id, now)) {
            Some(Some(known)) => Some(known),
            Some(None) => Some(inner.fair.refresh(&client, &q, now).await?),
            None => None,
        };
        let noisy_groups: Vec<String> = noisy.as_ref().map_or_else(Vec::new, |n| n.groups.to_vec());
        // Groups are counted only where they are reported (the filter, not
        // a CASE around the aggregate, keeps the rows from its sort):
        // counting distinct groups sorts every row in flight. `$4 AND`
        // first: AND stops at false, so only a fair queue's rows are
        // matched against its noisy tenants.
        let rows = query(
            &client,
            "SELECT count(*) FILTER (WHERE visible_at <= $2),
                    count(*) FILTER (WHERE visible_at > $2 AND receive_count > 0),
                    count(*) FILTER (WHERE visible_at > $2 AND receive_count = 0),
                    min(enqueued_at) FILTER (WHERE NOT back),
                    count(DISTINCT group_id)
                        FILTER (WHERE $3 AND visible_at > $2 AND receive_count > 0),
                    count(*) FILTER (WHERE quiet AND visible_at <= $2),
                    count(*) FILTER (WHERE quiet AND visible_at > $2 AND receive_count = 0),
                    min(enqueued_at) FILTER (WHERE quiet AND visible_at <= $2),
                    (SELECT count(*) FROM sluice_expired e WHERE e.queue_id = $1)
             FROM (SELECT *, $4 AND NOT (coalesce(group_id, $6) = ANY($5::text[])) AS quiet
                   FROM sluice_messages WHERE queue_id = $1) m",
            &[
                &q.id,
                &now,
                &q.config.fifo,
                &fair,
                &noisy_groups,
                &UNGROUPED_IN_FAIR_QUEUE,
            ],
        )
        .await?;
        let row = rows
            .first()
            .ok_or_else(|| EngineError::Storage("no counts".into()))?;
        let count = |i| col::<i64>(row, i).map(|n| n.max(0) as u64);
        let age = |i| col::<Option<i64>>(row, i).map(|t| t.map_or(0, |t| (now - t).max(0) as u64));
        let counts = QueueCounts {
            visible: count(0)?,
            in_flight: count(1)?,
            delayed: count(2)?,
        };
        let fair = match &noisy {
            Some(noisy) => FairStats {
                noisy_groups: noisy.groups.len() as u64,
                quiet_visible: count(5)?,
                quiet_in_flight: counts.in_flight.saturating_sub(noisy.in_flight),
                quiet_delayed: count(6)?,
                quiet_oldest_age_ms: age(7)?,
            },
            None => FairStats::default(),
        };
        Ok(Snapshot {
            counts,
            oldest_age_ms: age(3)?,
            id: q.id,
            groups_in_flight: count(4)?,
            awaiting_archive: count(8)?,
            fair,
        })
    }
}

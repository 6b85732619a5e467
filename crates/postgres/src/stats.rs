//! A queue's counts and the age of its oldest message, for
//! GetQueueAttributes and the metrics (rule M1).

use sluice_broker::{EngineError, QueueCounts};

use crate::engine::{PostgresBroker, expire, query, queue_row};
use crate::error;
use crate::rows::col;

impl PostgresBroker {
    /// Counts, oldest message age, the queue's id, and for a FIFO queue its
    /// groups with a message in flight.
    pub(crate) async fn queue_stats_inner(
        &self,
        name: &str,
    ) -> Result<(QueueCounts, u64, i64, u64), EngineError> {
        let inner = &self.inner;
        let now = inner.now();
        let mut client = inner.client().await?;
        let tx = client.transaction().await.map_err(error::db)?;
        let q = queue_row(&tx, name, "").await?;
        expire(inner, &tx, &q, now).await?;
        let rows = query(
            &tx,
            "SELECT count(*) FILTER (WHERE visible_at <= $2),
                    count(*) FILTER (WHERE visible_at > $2 AND receive_count > 0),
                    count(*) FILTER (WHERE visible_at > $2 AND receive_count = 0),
                    min(enqueued_at) FILTER (WHERE NOT back),
                    count(DISTINCT group_id) FILTER (WHERE visible_at > $2 AND receive_count > 0)
             FROM sluice_messages WHERE queue_id = $1",
            &[&q.id, &now],
        )
        .await?;
        tx.commit().await.map_err(error::db)?;
        let row = rows
            .first()
            .ok_or_else(|| EngineError::Storage("no counts".into()))?;
        let count = |i| col::<i64>(row, i).map(|n| n.max(0) as u64);
        let counts = QueueCounts {
            visible: count(0)?,
            in_flight: count(1)?,
            delayed: count(2)?,
        };
        let oldest: Option<i64> = col(row, 3)?;
        let age = oldest.map_or(0, |t| (now - t).max(0) as u64);
        let groups_in_flight = if q.config.fifo { count(4)? } else { 0 };
        Ok((counts, age, q.id, groups_in_flight))
    }
}

//! Activity counters across nodes (rule M1). Each node counts what it
//! serves in memory (`/metrics` shows those, per node, as Prometheus
//! expects); every [`FLUSH_INTERVAL`] it adds what it counted since its
//! last flush to `sluice_activity`, in one statement. The table's totals
//! only grow, whatever node restarts, and are what alarms read.

use std::sync::{Arc, Weak};
use std::time::Duration;

use sluice_broker::EngineError;
use sluice_broker::QueueStats;
use sluice_broker::activity::{Activity, get};

use crate::engine::{Counts, Flusher, Inner, PostgresBroker, query};
use crate::error;
use crate::rows::col;

/// How often each node adds its counts to the shared totals: the lag of
/// an alarm on a counter behind the activity.
pub const FLUSH_INTERVAL: Duration = Duration::from_secs(1);

fn counts(a: &Activity) -> Counts {
    [
        get(&a.sent),
        get(&a.sent_bytes),
        get(&a.received),
        get(&a.deleted),
        get(&a.empty_receives),
        get(&a.dead_lettered),
        get(&a.redriven),
        get(&a.expired),
    ]
}

impl Flusher {
    /// Adds this node's new counts to the shared totals; the number of
    /// queues whose totals changed. What fails to flush is flushed later.
    pub(crate) async fn flush(&mut self, inner: &Inner) -> Result<usize, EngineError> {
        let now: Vec<(i64, Counts)> = inner
            .activity
            .lock()
            .iter()
            .map(|(id, a)| (*id, counts(a)))
            .collect();
        let mut ids = Vec::new();
        let mut columns: [Vec<i64>; 8] = Default::default();
        for (id, c) in &now {
            let before = self.flushed.get(id).copied().unwrap_or_default();
            // A counter below its flushed value belongs to a deleted and
            // re-created queue entry: count it from zero.
            let delta: Counts = std::array::from_fn(|i| {
                if c[i] >= before[i] {
                    c[i] - before[i]
                } else {
                    c[i]
                }
            });
            if delta.iter().any(|d| *d > 0) {
                ids.push(*id);
                for (column, d) in columns.iter_mut().zip(delta) {
                    column.push(d.min(i64::MAX as u64) as i64);
                }
            }
        }
        if !ids.is_empty() {
            let mut client = inner.client().await?;
            let tx = client.transaction().await.map_err(error::db)?;
            // The join skips queues deleted meanwhile (their counts go with them).
            query(
                &tx,
                "INSERT INTO sluice_activity AS t (queue_id, sent, sent_bytes, received, deleted,
                     empty_receives, dead_lettered, redriven, expired)
                 SELECT d.* FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[],
                     $5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[], $9::bigint[])
                     AS d(queue_id, sent, sent_bytes, received, deleted, empty_receives,
                          dead_lettered, redriven, expired)
                 JOIN sluice_queues q ON q.id = d.queue_id
                 ORDER BY d.queue_id
                 ON CONFLICT (queue_id) DO UPDATE SET
                     sent = t.sent + EXCLUDED.sent,
                     sent_bytes = t.sent_bytes + EXCLUDED.sent_bytes,
                     received = t.received + EXCLUDED.received,
                     deleted = t.deleted + EXCLUDED.deleted,
                     empty_receives = t.empty_receives + EXCLUDED.empty_receives,
                     dead_lettered = t.dead_lettered + EXCLUDED.dead_lettered,
                     redriven = t.redriven + EXCLUDED.redriven,
                     expired = t.expired + EXCLUDED.expired",
                &[
                    &ids,
                    &columns[0],
                    &columns[1],
                    &columns[2],
                    &columns[3],
                    &columns[4],
                    &columns[5],
                    &columns[6],
                    &columns[7],
                ],
            )
            .await?;
            tx.commit().await.map_err(error::db)?;
        }
        // Forget queues this node no longer counts (deleted).
        self.flushed = now.into_iter().collect();
        Ok(ids.len())
    }
}

fn spawn(inner: Weak<Inner>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut interval = tokio::time::interval(FLUSH_INTERVAL);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            interval.tick().await;
            let Some(inner) = inner.upgrade() else { break };
            let flushed = inner.flusher.lock().await.flush(&inner).await;
            if let Err(e) = flushed {
                tracing::warn!(error = %e, "activity counters not shared; retrying later");
            }
        }
    })
}

/// The shared activity totals of queue `id`, zero before any flush.
async fn totals(inner: &Arc<Inner>, id: i64) -> Result<Counts, EngineError> {
    let mut client = inner.client().await?;
    let tx = client.transaction().await.map_err(error::db)?;
    let rows = query(
        &tx,
        "SELECT sent, sent_bytes, received, deleted, empty_receives, dead_lettered,
                redriven, expired
         FROM sluice_activity WHERE queue_id = $1",
        &[&id],
    )
    .await?;
    tx.commit().await.map_err(error::db)?;
    let mut out = Counts::default();
    if let Some(row) = rows.first() {
        for (i, slot) in out.iter_mut().enumerate() {
            *slot = col::<i64>(row, i)?.max(0) as u64;
        }
    }
    Ok(out)
}

impl PostgresBroker {
    /// Starts adding this node's activity counters to the totals all nodes
    /// share, every [`FLUSH_INTERVAL`]. Stops when the engine is dropped.
    pub fn start_activity_sync(&self) -> tokio::task::JoinHandle<()> {
        spawn(Arc::downgrade(&self.inner))
    }

    /// Adds this node's activity counted since the last flush to the
    /// shared totals now; the number of queues whose totals changed.
    pub async fn flush_activity(&self) -> Result<usize, EngineError> {
        let inner = &self.inner;
        inner.flusher.lock().await.flush(inner).await
    }

    /// The queue's counts with every node's activity, as flushed.
    pub(crate) async fn cluster_stats(&self, name: &str) -> Result<QueueStats, EngineError> {
        let snapshot = self.queue_stats_inner(name).await?;
        let id = snapshot.id;
        let [
            sent,
            sent_bytes,
            received,
            deleted,
            empty_receives,
            dead_lettered,
            redriven,
            expired,
        ] = totals(&self.inner, id).await?;
        let local = self.inner.activity(id);
        Ok(QueueStats {
            counts: snapshot.counts,
            oldest_age_ms: snapshot.oldest_age_ms,
            sent,
            sent_bytes,
            received,
            deleted,
            empty_receives,
            dead_lettered,
            redriven,
            expired,
            // Not among the shared totals: this node's counts.
            deduplicated: get(&local.deduplicated),
            dead_lettered_by_class: local.dead_lettered_by_class(),
            groups_in_flight: snapshot.groups_in_flight,
            awaiting_archive: snapshot.awaiting_archive,
            fair: snapshot.fair,
        })
    }
}

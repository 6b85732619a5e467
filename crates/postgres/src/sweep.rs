//! The periodic sweep: retention (rule V7) for queues nobody reads, and
//! expired deduplication ids and receive attempts. One node at a time runs
//! it, under a transaction-scoped advisory lock; if that node dies the next
//! tick of another node takes over.

use std::sync::{Arc, Weak};
use std::time::Duration;

use sluice_core::SqsError;

use crate::rows::col;
use crate::{Inner, error, execute, locks, query};

/// How often each node tries to sweep.
const SWEEP_INTERVAL: Duration = Duration::from_secs(5);
/// Most messages one sweep deletes, to keep its transaction short.
const BATCH: i64 = 10_000;

pub(crate) fn spawn(inner: Weak<Inner>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut interval = tokio::time::interval(SWEEP_INTERVAL);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            interval.tick().await;
            let Some(inner) = inner.upgrade() else { break };
            // Receives skip expired messages but leave them to the sweep:
            // a full batch means more wait, so go on (a few batches per
            // tick, each its own short transaction).
            for _ in 0..MAX_BATCHES_PER_TICK {
                match sweep_pass(&inner).await {
                    Ok(Some(n)) if n as i64 >= BATCH => continue,
                    Ok(_) => break,
                    Err(e) => {
                        tracing::warn!(error = %e, "retention sweep failed; retrying later");
                        break;
                    }
                }
            }
        }
    })
}

/// Most batches one tick deletes.
const MAX_BATCHES_PER_TICK: usize = 10;

/// Sweeps now unless another node is; true when this node swept.
pub(crate) async fn sweep_once(inner: &Arc<Inner>) -> Result<bool, SqsError> {
    Ok(sweep_pass(inner).await?.is_some())
}

/// One sweep: the messages it deleted, or `None` when another node holds
/// the sweep's lock.
async fn sweep_pass(inner: &Arc<Inner>) -> Result<Option<usize>, SqsError> {
    let now = inner.now();
    let mut client = inner.client().await?;
    let tx = client.transaction().await.map_err(error::db)?;
    let rows = query(
        &tx,
        "SELECT pg_try_advisory_xact_lock($1)",
        &[&locks::SWEEP],
    )
    .await?;
    let got: bool = match rows.first() {
        Some(r) => col(r, 0)?,
        None => false,
    };
    if !got {
        return Ok(None);
    }
    let expired = query(
        &tx,
        "WITH doomed AS (
            SELECT m.queue_id, m.seq FROM sluice_messages m JOIN sluice_queues q ON q.id = m.queue_id
            WHERE m.enqueued_at <= $1 - (q.config->>'message_retention_period')::bigint * 1000
            LIMIT $2 FOR UPDATE OF m SKIP LOCKED)
         DELETE FROM sluice_messages m USING doomed
         WHERE m.queue_id = doomed.queue_id AND m.seq = doomed.seq
         RETURNING m.queue_id",
        &[&now, &BATCH],
    )
    .await?;
    execute(
        &tx,
        "DELETE FROM sluice_dedup WHERE expires_at <= $1",
        &[&now],
    )
    .await?;
    execute(
        &tx,
        "DELETE FROM sluice_receive_attempts WHERE expires_at <= $1",
        &[&now],
    )
    .await?;
    tx.commit().await.map_err(error::db)?;
    for row in &expired {
        crate::activity::add(&inner.activity(col(row, 0)?).expired, 1);
    }
    Ok(Some(expired.len()))
}

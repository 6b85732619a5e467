//! The periodic sweep: retention (rule V7) for queues nobody reads, and
//! expired deduplication ids and receive attempts. One node at a time runs
//! it, under a transaction-scoped advisory lock; if that node dies the next
//! tick of another node takes over.

use std::sync::{Arc, Weak};
use std::time::Duration;

use sluice_broker::EngineError;

use crate::engine::{Inner, PostgresBroker, execute, query};
use crate::retention::{expired_seqs, keep_expired, message_columns_of};
use crate::rows::col;
use crate::{error, locks};

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
pub(crate) async fn sweep_once(inner: &Arc<Inner>) -> Result<bool, EngineError> {
    Ok(sweep_pass(inner).await?.is_some())
}

impl PostgresBroker {
    /// Starts the background task that applies retention and forgets
    /// expired deduplication ids and receive attempts, on one node at a
    /// time. Stops when the engine is dropped.
    pub fn start_sweeper(&self) -> tokio::task::JoinHandle<()> {
        spawn(Arc::downgrade(&self.inner))
    }

    /// Applies retention to every queue now, if no other node is doing it.
    pub async fn sweep(&self) -> Result<bool, EngineError> {
        sweep_once(&self.inner).await
    }
}

/// One sweep: the messages it deleted, or `None` when another node holds
/// the sweep's lock.
async fn sweep_pass(inner: &Arc<Inner>) -> Result<Option<usize>, EngineError> {
    let now = inner.now();
    // Every node forgets its expired data keys; the sweeping node deletes
    // their rows below.
    let key_cut = (now as u64).saturating_sub(sluice_keyring::EXPIRY_MS) as i64;
    inner.data_keys.expire(key_cut as u64);
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
        &format!(
            "WITH queues AS (
                SELECT id, $1 - (config->>'message_retention_period')::bigint * 1000 AS cut,
                       coalesce((config->>'archive_expired')::boolean, false) AS archive
                FROM sluice_queues
             ), doomed AS (
                SELECT q.id AS queue_id, e.seq FROM queues q
                CROSS JOIN LATERAL ({}) e LIMIT $2
             ), locked AS (
                SELECT m.queue_id, m.seq FROM sluice_messages m
                JOIN doomed d ON m.queue_id = d.queue_id AND m.seq = d.seq
                FOR UPDATE OF m SKIP LOCKED
             ), gone AS (
                DELETE FROM sluice_messages m USING locked
                WHERE m.queue_id = locked.queue_id AND m.seq = locked.seq
                RETURNING m.queue_id, {}
             ), kept AS (
                {}
             )
             SELECT queue_id FROM gone",
            expired_seqs("q.id", "q.cut", "$2"),
            message_columns_of("m"),
            // Rule X8: a queue that keeps what expires keeps it for the archive.
            keep_expired("queue_id IN (SELECT id FROM queues WHERE archive)")
        ),
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
    execute(
        &tx,
        "DELETE FROM sluice_idempotency WHERE expires_at <= $1",
        &[&now],
    )
    .await?;
    execute(
        &tx,
        "DELETE FROM sluice_data_keys WHERE (record->>'created_at')::bigint < $1",
        &[&key_cut],
    )
    .await?;
    tx.commit().await.map_err(error::db)?;
    for row in &expired {
        sluice_broker::activity::add(&inner.activity(col(row, 0)?).expired, 1);
    }
    Ok(Some(expired.len()))
}

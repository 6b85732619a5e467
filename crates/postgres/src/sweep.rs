//! The periodic sweep: retention (rule V7) for queues nobody reads, and
//! expired deduplication ids and receive attempts. One node at a time runs
//! it, under a transaction-scoped advisory lock; if that node dies the next
//! tick of another node takes over.

use std::sync::{Arc, Weak};
use std::time::Duration;

use sluice_broker::EngineError;

use crate::engine::{Inner, execute, query};
use crate::rows::col;
use crate::{error, locks};

/// How often each node tries to sweep.
const SWEEP_INTERVAL: Duration = Duration::from_secs(5);
/// Most messages one sweep deletes, to keep its transaction short.
const BATCH: i64 = 10_000;

/// SQL for the seqs of queue `queue`'s messages enqueued at or before
/// `cut` (expressions), at most `limit` of each kind, through indexes only:
/// - messages moved in (`moved`), whose enqueue time may be older than the
///   messages stored before them (rule R3), through the age index, which
///   holds them alone;
/// - the others, in seq order, before the first message of the queue
///   enqueued after `cut`, through the primary key. A message gets its seq
///   when it is stored, and is enqueued then unless moved, when its enqueue
///   time can only be older: every message after that first one was stored
///   after `cut`. Sends on several nodes, or combined in one statement, may
///   store a message a few milliseconds out of order; one expired just
///   behind an unexpired one waits for the next pass, and no receive
///   delivers it meanwhile (they skip expired messages).
pub(crate) fn expired_seqs(queue: &str, cut: &str, limit: &str) -> String {
    format!(
        "(SELECT seq FROM sluice_messages
          WHERE queue_id = {queue} AND moved AND enqueued_at <= {cut} LIMIT {limit})
         UNION ALL
         (SELECT seq FROM sluice_messages
          WHERE queue_id = {queue} AND NOT moved AND enqueued_at <= {cut}
            AND seq < COALESCE((SELECT f.seq FROM sluice_messages f
                                WHERE f.queue_id = {queue} AND f.enqueued_at > {cut}
                                ORDER BY f.seq LIMIT 1), {max})
          ORDER BY seq LIMIT {limit})",
        max = i64::MAX
    )
}

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

/// One sweep: the messages it deleted, or `None` when another node holds
/// the sweep's lock.
async fn sweep_pass(inner: &Arc<Inner>) -> Result<Option<usize>, EngineError> {
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
        &format!(
            "WITH queues AS (
                SELECT id, $1 - (config->>'message_retention_period')::bigint * 1000 AS cut
                FROM sluice_queues
             ), doomed AS (
                SELECT q.id AS queue_id, e.seq FROM queues q
                CROSS JOIN LATERAL ({}) e LIMIT $2
             ), locked AS (
                SELECT m.queue_id, m.seq FROM sluice_messages m
                JOIN doomed d ON m.queue_id = d.queue_id AND m.seq = d.seq
                FOR UPDATE OF m SKIP LOCKED
             )
             DELETE FROM sluice_messages m USING locked
             WHERE m.queue_id = locked.queue_id AND m.seq = locked.seq
             RETURNING m.queue_id",
            expired_seqs("q.id", "q.cut", "$2")
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
    tx.commit().await.map_err(error::db)?;
    for row in &expired {
        sluice_broker::activity::add(&inner.activity(col(row, 0)?).expired, 1);
    }
    Ok(Some(expired.len()))
}

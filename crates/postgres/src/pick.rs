//! Which messages a receive takes: the next visible ones of a standard
//! queue, locked in order (`FOR UPDATE SKIP LOCKED`), or the heads of a
//! FIFO queue's groups that have nothing in flight (rules V2, F1, F13).

use crate::encryption::message_rows;
use crate::engine::query;
use crate::rows::{MESSAGE_COLUMNS, MessageRow, QueueRow, col};
use sluice_broker::EngineError;
use sluice_keyring::DataKeys;

/// Up to `want` receivable messages, locked, in delivery order.
pub(crate) async fn pick(
    tx: &deadpool_postgres::Transaction<'_>,
    q: &QueueRow,
    now: i64,
    want: usize,
    exclude: &[i64],
    noisy: &[String],
    keys: &DataKeys,
) -> Result<Vec<MessageRow>, EngineError> {
    if q.config.fifo {
        return pick_fifo(tx, q, now, want, exclude, keys).await;
    }
    let want = want as i64;
    if noisy.is_empty() {
        // Visible longest first: the index's own order, so no sort.
        let sql = format!(
            "SELECT {MESSAGE_COLUMNS} FROM sluice_messages
             WHERE queue_id = $1 AND visible_at <= $2 AND NOT (seq = ANY($4))
             ORDER BY visible_at, back, seq LIMIT $3 FOR UPDATE SKIP LOCKED"
        );
        return message_rows(keys, tx, &sql, &[&q.id, &now, &want, &exclude]).await;
    }
    // A fair queue with noisy tenants (V10): the quiet tenants' messages
    // first, oldest first, then the noisy tenants' in the order given
    // (fewest in flight first), each one's oldest first. Each group's
    // oldest receivable messages are read through the group index, one
    // probe per group, so a noisy tenant's backlog is never scanned; the
    // ungrouped messages are one group there (rows::UNGROUPED_IN_FAIR_QUEUE)
    // and quiet, each a tenant of its own.
    let sql = format!(
        "WITH RECURSIVE {GROUPS}
        SELECT h.seq FROM groups CROSS JOIN LATERAL (
            SELECT seq FROM sluice_messages m
            WHERE m.queue_id = $1 AND m.group_id = groups.g AND m.visible_at <= $2
              AND NOT (m.seq = ANY($4))
            ORDER BY seq LIMIT $3
        ) h WHERE groups.g IS NOT NULL
        ORDER BY array_position($5::text[], groups.g) NULLS FIRST, h.seq LIMIT $3"
    );
    let order = query(tx, &sql, &[&q.id, &now, &want, &exclude, &noisy])
        .await?
        .iter()
        .map(|r| col(r, 0))
        .collect::<Result<Vec<i64>, _>>()?;
    if order.is_empty() {
        return Ok(Vec::new());
    }
    lock_in_order(tx, q, now, &order, "FOR UPDATE SKIP LOCKED", keys).await
}

/// The rows of `order` still receivable, locked, in that order.
async fn lock_in_order(
    tx: &deadpool_postgres::Transaction<'_>,
    q: &QueueRow,
    now: i64,
    order: &[i64],
    lock: &str,
    keys: &DataKeys,
) -> Result<Vec<MessageRow>, EngineError> {
    let sql = format!(
        "SELECT {MESSAGE_COLUMNS} FROM sluice_messages
         WHERE queue_id = $1 AND seq = ANY($2) AND visible_at <= $3 {lock}"
    );
    let mut rows = message_rows(keys, tx, &sql, &[&q.id, &order, &now]).await?;
    rows.sort_by_key(|m| order.iter().position(|&s| s == m.seq));
    Ok(rows)
}

/// The group ids of queue `$1`, one index probe each however many messages
/// they hold (a loose index scan of the group index, which holds grouped
/// messages only), as the CTE `groups (g)`; ends with NULL.
const GROUPS: &str = "groups (g) AS (
        (SELECT group_id FROM sluice_messages
         WHERE queue_id = $1 AND group_id IS NOT NULL ORDER BY group_id LIMIT 1)
      UNION ALL
        SELECT (SELECT m.group_id FROM sluice_messages m
                WHERE m.queue_id = $1 AND m.group_id > groups.g
                ORDER BY m.group_id LIMIT 1)
        FROM groups WHERE groups.g IS NOT NULL
    )";

/// Every group of a FIFO queue with its head (the oldest message), when
/// the head is receivable and whether it was received before, in the order
/// groups take turns (rule F14): by when the head became receivable, a
/// never-received head first at the same moment (after [`GROUPS`]).
const FIFO_HEADS: &str = "
    SELECT groups.g, h.seq, h.visible_at FROM groups
    CROSS JOIN LATERAL (
        SELECT seq, visible_at, receive_count FROM sluice_messages m
        WHERE m.queue_id = $1 AND m.group_id = groups.g ORDER BY seq LIMIT 1
    ) h
    WHERE groups.g IS NOT NULL AND h.visible_at <= $2
    ORDER BY h.visible_at, h.receive_count > 0, h.seq";

/// FIFO delivery (rules F1, F13): per group, the run of receivable
/// messages from its head up to the first one still in flight, none while
/// the head is in flight; groups in the turn order of [`FIFO_HEADS`], and
/// as much of one group as the receive takes. The caller holds the
/// queue's lock, so nothing is skipped.
async fn pick_fifo(
    tx: &deadpool_postgres::Transaction<'_>,
    q: &QueueRow,
    now: i64,
    want: usize,
    exclude: &[i64],
    keys: &DataKeys,
) -> Result<Vec<MessageRow>, EngineError> {
    let sql = format!("WITH RECURSIVE {GROUPS} {FIFO_HEADS}");
    let heads = query(tx, &sql, &[&q.id, &now]).await?;
    let mut order: Vec<i64> = Vec::with_capacity(want);
    for head in &heads {
        if order.len() >= want {
            break;
        }
        let head_visible_at: i64 = col(head, 2)?;
        if head_visible_at > now {
            continue;
        }
        let group: String = col(head, 0)?;
        let run_len = (want - order.len() + exclude.len()) as i64;
        let run = query(
            tx,
            "SELECT seq, visible_at FROM sluice_messages
             WHERE queue_id = $1 AND group_id = $2 ORDER BY seq LIMIT $3",
            &[&q.id, &group, &run_len],
        )
        .await?;
        for m in &run {
            let (seq, visible_at): (i64, i64) = (col(m, 0)?, col(m, 1)?);
            if visible_at > now || order.len() >= want {
                break;
            }
            // Taken by an earlier pick of this receive: the run goes on.
            if !exclude.contains(&seq) {
                order.push(seq);
            }
        }
    }
    if order.is_empty() {
        return Ok(Vec::new());
    }
    lock_in_order(tx, q, now, &order, "FOR UPDATE", keys).await
}

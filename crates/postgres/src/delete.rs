//! DeleteMessage and DeleteMessageBatch by receipt handle (rule V4), combined
//! per queue into one statement when several arrive together.

use std::collections::HashMap;

use sluice_broker::EngineError;
use sluice_core::receipt::ReceiptHandle;

use crate::engine::{DeleteRequest, DeleteResults, PostgresBroker, execute, query};
use crate::error;
use crate::rows::{QueueRow, col};
use sluice_broker::activity;

/// Deletes by receipt handle (rule V4); FIFO queues accept only the
/// latest delivery's handle while it is in flight.
pub(crate) async fn delete(
    b: &PostgresBroker,
    name: &str,
    handles: Vec<String>,
) -> Result<Vec<Result<(), EngineError>>, EngineError> {
    let inner = &b.inner;
    let now = inner.now();
    let q = inner.queue_by_name(name).await?;
    let decoded: Vec<Option<ReceiptHandle>> = handles
        .iter()
        .map(|h| ReceiptHandle::decode(h).filter(|rh| rh.queue_id == q.id as u64 && rh.receive > 0))
        .collect();
    if !q.config.fifo {
        // Taken only once the request's turn comes: requests waiting in
        // line must not hold the pool's connections.
        let q2 = q.clone();
        return inner
            .deletes
            .run(
                q.id,
                DeleteRequest { handles, decoded },
                |requests| async move {
                    let client = b.inner.client().await?;
                    delete_standard(b, &client, &q2, &requests).await
                },
            )
            .await;
    }
    let mut client = inner.client().await?;
    let tx = client.transaction().await.map_err(error::db)?;
    let seqs: Vec<i64> = decoded.iter().flatten().map(|rh| rh.seq as i64).collect();
    let rows = query(
        &tx,
        "SELECT seq, receive_count, visible_at FROM sluice_messages
         WHERE queue_id = $1 AND seq = ANY($2) ORDER BY seq FOR UPDATE",
        &[&q.id, &seqs],
    )
    .await?;
    let found = rows
        .iter()
        .map(|r| {
            Ok((
                col::<i64>(r, 0)?,
                col::<i32>(r, 1)? as u32,
                col::<i64>(r, 2)?,
            ))
        })
        .collect::<Result<Vec<_>, EngineError>>()?;
    let state = |seq: i64| {
        found
            .iter()
            .find(|(s, _, _)| *s == seq)
            .map(|&(_, count, visible_at)| (count, visible_at))
    };
    let mut doomed = Vec::new();
    let results = handles
        .iter()
        .zip(&decoded)
        .map(|(handle, rh)| {
            let rh = rh.ok_or_else(|| EngineError::ReceiptHandleIsInvalid {
                handle: handle.to_owned(),
            })?;
            match state(rh.seq as i64) {
                // Already deleted: deleting again succeeds (rule V4).
                None => Ok(()),
                Some((count, visible_at))
                    if q.config.fifo
                        && rh.receive <= count
                        && (rh.receive != count || visible_at <= now) =>
                {
                    Err(EngineError::ReceiptHandleExpired {
                        handle: handle.to_owned(),
                    })
                }
                Some((count, _)) if rh.receive > count => {
                    Err(EngineError::ReceiptHandleIsInvalid {
                        handle: handle.to_owned(),
                    })
                }
                Some(_) => {
                    doomed.push(rh.seq as i64);
                    Ok(())
                }
            }
        })
        .collect::<Vec<_>>();
    doomed.sort_unstable();
    doomed.dedup();
    if !doomed.is_empty() {
        execute(
            &tx,
            "DELETE FROM sluice_messages WHERE queue_id = $1 AND seq = ANY($2)",
            &[&q.id, &doomed],
        )
        .await?;
    }
    tx.commit().await.map_err(error::db)?;
    activity::add(&inner.activity(q.id).deleted, doomed.len() as u64);
    // A delete may open its group to this node's waiting receives (rule
    // F13). Other nodes' are not told: a NOTIFY here would make every FIFO
    // delete wait for a disk flush; their long polls look again when a
    // message of the queue is due or at their end.
    if !doomed.is_empty() {
        inner.wake(name);
    }
    Ok(results)
}

/// Standard-queue delete requests in one statement, committed on its own:
/// a handle deletes its message if that delivery happened (any delivery,
/// not only the latest); one naming a delivery that never happened is
/// refused. Each request gets its own handles' outcomes.
async fn delete_standard(
    b: &PostgresBroker,
    client: &deadpool_postgres::Object,
    q: &QueueRow,
    requests: &[DeleteRequest],
) -> Result<Vec<Result<DeleteResults, EngineError>>, EngineError> {
    let valid = || requests.iter().flat_map(|r| r.decoded.iter().flatten());
    let seqs: Vec<i64> = valid().map(|rh| rh.seq as i64).collect();
    let receives: Vec<i32> = valid()
        .map(|rh| rh.receive.min(i32::MAX as u32) as i32)
        .collect();
    // Each handle's message and its receive count: those the DELETE took,
    // as it found them, and the others as they were before it (one
    // snapshot per statement), which tells a forged handle from a message
    // already gone. Only rows the DELETE left are read again.
    let rows = query(
        client,
        "WITH gone AS (
            DELETE FROM sluice_messages m USING unnest($2::bigint[], $3::int[]) AS h(seq, receive)
            WHERE m.queue_id = $1 AND m.seq = h.seq AND m.receive_count >= h.receive
            RETURNING m.seq, m.receive_count, m.group_id, m.last_receive_at
         )
         SELECT seq, receive_count, TRUE, group_id, last_receive_at FROM gone
         UNION ALL
         SELECT m.seq, m.receive_count, FALSE, NULL, 0 FROM sluice_messages m
         WHERE m.queue_id = $1
           AND m.seq = ANY(ARRAY(SELECT unnest($2::bigint[]) EXCEPT SELECT seq FROM gone))",
        &[&q.id, &seqs, &receives],
    )
    .await?;
    let mut deleted = 0u64;
    let mut counts: HashMap<i64, u32> = HashMap::with_capacity(rows.len());
    let now = b.inner.now();
    for r in &rows {
        counts.insert(col(r, 0)?, col::<i32>(r, 1)?.max(0) as u32);
        if col::<bool>(r, 2)? {
            deleted += 1;
            // A fair queue weighs its tenants by processing time (V10):
            // this message's ended now.
            if q.fair {
                let group: Option<String> = col(r, 3)?;
                b.inner
                    .fair
                    .finished(q.id, now, group.as_deref(), col(r, 4)?);
            }
        }
    }
    let results = requests
        .iter()
        .map(|r| {
            Ok(r.handles
                .iter()
                .zip(&r.decoded)
                .map(|(handle, rh)| {
                    let rh = rh.ok_or_else(|| EngineError::ReceiptHandleIsInvalid {
                        handle: handle.to_owned(),
                    })?;
                    match counts.get(&(rh.seq as i64)) {
                        Some(&count) if rh.receive > count => {
                            Err(EngineError::ReceiptHandleIsInvalid {
                                handle: handle.to_owned(),
                            })
                        }
                        // Deleted now, or already gone: both succeed (rule V4).
                        _ => Ok(()),
                    }
                })
                .collect())
        })
        .collect();
    activity::add(&b.inner.activity(q.id).deleted, deleted);
    Ok(results)
}

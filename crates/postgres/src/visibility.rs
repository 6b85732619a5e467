//! ChangeMessageVisibility(Batch) and the in-flight lookup NackMessage and
//! moves share (rules V5, V20, X2).

use sluice_broker::handles::{self, Delivery};
use sluice_broker::{EngineError, VisibilityChange};
use sluice_core::receipt::ReceiptHandle;

use crate::engine::{PostgresBroker, announce, execute, query, queue_row};
use crate::error;
use crate::rows::{QueueRow, col};

/// `handle`, decoded, with the message's failure record, when the message
/// it names is in flight under it (the message's row locked), with the errors ChangeMessageVisibility and
/// NackMessage give (rules V5, V20, X2: `handles.rs` in sluice-broker).
pub(crate) async fn in_flight(
    tx: &deadpool_postgres::Transaction<'_>,
    q: &QueueRow,
    handle: &str,
    now: i64,
    standard: bool,
) -> Result<InFlight, EngineError> {
    let rh = handles::decode_for_queue(handle, q.id as u64)?;
    // The failure record comes along in the same round trip: NackMessage
    // adds to it (ChangeMessageVisibility leaves it).
    let rows = query(
        tx,
        "SELECT receive_count, visible_at, failure_reason FROM sluice_messages
         WHERE queue_id = $1 AND seq = $2 FOR UPDATE",
        &[&q.id, &(rh.seq as i64)],
    )
    .await?;
    let (message, failure_reason) = match rows.first() {
        Some(row) => (
            Some(Delivery {
                receive_count: col::<i32>(row, 0)? as u32,
                in_flight: col::<i64>(row, 1)? > now,
            }),
            col::<Option<String>>(row, 2)?,
        ),
        None => (None, None),
    };
    handles::check_visibility_change(handle, &rh, message, standard)?;
    Ok(InFlight {
        handle: rh,
        failure_reason,
    })
}

/// A message found in flight under a receipt handle, locked for the
/// transaction.
pub(crate) struct InFlight {
    /// The handle, decoded.
    pub handle: ReceiptHandle,
    /// Its stored failure record, as stored (sealed when the queue seals).
    pub failure_reason: Option<String>,
}

/// Changes the visibility of in-flight messages (rules V5, V26).
pub(crate) async fn change_visibility(
    b: &PostgresBroker,
    name: &str,
    changes: Vec<VisibilityChange>,
) -> Result<Vec<Result<(), EngineError>>, EngineError> {
    let inner = &b.inner;
    let now = inner.now();
    let mut client = inner.client().await?;
    let tx = client.transaction().await.map_err(error::db)?;
    let q = queue_row(&tx, name, "").await?;
    let mut results = Vec::with_capacity(changes.len());
    let mut released = false;
    for c in &changes {
        let standard = !q.config.fifo;
        let checked = in_flight(&tx, &q, &c.receipt_handle, now, standard)
            .await
            .and_then(|found| {
                let rh = found.handle;
                handles::check_total_visibility(&rh, now as u64, c.visibility_timeout)?;
                Ok(rh.seq as i64)
            });
        let result = match checked {
            Ok(seq) => {
                let visible_at = now + i64::from(c.visibility_timeout) * 1000;
                execute(
                    &tx,
                    "UPDATE sluice_messages SET visible_at = $3 WHERE queue_id = $1 AND seq = $2",
                    &[&q.id, &seq, &visible_at],
                )
                .await?;
                released |= c.visibility_timeout == 0;
                Ok(())
            }
            Err(e @ (EngineError::Unavailable(_) | EngineError::Storage(_))) => return Err(e),
            Err(e) => Err(e),
        };
        results.push(result);
    }
    if released {
        announce(&tx, name).await?;
    }
    tx.commit().await.map_err(error::db)?;
    if released {
        inner.wake(name);
    }
    Ok(results)
}

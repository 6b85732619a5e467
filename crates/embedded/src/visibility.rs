//! ChangeMessageVisibility (and its batch): which receipt handles may
//! change a message's visibility (rules V5, V20), by how much (V26), and
//! the change.

use sluice_broker::handles::{self, Delivery};
use sluice_broker::{EngineError, VisibilityChange};
use sluice_core::receipt::ReceiptHandle;

use crate::engine::EmbeddedBroker;
use crate::engine::deleted_error;
use crate::queue_state::{Phase, QueueState};

/// ChangeMessageVisibility and its batch.
pub(crate) async fn change_visibility(
    broker: &EmbeddedBroker,
    name: &str,
    changes_requested: Vec<VisibilityChange>,
) -> Result<Vec<Result<(), EngineError>>, EngineError> {
    let cell = broker.queue(name)?;
    let inner = &broker.inner;
    let now = inner.now();
    let mut woke = false;
    let (results, ticket) = {
        let mut st = cell.state.lock();
        if st.deleted {
            return Err(deleted_error());
        }
        let mut changes = Vec::new();
        inner.tick(&cell, &mut st, now, &mut changes);
        let standard = !st.meta.config.fifo;
        let results = changes_requested
            .iter()
            .map(|c| {
                let rh = in_flight_handle(&st, cell.id, &c.receipt_handle, standard)?;
                handles::check_total_visibility(&rh, now, c.visibility_timeout)?;
                let seq = rh.seq;
                let visible_at = now + u64::from(c.visibility_timeout) * 1000;
                st.set_visibility(seq, visible_at, now);
                woke |= c.visibility_timeout == 0;
                if let Some(state) = st.message_state(seq) {
                    inner.put_state(cell.id, seq, &state, &mut changes);
                }
                Ok(())
            })
            .collect::<Vec<_>>();
        (results, inner.submit(changes))
    };
    ticket.wait().await?;
    if woke {
        cell.arrivals.notify_waiters();
    }
    Ok(results)
}

/// `handle`, decoded, when the message it names is in flight under it,
/// with the errors ChangeMessageVisibility gives (rules V5, V20:
/// `handles.rs` in sluice-broker).
pub(crate) fn in_flight_handle(
    st: &QueueState,
    queue_id: u64,
    handle: &str,
    standard: bool,
) -> Result<ReceiptHandle, EngineError> {
    let rh = handles::decode_for_queue(handle, queue_id)?;
    let message = st.get(rh.seq).map(|entry| Delivery {
        receive_count: entry.receive_count,
        in_flight: entry.phase == Phase::InFlight,
    });
    handles::check_visibility_change(handle, &rh, message, standard)?;
    Ok(rh)
}

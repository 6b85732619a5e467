//! DeleteMessage and DeleteMessageBatch.

use sluice_broker::EngineError;
use sluice_broker::activity;
use sluice_core::receipt::ReceiptHandle;

use crate::change::Change;
use crate::engine::EmbeddedBroker;
use crate::engine::deleted_error;
use crate::queue_state::Phase;

/// DeleteMessage and DeleteMessageBatch.
pub(crate) async fn delete_messages(
    broker: &EmbeddedBroker,
    name: &str,
    receipt_handles: Vec<String>,
) -> Result<Vec<Result<(), EngineError>>, EngineError> {
    let cell = broker.queue(name)?;
    let inner = &broker.inner;
    // In a FIFO queue a delete may open its group to waiting receives
    // (rule F13).
    let mut opened = false;
    let (results, ticket) = {
        let mut st = cell.state.lock();
        if st.deleted {
            return Err(deleted_error());
        }
        let mut changes = Vec::new();
        let fifo = st.meta.config.fifo;
        inner.tick(&cell, &mut st, inner.now(), &mut changes);
        // While writes are refused a delete could not be recorded: refuse
        // it before it takes anything out of the index, so the message
        // stays where the disk has it (rule D5).
        if inner.journal.failure().is_some() {
            let ticket = inner.submit(std::mem::take(&mut changes));
            if let Some(refused) = ticket.refusal() {
                return Err(refused);
            }
        }
        let results = receipt_handles
            .iter()
            .map(|handle| {
                let rh = ReceiptHandle::decode(handle)
                    .filter(|rh| rh.queue_id == cell.id && rh.receive > 0)
                    .ok_or_else(|| EngineError::ReceiptHandleIsInvalid {
                        handle: handle.to_owned(),
                    })?;
                match st.get(rh.seq) {
                    // Already deleted: deleting again succeeds (rule V4).
                    None => Ok(()),
                    // FIFO: only the latest delivery, while in flight, may delete.
                    Some(e)
                        if fifo
                            && rh.receive <= e.receive_count
                            && (rh.receive != e.receive_count || e.phase != Phase::InFlight) =>
                    {
                        Err(EngineError::ReceiptHandleExpired {
                            handle: handle.to_owned(),
                        })
                    }
                    Some(e) if rh.receive > e.receive_count => {
                        Err(EngineError::ReceiptHandleIsInvalid {
                            handle: handle.to_owned(),
                        })
                    }
                    Some(_) => {
                        st.remove(rh.seq);
                        opened |= fifo;
                        activity::add(&cell.activity.deleted, 1);
                        if inner.journal.is_durable() {
                            changes.push(Change::DeleteMessage {
                                queue: cell.id,
                                seq: rh.seq,
                            });
                        }
                        Ok(())
                    }
                }
            })
            .collect::<Vec<_>>();
        (results, inner.submit(changes))
    };
    ticket.wait().await?;
    if opened {
        cell.arrivals.notify_waiters();
    }
    Ok(results)
}

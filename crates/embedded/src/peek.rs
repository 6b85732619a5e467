//! Peek: reading messages of a queue without receiving them, and how a
//! message looks to a peek or a redrive filter (rules X1, X3).

use std::sync::Arc;

use sluice_broker::EngineError;
use sluice_broker::failure;
use sluice_broker::{MessageFilter, PeekPage, PeekedMessage};

use crate::engine::EmbeddedBroker;
use crate::ids::{sequence_number, uuid_string};
use crate::message::{MessageData, MessageState};
use crate::queue_state::{Order, Phase, QueueState};

/// What a peek or a redrive copies out of the index under the lock, to
/// look at with the message's data once it is read.
#[derive(Debug, Clone)]
pub(crate) struct Snapshot {
    pub(crate) seq: u64,
    pub(crate) order: Option<Order>,
    pub(crate) state: MessageState,
    pub(crate) phase: Phase,
    pub(crate) body: Option<Arc<MessageData>>,
    pub(crate) failure: Option<Arc<str>>,
}

impl Snapshot {
    pub(crate) fn of(st: &QueueState, seq: u64, order: Option<Order>) -> Option<Self> {
        let state = st.message_state(seq)?;
        st.get(seq).map(|entry| Snapshot {
            seq,
            order,
            state,
            phase: entry.phase,
            body: entry.body.clone(),
            failure: st.failure(seq).cloned(),
        })
    }
}

/// How a message looks to a peek or a redrive filter (rules X1, X3).
pub(crate) fn peeked(snap: &Snapshot, data: &MessageData, fifo: bool) -> PeekedMessage {
    let seq = snap.seq;
    let (failure_reason, failure_class) =
        failure::shown(snap.failure.as_deref(), &data.system_attributes);
    PeekedMessage {
        position: seq,
        message_id: uuid_string(&data.message_id),
        body: data.body.clone(),
        attributes: data.attributes.clone(),
        system_attributes: data.system_attributes.clone(),
        sent_at: data.sent_at,
        receive_count: snap.state.receive_count,
        first_receive_at: snap.state.first_receive_at,
        last_receive_at: snap.state.last_receive_at,
        state: match snap.phase {
            Phase::Ready => "visible",
            Phase::InFlight => "in_flight",
            Phase::Delayed => "delayed",
        },
        group_id: data.group_id.clone(),
        dedup_id: data.dedup_id.clone(),
        sequence_number: fifo.then(|| sequence_number(seq)),
        failure_reason,
        failure_class,
    }
}

/// Messages looked at per lock hold while a peek or a redrive reads bodies.
pub(crate) const SCAN_CHUNK: usize = 256;

/// Peek: a page of a queue's messages without receiving them.
pub(crate) async fn peek_messages(
    broker: &EmbeddedBroker,
    name: &str,
    filter: &MessageFilter,
    after: Option<u64>,
    limit: usize,
) -> Result<PeekPage, EngineError> {
    let cell = broker.queue(name)?;
    let inner = &broker.inner;
    let now = inner.now();
    let seqs: Vec<u64> = {
        let st = inner.lock_current(&cell, now)?;
        st.iter_from(after.unwrap_or(0))
            .map(|(seq, _)| seq)
            .collect()
    };
    let mut page = PeekPage::default();
    for chunk in seqs.chunks(SCAN_CHUNK) {
        let (snaps, fifo) = {
            let st = inner.lock_current(&cell, now)?;
            let snaps: Vec<Snapshot> = chunk
                .iter()
                .filter_map(|&seq| Snapshot::of(&st, seq, None))
                .collect();
            (snaps, st.meta.config.fifo)
        };
        let bodies = inner
            .load_bodies(
                cell.id,
                snaps.iter().map(|p| (p.seq, p.body.clone())).collect(),
            )
            .await?;
        for (snap, data) in snaps.iter().zip(bodies) {
            // Gone since the index was read, or not on disk yet.
            let Some(data) = data else { continue };
            if page.messages.len() == limit {
                page.next = page.messages.last().map(|m| m.position);
                return Ok(page);
            }
            let peeked = peeked(snap, &data, fifo);
            if filter.matches(&peeked) {
                page.messages.push(peeked);
            }
        }
    }
    Ok(page)
}

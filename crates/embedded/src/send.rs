//! SendMessage and SendMessageBatch: new messages into a queue's index and
//! the journal, FIFO deduplication (rule F2).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use sluice_broker::EngineError;
use sluice_broker::activity;
use sluice_broker::{NewMessage, SentMessage};
use sluice_core::message::message_size;

use crate::change::Change;
use crate::codec;
use crate::dedup::{self, DedupWindow, Seen};
use crate::engine::EmbeddedBroker;
use crate::engine::deleted_error;
use crate::ids::{sequence_number, uuid_string};
use crate::message::{MessageData, MessageState};

/// SendMessage and SendMessageBatch.
pub(crate) async fn send_messages(
    broker: &EmbeddedBroker,
    name: &str,
    messages: Vec<NewMessage>,
) -> Result<Vec<SentMessage>, EngineError> {
    let cell = broker.queue(name)?;
    let inner = &broker.inner;
    let now = inner.now();
    let durable = inner.journal.is_durable();
    let seal = inner.sealer(&cell)?;
    // Build and encode outside the lock: only the sequence needs it.
    let prepared: Vec<(Arc<MessageData>, Option<u32>, Vec<u8>)> = messages
        .into_iter()
        .map(|m| {
            let data = MessageData {
                message_id: m
                    .keep_id
                    .unwrap_or_else(|| *uuid::Uuid::new_v4().as_bytes()),
                sent_at: now,
                enqueued_at: now,
                body: m.body,
                attributes: m.attributes,
                system_attributes: m.system_attributes,
                group_id: m.group_id,
                dedup_id: m.dedup_id,
                body_md5: m.body_md5,
            };
            let encoded = if durable {
                codec::encode_message(&data, seal.as_ref())
            } else {
                Vec::new()
            };
            (Arc::new(data), m.delay_seconds, encoded)
        })
        .collect();
    let mut sent = Vec::with_capacity(prepared.len());
    let ticket = {
        let mut st = cell.state.lock();
        if st.deleted {
            return Err(deleted_error());
        }
        let queue_delay = st.meta.config.delay_seconds;
        let fifo = st.meta.config.fifo;
        let per_group = st.meta.config.deduplicates_per_group();
        let mut changes = Vec::with_capacity(if durable { prepared.len() } else { 0 });
        for (data, delay, encoded) in prepared {
            // FIFO deduplication (rule F2): a live id answers with the
            // first message and enqueues nothing.
            let dedup_key = match (fifo, &data.dedup_id) {
                (true, Some(dedup_id)) => {
                    let key = DedupWindow::key(
                        per_group,
                        data.group_id.as_deref().unwrap_or(""),
                        dedup_id,
                    );
                    if let Some(seen) = st.dedup.get(&key, now) {
                        sent.push(SentMessage {
                            message_id: uuid_string(&seen.message_id),
                            sequence_number: Some(sequence_number(seen.seq)),
                        });
                        activity::add(&cell.activity.deduplicated, 1);
                        continue;
                    }
                    Some(key)
                }
                _ => None,
            };
            let seq = inner.next_seq.fetch_add(1, Ordering::SeqCst);
            if let Some(key) = dedup_key {
                let seen = Seen {
                    message_id: data.message_id,
                    seq,
                    expires_at: now + dedup::WINDOW_MS,
                };
                if durable {
                    changes.push(Change::PutDedup {
                        queue: cell.id,
                        key: key.clone(),
                        seen: seen.encode(),
                    });
                }
                st.dedup.insert(key, seen);
            }
            let delay_ms = u64::from(delay.unwrap_or(queue_delay)) * 1000;
            let state = MessageState {
                visible_at: now + delay_ms,
                receive_count: 0,
                first_receive_at: 0,
                last_receive_at: 0,
            };
            if durable {
                changes.push(Change::PutMessage {
                    queue: cell.id,
                    seq,
                    data: encoded,
                    state: codec::encode_state(&state),
                    in_log: None,
                });
            }
            sent.push(SentMessage {
                message_id: uuid_string(&data.message_id),
                sequence_number: fifo.then(|| sequence_number(seq)),
            });
            activity::add(&cell.activity.sent, 1);
            activity::add(
                &cell.activity.sent_bytes,
                message_size(&data.body, &data.attributes) as u64,
            );
            st.insert(
                seq,
                Some(data.clone()),
                data.enqueued_at,
                data.group_id.as_deref(),
                state,
                now,
            );
        }
        inner.submit(changes)
    };
    ticket.wait().await?;
    cell.arrivals.notify_waiters();
    Ok(sent)
}

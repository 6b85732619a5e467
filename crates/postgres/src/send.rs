//! SendMessage and SendMessageBatch: standard and fair queues' sends,
//! combined across concurrent requests (rules V1, V10); FIFO queues' in
//! `send_fifo.rs` (rules F1–F3).

use crate::sealing::seal_message;
use std::sync::Arc;

use sluice_broker::EngineError;
use sluice_broker::{NewMessage, SentMessage};
use sluice_core::message::message_size;
use tokio_postgres::types::{Json, ToSql};

use crate::engine::{PostgresBroker, execute};
use crate::error;
use crate::rows::{QueueRow, UNGROUPED_IN_FAIR_QUEUE, col};
use sluice_broker::activity;

/// Stores messages durably (rule V1), deduplicating FIFO sends (rule F2).
pub(crate) async fn send(
    b: &PostgresBroker,
    name: &str,
    messages: Vec<NewMessage>,
) -> Result<Vec<SentMessage>, EngineError> {
    let inner = &b.inner;
    let now = inner.now();
    let q = inner.queue_by_name(name).await?;
    let messages = Arc::new(messages);
    match send_to(b, &q, name, messages.clone(), now).await {
        // The queue this node remembers is gone: deleted, or deleted and
        // created again under a new id. Ask the database which.
        Err(EngineError::QueueDoesNotExist) => {
            inner.queues.forget(name);
            let q = inner.queue_by_name(name).await?;
            send_to(b, &q, name, messages, now).await
        }
        other => other,
    }
}

async fn send_to(
    b: &PostgresBroker,
    q: &QueueRow,
    name: &str,
    messages: Arc<Vec<NewMessage>>,
    now: i64,
) -> Result<Vec<SentMessage>, EngineError> {
    if !q.config.fifo {
        if !q.fair && messages.iter().any(|m| m.group_id.is_some()) {
            turn_fair(b, q, name).await?;
        }
        // Put together with the node's other sends to the queue
        // (combine.rs); the connection is taken once its turn comes.
        return b
            .inner
            .sends
            .run(q.id, messages, |requests| async move {
                let client = b.inner.client().await?;
                let together = send_standard(b, &client, q, name, &requests, now).await;
                match together {
                    // One request's messages must not fail another's: when
                    // the database refuses a combined insert for what it
                    // holds (not for the queue or the connection), each
                    // request is stored alone and keeps its own outcome.
                    Err(e)
                        if requests.len() > 1
                            && matches!(e, EngineError::Storage(_))
                            && !client.is_closed() =>
                    {
                        let mut alone = Vec::with_capacity(requests.len());
                        for request in &requests {
                            let one = std::slice::from_ref(request);
                            alone.push(match send_standard(b, &client, q, name, one, now).await {
                                Ok(mut results) => results.pop().unwrap_or_else(|| {
                                    Err(EngineError::Storage("a send lost its result".into()))
                                }),
                                Err(e) => Err(e),
                            });
                        }
                        Ok(alone)
                    }
                    other => other,
                }
            })
            .await;
    }
    crate::send_fifo::send_fifo(b, q, name, &messages, now).await
}

/// Tells every node that a queue may have a receivable message, in a
/// transaction of its own that does not wait for its commit to reach
/// disk. `NOTIFY` holds a database-wide lock from before its commit until
/// the commit is flushed: in the transaction of a send it serialised every
/// send on one disk flush each (about 250 a second on a 4 ms disk, so
/// 2,500 messages/s in batches of 10). A lost announcement only delays a
/// long poll on another node; the messages are durable before it is sent.
const ANNOUNCE_ARRIVAL: &str =
    "SELECT set_config('synchronous_commit', 'off', true), pg_notify('sluice_arrivals', $1)";

/// Turns a standard queue fair on its first grouped message (V10): from
/// then on its tenants are told apart, and its ungrouped messages, those
/// already stored included, carry [`UNGROUPED_IN_FAIR_QUEUE`] so that
/// fair receives find them in the group index. Updating the queue's row
/// waits for the sends holding it (they lock it `FOR SHARE`), and the
/// sends after it wait for the commit and then see the queue fair: no
/// ungrouped message of a fair queue is left out of the index.
async fn turn_fair(b: &PostgresBroker, q: &QueueRow, name: &str) -> Result<(), EngineError> {
    let mut client = b.inner.client().await?;
    let tx = client.transaction().await.map_err(error::db)?;
    let turned = execute(
        &tx,
        "UPDATE sluice_queues SET fair = TRUE WHERE id = $1 AND NOT fair",
        &[&q.id],
    )
    .await?;
    if turned > 0 {
        // A statement of its own: its snapshot holds every send that
        // held the row before the update above.
        execute(
            &tx,
            "UPDATE sluice_messages SET group_id = $2 WHERE queue_id = $1 AND group_id IS NULL",
            &[&q.id, &UNGROUPED_IN_FAIR_QUEUE],
        )
        .await?;
    }
    tx.commit().await.map_err(error::db)?;
    b.inner.queues.mark_fair(name);
    Ok(())
}

/// All messages of a standard-queue send in one statement, committed on
/// its own; then, pipelined in the same round trip, the announcement to
/// every node ([`ANNOUNCE_ARRIVAL`]). Round trips were the engine's
/// main cost under load. (FIFO sends stay one by one: each is deduplicated
/// and numbered in order.)
async fn send_standard(
    b: &PostgresBroker,
    client: &deadpool_postgres::Object,
    q: &QueueRow,
    name: &str,
    requests: &[Arc<Vec<NewMessage>>],
    now: i64,
) -> Result<Vec<Result<Vec<SentMessage>, EngineError>>, EngineError> {
    let messages = || requests.iter().flat_map(|r| r.iter());
    let n = messages().count();
    // Sealed by the queue's data key (rule E1) when it asks for it.
    let sealed: Vec<_> = match b.sealer(q, Some(client)).await? {
        Some(seal) => messages()
            .map(|m| seal_message(Some(&seal), &m.body, &m.attributes, &m.system_attributes))
            .collect(),
        None => Vec::new(),
    };
    let mut ids = Vec::with_capacity(n);
    let mut bodies = Vec::with_capacity(n);
    let mut attributes = Vec::with_capacity(n);
    let mut system_attributes = Vec::with_capacity(n);
    let mut groups = Vec::with_capacity(n);
    let mut visible = Vec::with_capacity(n);
    let mut bytes = 0u64;
    for (i, m) in messages().enumerate() {
        ids.push(
            m.keep_id
                .map_or_else(uuid::Uuid::new_v4, uuid::Uuid::from_bytes),
        );
        match sealed.get(i) {
            Some((body, attrs, system)) => {
                bodies.push(body.as_str());
                attributes.push(Json(attrs));
                system_attributes.push(Json(system));
            }
            None => {
                bodies.push(m.body.as_str());
                attributes.push(Json(&m.attributes));
                system_attributes.push(Json(&m.system_attributes));
            }
        }
        groups.push(m.group_id.as_deref());
        let delay_ms = i64::from(m.delay_seconds.unwrap_or(q.config.delay_seconds)) * 1000;
        visible.push(now + delay_ms);
        bytes += message_size(&m.body, &m.attributes) as u64;
    }
    // The queue's row, read `FOR SHARE`, says whether it is fair (see
    // `turn_fair`); a queue deleted meanwhile has none, and stores nothing.
    let statement = client
        .prepare_cached(
            "WITH q AS (
                SELECT fair FROM sluice_queues WHERE id = $1 FOR SHARE
             ), stored AS (
                INSERT INTO sluice_messages
                    (queue_id, seq, message_id, body, attributes, system_attributes, group_id,
                     sent_at, enqueued_at, visible_at)
                SELECT $1, nextval('sluice_message_seq'), m.id, m.body, m.attributes,
                       m.system_attributes,
                       COALESCE(m.group_id, CASE WHEN q.fair THEN $9::text END),
                       $2, $2, m.visible_at
                FROM q, unnest($3::uuid[], $4::text[], $5::jsonb[], $6::jsonb[], $7::text[],
                               $8::bigint[])
                     AS m(id, body, attributes, system_attributes, group_id, visible_at)
                RETURNING 1
             )
             SELECT count(*) FROM stored",
        )
        .await
        .map_err(error::db)?;
    let announcement = client
        .prepare_cached(ANNOUNCE_ARRIVAL)
        .await
        .map_err(error::db)?;
    // Pipelined: both go out at once and run in order, the announcement
    // in its own transaction once the messages are committed (after a
    // failed insert it only wakes a poll for nothing).
    let params: [&(dyn ToSql + Sync); 9] = [
        &q.id,
        &now,
        &ids,
        &bodies,
        &attributes,
        &system_attributes,
        &groups,
        &visible,
        &UNGROUPED_IN_FAIR_QUEUE,
    ];
    let announce_params: [&(dyn ToSql + Sync); 1] = [&name];
    let (stored, announced) = tokio::join!(
        client.query_one(&statement, &params),
        client.execute(&announcement, &announce_params),
    );
    if let Err(e) = announced {
        // The messages are stored; polls elsewhere find them at their
        // next attempt.
        tracing::warn!(error = %e, queue = name, "arrival not announced");
    }
    let stored = stored.map_err(error::db)?;
    // The queue was deleted meanwhile: its row is gone, nothing stored.
    if (col::<i64>(&stored, 0)? as usize) < n {
        return Err(EngineError::QueueDoesNotExist);
    }
    let a = b.inner.activity(q.id);
    activity::add(&a.sent, n as u64);
    activity::add(&a.sent_bytes, bytes);
    b.inner.wake(name);
    let mut ids = ids.into_iter();
    Ok(requests
        .iter()
        .map(|r| {
            Ok(ids
                .by_ref()
                .take(r.len())
                .map(|id| SentMessage {
                    message_id: id.hyphenated().to_string(),
                    sequence_number: None,
                })
                .collect())
        })
        .collect())
}

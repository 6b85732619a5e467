//! SendMessage and SendMessageBatch on a FIFO queue, and the lock and
//! deduplication window FIFO sends and receives share: deduplication and
//! sequence order (rules F1–F3), a whole request in a fixed number of
//! statements (the queue's lock, one lookup of the deduplication ids, one
//! insert of the messages, one of their deduplication ids) whatever its
//! size.

use crate::sealing::seal_message;
use sluice_keyring::Sealer;
use std::collections::HashMap;

use sluice_broker::{EngineError, NewMessage, SentMessage, activity};
use sluice_core::message::message_size;
use tokio_postgres::types::Json;

use crate::engine::{PostgresBroker, announce, execute, query};
use crate::error;
use crate::rows::{QueueRow, col, sequence_number};

/// How long a deduplication id is remembered (rule F2).
pub(crate) const DEDUP_WINDOW_MS: i64 = 5 * 60 * 1000;

/// Serialises a FIFO queue's sends and receives until the transaction
/// ends, so sequence order is commit order and groups are never handed to
/// two consumers at once (rules F1, F3).
pub(crate) async fn lock_fifo(
    tx: &deadpool_postgres::Transaction<'_>,
    q: &QueueRow,
) -> Result<(), EngineError> {
    if q.config.fifo {
        query(tx, "SELECT pg_advisory_xact_lock($1)", &[&q.id]).await?;
    }
    Ok(())
}

/// [`lock_fifo`] for a send, which also holds the queue's row `FOR SHARE`
/// until it commits: a queue deleted meanwhile has no row, and the send
/// stores nothing (no foreign key stands guard; see `queues::delete_queue`).
async fn lock_fifo_queue(
    tx: &deadpool_postgres::Transaction<'_>,
    q: &QueueRow,
) -> Result<(), EngineError> {
    let rows = query(
        tx,
        "SELECT pg_advisory_xact_lock(id) FROM sluice_queues WHERE id = $1 FOR SHARE",
        &[&q.id],
    )
    .await?;
    if rows.is_empty() {
        return Err(EngineError::QueueDoesNotExist);
    }
    Ok(())
}

/// The messages in array order: `nextval` runs as the rows come out of
/// `unnest`, so sequence numbers follow the request's order.
const INSERT_MESSAGES: &str = "INSERT INTO sluice_messages
    (queue_id, seq, message_id, body, attributes, system_attributes, group_id, dedup_id,
     sent_at, enqueued_at, visible_at)
    SELECT $1, nextval('sluice_message_seq'), m.id, m.body, m.attributes, m.system_attributes,
           m.group_id, m.dedup_id, $2, $2, m.visible_at
    FROM unnest($3::uuid[], $4::text[], $5::jsonb[], $6::jsonb[], $7::text[], $8::text[],
                $9::bigint[])
         AS m(id, body, attributes, system_attributes, group_id, dedup_id, visible_at)
    RETURNING message_id, seq";

/// What becomes of one message of the request.
enum Fate {
    /// Stored: its place among the messages inserted.
    Stored(usize),
    /// A duplicate of a message stored within the window.
    SeenBefore(uuid::Uuid, i64),
    /// A duplicate of an earlier message of this request.
    SameRequest(usize),
}

/// Stores messages on FIFO queue `q` (rules F1–F3): each deduplicated
/// against the window and the request's earlier messages, the others
/// stored in the request's order.
pub(crate) async fn send_fifo(
    b: &PostgresBroker,
    q: &QueueRow,
    name: &str,
    messages: &[NewMessage],
    now: i64,
) -> Result<Vec<SentMessage>, EngineError> {
    let mut client = b.inner.client().await?;
    // Before the transaction: a new data key is stored on its own.
    let seal = b.sealer(q, Some(&client)).await?;
    let tx = client.transaction().await.map_err(error::db)?;
    lock_fifo_queue(&tx, q).await?;
    let per_group = q.config.deduplicates_per_group();
    // PostgreSQL text holds no NUL: the group's length keeps "a" + "b:c"
    // apart from "a:b" + "c".
    let keys: Vec<Option<String>> = messages
        .iter()
        .map(|m| {
            m.dedup_id.as_ref().map(|dedup_id| {
                if per_group {
                    let group = m.group_id.as_deref().unwrap_or("");
                    format!("{}:{group}:{dedup_id}", group.len())
                } else {
                    dedup_id.clone()
                }
            })
        })
        .collect();
    let wanted: Vec<&str> = keys.iter().flatten().map(String::as_str).collect();
    let mut seen: HashMap<String, (uuid::Uuid, i64)> = HashMap::new();
    if !wanted.is_empty() {
        let rows = query(
            &tx,
            "SELECT key, message_id, seq FROM sluice_dedup
             WHERE queue_id = $1 AND key = ANY($2) AND expires_at > $3",
            &[&q.id, &wanted, &now],
        )
        .await?;
        for row in &rows {
            seen.insert(col(row, 0)?, (col(row, 1)?, col(row, 2)?));
        }
    }
    // Decided in the request's order: a key seen before, or first used by
    // an earlier message of this request, makes a duplicate.
    let mut first_in_request: HashMap<&str, usize> = HashMap::new();
    let mut stored: Vec<usize> = Vec::new();
    let mut fates = Vec::with_capacity(messages.len());
    for (i, key) in keys.iter().enumerate() {
        let fate = match key.as_deref() {
            Some(key) => match (seen.get(key), first_in_request.get(key)) {
                (Some(&(id, seq)), _) => Fate::SeenBefore(id, seq),
                (None, Some(&earlier)) => Fate::SameRequest(earlier),
                (None, None) => {
                    first_in_request.insert(key, stored.len());
                    Fate::Stored(stored.len())
                }
            },
            None => Fate::Stored(stored.len()),
        };
        if let Fate::Stored(_) = fate {
            stored.push(i);
        }
        fates.push(fate);
    }
    let ids: Vec<uuid::Uuid> = stored
        .iter()
        .map(|&i| {
            messages[i]
                .keep_id
                .map_or_else(uuid::Uuid::new_v4, uuid::Uuid::from_bytes)
        })
        .collect();
    let seqs = insert(&tx, q, messages, &stored, &ids, now, seal.as_ref()).await?;
    let (dedup_keys, dedup_ids, dedup_seqs): (Vec<&str>, Vec<uuid::Uuid>, Vec<i64>) = stored
        .iter()
        .enumerate()
        .filter_map(|(k, &i)| keys[i].as_deref().map(|key| (key, ids[k], seqs[k])))
        .fold(
            Default::default(),
            |(mut a, mut b, mut c), (key, id, seq)| {
                a.push(key);
                b.push(id);
                c.push(seq);
                (a, b, c)
            },
        );
    if !dedup_keys.is_empty() {
        execute(
            &tx,
            "INSERT INTO sluice_dedup (queue_id, key, message_id, seq, expires_at)
             SELECT $1, d.key, d.id, d.seq, $5
             FROM unnest($2::text[], $3::uuid[], $4::bigint[]) AS d(key, id, seq)
             ON CONFLICT (queue_id, key) DO UPDATE SET message_id = EXCLUDED.message_id,
               seq = EXCLUDED.seq, expires_at = EXCLUDED.expires_at",
            &[
                &q.id,
                &dedup_keys,
                &dedup_ids,
                &dedup_seqs,
                &(now + DEDUP_WINDOW_MS),
            ],
        )
        .await?;
    }
    let bytes = stored
        .iter()
        .map(|&i| message_size(&messages[i].body, &messages[i].attributes) as u64)
        .sum();
    commit_send(b, tx, q, name, stored.len() as u64, bytes).await?;
    let deduplicated = (messages.len() - stored.len()) as u64;
    activity::add(&b.inner.activity(q.id).deduplicated, deduplicated);
    Ok(fates
        .into_iter()
        .map(|fate| {
            let (id, seq) = match fate {
                Fate::Stored(k) | Fate::SameRequest(k) => (ids[k], seqs[k]),
                Fate::SeenBefore(id, seq) => (id, seq),
            };
            SentMessage {
                message_id: id.hyphenated().to_string(),
                sequence_number: Some(sequence_number(seq)),
            }
        })
        .collect())
}

/// Inserts the messages of `messages` at positions `stored` with ids
/// `ids`; their sequence numbers, in the same order.
async fn insert(
    tx: &deadpool_postgres::Transaction<'_>,
    q: &QueueRow,
    messages: &[NewMessage],
    stored: &[usize],
    ids: &[uuid::Uuid],
    now: i64,
    seal: Option<&Sealer>,
) -> Result<Vec<i64>, EngineError> {
    if stored.is_empty() {
        return Ok(Vec::new());
    }
    let pick = |i: &usize| &messages[*i];
    // Sealed by the queue's data key (rule E1) when it asks for it.
    let columns: Vec<_> = stored
        .iter()
        .map(|i| {
            let m = pick(i);
            seal_message(seal, &m.body, &m.attributes, &m.system_attributes)
        })
        .collect();
    let bodies: Vec<&str> = columns.iter().map(|c| c.0.as_str()).collect();
    let attributes: Vec<_> = columns.iter().map(|c| Json(&c.1)).collect();
    let system: Vec<_> = columns.iter().map(|c| Json(&c.2)).collect();
    let groups: Vec<Option<&str>> = stored.iter().map(|i| pick(i).group_id.as_deref()).collect();
    let dedup: Vec<Option<&str>> = stored.iter().map(|i| pick(i).dedup_id.as_deref()).collect();
    let visible: Vec<i64> = stored
        .iter()
        .map(|i| {
            let delay = pick(i).delay_seconds.unwrap_or(q.config.delay_seconds);
            now + i64::from(delay) * 1000
        })
        .collect();
    let rows = query(
        tx,
        INSERT_MESSAGES,
        &[
            &q.id,
            &now,
            &ids,
            &bodies,
            &attributes,
            &system,
            &groups,
            &dedup,
            &visible,
        ],
    )
    .await?;
    // Matched by id: RETURNING's order is not promised.
    let mut by_id: HashMap<uuid::Uuid, i64> = HashMap::with_capacity(rows.len());
    for row in &rows {
        by_id.insert(col(row, 0)?, col(row, 1)?);
    }
    ids.iter()
        .map(|id| {
            by_id
                .get(id)
                .copied()
                .ok_or_else(|| EngineError::Storage("a stored message lost its number".into()))
        })
        .collect()
}

/// Commits a send: announces the arrivals to every node, then counts them
/// and wakes this node's long polls.
async fn commit_send(
    b: &PostgresBroker,
    tx: deadpool_postgres::Transaction<'_>,
    q: &QueueRow,
    name: &str,
    stored: u64,
    bytes: u64,
) -> Result<(), EngineError> {
    if stored > 0 {
        announce(&tx, name).await?;
    }
    tx.commit().await.map_err(error::db)?;
    let a = b.inner.activity(q.id);
    activity::add(&a.sent, stored);
    activity::add(&a.sent_bytes, bytes);
    if stored > 0 {
        b.inner.wake(name);
    }
    Ok(())
}

//! ReceiveMessage: one short transaction per attempt that picks messages
//! with `FOR UPDATE SKIP LOCKED`, moves those over maxReceiveCount to the
//! dead-letter queue and delivers the rest (rules V2, R2–R4, F1, F4, V10);
//! a long poll (rule V6) waits between attempts for a send on any node or
//! the next visibility or delay due time.

use crate::encryption::{load_keys_of, message_rows};
use sluice_keyring::DataKeys;
use std::time::Duration;

use sluice_broker::EngineError;
use sluice_broker::{ReceiveOptions, ReceivedMessage};
use sluice_core::limits::{BACK_OF_QUEUE_RECEIVES, MAX_INFLIGHT};

use crate::dead_letter::{self, dead_letter_target, key_of_arn_near};
use crate::engine::{PostgresBroker, Share, execute, expire, query};
use crate::error;
use crate::pick::pick;
use crate::rows::{MESSAGE_COLUMNS, MessageRow, QueueRow, col};
use crate::send_fifo::{DEDUP_WINDOW_MS, lock_fifo};
use sluice_broker::activity;

/// Receives, waiting up to `options.wait` for a message.
pub(crate) async fn receive(
    b: &PostgresBroker,
    name: &str,
    options: ReceiveOptions,
) -> Result<Vec<ReceivedMessage>, EngineError> {
    let inner = &b.inner;
    let waiter = inner.waiter(name);
    let deadline = tokio::time::Instant::now() + options.wait;
    loop {
        let notified = waiter.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        let now = inner.now();
        let attempt = receive_once(b, name, &options, now).await?;
        if !attempt.delivered.is_empty() {
            activity::add(
                &inner.activity(attempt.queue_id).received,
                attempt.delivered.len() as u64,
            );
            return Ok(attempt.delivered);
        }
        let now_instant = tokio::time::Instant::now();
        if now_instant >= deadline {
            activity::add(&inner.activity(attempt.queue_id).empty_receives, 1);
            return Ok(Vec::new());
        }
        // Sleep until a send wakes us, the next message is due, or the deadline.
        let wake_at = match attempt.next_due {
            Some(due) => {
                deadline.min(now_instant + Duration::from_millis((due - now).max(1).unsigned_abs()))
            }
            None => deadline,
        };
        tokio::select! {
            _ = &mut notified => {}
            _ = tokio::time::sleep_until(wake_at) => {}
        }
    }
}

/// How long a node trusts its count of a queue's messages in flight. The
/// limit (rule L4) is approximate, as in SQS; counting on every receive
/// would read every in-flight row each time.
const IN_FLIGHT_RECOUNT: Duration = Duration::from_secs(1);

/// What one attempt found.
struct Attempt {
    queue_id: i64,
    delivered: Vec<ReceivedMessage>,
    /// When the next delayed or in-flight message becomes receivable.
    next_due: Option<i64>,
}

async fn receive_once(
    b: &PostgresBroker,
    name: &str,
    options: &ReceiveOptions,
    now: i64,
) -> Result<Attempt, EngineError> {
    let inner = &b.inner;
    let q = inner.queue_by_name(name).await?;
    // A fair queue with a noisy tenant serves the quiet ones first (V10).
    let noisy = match (q.fair && !q.config.fifo).then(|| inner.fair.known(q.id, now)) {
        Some(Some(known)) => known.groups,
        Some(None) => {
            let client = inner.client().await?;
            inner.fair.refresh(&client, &q, now).await?.groups
        }
        None => Default::default(),
    };
    // Plain standard queues, and fair ones while no tenant is noisy, take
    // the one-statement path, put together with the node's other receives
    // on the queue (combine.rs); noisy tenants, retry backoff, FIFO
    // queues, the in-flight limit and dead letters take the transaction
    // below.
    if !q.config.fifo && noisy.is_empty() && q.config.backoff().is_none() {
        let counted = match known_in_flight(b, &q) {
            Some(count) => count,
            None => recount_in_flight(b, &inner.client().await?, &q, now).await?,
        };
        let room = MAX_INFLIGHT.saturating_sub(counted);
        if room > 0 {
            let max = (options.max_messages as usize).min(room);
            let visibility = options
                .visibility_timeout
                .unwrap_or(q.config.visibility_timeout);
            let fast_q = q.clone();
            let share = inner
                .receives
                .run((q.id, visibility), max, |wants| async move {
                    let client = b.inner.client().await?;
                    let now = b.inner.now();
                    receive_standard(b, &client, &fast_q, visibility, &wants, now).await
                })
                .await?;
            if share.dead == 0 {
                return Ok(Attempt {
                    queue_id: q.id,
                    delivered: share.delivered,
                    next_due: share.next_due,
                });
            }
            // Some picked messages are over maxReceiveCount: they move to
            // the dead-letter queue in a transaction, which may fill up
            // the receive with others.
            let mut delivered = share.delivered;
            let already = delivered.len();
            let mut client = inner.client().await?;
            let more = receive_locked(b, &mut client, &q, options, now, already, &noisy).await?;
            delivered.extend(more.delivered);
            let next_due = more.next_due.filter(|_| delivered.is_empty());
            return Ok(Attempt {
                queue_id: q.id,
                delivered,
                next_due,
            });
        }
    }
    let mut client = inner.client().await?;
    receive_locked(b, &mut client, &q, options, now, 0, &noisy).await
}

/// Messages in flight in `q` as this node counted them at most
/// [`IN_FLIGHT_RECOUNT`] ago. None tells the caller to count them: only
/// the first request to find the count stale or missing does (counting
/// reads every in-flight row), and the others keep the old count (none
/// yet: zero) until it is done.
fn known_in_flight(b: &PostgresBroker, q: &QueueRow) -> Option<usize> {
    let now = std::time::Instant::now();
    match b.inner.in_flight.lock().entry(q.id) {
        std::collections::hash_map::Entry::Occupied(mut known) => {
            let (count, at) = known.get_mut();
            if at.elapsed() < IN_FLIGHT_RECOUNT {
                return Some(*count);
            }
            *at = now;
            None
        }
        std::collections::hash_map::Entry::Vacant(none) => {
            none.insert((0, now));
            None
        }
    }
}

/// Messages in flight in `q` as this node last counted them (at most
/// [`IN_FLIGHT_RECOUNT`] ago), else counted now.
async fn in_flight<C: deadpool_postgres::GenericClient>(
    b: &PostgresBroker,
    client: &C,
    q: &QueueRow,
    now: i64,
) -> Result<usize, EngineError> {
    match known_in_flight(b, q) {
        Some(count) => Ok(count),
        None => recount_in_flight(b, client, q, now).await,
    }
}

/// Counts the messages in flight in `q` now, and remembers the count.
/// Only after [`known_in_flight`] said None: asking it again would find
/// the count it just marked as being recounted.
async fn recount_in_flight<C: deadpool_postgres::GenericClient>(
    b: &PostgresBroker,
    client: &C,
    q: &QueueRow,
    now: i64,
) -> Result<usize, EngineError> {
    let count = in_flight_count(client, q, now).await?;
    b.inner
        .in_flight
        .lock()
        .insert(q.id, (count, std::time::Instant::now()));
    Ok(count)
}

/// Plain standard-queue receives in one statement, committed on its own:
/// pick the messages visible longest first (skipping those another
/// receive holds, and those past retention, rule V7, which the sweep
/// deletes), hide them for the visibility timeout, count the receive and
/// send a message to the back past the third receive (V12). Messages over
/// maxReceiveCount are picked but left alone and counted, for the caller.
/// `wants` holds each request's most messages; each gets its share in
/// pick order.
async fn receive_standard(
    b: &PostgresBroker,
    client: &deadpool_postgres::Object,
    q: &QueueRow,
    visibility: u32,
    wants: &[usize],
    now: i64,
) -> Result<Vec<Result<Share, EngineError>>, EngineError> {
    let max: usize = wants.iter().sum();
    let inner = &b.inner;
    // Without its dead-letter queue a policy moves nothing: the messages
    // stay deliverable rather than vanish (rule R2). Whether it exists is
    // checked again, under a lock, before anything moves.
    let max_receives = match q.config.redrive_out_of(&q.name) {
        Some(policy) => {
            match inner
                .queue(
                    client,
                    &key_of_arn_near(&q.name, &policy.dead_letter_target_arn),
                )
                .await
            {
                Ok(_) => Some(policy.max_receive_count as i32),
                Err(EngineError::QueueDoesNotExist) => None,
                Err(e) => return Err(e),
            }
        }
        None => None,
    };
    let back_after = max_receives
        .filter(|&n| n > BACK_OF_QUEUE_RECEIVES as i32)
        .map_or(i32::MAX, |_| BACK_OF_QUEUE_RECEIVES as i32);
    let visible_at = now + i64::from(visibility) * 1000;
    let cut = now - q.retention_ms();
    // `enqueued_at + 0`: the retention filter must not lead the planner to
    // the age index (a generic plan did, under load), which reads the
    // queue's whole backlog and sorts it; the receive index's own order
    // reads only the rows it takes.
    let sql = format!(
        "WITH picked AS (
            SELECT ctid, seq, receive_count, visible_at, back FROM sluice_messages
            WHERE queue_id = $1 AND visible_at <= $2 AND enqueued_at + 0 > $3
            ORDER BY visible_at, back, seq LIMIT $4 FOR UPDATE SKIP LOCKED
         ), taken AS (
            UPDATE sluice_messages m SET receive_count = m.receive_count + 1,
                first_receive_at = CASE WHEN m.first_receive_at = 0 THEN $2
                                        ELSE m.first_receive_at END,
                last_receive_at = $2, visible_at = $6,
                back = m.back OR (m.receive_count + 1 >= $7)
            FROM picked p
            WHERE m.ctid = p.ctid AND p.receive_count < $5
            RETURNING {TAKEN_COLUMNS}, p.visible_at AS was_visible_at, p.back AS was_back
         )
         SELECT {TAKEN_COLUMNS}, (SELECT count(*) FROM picked WHERE receive_count >= $5)
         FROM (SELECT 1) one LEFT JOIN taken m ON TRUE
         ORDER BY m.was_visible_at, m.was_back, m.seq"
    );
    let rows = query(
        client,
        &sql,
        &[
            &q.id,
            &now,
            &cut,
            &(max as i64),
            &max_receives.unwrap_or(i32::MAX),
            &visible_at,
            &back_after,
        ],
    )
    .await?;
    load_keys_of(&inner.data_keys, client, &rows, (2, 13)).await?;
    let mut dead = 0;
    let mut delivered = Vec::with_capacity(rows.len());
    for r in &rows {
        dead = col::<i64>(r, 14)?;
        if col::<Option<i64>>(r, 0)?.is_some() {
            delivered.push(MessageRow::from_row(r, &inner.data_keys)?.received(q.id, false));
        }
    }
    if let Some((count, _)) = inner.in_flight.lock().get_mut(&q.id) {
        *count += delivered.len();
    }
    let next_due = if delivered.is_empty() && dead == 0 {
        next_due(client, q, now).await?
    } else {
        None
    };
    let mut messages = delivered.into_iter();
    Ok(wants
        .iter()
        .map(|&want| {
            let delivered: Vec<ReceivedMessage> = messages.by_ref().take(want).collect();
            let short = delivered.len() < want;
            Ok(Share {
                delivered,
                dead: if short { dead } else { 0 },
                next_due,
            })
        })
        .collect())
}

/// [`MESSAGE_COLUMNS`] of the rows a receive updated (`m`).
const TAKEN_COLUMNS: &str = "m.seq, m.message_id, m.body, m.attributes, m.system_attributes, \
     m.group_id, m.dedup_id, m.sent_at, m.enqueued_at, m.visible_at, m.receive_count, \
     m.first_receive_at, m.last_receive_at, m.failure_reason";

/// When the next delayed or in-flight message of `q` becomes receivable.
async fn next_due<C: deadpool_postgres::GenericClient>(
    client: &C,
    q: &QueueRow,
    now: i64,
) -> Result<Option<i64>, EngineError> {
    let rows = query(
        client,
        "SELECT min(visible_at) FROM sluice_messages WHERE queue_id = $1 AND visible_at > $2",
        &[&q.id, &now],
    )
    .await?;
    match rows.first() {
        Some(r) => col::<Option<i64>>(r, 0),
        None => Ok(None),
    }
}

/// A receive in one transaction, for every kind of queue: after `already`
/// messages the one-statement path delivered, or instead of it.
async fn receive_locked(
    b: &PostgresBroker,
    client: &mut deadpool_postgres::Object,
    q: &QueueRow,
    options: &ReceiveOptions,
    now: i64,
    already: usize,
    noisy: &[String],
) -> Result<Attempt, EngineError> {
    let inner = &b.inner;
    let tx = client.transaction().await.map_err(error::db)?;
    lock_fifo(&tx, q).await?;
    expire(inner, &tx, q, now).await?;
    let fifo = q.config.fifo;

    // A FIFO receive retried with the same attempt id gets the same
    // messages and handles while they are still its (rule F4).
    if let (true, Some(attempt_id)) = (fifo, &options.attempt_id)
        && let Some(replay) = replay_attempt(&tx, q, attempt_id, now, &inner.data_keys).await?
    {
        tx.commit().await.map_err(error::db)?;
        return Ok(Attempt {
            queue_id: q.id,
            delivered: replay,
            next_due: None,
        });
    }

    let room = MAX_INFLIGHT.saturating_sub(in_flight(b, &tx, q, now).await?);
    // A FIFO queue at the limit answers as if nothing were ready, without
    // an error (rule L4); only a standard queue says OverLimit.
    if room == 0 && already == 0 && !fifo && has_ready(&tx, q, now).await? {
        return Err(EngineError::OverLimit);
    }
    let max = (options.max_messages as usize)
        .saturating_sub(already)
        .min(room);
    // Without its dead-letter queue a policy moves nothing: the messages
    // stay deliverable rather than vanish (rule R2).
    let dlq = match q.config.redrive_out_of(&q.name) {
        Some(policy) => dead_letter_target(
            &tx,
            &key_of_arn_near(&q.name, &policy.dead_letter_target_arn),
        )
        .await?
        .map(|dlq| (policy, dlq)),
        None => None,
    };
    let max_receives = dlq.as_ref().map(|(p, _)| p.max_receive_count as i32);

    let mut chosen: Vec<MessageRow> = Vec::new();
    let mut dead: Vec<MessageRow> = Vec::new();
    // Dead messages leave the queue and make room for others: pick again
    // until the receive is full or a pick moves nothing to the DLQ.
    loop {
        let exclude: Vec<i64> = chosen.iter().map(|m| m.seq).collect();
        let want = max - chosen.len();
        if want == 0 {
            break;
        }
        let picked = pick(&tx, q, now, want, &exclude, noisy, &b.inner.data_keys).await?;
        let mut died = false;
        for m in picked {
            if max_receives.is_some_and(|limit| m.receive_count >= limit) {
                died = true;
                dead.push(m);
            } else {
                chosen.push(m);
            }
        }
        if !died {
            break;
        }
        if let Some((policy, dlq)) = &dlq {
            let route = dead_letter::DeadLetterRoute {
                source: q,
                dead_letter_target_arn: &policy.dead_letter_target_arn,
                dlq,
                trigger: "maxReceiveCount",
            };
            dead_letter::move_to_dead_letter_queue(b, &tx, route, std::mem::take(&mut dead), now)
                .await?;
        }
    }

    let visibility = options
        .visibility_timeout
        .unwrap_or(q.config.visibility_timeout);
    let visible_at = now + i64::from(visibility) * 1000;
    // Each delivery is hidden for the visibility timeout plus the queue's
    // retry backoff for that attempt; in a standard queue whose
    // maxReceiveCount is above 3, the third receive sends a message to the
    // back (rule V12).
    let backoff = q.config.backoff();
    let back_after = (!fifo && max_receives.is_some_and(|n| n > BACK_OF_QUEUE_RECEIVES as i32))
        .then_some(BACK_OF_QUEUE_RECEIVES as i32);
    let seqs: Vec<i64> = chosen.iter().map(|m| m.seq).collect();
    let hidden_until: Vec<i64> = chosen
        .iter()
        .map(|m| {
            let count = (m.receive_count + 1) as u32;
            let delay = backoff.map_or(0, |b| b.delay_for(count, m.seq as u64, now as u64));
            visible_at + delay as i64
        })
        .collect();
    if !seqs.is_empty() {
        execute(
            &tx,
            "UPDATE sluice_messages m SET receive_count = m.receive_count + 1,
                first_receive_at = CASE WHEN m.first_receive_at = 0 THEN $3 ELSE m.first_receive_at END,
                last_receive_at = $3, visible_at = d.hidden_until,
                back = m.back OR (m.receive_count + 1 >= $5)
             FROM unnest($2::bigint[], $4::bigint[]) AS d(seq, hidden_until)
             WHERE m.queue_id = $1 AND m.seq = d.seq",
            &[&q.id, &seqs, &now, &hidden_until, &back_after.unwrap_or(i32::MAX)],
        )
        .await?;
    }
    if let Some((count, _)) = inner.in_flight.lock().get_mut(&q.id) {
        *count += seqs.len();
    }
    let delivered: Vec<ReceivedMessage> = chosen
        .into_iter()
        .zip(hidden_until)
        .map(|(mut m, hidden_until)| {
            m.receive_count += 1;
            if m.first_receive_at == 0 {
                m.first_receive_at = now;
            }
            m.last_receive_at = now;
            m.visible_at = hidden_until;
            m.received(q.id, fifo)
        })
        .collect();
    if let (true, Some(attempt_id), false) = (fifo, &options.attempt_id, delivered.is_empty()) {
        let counts: Vec<i32> = delivered.iter().map(|m| m.receive_count as i32).collect();
        execute(
            &tx,
            "INSERT INTO sluice_receive_attempts (queue_id, attempt_id, expires_at, seqs, counts)
             VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (queue_id, attempt_id) DO UPDATE SET expires_at = EXCLUDED.expires_at,
               seqs = EXCLUDED.seqs, counts = EXCLUDED.counts",
            &[&q.id, attempt_id, &(now + DEDUP_WINDOW_MS), &seqs, &counts],
        )
        .await?;
    }
    let next_due = if delivered.is_empty() {
        next_due(&tx, q, now).await?
    } else {
        None
    };
    tx.commit().await.map_err(error::db)?;
    Ok(Attempt {
        queue_id: q.id,
        delivered,
        next_due,
    })
}

/// The answer of an earlier FIFO receive with this attempt id, when all
/// its messages are still in flight from it (rule F4).
async fn replay_attempt(
    tx: &deadpool_postgres::Transaction<'_>,
    q: &QueueRow,
    attempt_id: &str,
    now: i64,
    keys: &DataKeys,
) -> Result<Option<Vec<ReceivedMessage>>, EngineError> {
    let rows = query(
        tx,
        "SELECT seqs, counts FROM sluice_receive_attempts
         WHERE queue_id = $1 AND attempt_id = $2 AND expires_at > $3",
        &[&q.id, &attempt_id, &now],
    )
    .await?;
    let Some(row) = rows.first() else {
        return Ok(None);
    };
    let seqs: Vec<i64> = col(row, 0)?;
    let counts: Vec<i32> = col(row, 1)?;
    let sql = format!(
        "SELECT {MESSAGE_COLUMNS} FROM sluice_messages WHERE queue_id = $1 AND seq = ANY($2)"
    );
    let messages = message_rows(keys, tx, &sql, &[&q.id, &seqs]).await?;
    let mut replay = Vec::with_capacity(seqs.len());
    for (seq, count) in seqs.iter().zip(&counts) {
        match messages.iter().find(|m| m.seq == *seq) {
            Some(m) if m.receive_count == *count && m.visible_at > now => {
                replay.push(m.received(q.id, true));
            }
            _ => return Ok(None),
        }
    }
    Ok(Some(replay))
}

/// Messages in flight, counted up to the limit (rule L4).
async fn in_flight_count<C: deadpool_postgres::GenericClient>(
    tx: &C,
    q: &QueueRow,
    now: i64,
) -> Result<usize, EngineError> {
    let limit = MAX_INFLIGHT as i64;
    let rows = query(
        tx,
        "SELECT count(*) FROM (SELECT 1 FROM sluice_messages
           WHERE queue_id = $1 AND visible_at > $2 AND receive_count > 0 LIMIT $3) f",
        &[&q.id, &now, &limit],
    )
    .await?;
    match rows.first() {
        Some(r) => Ok(col::<i64>(r, 0)?.max(0) as usize),
        None => Ok(0),
    }
}

async fn has_ready(
    tx: &deadpool_postgres::Transaction<'_>,
    q: &QueueRow,
    now: i64,
) -> Result<bool, EngineError> {
    let rows = query(
        tx,
        "SELECT EXISTS (SELECT 1 FROM sluice_messages WHERE queue_id = $1 AND visible_at <= $2)",
        &[&q.id, &now],
    )
    .await?;
    match rows.first() {
        Some(r) => col(r, 0),
        None => Ok(false),
    }
}

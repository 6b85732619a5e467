//! Moving messages between queues, each move inside the transaction that
//! decided it: into a dead-letter queue past maxReceiveCount or on a
//! permanent nack (rules R2–R4, X2), and out of it by a redrive (rules R7,
//! X3). The source's delete and the destination's insert commit together.

use std::collections::HashMap;

use sluice_broker::EngineError;
pub(crate) use sluice_broker::moves::key_of_arn_near;
use sluice_broker::moves::{
    Provenance, mark_replay, redrive_destination, refused_reason, replay_count, sibling_arn,
    strip_provenance, unmovable_reason,
};
use sluice_broker::{MessageFilter, Nack, Redrive, RedriveOutcome};
use sluice_core::receipt::ReceiptHandle;
use tokio_postgres::types::Json;

use crate::rows::{MESSAGE_COLUMNS, MessageRow, QueueRow, UNGROUPED_IN_FAIR_QUEUE};
use crate::visibility::in_flight;
use crate::{
    PostgresBroker, activity, announce, error, execute, expire, query, queue_row, target_queue,
};

/// A queue messages may move into, locked against deletion until commit.
pub(crate) async fn dead_letter_target(
    tx: &deadpool_postgres::Transaction<'_>,
    name: &str,
) -> Result<Option<QueueRow>, EngineError> {
    target_queue(tx, name).await
}

/// An ungrouped message moving into a fair queue takes the group id of its
/// ungrouped messages, read with the queue's row `FOR SHARE` so that the
/// queue cannot turn fair before this commits (see `send::turn_fair`).
/// Marked `moved`: it may keep an enqueue time older than the messages
/// stored before it, so retention finds it through the age index
/// (`retention::EXPIRE_QUEUE`).
const INSERT_MOVED: &str = "INSERT INTO sluice_messages
    (queue_id, seq, message_id, body, attributes, system_attributes, group_id, dedup_id,
     sent_at, enqueued_at, visible_at, receive_count, first_receive_at, last_receive_at, moved)
    VALUES ($1, nextval('sluice_message_seq'), $2, $3, $4, $5,
            COALESCE($6, (SELECT CASE WHEN fair THEN $14::text END FROM sluice_queues
                          WHERE id = $1 FOR SHARE)),
            $7, $8, $9, $10, $11, $12, $13, TRUE)";

async fn insert_moved(
    tx: &deadpool_postgres::Transaction<'_>,
    dest: &QueueRow,
    m: &MessageRow,
) -> Result<(), EngineError> {
    execute(
        tx,
        INSERT_MOVED,
        &[
            &dest.id,
            &m.message_id,
            &m.body,
            &Json(&m.attributes),
            &Json(&m.system_attributes),
            &m.group_id,
            &m.dedup_id,
            &m.sent_at,
            &m.enqueued_at,
            &m.visible_at,
            &m.receive_count,
            &m.first_receive_at,
            &m.last_receive_at,
            &UNGROUPED_IN_FAIR_QUEUE,
        ],
    )
    .await?;
    Ok(())
}

async fn delete_rows(
    tx: &deadpool_postgres::Transaction<'_>,
    q: &QueueRow,
    rows: &[MessageRow],
) -> Result<(), EngineError> {
    let seqs: Vec<i64> = rows.iter().map(|m| m.seq).collect();
    execute(
        tx,
        "DELETE FROM sluice_messages WHERE queue_id = $1 AND seq = ANY($2)",
        &[&q.id, &seqs],
    )
    .await?;
    Ok(())
}

/// Where dead messages go, and what sent them there (for the audit log).
pub(crate) struct DeadLetterRoute<'a> {
    /// The queue they failed in.
    pub source: &'a QueueRow,
    /// Its RedrivePolicy's target.
    pub dead_letter_target_arn: &'a str,
    /// The dead-letter queue.
    pub dlq: &'a QueueRow,
    /// `maxReceiveCount` or `permanent nack`.
    pub trigger: &'static str,
}

/// Moves messages of `source` into its dead-letter queue (rules R2–R4):
/// same id, body, attributes and receive count; a standard DLQ keeps the
/// original enqueue time, a FIFO one restarts it and deduplicates by
/// message id; provenance attributes say where from, when and why.
pub(crate) async fn move_to_dead_letter_queue(
    b: &PostgresBroker,
    tx: &deadpool_postgres::Transaction<'_>,
    route: DeadLetterRoute<'_>,
    dead: Vec<MessageRow>,
    now: i64,
) -> Result<(), EngineError> {
    let DeadLetterRoute {
        source,
        dead_letter_target_arn,
        dlq,
        trigger,
    } = route;
    if dead.is_empty() {
        return Ok(());
    }
    let source_arn = sibling_arn(dead_letter_target_arn, &source.name);
    delete_rows(tx, source, &dead).await?;
    for mut m in dead.clone() {
        let failure = m.failure_reason.clone();
        Provenance {
            source_arn: &source_arn,
            moved_at: now as u64,
            first_receive_at: m.first_receive_at as u64,
            last_receive_at: m.last_receive_at as u64,
            failure_reason: failure.as_deref(),
        }
        .record(&mut m.system_attributes);
        if dlq.config.fifo {
            m.enqueued_at = now;
            m.dedup_id = Some(m.message_id.hyphenated().to_string());
        }
        m.visible_at = now;
        tracing::info!(
            target: "sluice::audit",
            message_id = %m.message_id,
            source = %source_arn,
            dead_letter_queue = %dlq.name,
            receive_count = m.receive_count,
            trigger,
            reason = failure.as_deref().unwrap_or(""),
            "moved message to dead-letter queue"
        );
        insert_moved(tx, dlq, &m).await?;
    }
    activity::add(
        &b.inner.activity(source.id).dead_lettered,
        dead.len() as u64,
    );
    activity::add(&b.inner.activity(dlq.id).sent, dead.len() as u64);
    announce(tx, &dlq.name).await?;
    Ok(())
}

/// Moves receivable messages out of `source` (rules R7, X3).
pub(crate) async fn redrive(
    b: &PostgresBroker,
    source: &str,
    redrive: &Redrive,
) -> Result<RedriveOutcome, EngineError> {
    let inner = &b.inner;
    let now = inner.now();
    let mut client = inner.client().await?;
    let tx = client.transaction().await.map_err(error::db)?;
    let src = queue_row(&tx, source, "").await?;
    expire(inner, &tx, &src, now).await?;
    let mut outcome = RedriveOutcome::default();
    let mut targets: HashMap<String, Option<QueueRow>> = HashMap::new();
    let mut chosen: Vec<MessageRow> = Vec::new();
    let lock = if redrive.dry_run {
        ""
    } else {
        "FOR UPDATE SKIP LOCKED"
    };
    let sql = format!(
        "SELECT {MESSAGE_COLUMNS} FROM sluice_messages
         WHERE queue_id = $1 AND visible_at <= $2 AND seq > $3 ORDER BY seq LIMIT $4 {lock}"
    );
    const CHUNK: i64 = 500;
    let mut after = 0i64;
    'pages: loop {
        let page = MessageRow::all(&query(&tx, &sql, &[&src.id, &now, &after, &CHUNK]).await?)?;
        let last_page = (page.len() as i64) < CHUNK;
        for m in page {
            after = m.seq;
            if chosen.len() + outcome.message_ids.len() >= redrive.max {
                break 'pages;
            }
            if redrive.filter != MessageFilter::default()
                && !redrive.filter.matches(&m.peeked(now, src.config.fifo))
            {
                continue;
            }
            let replays = replay_count(&m.attributes);
            if redrive.max_replays.is_some_and(|limit| replays >= limit) {
                outcome.refused += 1;
                outcome.reason = Some(refused_reason(
                    &m.message_id.hyphenated().to_string(),
                    replays,
                ));
                continue;
            }
            // A message with nowhere to go stays, is reported, and does not
            // count against `max`: the same in a dry run and a real one.
            let target = redrive_destination(redrive, source, &m.system_attributes);
            let exists = match &target {
                Some(t) => lookup(&tx, &mut targets, t).await?.is_some(),
                None => false,
            };
            if !exists {
                outcome.unmovable += 1;
                outcome.reason = Some(unmovable_reason(target.as_deref()));
                continue;
            }
            if redrive.dry_run {
                outcome
                    .message_ids
                    .push(m.message_id.hyphenated().to_string());
                continue;
            }
            chosen.push(m);
        }
        if last_page {
            break;
        }
    }
    if redrive.dry_run {
        outcome.moved = outcome.message_ids.len() as u64;
        return Ok(outcome);
    }
    let mut moved_rows = Vec::new();
    let mut announced: Vec<String> = Vec::new();
    for mut m in chosen {
        let target = redrive_destination(redrive, source, &m.system_attributes);
        let dest = match &target {
            Some(t) => lookup(&tx, &mut targets, t).await?,
            None => None,
        };
        let Some(dest) = dest else {
            outcome.unmovable += 1;
            outcome.reason = Some(unmovable_reason(target.as_deref()));
            continue;
        };
        moved_rows.push(m.clone());
        // The ids reported are those the messages had in the DLQ, as a
        // dry run reports them.
        outcome
            .message_ids
            .push(m.message_id.hyphenated().to_string());
        if redrive.mark_replay {
            // Rule X3: consumers can tell a replay, and loops are bounded.
            mark_replay(&mut m.attributes);
        }
        m.message_id = uuid::Uuid::new_v4();
        m.sent_at = now;
        m.enqueued_at = now;
        m.visible_at = now;
        m.receive_count = 0;
        m.first_receive_at = 0;
        m.last_receive_at = 0;
        // A fresh message: the provenance of its time in the DLQ stays behind.
        strip_provenance(&mut m.system_attributes);
        if dest.config.fifo {
            m.dedup_id = Some(m.message_id.hyphenated().to_string());
        }
        insert_moved(&tx, &dest, &m).await?;
        activity::add(&inner.activity(dest.id).sent, 1);
        if !announced.contains(&dest.name) {
            announce(&tx, &dest.name).await?;
            announced.push(dest.name.clone());
        }
    }
    delete_rows(&tx, &src, &moved_rows).await?;
    outcome.moved = moved_rows.len() as u64;
    tx.commit().await.map_err(error::db)?;
    activity::add(&inner.activity(src.id).redriven, outcome.moved);
    for name in announced {
        inner.wake(&name);
    }
    Ok(outcome)
}

/// A destination by name, looked up (and locked) once per redrive.
async fn lookup(
    tx: &deadpool_postgres::Transaction<'_>,
    targets: &mut HashMap<String, Option<QueueRow>>,
    name: &str,
) -> Result<Option<QueueRow>, EngineError> {
    if let Some(found) = targets.get(name) {
        return Ok(found.clone());
    }
    let found = target_queue(tx, name).await?;
    targets.insert(name.to_string(), found.clone());
    Ok(found)
}

/// Records a consumer's failure of an in-flight message (rule X2).
pub(crate) async fn nack(
    b: &PostgresBroker,
    name: &str,
    receipt_handle: &str,
    nack: Nack,
) -> Result<(), EngineError> {
    let inner = &b.inner;
    let now = inner.now();
    let mut client = inner.client().await?;
    let tx = client.transaction().await.map_err(error::db)?;
    let q = queue_row(&tx, name, "").await?;
    expire(inner, &tx, &q, now).await?;
    let seq = in_flight(&tx, &q, receipt_handle, now, false).await?;
    let dlq = if nack.permanent {
        let policy = q.config.redrive().ok_or(EngineError::NoRedrivePolicy)?;
        let dlq = dead_letter_target(&tx, &key_of_arn_near(name, &policy.dead_letter_target_arn))
            .await?
            .ok_or(EngineError::DeadLetterQueueMissing)?;
        Some((policy, dlq))
    } else {
        None
    };
    if let Some(reason) = &nack.reason {
        execute(
            &tx,
            "UPDATE sluice_messages SET failure_reason = $3 WHERE queue_id = $1 AND seq = $2",
            &[&q.id, &seq, reason],
        )
        .await?;
    }
    let visible_now = match dlq {
        Some((policy, dlq)) => {
            let sql = format!(
                "SELECT {MESSAGE_COLUMNS} FROM sluice_messages WHERE queue_id = $1 AND seq = $2"
            );
            let rows = MessageRow::all(&query(&tx, &sql, &[&q.id, &seq]).await?)?;
            let route = DeadLetterRoute {
                source: &q,
                dead_letter_target_arn: &policy.dead_letter_target_arn,
                dlq: &dlq,
                trigger: "permanent nack",
            };
            move_to_dead_letter_queue(b, &tx, route, rows, now).await?;
            Some(dlq.name)
        }
        None => {
            // An explicit wait wins; otherwise the queue's backoff for the
            // attempt that failed (the handle carries its receive count).
            let attempt = ReceiptHandle::decode(receipt_handle).map_or(1, |rh| rh.receive);
            let retry = match (nack.retry_after_seconds, q.config.backoff()) {
                (Some(seconds), _) => i64::from(seconds) * 1000,
                (None, Some(backoff)) => backoff.delay_for(attempt, seq as u64, now as u64) as i64,
                (None, None) => 0,
            };
            execute(
                &tx,
                "UPDATE sluice_messages SET visible_at = $3 WHERE queue_id = $1 AND seq = $2",
                &[&q.id, &seq, &(now + retry)],
            )
            .await?;
            if retry == 0 {
                announce(&tx, name).await?;
                Some(name.to_string())
            } else {
                None
            }
        }
    };
    tx.commit().await.map_err(error::db)?;
    if let Some(woken) = visible_now {
        inner.wake(&woken);
    }
    Ok(())
}

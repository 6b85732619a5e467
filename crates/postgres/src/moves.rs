//! Moving messages between queues, each move inside the transaction that
//! decided it: into a dead-letter queue past maxReceiveCount or on a
//! permanent nack (rules R2–R4, X2), and out of it by a redrive (rules R7,
//! X3). The source's delete and the destination's insert commit together.

use std::collections::HashMap;

use sluice_broker::{MessageFilter, Nack, REPLAY_COUNT_ATTRIBUTE, Redrive, RedriveOutcome};
use sluice_core::SqsError;
use sluice_core::message::{AttributeValue, MessageAttributeValue};
use tokio_postgres::types::Json;

use crate::rows::{MESSAGE_COLUMNS, MessageRow, QueueRow};
use crate::writes::in_flight;
use crate::{
    PostgresBroker, activity, announce, error, execute, expire, query, queue_row, target_queue,
};

/// The system attribute that names a dead-lettered message's source (rule R4).
pub const DEAD_LETTER_SOURCE_ARN: &str = "DeadLetterQueueSourceArn";
/// Provenance kept with a dead-lettered message (rule X2): when it moved.
pub const MOVED_AT: &str = "Sluice.MovedAt";
/// Provenance: its first receive in the source (ms).
pub const FIRST_RECEIVE_AT: &str = "Sluice.FirstReceiveAt";
/// Provenance: its last receive in the source (ms).
pub const LAST_RECEIVE_AT: &str = "Sluice.LastReceiveAt";
/// Provenance: the last failure reason a consumer gave.
pub const LAST_FAILURE_REASON: &str = "Sluice.LastFailureReason";

/// The queue name at the end of an ARN.
pub(crate) fn name_of_arn(arn: &str) -> &str {
    arn.rsplit(':').next().unwrap_or(arn)
}

/// The ARN of `queue` in the same account and region as `sibling_arn`.
fn sibling_arn(sibling_arn: &str, queue: &str) -> String {
    match sibling_arn.rsplit_once(':') {
        Some((prefix, _)) => format!("{prefix}:{queue}"),
        None => queue.to_string(),
    }
}

/// A queue messages may move into, locked against deletion until commit.
pub(crate) async fn dead_letter_target(
    tx: &deadpool_postgres::Transaction<'_>,
    name: &str,
) -> Result<Option<QueueRow>, SqsError> {
    target_queue(tx, name).await
}

const INSERT_MOVED: &str = "INSERT INTO sluice_messages
    (queue_id, seq, message_id, body, attributes, system_attributes, group_id, dedup_id,
     sent_at, enqueued_at, visible_at, receive_count, first_receive_at, last_receive_at)
    VALUES ($1, nextval('sluice_message_seq'), $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)";

async fn insert_moved(
    tx: &deadpool_postgres::Transaction<'_>,
    dest: &QueueRow,
    m: &MessageRow,
) -> Result<(), SqsError> {
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
        ],
    )
    .await?;
    Ok(())
}

async fn delete_rows(
    tx: &deadpool_postgres::Transaction<'_>,
    q: &QueueRow,
    rows: &[MessageRow],
) -> Result<(), SqsError> {
    let seqs: Vec<i64> = rows.iter().map(|m| m.seq).collect();
    execute(
        tx,
        "DELETE FROM sluice_messages WHERE queue_id = $1 AND seq = ANY($2)",
        &[&q.id, &seqs],
    )
    .await?;
    Ok(())
}

/// Moves messages of `source` into its dead-letter queue (rules R2–R4):
/// same id, body, attributes and receive count; a standard DLQ keeps the
/// original enqueue time, a FIFO one restarts it and deduplicates by
/// message id; provenance attributes say where from, when and why.
pub(crate) async fn move_to_dead_letter_queue(
    b: &PostgresBroker,
    tx: &deadpool_postgres::Transaction<'_>,
    source: &QueueRow,
    dead_letter_target_arn: &str,
    dlq: &QueueRow,
    dead: Vec<MessageRow>,
    now: i64,
) -> Result<(), SqsError> {
    if dead.is_empty() {
        return Ok(());
    }
    let source_arn = sibling_arn(dead_letter_target_arn, &source.name);
    delete_rows(tx, source, &dead).await?;
    for mut m in dead.clone() {
        let mut note = |name: &str, value: String| {
            m.system_attributes.insert(
                name.to_string(),
                MessageAttributeValue {
                    data_type: "String".into(),
                    value: AttributeValue::String(value),
                },
            );
        };
        note(DEAD_LETTER_SOURCE_ARN, source_arn.clone());
        note(MOVED_AT, now.to_string());
        note(FIRST_RECEIVE_AT, m.first_receive_at.to_string());
        note(LAST_RECEIVE_AT, m.last_receive_at.to_string());
        if let Some(reason) = m.failure_reason.clone() {
            note(LAST_FAILURE_REASON, reason);
        }
        if dlq.config.fifo {
            m.enqueued_at = now;
            m.dedup_id = Some(m.message_id.hyphenated().to_string());
        }
        m.visible_at = now;
        tracing::info!(
            message_id = %m.message_id,
            source = %source_arn,
            dead_letter_queue = %dlq.name,
            receive_count = m.receive_count,
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

/// How many times a selective redrive already replayed a message (rule X3).
fn replay_count(m: &MessageRow) -> u32 {
    match m.attributes.get(REPLAY_COUNT_ATTRIBUTE).map(|a| &a.value) {
        Some(AttributeValue::String(n)) => n.parse().unwrap_or(0),
        _ => 0,
    }
}

/// Where a redrive sends a message: the given destination, or its source.
fn destination_of(redrive: &Redrive, m: &MessageRow) -> Option<String> {
    redrive.destination.clone().or_else(|| {
        match m
            .system_attributes
            .get(DEAD_LETTER_SOURCE_ARN)
            .map(|v| &v.value)
        {
            Some(AttributeValue::String(arn)) => Some(name_of_arn(arn).to_string()),
            _ => None,
        }
    })
}

/// Moves receivable messages out of `source` (rules R7, X3).
pub(crate) async fn redrive(
    b: &PostgresBroker,
    source: &str,
    redrive: &Redrive,
) -> Result<RedriveOutcome, SqsError> {
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
            let replays = replay_count(&m);
            if redrive.max_replays.is_some_and(|limit| replays >= limit) {
                outcome.refused += 1;
                outcome.reason = Some(format!(
                    "message {} was already replayed {replays} times; fix the consumer or raise the limit",
                    m.message_id
                ));
                continue;
            }
            if redrive.dry_run {
                let target = destination_of(redrive, &m);
                let exists = match &target {
                    Some(t) => lookup(&tx, &mut targets, t).await?.is_some(),
                    None => false,
                };
                if exists {
                    outcome
                        .message_ids
                        .push(m.message_id.hyphenated().to_string());
                } else {
                    outcome.unmovable += 1;
                }
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
        let target = destination_of(redrive, &m);
        let dest = match &target {
            Some(t) => lookup(&tx, &mut targets, t).await?,
            None => None,
        };
        let Some(dest) = dest else {
            outcome.unmovable += 1;
            outcome.reason = Some(match target {
                Some(t) => format!(
                    "AWS.SimpleQueueService.NonExistentQueue: the destination queue {t} does not exist"
                ),
                None => {
                    "A message has no DeadLetterQueueSourceArn and no destination was given".into()
                }
            });
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
            let count = replay_count(&m) + 1;
            m.attributes.insert(
                REPLAY_COUNT_ATTRIBUTE.to_string(),
                MessageAttributeValue {
                    data_type: "Number".into(),
                    value: AttributeValue::String(count.to_string()),
                },
            );
        }
        m.message_id = uuid::Uuid::new_v4();
        m.sent_at = now;
        m.enqueued_at = now;
        m.visible_at = now;
        m.receive_count = 0;
        m.first_receive_at = 0;
        m.last_receive_at = 0;
        m.system_attributes.remove(DEAD_LETTER_SOURCE_ARN);
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
) -> Result<Option<QueueRow>, SqsError> {
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
) -> Result<(), SqsError> {
    let inner = &b.inner;
    let now = inner.now();
    let mut client = inner.client().await?;
    let tx = client.transaction().await.map_err(error::db)?;
    let q = queue_row(&tx, name, "").await?;
    expire(inner, &tx, &q, now).await?;
    let seq = in_flight(&tx, &q, receipt_handle, now).await?;
    let dlq = if nack.permanent {
        let policy = q.config.redrive().ok_or_else(|| {
            SqsError::invalid_parameter(
                "Permanent failure needs a dead-letter queue: the queue has no RedrivePolicy.",
            )
        })?;
        let dlq = dead_letter_target(&tx, name_of_arn(&policy.dead_letter_target_arn))
            .await?
            .ok_or_else(|| {
                SqsError::invalid_parameter("The queue's dead-letter queue does not exist.")
            })?;
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
            move_to_dead_letter_queue(b, &tx, &q, &policy.dead_letter_target_arn, &dlq, rows, now)
                .await?;
            Some(dlq.name)
        }
        None => {
            let retry = i64::from(nack.retry_after_seconds.unwrap_or(0)) * 1000;
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

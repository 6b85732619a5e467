//! Moving messages into a dead-letter queue, inside the transaction that
//! decided it: past maxReceiveCount or on a permanent nack (rules R2–R4,
//! X2). The source's delete and the destination's insert commit together.

use crate::sealing::seal_message;
use sluice_broker::EngineError;
use sluice_broker::activity;
use sluice_broker::failure::FailureRecord;
pub(crate) use sluice_broker::moves::key_of_arn_near;
use sluice_broker::moves::{Provenance, sibling_arn};
use sluice_keyring::Sealer;
use tokio_postgres::types::Json;

use crate::engine::{PostgresBroker, announce, execute, target_queue};
use crate::rows::{MessageRow, QueueRow, UNGROUPED_IN_FAIR_QUEUE};

/// A queue messages may move into, locked against deletion until commit.
pub(crate) async fn dead_letter_target(
    tx: &deadpool_postgres::Transaction<'_>,
    name: &str,
) -> Result<Option<QueueRow>, EngineError> {
    target_queue(tx, name).await
}

/// An ungrouped message moving into a fair queue takes the group id of its
/// ungrouped messages, read with the queue's row `FOR SHARE` so that the
/// queue cannot turn fair before this commits (see `send::turn_fair`) nor
/// be deleted: a queue deleted meanwhile has no row, and nothing is
/// inserted. Marked `moved`: it may keep an enqueue time older than the
/// messages stored before it, so retention finds it through the age index
/// (`retention::EXPIRE_QUEUE`).
const INSERT_MOVED: &str = "INSERT INTO sluice_messages
    (queue_id, seq, message_id, body, attributes, system_attributes, group_id, dedup_id,
     sent_at, enqueued_at, visible_at, receive_count, first_receive_at, last_receive_at, moved)
    SELECT $1, nextval('sluice_message_seq'), $2, $3, $4, $5,
           COALESCE($6, CASE WHEN q.fair THEN $14::text END),
           $7, $8, $9, $10, $11, $12, $13, TRUE
    FROM (SELECT fair FROM sluice_queues WHERE id = $1 FOR SHARE) q";

/// Stores `m` in `dest`; the transaction must be rolled back (the caller's
/// `?` does) when `dest` was deleted meanwhile, so that the message stays
/// where it was.
pub(crate) async fn insert_moved(
    tx: &deadpool_postgres::Transaction<'_>,
    dest: &QueueRow,
    m: &MessageRow,
    seal: Option<&Sealer>,
) -> Result<(), EngineError> {
    // Sealed by the destination's data key (rule E6), or clear.
    let (body, attributes, system_attributes) =
        seal_message(seal, &m.body, &m.attributes, &m.system_attributes);
    let stored = execute(
        tx,
        INSERT_MOVED,
        &[
            &dest.id,
            &m.message_id,
            &body,
            &Json(&attributes),
            &Json(&system_attributes),
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
    if stored == 0 {
        // Retried, the move finds the queue gone and leaves the message.
        return Err(EngineError::Unavailable(format!(
            "The queue {} was deleted while messages moved into it.",
            dest.name
        )));
    }
    Ok(())
}

pub(crate) async fn delete_rows(
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
    let seal = match b.sealer(dlq, None).await {
        Ok(seal) => seal,
        Err(e) => {
            // Nothing is lost: the messages stay in their queue, and the
            // next receive past maxReceiveCount tries again.
            tracing::warn!(error = %e, queue = %dlq.name, "the dead-letter queue's key is unusable: messages stay in their queue");
            return Ok(());
        }
    };
    let source_arn = sibling_arn(dead_letter_target_arn, &source.name);
    delete_rows(tx, source, &dead).await?;
    let source_activity = b.inner.activity(source.id);
    let mut classes = Vec::with_capacity(dead.len());
    for mut m in dead.clone() {
        let failure = FailureRecord::decode(m.failure_reason.as_deref());
        Provenance {
            source_arn: &source_arn,
            moved_at: now as u64,
            first_receive_at: m.first_receive_at as u64,
            last_receive_at: m.last_receive_at as u64,
            failure_reason: failure.reason.as_deref(),
            failure_class: failure.last_class(),
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
            reason = failure.reason.as_deref().unwrap_or(""),
            class = failure.last_class().unwrap_or(""),
            "moved message to dead-letter queue"
        );
        insert_moved(tx, dlq, &m, seal.as_ref()).await?;
        classes.push(failure.last_class().map(str::to_string));
    }
    // Counted once every move is in the transaction, as before classes.
    for class in &classes {
        source_activity.dead_lettered_as(class.as_deref());
    }
    activity::add(&b.inner.activity(dlq.id).sent, dead.len() as u64);
    announce(tx, &dlq.name).await?;
    Ok(())
}

//! Moving messages out of a dead-letter queue by a redrive (rules R7, X3),
//! each one's delete and insert in one transaction.

use crate::encryption::message_rows;
use std::collections::HashMap;

use sluice_broker::activity;
use sluice_broker::moves::{
    mark_replay, redrive_destination, refused_reason, replay_count, strip_provenance,
    unmovable_reason,
};
use sluice_broker::{EngineError, MessageFilter, Redrive, RedriveOutcome};

use crate::dead_letter::{delete_rows, insert_moved};
use crate::engine::{PostgresBroker, announce, expire, queue_row, target_queue};
use crate::error;
use crate::rows::{MESSAGE_COLUMNS, MessageRow, QueueRow};

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
        let page = message_rows(
            &b.inner.data_keys,
            &tx,
            &sql,
            &[&src.id, &now, &after, &CHUNK],
        )
        .await?;
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
        if !redrive.mark_replay {
            // A move task's message is a new one, as on SQS; a replay
            // keeps its id, so idempotency keys made from it match.
            m.message_id = uuid::Uuid::new_v4();
        }
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
        let seal = b.sealer(&dest, None).await?;
        insert_moved(&tx, &dest, &m, seal.as_ref()).await?;
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

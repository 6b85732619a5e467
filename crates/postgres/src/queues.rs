//! Queue operations: CreateQueue, GetQueueUrl, ListQueues, DeleteQueue,
//! Get/SetQueueAttributes, Tag/UntagQueue, PurgeQueue.

use std::sync::Arc;

use sluice_broker::tags;
use sluice_broker::{CreateQueue, EngineError, MetaChange, QueueMeta};
use sluice_core::limits::{PURGE_INTERVAL_SECS, RECREATE_AFTER_DELETE_SECS};
use tokio_postgres::types::Json;

use crate::engine::{PostgresBroker, announce, execute, query, queue_row};
use crate::error;
use crate::rows::{QUEUE_COLUMNS, QueueRow, col};

pub(crate) async fn create_queue(
    b: &PostgresBroker,
    spec: CreateQueue,
) -> Result<QueueMeta, EngineError> {
    let inner = &b.inner;
    let now = inner.now();
    let mut client = inner.client().await?;
    let tx = client.transaction().await.map_err(error::db)?;
    match queue_row(&tx, &spec.name, "").await {
        Ok(existing) => {
            // QueueAlreadyExists names the differing attribute (rule V13).
            return match existing.config.first_mismatch(&spec.name, &spec.requested) {
                None => Ok(existing.meta()),
                Some(attribute) => Err(EngineError::QueueNameExists { attribute }),
            };
        }
        Err(EngineError::QueueDoesNotExist) => {}
        Err(e) => return Err(e),
    }
    // A deleted name is free again only a minute later (rule V19).
    let hold = b
        .inner
        .deleted_name_hold_ms
        .load(std::sync::atomic::Ordering::Relaxed);
    let since = now.saturating_sub(i64::try_from(hold).unwrap_or(i64::MAX));
    let recent = query(
        &tx,
        "SELECT 1 FROM sluice_deleted_queues WHERE name = $1 AND deleted_at > $2",
        &[&spec.name, &since],
    )
    .await?;
    if !recent.is_empty() {
        return Err(EngineError::QueueDeletedRecently);
    }
    tags::check_tags(&spec.name, &spec.tags)?;
    let sql = format!(
        "INSERT INTO sluice_queues (name, config, tags, created_at, modified_at)
         VALUES ($1, $2, $3, $4, $4) ON CONFLICT (name) DO NOTHING RETURNING {QUEUE_COLUMNS}"
    );
    let rows = query(
        &tx,
        &sql,
        &[&spec.name, &Json(&spec.config), &Json(&spec.tags), &now],
    )
    .await?;
    let Some(row) = rows.first() else {
        // Created by a concurrent request since the check above.
        return Err(EngineError::QueueExists {
            name: spec.name.clone(),
        });
    };
    let created = QueueRow::from_row(row)?;
    tx.commit().await.map_err(error::db)?;
    Ok(created.meta())
}

pub(crate) async fn get_queue(b: &PostgresBroker, name: &str) -> Result<QueueMeta, EngineError> {
    Ok(queue_row_cached(b, name).await?.meta())
}

/// A queue's `Policy` alone, from the same cache as [`get_queue`].
pub(crate) async fn queue_policy(
    b: &PostgresBroker,
    name: &str,
) -> Result<Option<String>, EngineError> {
    Ok(queue_row_cached(b, name).await?.config.policy.clone())
}

/// The queue's row from this node's cache, else from the database: the
/// server reads a queue before every send and receive, like the engine's
/// own actions (see cache.rs).
async fn queue_row_cached(b: &PostgresBroker, name: &str) -> Result<Arc<QueueRow>, EngineError> {
    if let Some(q) = b.inner.queues.get(name) {
        return Ok(q);
    }
    let client = b.inner.client().await?;
    b.inner.fresh_queue(&client, name).await
}

pub(crate) async fn list_queues(b: &PostgresBroker) -> Result<Vec<String>, EngineError> {
    let mut client = b.inner.client().await?;
    let tx = client.transaction().await.map_err(error::db)?;
    let rows = query(
        &tx,
        "SELECT name FROM sluice_queues ORDER BY name COLLATE \"C\"",
        &[],
    )
    .await?;
    let names: Vec<String> = rows.iter().map(|r| col(r, 0)).collect::<Result<_, _>>()?;
    // sluice's own queues are no user's (rule N8).
    Ok(names
        .into_iter()
        .filter(|k| !sluice_core::queue_name::is_internal_key(k))
        .collect())
}

pub(crate) async fn delete_queue(b: &PostgresBroker, name: &str) -> Result<(), EngineError> {
    let inner = &b.inner;
    let mut client = inner.client().await?;
    let tx = client.transaction().await.map_err(error::db)?;
    let rows = query(
        &tx,
        "DELETE FROM sluice_queues WHERE name = $1 RETURNING id",
        &[&name],
    )
    .await?;
    let Some(row) = rows.first() else {
        return Err(EngineError::QueueDoesNotExist);
    };
    let id: i64 = col(row, 0)?;
    // Its messages and deduplication ids go with it (no foreign key
    // cascades: inserts hold the queue's row FOR SHARE, so none is stored
    // once the row's delete commits, and none committed before escapes
    // these, which read after the row's lock was granted).
    for table in ["sluice_messages", "sluice_expired"] {
        execute(
            &tx,
            &format!("DELETE FROM {table} WHERE queue_id = $1"),
            &[&id],
        )
        .await?;
    }
    execute(&tx, "DELETE FROM sluice_dedup WHERE queue_id = $1", &[&id]).await?;
    // Crypto-shredding: the queue's data keys go with it (rule E5).
    execute(
        &tx,
        "DELETE FROM sluice_data_keys WHERE queue_id = $1",
        &[&id],
    )
    .await?;
    // Remembered for a minute, so the name is not created again before
    // (rule V19); older entries are dropped on the way.
    let now = inner.now();
    let since = now - (RECREATE_AFTER_DELETE_SECS * 1000) as i64;
    execute(
        &tx,
        "DELETE FROM sluice_deleted_queues WHERE deleted_at <= $1",
        &[&since],
    )
    .await?;
    execute(
        &tx,
        "INSERT INTO sluice_deleted_queues (name, deleted_at) VALUES ($1, $2)
         ON CONFLICT (name) DO UPDATE SET deleted_at = EXCLUDED.deleted_at",
        &[&name, &now],
    )
    .await?;
    // Long polls on it wake and answer that it is gone.
    announce(&tx, name).await?;
    tx.commit().await.map_err(error::db)?;
    inner.activity.lock().remove(&id);
    inner.fair.forget(id);
    inner.data_keys.forget_queue(id as u64);
    inner.queues.forget(name);
    inner.wake(name);
    Ok(())
}

pub(crate) async fn update_queue(
    b: &PostgresBroker,
    name: &str,
    change: MetaChange,
) -> Result<QueueMeta, EngineError> {
    let inner = &b.inner;
    let mut client = inner.client().await?;
    let tx = client.transaction().await.map_err(error::db)?;
    // The row stays locked until the commit: concurrent changes to one
    // queue apply one after the other, none lost.
    let q = queue_row(&tx, name, "FOR NO KEY UPDATE").await?;
    let mut meta = q.meta();
    change.apply(name, &mut meta, inner.clock.now())?;
    execute(
        &tx,
        "UPDATE sluice_queues SET config = $2, tags = $3, modified_at = $4 WHERE id = $1",
        &[
            &q.id,
            &Json(&meta.config),
            &Json(&meta.tags),
            &(meta.modified_at as i64),
        ],
    )
    .await?;
    tx.commit().await.map_err(error::db)?;
    inner.queues.forget(name);
    Ok(meta)
}

pub(crate) async fn purge_queue(b: &PostgresBroker, name: &str) -> Result<(), EngineError> {
    let inner = &b.inner;
    let now = inner.now();
    let mut client = inner.client().await?;
    let tx = client.transaction().await.map_err(error::db)?;
    let q = queue_row(&tx, name, "FOR NO KEY UPDATE").await?;
    if let Some(last) = q.last_purge
        && (now as u64) < last + PURGE_INTERVAL_SECS * 1000
    {
        return Err(EngineError::PurgeQueueInProgress {
            queue: name.to_owned(),
        });
    }
    execute(
        &tx,
        "UPDATE sluice_queues SET last_purge = $2 WHERE id = $1",
        &[&q.id, &now],
    )
    .await?;
    // What waits for the archive goes too (rule X8): the client asked for
    // every message to go.
    for table in ["sluice_messages", "sluice_expired"] {
        execute(
            &tx,
            &format!("DELETE FROM {table} WHERE queue_id = $1"),
            &[&q.id],
        )
        .await?;
    }
    // A purge also ends the deduplication window (rule F11).
    for table in ["sluice_dedup", "sluice_receive_attempts"] {
        execute(
            &tx,
            &format!("DELETE FROM {table} WHERE queue_id = $1"),
            &[&q.id],
        )
        .await?;
    }
    tx.commit().await.map_err(error::db)
}

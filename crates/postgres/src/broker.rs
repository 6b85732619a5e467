//! The `Broker` trait over the database: the queue operations (create,
//! get, list, delete, purge, metadata changes) written here, each message
//! operation handed to its module (`send`, `receive`, `delete`,
//! `visibility`, `moves`, `peek`).

use deadpool_postgres::GenericClient;
use sluice_broker::EngineError;
use sluice_broker::tags;
use sluice_broker::{
    BackupReport, Broker, CreateQueue, MessageFilter, MetaChange, Nack, NewMessage, PeekPage,
    QueueCounts, QueueMeta, QueueStats, ReceiveOptions, ReceivedMessage, Redrive, RedriveOutcome,
    SentMessage, VisibilityChange,
};

use crate::rows::{self, MessageRow, QUEUE_COLUMNS, QueueRow, col};
use crate::{
    PostgresBroker, announce, delete, error, execute, expire, moves, query, queue_row, receive,
    send, visibility,
};
use sluice_core::limits::{PURGE_INTERVAL_SECS, RECREATE_AFTER_DELETE_SECS};
use tokio_postgres::types::Json;

impl Broker for PostgresBroker {
    async fn create_queue(&self, spec: CreateQueue) -> Result<QueueMeta, EngineError> {
        let inner = &self.inner;
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
        let hold = self
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

    async fn get_queue(&self, name: &str) -> Result<QueueMeta, EngineError> {
        // The server reads a queue before every send and receive: from this
        // node's cache, like the engine's own actions (see cache.rs).
        if let Some(q) = self.inner.queues.get(name) {
            return Ok(q.meta());
        }
        let client = self.inner.client().await?;
        Ok(self.inner.fresh_queue(&client, name).await?.meta())
    }

    async fn list_queues(&self) -> Result<Vec<String>, EngineError> {
        let mut client = self.inner.client().await?;
        let tx = client.transaction().await.map_err(error::db)?;
        let rows = query(
            &tx,
            "SELECT name FROM sluice_queues ORDER BY name COLLATE \"C\"",
            &[],
        )
        .await?;
        rows.iter().map(|r| col(r, 0)).collect()
    }

    async fn delete_queue(&self, name: &str) -> Result<(), EngineError> {
        let inner = &self.inner;
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
        inner.queues.forget(name);
        inner.wake(name);
        Ok(())
    }

    async fn queue_counts(&self, name: &str) -> Result<QueueCounts, EngineError> {
        Ok(self.queue_stats_inner(name).await?.0)
    }

    async fn update_queue(&self, name: &str, change: MetaChange) -> Result<QueueMeta, EngineError> {
        let inner = &self.inner;
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

    async fn purge_queue(&self, name: &str) -> Result<(), EngineError> {
        let inner = &self.inner;
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
        execute(
            &tx,
            "DELETE FROM sluice_messages WHERE queue_id = $1",
            &[&q.id],
        )
        .await?;
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

    async fn send_messages(
        &self,
        name: &str,
        messages: Vec<NewMessage>,
    ) -> Result<Vec<SentMessage>, EngineError> {
        send::send(self, name, messages).await
    }

    async fn receive_messages(
        &self,
        name: &str,
        options: ReceiveOptions,
    ) -> Result<Vec<ReceivedMessage>, EngineError> {
        receive::receive(self, name, options).await
    }

    async fn delete_messages(
        &self,
        name: &str,
        receipt_handles: Vec<String>,
    ) -> Result<Vec<Result<(), EngineError>>, EngineError> {
        delete::delete(self, name, receipt_handles).await
    }

    async fn change_visibility(
        &self,
        name: &str,
        changes: Vec<VisibilityChange>,
    ) -> Result<Vec<Result<(), EngineError>>, EngineError> {
        visibility::change_visibility(self, name, changes).await
    }

    async fn redrive_messages(
        &self,
        source: &str,
        redrive: &Redrive,
    ) -> Result<RedriveOutcome, EngineError> {
        moves::redrive(self, source, redrive).await
    }

    async fn queue_stats(&self, name: &str) -> Result<QueueStats, EngineError> {
        let (counts, oldest_age_ms, id) = self.queue_stats_inner(name).await?;
        Ok(self.inner.activity(id).stats(counts, oldest_age_ms))
    }

    async fn nack_message(
        &self,
        name: &str,
        receipt_handle: &str,
        nack: Nack,
    ) -> Result<(), EngineError> {
        moves::nack(self, name, receipt_handle, nack).await
    }

    async fn peek_messages(
        &self,
        name: &str,
        filter: &MessageFilter,
        after: Option<u64>,
        limit: usize,
    ) -> Result<PeekPage, EngineError> {
        let inner = &self.inner;
        let now = inner.now();
        let mut client = inner.client().await?;
        let tx = client.transaction().await.map_err(error::db)?;
        let q = queue_row(&tx, name, "").await?;
        expire(inner, &tx, &q, now).await?;
        let mut page = PeekPage::default();
        let mut from = after.unwrap_or(0).min(i64::MAX as u64) as i64;
        const CHUNK: i64 = 500;
        let sql = format!(
            "SELECT {} FROM sluice_messages WHERE queue_id = $1 AND seq > $2 ORDER BY seq LIMIT $3",
            rows::MESSAGE_COLUMNS
        );
        'pages: loop {
            let chunk = MessageRow::all(&query(&tx, &sql, &[&q.id, &from, &CHUNK]).await?)?;
            let done = (chunk.len() as i64) < CHUNK;
            for m in chunk {
                from = m.seq;
                if page.messages.len() == limit {
                    page.next = page.messages.last().map(|m| m.position);
                    break 'pages;
                }
                let peeked = m.peeked(now, q.config.fifo);
                if filter.matches(&peeked) {
                    page.messages.push(peeked);
                }
            }
            if done {
                break;
            }
        }
        tx.commit().await.map_err(error::db)?;
        Ok(page)
    }

    async fn backup(&self, _directory: &std::path::Path) -> Result<BackupReport, EngineError> {
        Err(sluice_broker::backup_unsupported(
            "The PostgreSQL engine keeps its data in the database: back it up with pg_dump \
             (or pg_basebackup); sluice backup copies the embedded engine's data directory.",
        ))
    }
}

//! Encryption at rest in the PostgreSQL engine (rules E1–E6): the data
//! key that seals a queue's new messages, and the data keys read back.
//! Data keys live in `sluice_data_keys`, shared by the nodes: a node that
//! meets a data key it does not know reads it there. The sealed form of
//! the columns is [`crate::sealing`]'s.

use deadpool_postgres::GenericClient;
use std::sync::Arc;

use sluice_broker::{EngineError, Rekey};
use sluice_core::{ErrorCode, SqsError};
use sluice_keyring::{DataKeyRecord, DataKeys, Keyring, Prepared, QueueSse, SealError, Sealer};
use tokio_postgres::Row;
use tokio_postgres::types::Json;

use crate::engine::{PostgresBroker, execute, query};
use crate::error::{self, PgError};
use crate::rows::{MessageRow, QueueRow};
use crate::sealing::{SEALED, sealed_by};

/// Reads every stored data key at a node's start: refuses the start when
/// one names a key the keyring lacks; re-wraps the server's own data keys
/// by the active key; deletes those of a retired key, with the messages
/// they sealed.
pub(crate) async fn load_data_keys<C: GenericClient>(
    client: &C,
    keys: &DataKeys,
    now: u64,
) -> Result<(), PgError> {
    let rows = client
        .query("SELECT record FROM sluice_data_keys", &[])
        .await?;
    let mut records = Vec::with_capacity(rows.len());
    for row in &rows {
        let Json(record): Json<DataKeyRecord> = row.try_get(0)?;
        records.push(record);
    }
    let loaded = keys
        .load(records, now)
        .map_err(|e| PgError::Keyring(e.to_string()))?;
    for r in &loaded.rewrapped {
        client
            .execute(
                "UPDATE sluice_data_keys SET record = $2 WHERE id = $1",
                &[&(r.id as i64), &Json(r)],
            )
            .await?;
    }
    for &id in &loaded.shredded {
        let prefix = format!("{SEALED}{id}:");
        let dropped = client
            .execute(
                "DELETE FROM sluice_messages WHERE starts_with(body, $1)",
                &[&prefix],
            )
            .await?;
        client
            .execute(
                "DELETE FROM sluice_data_keys WHERE id = $1",
                &[&(id as i64)],
            )
            .await?;
        tracing::warn!(
            data_key = id,
            messages = dropped,
            "messages sealed by a retired key dropped"
        );
    }
    Ok(())
}

/// The messages `sql` selects (its columns [`crate::rows::MESSAGE_COLUMNS`]),
/// opened.
pub(crate) async fn message_rows<C: GenericClient>(
    keys: &DataKeys,
    client: &C,
    sql: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
) -> Result<Vec<MessageRow>, EngineError> {
    let rows = query(client, sql, params).await?;
    load_keys_of(keys, client, &rows, (2, 13)).await?;
    MessageRow::all(&rows, keys)
}

/// Loads the data keys of `rows`' sealed bodies (column `body_column`)
/// and reasons (`reason_column`) this node does not know yet.
pub(crate) async fn load_keys_of<C: GenericClient>(
    keys: &DataKeys,
    client: &C,
    rows: &[Row],
    columns: (usize, usize),
) -> Result<(), EngineError> {
    if !keys.is_configured() {
        return Ok(());
    }
    let mut missing: Vec<i64> = Vec::new();
    for row in rows {
        for column in [columns.0, columns.1] {
            let stored: Option<&str> = row.try_get(column).ok().flatten();
            if let Some(id) = stored.and_then(sealed_by)
                && keys.get(id).is_none()
                && !missing.contains(&(id as i64))
            {
                missing.push(id as i64);
            }
        }
    }
    if missing.is_empty() {
        return Ok(());
    }
    let found = query(
        client,
        "SELECT record FROM sluice_data_keys WHERE id = ANY($1)",
        &[&missing],
    )
    .await?;
    for row in &found {
        let Json(record): Json<DataKeyRecord> = row.try_get(0).map_err(error::db)?;
        keys.add_record(&record)
            .map_err(|e| EngineError::Storage(e.to_string()))?;
    }
    Ok(())
}

impl PostgresBroker {
    /// The data key that seals `q`'s new messages; a new one is stored
    /// (and so readable by every node) before it is used, through `via`,
    /// a connection outside any transaction, when the caller holds one
    /// (else one of the pool's). One request of the node makes it at a
    /// time, and the others then seal with it: a data key's turn does not
    /// take a connection per concurrent send.
    pub(crate) async fn sealer(
        &self,
        q: &QueueRow,
        via: Option<&deadpool_postgres::Object>,
    ) -> Result<Option<Sealer>, EngineError> {
        let keys = &self.inner.data_keys;
        if !keys.is_configured() {
            return Ok(None);
        }
        if let Prepared::Ready(seal) = self.prepare_seal(q)? {
            return Ok(seal);
        }
        let _making = self.inner.making_data_key.lock().await;
        let new = match self.prepare_seal(q)? {
            Prepared::Ready(seal) => return Ok(seal),
            Prepared::New(new) => new,
        };
        const INSERT: &str =
            "INSERT INTO sluice_data_keys (id, queue_id, record) VALUES ($1, $2, $3)";
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 3] =
            [&(new.record.id as i64), &q.id, &Json(&new.record)];
        match via {
            Some(client) => execute(client, INSERT, &params).await?,
            None => execute(&self.inner.client().await?, INSERT, &params).await?,
        };
        Ok(Some(keys.publish(new)))
    }

    /// Puts `keyring` in use while serving: every stored data key that
    /// follows the server's key (this node's and the others') is wrapped
    /// again by the active key, in one transaction, before this returns.
    /// This node makes no data key meanwhile; the other nodes, signalled
    /// in turn, re-wrap any they made under the old key.
    pub(crate) async fn rekey(&self, keyring: Arc<Keyring>) -> Result<Rekey, EngineError> {
        let _making = self.inner.making_data_key.lock().await;
        let mut client = self.inner.client().await?;
        let rows = query(&client, "SELECT record FROM sluice_data_keys", &[]).await?;
        let mut records = Vec::with_capacity(rows.len());
        for row in &rows {
            let Json(record): Json<DataKeyRecord> = row.try_get(0).map_err(error::db)?;
            records.push(record);
        }
        let rekeyed = self
            .inner
            .data_keys
            .rekey(keyring, Some(records))
            .map_err(|e| EngineError::Unavailable(e.to_string()))?;
        let tx = client.transaction().await.map_err(error::db)?;
        for r in &rekeyed.rewrapped {
            execute(
                &tx,
                "UPDATE sluice_data_keys SET record = $2 WHERE id = $1",
                &[&(r.id as i64), &Json(r)],
            )
            .await?;
        }
        tx.commit().await.map_err(error::db)?;
        Ok(Rekey {
            rewrapped: rekeyed.rewrapped.len(),
            retired: rekeyed.retired,
        })
    }

    fn prepare_seal(&self, q: &QueueRow) -> Result<Prepared, EngineError> {
        let sse = QueueSse {
            sse_sqs: q.config.sqs_managed_sse_enabled,
            kms_key_id: q.config.kms_master_key_id.as_deref(),
            reuse_seconds: q.config.kms_data_key_reuse_period_seconds,
        };
        self.inner
            .data_keys
            .prepare(q.id as u64, sse, self.inner.now() as u64)
            .map_err(|e| match e {
                SealError::KeyNotFound(id) => EngineError::Rejected(SqsError::new(
                    ErrorCode::KmsNotFound,
                    format!("The key {id} is not in the server's keyring."),
                )),
                other => EngineError::Storage(other.to_string()),
            })
    }
}

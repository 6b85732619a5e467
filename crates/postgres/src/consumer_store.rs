//! Push consumers created at run time, kept in the database so that every
//! node runs the same ones and they outlive every node (rule C9), and the
//! leased delivery slots that hold a consumer's `max_concurrency` across
//! every node (rule C14).
//!
//! A slot is a row `(consumer, slot)` with `slot` below the consumer's
//! `max_concurrency`, held by the node whose token it carries until its
//! lease ends. Claims of one consumer take turns under a transaction-scoped
//! advisory lock, so two nodes never both see a slot free and one of them
//! miss another free one; a row whose lease ended belongs to a node that
//! died (or lost the database) and is claimed over.

use sluice_broker::{EngineError, SlotLease, StoredConsumer};

use crate::engine::{Inner, execute, query};
use crate::rows::col;
use crate::{error, locks};

/// Every stored consumer, by name.
pub(crate) async fn all(inner: &Inner) -> Result<Vec<StoredConsumer>, EngineError> {
    let client = inner.client().await?;
    let rows = query(
        &client,
        "SELECT name, definition::text FROM sluice_consumers ORDER BY name COLLATE \"C\"",
        &[],
    )
    .await?;
    rows.iter()
        .map(|row| {
            Ok(StoredConsumer {
                name: col(row, 0)?,
                definition: col(row, 1)?,
            })
        })
        .collect()
}

/// Adds a consumer unless the name is taken.
pub(crate) async fn insert(inner: &Inner, c: &StoredConsumer) -> Result<bool, EngineError> {
    let client = inner.client().await?;
    let added = execute(
        &client,
        "INSERT INTO sluice_consumers (name, definition) VALUES ($1, $2::text::jsonb)
         ON CONFLICT (name) DO NOTHING",
        &[&c.name, &c.definition],
    )
    .await?;
    Ok(added == 1)
}

/// Replaces the definition of an existing consumer.
pub(crate) async fn update(inner: &Inner, c: &StoredConsumer) -> Result<bool, EngineError> {
    let client = inner.client().await?;
    let changed = execute(
        &client,
        "UPDATE sluice_consumers SET definition = $2::text::jsonb WHERE name = $1",
        &[&c.name, &c.definition],
    )
    .await?;
    Ok(changed == 1)
}

/// Deletes a consumer.
pub(crate) async fn delete(inner: &Inner, name: &str) -> Result<bool, EngineError> {
    let client = inner.client().await?;
    let deleted = execute(
        &client,
        "DELETE FROM sluice_consumers WHERE name = $1",
        &[&name],
    )
    .await?;
    Ok(deleted == 1)
}

/// Leases the lowest free slot below `slots`.
pub(crate) async fn claim_slot(
    inner: &Inner,
    consumer: &str,
    slots: u32,
    lease_ms: u64,
) -> Result<Option<SlotLease>, EngineError> {
    let now = inner.now();
    let expires_at = now.saturating_add(i64::try_from(lease_ms).unwrap_or(i64::MAX));
    let slots = i32::try_from(slots).unwrap_or(i32::MAX);
    let token = uuid::Uuid::new_v4().to_string();
    let key = locks::claim_key(&format!("consumer-slots:{consumer}"));
    let mut client = inner.client().await?;
    let tx = client.transaction().await.map_err(error::db)?;
    query(&tx, "SELECT pg_advisory_xact_lock($1)", &[&key]).await?;
    // Under the lock, a row in conflict is one whose lease ended.
    let rows = query(
        &tx,
        "INSERT INTO sluice_consumer_slots (consumer, slot, token, expires_at)
         SELECT $1, s, $3, $5 FROM generate_series(0, $2 - 1) AS s
         WHERE NOT EXISTS (
             SELECT 1 FROM sluice_consumer_slots c
             WHERE c.consumer = $1 AND c.slot = s AND c.expires_at > $4)
         ORDER BY s LIMIT 1
         ON CONFLICT (consumer, slot) DO UPDATE
         SET token = EXCLUDED.token, expires_at = EXCLUDED.expires_at
         RETURNING slot",
        &[&consumer, &slots, &token, &now, &expires_at],
    )
    .await?;
    tx.commit().await.map_err(error::db)?;
    let Some(row) = rows.first() else {
        return Ok(None);
    };
    let slot: i32 = col(row, 0)?;
    Ok(Some(SlotLease {
        consumer: consumer.to_string(),
        slot: u32::try_from(slot).unwrap_or_default(),
        token,
    }))
}

/// Extends a lease this node still holds.
pub(crate) async fn renew_slot(
    inner: &Inner,
    lease: &SlotLease,
    lease_ms: u64,
) -> Result<bool, EngineError> {
    let expires_at = inner
        .now()
        .saturating_add(i64::try_from(lease_ms).unwrap_or(i64::MAX));
    let client = inner.client().await?;
    let slot = i32::try_from(lease.slot).unwrap_or(i32::MAX);
    let changed = execute(
        &client,
        "UPDATE sluice_consumer_slots SET expires_at = $4
         WHERE consumer = $1 AND slot = $2 AND token = $3",
        &[&lease.consumer, &slot, &lease.token, &expires_at],
    )
    .await?;
    Ok(changed == 1)
}

/// Frees a slot this node still holds.
pub(crate) async fn release_slot(inner: &Inner, lease: &SlotLease) -> Result<(), EngineError> {
    let client = inner.client().await?;
    let slot = i32::try_from(lease.slot).unwrap_or(i32::MAX);
    execute(
        &client,
        "DELETE FROM sluice_consumer_slots WHERE consumer = $1 AND slot = $2 AND token = $3",
        &[&lease.consumer, &slot, &lease.token],
    )
    .await?;
    Ok(())
}

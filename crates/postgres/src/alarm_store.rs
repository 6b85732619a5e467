//! Alarms kept in the database, so that every node shows the same alarms
//! and states and the node evaluating them can die without losing them.
//! The engine stores the server's JSON without reading it; a state change
//! is saved by compare-and-set, so of two nodes that both evaluated the
//! same change only one saves it (and notifies).

use sluice_broker::EngineError;
use sluice_broker::StoredAlarm;
use tokio_postgres::Row;

use crate::engine::{Inner, execute, query};
use crate::error;
use crate::rows::col;

const COLUMNS: &str = "name, source, definition::text, state, reason, updated_at, history::text";

fn from_row(row: &Row) -> Result<StoredAlarm, EngineError> {
    Ok(StoredAlarm {
        name: col(row, 0)?,
        source: col(row, 1)?,
        definition: col(row, 2)?,
        state: col(row, 3)?,
        reason: col(row, 4)?,
        updated_at: col::<i64>(row, 5)?.max(0) as u64,
        history: col(row, 6)?,
    })
}

/// Every stored alarm, by name.
pub(crate) async fn all(inner: &Inner) -> Result<Vec<StoredAlarm>, EngineError> {
    let mut client = inner.client().await?;
    let tx = client.transaction().await.map_err(error::db)?;
    let sql = format!("SELECT {COLUMNS} FROM sluice_alarms ORDER BY name COLLATE \"C\"");
    let rows = query(&tx, &sql, &[]).await?;
    tx.commit().await.map_err(error::db)?;
    rows.iter().map(from_row).collect()
}

/// Adds the alarm, or replaces the definition of one whose source is in
/// `replaces`; otherwise the existing alarm's source.
pub(crate) async fn put(
    inner: &Inner,
    alarm: &StoredAlarm,
    replaces: &[String],
) -> Result<Option<String>, EngineError> {
    let mut client = inner.client().await?;
    let tx = client.transaction().await.map_err(error::db)?;
    let changed = execute(
        &tx,
        "INSERT INTO sluice_alarms (name, source, definition, state, reason, updated_at, history)
         VALUES ($1, $2, $3::text::jsonb, $4, $5, $6, $7::text::jsonb)
         ON CONFLICT (name) DO UPDATE
         SET source = EXCLUDED.source, definition = EXCLUDED.definition
         WHERE sluice_alarms.source = ANY($8)",
        &[
            &alarm.name,
            &alarm.source,
            &alarm.definition,
            &alarm.state,
            &alarm.reason,
            &(alarm.updated_at as i64),
            &alarm.history,
            &replaces,
        ],
    )
    .await?;
    if changed == 1 {
        tx.commit().await.map_err(error::db)?;
        return Ok(None);
    }
    let rows = query(
        &tx,
        "SELECT source FROM sluice_alarms WHERE name = $1",
        &[&alarm.name],
    )
    .await?;
    match rows.first() {
        Some(row) => Ok(Some(col(row, 0)?)),
        // Deleted since the insert saw it: a new put will insert it.
        None => Err(error::unavailable()),
    }
}

/// Deletes alarms by name.
pub(crate) async fn delete(inner: &Inner, names: &[String]) -> Result<(), EngineError> {
    let mut client = inner.client().await?;
    let tx = client.transaction().await.map_err(error::db)?;
    execute(
        &tx,
        "DELETE FROM sluice_alarms WHERE name = ANY($1)",
        &[&names],
    )
    .await?;
    tx.commit().await.map_err(error::db)
}

/// Saves a state change if the stored state is still the one it was
/// evaluated from.
pub(crate) async fn save_state(
    inner: &Inner,
    alarm: &StoredAlarm,
    expected_state: &str,
    expected_updated_at: u64,
) -> Result<bool, EngineError> {
    let mut client = inner.client().await?;
    let tx = client.transaction().await.map_err(error::db)?;
    let changed = execute(
        &tx,
        "UPDATE sluice_alarms
         SET state = $2, reason = $3, updated_at = $4, history = $5::text::jsonb
         WHERE name = $1 AND state = $6 AND updated_at = $7",
        &[
            &alarm.name,
            &alarm.state,
            &alarm.reason,
            &(alarm.updated_at as i64),
            &alarm.history,
            &expected_state,
            &(expected_updated_at as i64),
        ],
    )
    .await?;
    tx.commit().await.map_err(error::db)?;
    Ok(changed == 1)
}

//! Secrets made once for the whole cluster and kept in the database: the
//! key receipt handles are sealed with (rule A3).

use sluice_broker::EngineError;
use sluice_broker::HandleSecret;

use crate::engine::{Inner, execute, query};
use crate::error;
use crate::rows::col;

/// The receipt handles' key (rule A3): the row the first node inserted.
pub(crate) async fn handle_secret(inner: &Inner) -> Result<HandleSecret, EngineError> {
    let candidate = HandleSecret::random()?;
    let mut client = inner.client().await?;
    let tx = client.transaction().await.map_err(error::db)?;
    let name = "receipt_handles";
    execute(
        &tx,
        "INSERT INTO sluice_secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
        &[&name, &&candidate.0[..]],
    )
    .await?;
    let rows = query(
        &tx,
        "SELECT value FROM sluice_secrets WHERE name = $1",
        &[&name],
    )
    .await?;
    tx.commit().await.map_err(error::db)?;
    let stored: Vec<u8> = match rows.first() {
        Some(row) => col(row, 0)?,
        None => Vec::new(),
    };
    HandleSecret::from_slice(&stored).ok_or_else(|| {
        EngineError::Storage("the stored receipt handle secret is not 32 bytes".into())
    })
}

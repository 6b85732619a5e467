//! Statements run prepared: each connection prepares a statement once
//! (`prepare_cached`) and runs it with its parameters from then on.

use deadpool_postgres::GenericClient;
use sluice_broker::EngineError;
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

use crate::error;

/// Runs a prepared (cached) statement, in a transaction or on its own.
pub(crate) async fn query<C: GenericClient>(
    tx: &C,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<Vec<Row>, EngineError> {
    let statement = tx.prepare_cached(sql).await.map_err(error::db)?;
    tx.query(&statement, params).await.map_err(error::db)
}

/// Runs a prepared (cached) statement, in a transaction or on its own;
/// rows changed.
pub(crate) async fn execute<C: GenericClient>(
    tx: &C,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<u64, EngineError> {
    let statement = tx.prepare_cached(sql).await.map_err(error::db)?;
    tx.execute(&statement, params).await.map_err(error::db)
}

//! How database failures reach clients: a lost connection or an exhausted
//! pool is a retryable `ServiceUnavailable` (503); anything else is an
//! `InternalFailure` whose SQL details stay in the log, never in the answer.

use sluice_broker::EngineError;
use tokio_postgres::error::SqlState;

/// Why the engine could not start.
#[derive(Debug, thiserror::Error)]
pub enum PgError {
    /// The URL is not a PostgreSQL connection string.
    #[error("invalid PostgreSQL URL: {0}")]
    Url(String),
    /// The pool could not be built.
    #[error("cannot build the connection pool: {0}")]
    Pool(String),
    /// The database could not be reached or refused a statement.
    #[error("PostgreSQL: {0}")]
    Db(#[from] tokio_postgres::Error),
    /// A connection could not be taken from the pool.
    #[error("PostgreSQL connection: {0}")]
    Connect(String),
    /// The stored data keys cannot be read with the keyring given
    /// (encryption at rest).
    #[error("encryption at rest: {0}")]
    Keyring(String),
    /// The schema is newer than this server knows.
    #[error(
        "the database schema is at version {found}, newer than this server's {known}; upgrade sluice"
    )]
    SchemaTooNew {
        /// Version in the database.
        found: i32,
        /// Newest version this build knows.
        known: i32,
    },
}

const UNAVAILABLE: &str = "The service is temporarily unavailable. Retry the request.";

/// The answer for a database that cannot be reached now.
pub(crate) fn unavailable() -> EngineError {
    EngineError::Unavailable(UNAVAILABLE.into())
}

/// Maps a database error to what the client sees.
pub(crate) fn db(e: tokio_postgres::Error) -> EngineError {
    if violates(&e, ONE_ACTIVE_MOVE_TASK) {
        return EngineError::MoveTaskAlreadyRunning;
    }
    if is_transient(&e) {
        tracing::warn!(error = %e, "database unavailable");
        return unavailable();
    }
    tracing::error!(error = %e, detail = ?e.as_db_error(), "database error");
    EngineError::Storage("An internal error occurred.".into())
}

/// Maps a pool error (no connection within the wait, or a failed connect).
pub(crate) fn pool(e: deadpool_postgres::PoolError) -> EngineError {
    tracing::warn!(error = %e, "no database connection");
    unavailable()
}

/// True for failures a retry may cure: the connection is gone, the server
/// is shutting down or out of resources, or a transaction lost a race.
fn is_transient(e: &tokio_postgres::Error) -> bool {
    if e.is_closed() {
        return true;
    }
    let Some(db) = e.as_db_error() else {
        // No server answer: an I/O or protocol failure of the connection.
        return true;
    };
    let code = db.code().code();
    code.starts_with("08")
        || code.starts_with("53")
        || code.starts_with("57P")
        || *db.code() == SqlState::T_R_SERIALIZATION_FAILURE
        || *db.code() == SqlState::T_R_DEADLOCK_DETECTED
        || *db.code() == SqlState::LOCK_NOT_AVAILABLE
        || *db.code() == SqlState::READ_ONLY_SQL_TRANSACTION
}

/// The unique index that allows one active move task per source queue.
const ONE_ACTIVE_MOVE_TASK: &str = "sluice_move_tasks_one_active";

/// True when `e` is a unique violation of `constraint`.
fn violates(e: &tokio_postgres::Error, constraint: &str) -> bool {
    e.as_db_error().is_some_and(|db| {
        *db.code() == SqlState::UNIQUE_VIOLATION && db.constraint() == Some(constraint)
    })
}

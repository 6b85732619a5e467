//! The store's errors.

use super::backup_marker::INCOMPLETE_BACKUP_MARKER;
use crate::codec::CorruptRecord;

/// Errors of the durable store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// redb failed.
    #[error("storage: {0}")]
    Redb(String),
    /// Another process holds the store's file open (another server on
    /// the same data directory).
    #[error("storage: {0}")]
    AlreadyOpen(String),
    /// A record did not decode.
    #[error(transparent)]
    Corrupt(#[from] CorruptRecord),
    /// A queue record did not decode.
    #[error("corrupt queue record: {0}")]
    QueueRecord(#[from] serde_json::Error),
    /// The write-ahead log failed, or could not be read back.
    #[error("write-ahead log: {0}")]
    Log(String),
    /// The data directory is a backup that was never finished.
    #[error(
        "{0} is an unfinished backup (it holds {marker}): a backup interrupted before it was complete; take a new one"
    , marker = INCOMPLETE_BACKUP_MARKER)]
    IncompleteBackup(String),
    /// The file of SNS topics and subscriptions holds none this build can
    /// serve.
    #[error(
        "{path} cannot be read ({why}): it holds the SNS topics and subscriptions; \
         restore it from a backup, or move it away to start without them"
    )]
    Topics {
        /// The file.
        path: String,
        /// Why it cannot be read.
        why: String,
    },
    /// The stored data keys cannot be opened with the keyring given.
    #[error("encryption at rest: {0}")]
    Keyring(#[from] sluice_keyring::KeyringError),
    /// An earlier write failed (the cause given); the engine accepts no
    /// more writes until it has reopened its storage (rule D5).
    #[error(
        "writes are refused since an earlier write to storage failed ({0}); \
         what was acknowledged is safe, and the storage is reopened once it takes writes again"
    )]
    Failed(String),
}

/// The store's own file errors are those of the log's segments.
impl From<std::io::Error> for StoreError {
    fn from(e: std::io::Error) -> Self {
        StoreError::Log(e.to_string())
    }
}

macro_rules! redb_err {
    ($($t:ty),*) => {$(
        impl From<$t> for StoreError {
            fn from(e: $t) -> Self {
                StoreError::Redb(e.to_string())
            }
        }
    )*};
}
impl From<redb::DatabaseError> for StoreError {
    fn from(e: redb::DatabaseError) -> Self {
        match e {
            redb::DatabaseError::DatabaseAlreadyOpen => StoreError::AlreadyOpen(e.to_string()),
            e => StoreError::Redb(e.to_string()),
        }
    }
}

redb_err!(
    redb::Error,
    redb::TransactionError,
    redb::TableError,
    redb::StorageError,
    redb::CommitError,
    redb::SetDurabilityError
);

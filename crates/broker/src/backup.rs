//! Online backups: what an engine reports after copying its data, and the
//! refusal of an engine that has no copy of its own to make.

use sluice_core::{ErrorCode, SqsError};

use crate::error::EngineError;

/// What a finished online backup holds (rule D7).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BackupReport {
    /// The directory the backup was renamed into once complete.
    pub directory: String,
    /// Files written (the store, log segments, the server's own files).
    pub files: u64,
    /// Their bytes.
    pub bytes: u64,
    /// The last log record the copied store holds: the backup's point in
    /// time.
    pub applied_lsn: u64,
}

/// The refusal of an engine without an online backup: `why` says what to
/// use instead.
pub fn backup_unsupported(why: &str) -> EngineError {
    EngineError::Rejected(SqsError::new(ErrorCode::UnsupportedOperation, why))
}

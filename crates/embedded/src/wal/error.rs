//! The log's errors.

use std::io;

/// Errors of the log.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// Reading, writing or syncing the file failed.
    #[error("log file: {0}")]
    Io(#[from] io::Error),
    /// The file is not a sluice log.
    #[error("{0} is not a sluice log file")]
    NotALog(String),
    /// The log starts after the store's last change: records are missing.
    #[error("the log starts at record {first} but the store holds only up to {applied}")]
    Gap {
        /// The LSN of the first record found.
        first: u64,
        /// The last LSN the store holds.
        applied: u64,
    },
}

//! The archive's error.

use std::io;
use std::path::PathBuf;

/// What can go wrong with the archive.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    /// A file operation failed.
    #[error("archive I/O on {path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The failure.
        source: io::Error,
    },
    /// A record that is not the tail of an open segment does not parse.
    #[error("corrupt archive record in {file} at line {line}")]
    Corrupt {
        /// The segment.
        file: PathBuf,
        /// The line, counting from 1.
        line: usize,
    },
    /// A page token that [`crate::ArchiveCursor::to_token`] did not make.
    #[error("bad archive cursor")]
    BadCursor,
    /// A record could not be serialised.
    #[error("encoding an archive record: {0}")]
    Encode(#[from] serde_json::Error),
}

//! The log's files: the segment directory, segment and `.ready` paths,
//! listing segments, the pre-segment log file, syncing the directory.

use std::io;
use std::path::{Path, PathBuf};

use crate::storage::{OsStorage, Storage, parent};

/// The directory of the log's segments, inside the data directory.
pub const LOG_DIR: &str = "log";

/// The single log file of stores written before segments (replayed once,
/// then removed).
pub const LEGACY_LOG_FILE: &str = "sluice.wal";

/// Suffix of a segment made ready ahead, not yet part of the log.
pub(super) const READY_SUFFIX: &str = ".ready";

/// Suffix of a segment being made ready.
pub(super) const PREPARING_SUFFIX: &str = ".preparing";

/// The segment ids in `log_dir`, oldest first.
pub(super) fn list_segments(storage: &dyn Storage, log_dir: &Path) -> io::Result<Vec<u64>> {
    let mut ids = Vec::new();
    for name in storage.list(log_dir)? {
        if let Some(id) = name
            .strip_suffix(".wal")
            .and_then(|n| n.parse::<u64>().ok())
        {
            ids.push(id);
        }
    }
    ids.sort_unstable();
    Ok(ids)
}

/// The segments in data directory `dir`, oldest first.
#[cfg(test)]
pub fn segment_ids(dir: &Path) -> io::Result<Vec<u64>> {
    list_segments(&OsStorage, &dir.join(LOG_DIR))
}

/// The file of segment `id`.
pub(super) fn segment_path(log_dir: &Path, id: u64) -> PathBuf {
    log_dir.join(format!("{id:020}.wal"))
}

/// The file of segment `id` made ready ahead (`suffix` [`READY_SUFFIX`]),
/// or being made ready ([`PREPARING_SUFFIX`]).
pub(super) fn unready_path(log_dir: &Path, id: u64, suffix: &str) -> PathBuf {
    log_dir.join(format!("{id:020}{suffix}"))
}

/// Deletes the segments made ready by an earlier run: their ids may be
/// taken by now, and the next is made ready again.
pub(super) fn remove_unready(storage: &dyn Storage, log_dir: &Path) -> io::Result<()> {
    for name in storage.list(log_dir)? {
        if name.ends_with(READY_SUFFIX) || name.ends_with(PREPARING_SUFFIX) {
            storage.remove(&log_dir.join(name))?;
        }
    }
    Ok(())
}

/// Path of the newest segment in data directory `dir` (for tests that
/// tamper with the log).
pub fn newest_segment(dir: &Path) -> io::Result<Option<PathBuf>> {
    let log_dir = dir.join(LOG_DIR);
    Ok(list_segments(&OsStorage, &log_dir)?
        .last()
        .map(|&id| segment_path(&log_dir, id)))
}

/// Deletes the legacy log file once what it held is durable in the store.
pub fn remove_legacy(storage: &dyn Storage, dir: &Path) -> io::Result<()> {
    storage.remove(&dir.join(LEGACY_LOG_FILE))?;
    storage.sync_dir(dir)
}

/// Makes a new or removed file's directory entry durable.
pub(super) fn sync_dir(storage: &dyn Storage, path: &Path) -> io::Result<()> {
    storage.sync_dir(parent(path))
}

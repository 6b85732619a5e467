//! Start-up: finding the segments and reading back the records after
//! the last one the store holds.

use std::io;
use std::path::Path;

use super::error::LogError;
use super::files::{LEGACY_LOG_FILE, LOG_DIR, list_segments, remove_unready, segment_path};
use super::record::{MAGIC, Recovered, START, read_records};
use crate::storage::Storage;

/// What [`open`] found in the data directory.
#[derive(Debug)]
pub struct Found {
    /// The records after the store's last, in order.
    pub records: Vec<Recovered>,
    /// Every segment on disk, oldest first.
    pub segments: Vec<u64>,
    /// Whether a legacy log file is present.
    pub legacy: bool,
    /// How many bytes of records the newest segment holds (0 without one):
    /// how long to make the next segments ready.
    pub newest_len: u64,
}

/// Reads the log in data directory `dir`: the records after `applied`,
/// the last LSN the store holds durably, from the legacy file if any and
/// the newest segment.
pub fn open(storage: &dyn Storage, dir: &Path, applied: u64) -> Result<Found, LogError> {
    let log_dir = dir.join(LOG_DIR);
    storage.create_dir_all(&log_dir)?;
    let legacy_path = dir.join(LEGACY_LOG_FILE);
    let legacy = storage.exists(&legacy_path)?;
    let mut records = if legacy {
        read_file(storage, &legacy_path, applied, None)?
    } else {
        Vec::new()
    };
    let segments = list_segments(storage, &log_dir)?;
    let mut newest_len = 0;
    if let Some(&newest) = segments.last() {
        let after = records.last().map_or(applied, |r| r.lsn);
        let path = segment_path(&log_dir, newest);
        let (read, end) = read_segment(storage, &path, after, newest)?;
        records.extend(read);
        newest_len = end;
    }
    remove_unready(storage, &log_dir)?;
    Ok(Found {
        records,
        segments,
        legacy,
        newest_len,
    })
}

/// Writes the records of segment `id`, which end at `end`, again and
/// syncs them. After a failed `fdatasync` the kernel may still serve bytes
/// it never wrote (it clears the dirty state of the pages it could not
/// write, so a later sync skips them), and so may redb, reopened in place,
/// with positions in them from commits that were never durable: without
/// this the next checkpoint would make those positions durable while the
/// bytes are missing from the disk. Overwriting needs no new space, and a
/// start after a clean stop finds an empty segment.
pub fn rewrite_records(storage: &dyn Storage, dir: &Path, id: u64, end: u64) -> io::Result<()> {
    if end <= START {
        return Ok(());
    }
    let file = storage.open(&segment_path(&dir.join(LOG_DIR), id), true)?;
    let mut records = vec![0; (end - START) as usize];
    file.read_exact_at(&mut records, START)?;
    file.write_all_at(&records, START)?;
    file.sync_data()
}

/// The records after `applied` in segment `id` at `path`, and where they
/// end; zeros after them (made ready, not written yet when the process
/// stopped) are cut off.
pub(super) fn read_segment(
    storage: &dyn Storage,
    path: &Path,
    applied: u64,
    id: u64,
) -> Result<(Vec<Recovered>, u64), LogError> {
    let bytes = read_log_file(storage, path)?;
    if bytes.is_empty() {
        return Ok((Vec::new(), 0));
    }
    let (records, end) = read_records(&bytes[MAGIC.len()..], applied, Some(id))?;
    let tail = &bytes[end as usize..];
    if !tail.is_empty() && tail.iter().all(|&b| b == 0) {
        // Only zeros go: a torn record stays for whoever looks into it.
        storage.open(path, true)?.set_len(end)?;
    }
    Ok((records, end))
}

/// The records after `applied` in the log file at `path`, which is
/// `segment` (`None`: the legacy file).
pub(super) fn read_file(
    storage: &dyn Storage,
    path: &Path,
    applied: u64,
    segment: Option<u64>,
) -> Result<Vec<Recovered>, LogError> {
    let bytes = read_log_file(storage, path)?;
    if bytes.is_empty() {
        return Ok(Vec::new());
    }
    Ok(read_records(&bytes[MAGIC.len()..], applied, segment)?.0)
}

/// The bytes of the log file at `path`, magic included; empty for a file
/// whose magic a crash cut short.
pub(super) fn read_log_file(storage: &dyn Storage, path: &Path) -> Result<Vec<u8>, LogError> {
    let bytes = storage.open(path, false)?.read_all()?;
    if bytes.len() < MAGIC.len() && MAGIC.starts_with(&bytes) {
        // Created by a run that died before its magic was synced, which
        // came before any record could be acknowledged.
        return Ok(Vec::new());
    }
    if !bytes.starts_with(MAGIC) {
        return Err(LogError::NotALog(path.display().to_string()));
    }
    Ok(bytes)
}

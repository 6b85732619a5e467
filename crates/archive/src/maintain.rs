//! Upkeep: rotation by age, expiry by retention, disk usage, and the
//! recovery `Archive::open` runs.

use std::collections::HashSet;
use std::fs;
use std::io;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::Archive;
use crate::error::ArchiveError;
use crate::layout::{self, Entry};
use crate::segment::{self, io_at};

/// Another node's rotation output older than this was abandoned by a crash.
const STALE_TMP: Duration = Duration::from_secs(3600);

impl Archive {
    /// Rotates this node's open segments older than the max age (by the
    /// start time in their names), and those it no longer appends to (left
    /// by an earlier run or a failed write); returns how many. On failures
    /// it goes on with the others and returns the first.
    pub fn rotate_due(&self, now_ms: u64) -> Result<usize, ArchiveError> {
        let mut current = self.current.lock();
        let mut rotated = 0;
        let mut first_error = None;
        for (queue, queue_dir) in self.queue_dirs()? {
            for entry in segment::list_dir(&queue_dir)? {
                let Entry::Open(stem) = entry else { continue };
                let Some((start, node)) = layout::parse_stem(&stem) else {
                    continue;
                };
                if node != self.node {
                    continue;
                }
                let appending = current.get(&queue).is_some_and(|c| c.stem == stem);
                let due = now_ms.saturating_sub(start) >= self.options.segment_max_age_ms;
                if appending && !due {
                    continue;
                }
                if appending {
                    current.remove(&queue);
                }
                match segment::rotate(&queue_dir, &stem) {
                    Ok(()) => rotated += 1,
                    Err(e) => {
                        tracing::warn!(error = %e, "archive: rotation failed");
                        first_error.get_or_insert(e);
                    }
                }
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(rotated),
        }
    }

    /// Deletes rotated segments (of any node) whose file modification time
    /// is older than the retention; returns how many files. A queue
    /// directory left without segments is removed with its restore log.
    pub fn expire(&self, now_ms: u64) -> Result<usize, ArchiveError> {
        let Some(retention) = self.options.retention_ms else {
            return Ok(0);
        };
        // Held so that no append of this node creates a segment in a
        // directory being removed.
        let current = self.current.lock();
        let mut removed = 0;
        for (queue, queue_dir) in self.queue_dirs()? {
            let mut left = 0;
            for entry in segment::list_dir(&queue_dir)? {
                let stem = match entry {
                    Entry::Rotated(stem) => stem,
                    Entry::Open(_) | Entry::Tmp(_) => {
                        left += 1;
                        continue;
                    }
                    Entry::Uploaded(_) | Entry::Restored => continue,
                };
                let path = layout::gz_path(&queue_dir, &stem);
                let modified = match fs::metadata(&path).and_then(|m| m.modified()) {
                    Ok(modified) => millis(modified),
                    Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                    Err(e) => return Err(io_at(&path)(e)),
                };
                if now_ms.saturating_sub(modified) > retention {
                    if segment::remove_if_present(&path)? {
                        removed += 1;
                    }
                    segment::remove_if_present(&layout::uploaded_path(&queue_dir, &stem))?;
                } else {
                    left += 1;
                }
            }
            if left == 0 && !current.contains_key(&queue) {
                segment::remove_if_present(&queue_dir.join(layout::RESTORED_FILE))?;
                // Fails when another node has just started a segment here:
                // then the directory is in use again, as it should be.
                let _ = fs::remove_dir(&queue_dir);
            }
        }
        Ok(removed)
    }

    /// Bytes the archive takes on disk (segments, restore logs, rotations
    /// under way), and the number of segment files (open and rotated).
    pub fn usage(&self) -> Result<(u64, u64), ArchiveError> {
        let (mut bytes, mut segments) = (0, 0);
        for (_, queue_dir) in self.queue_dirs()? {
            for entry in segment::list_dir(&queue_dir)? {
                let path = match &entry {
                    Entry::Open(stem) => layout::open_path(&queue_dir, stem),
                    Entry::Rotated(stem) => layout::gz_path(&queue_dir, stem),
                    Entry::Tmp(stem) => layout::tmp_path(&queue_dir, stem),
                    Entry::Uploaded(stem) => layout::uploaded_path(&queue_dir, stem),
                    Entry::Restored => queue_dir.join(layout::RESTORED_FILE),
                };
                match fs::metadata(&path) {
                    Ok(meta) => bytes += meta.len(),
                    // Rotated or expired since the listing.
                    Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                    Err(e) => return Err(io_at(&path)(e)),
                }
                if matches!(entry, Entry::Open(_) | Entry::Rotated(_)) {
                    segments += 1;
                }
            }
        }
        Ok((bytes, segments))
    }

    /// Recovers one queue directory after a crash (see [`Archive::open`]).
    pub(crate) fn recover(&self, queue_dir: &Path) -> Result<(), ArchiveError> {
        let entries = segment::list_dir(queue_dir)?;
        let rotated: HashSet<&str> = entries
            .iter()
            .filter_map(|e| match e {
                Entry::Rotated(stem) => Some(stem.as_str()),
                _ => None,
            })
            .collect();
        let mut removed = false;
        for entry in &entries {
            match entry {
                Entry::Tmp(stem) => {
                    let path = layout::tmp_path(queue_dir, stem);
                    if self.is_mine(stem) || is_stale(&path) {
                        removed |= segment::remove_if_present(&path)?;
                    }
                }
                Entry::Open(stem) if rotated.contains(stem.as_str()) => {
                    removed |= segment::remove_if_present(&layout::open_path(queue_dir, stem))?;
                }
                // Its segment expired and a crash came before the marker went.
                Entry::Uploaded(stem) if !rotated.contains(stem.as_str()) => {
                    removed |= segment::remove_if_present(&layout::uploaded_path(queue_dir, stem))?;
                }
                Entry::Open(stem) if self.is_mine(stem) => {
                    segment::truncate_torn(&layout::open_path(queue_dir, stem))?;
                }
                _ => {}
            }
        }
        if removed {
            segment::sync_dir(queue_dir)?;
        }
        Ok(())
    }

    /// Is the segment `stem` this node's?
    fn is_mine(&self, stem: &str) -> bool {
        layout::parse_stem(stem).is_some_and(|(_, node)| node == self.node)
    }
}

/// A file time in ms since the epoch (0 before it).
fn millis(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Was this file last modified over [`STALE_TMP`] ago?
fn is_stale(path: &Path) -> bool {
    fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age > STALE_TMP)
}

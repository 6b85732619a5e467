//! The message archive: where messages that reach their queue's retention
//! are written before the queue drops them ("archive before expiry").
//!
//! # The guarantee
//!
//! A queue deletes an expiring message only after [`Archive::append`]
//! returned Ok, and `append` returns only once the records are durable: the
//! segment fsynced, and its directory (and the queue directory's parent)
//! fsynced when an entry was created. A crash between the append and the
//! queue's delete archives the message twice; readers list both copies and
//! [`Archive::find`] keeps one.
//!
//! # Layout
//!
//! ```text
//! <dir>/<queue-dir>/                      one per queue key, bytes outside
//!                                         [A-Za-z0-9_.-] percent-encoded
//!     <start-ms:016>-<node>.jsonl         open segment: one JSON record a line
//!     <start-ms:016>-<node>.jsonl.gz      rotated segment: gzip of the same lines
//!     <start-ms:016>-<node>.jsonl.gz.uploaded
//!                                         marker: that segment is in the bucket
//!     restored.jsonl                      one line per restore
//! ```
//!
//! Each node appends only to segments named after it, so several nodes can
//! share a directory. Segments are read in stem order (start time first),
//! and a segment keeps its stem when rotated, so a page cursor (stem and
//! line) stays valid while segments are appended and rotated.
//!
//! Rotation writes `X.jsonl.gz.tmp`, fsyncs it, renames it to `X.jsonl.gz`,
//! fsyncs the directory and only then removes `X.jsonl`; [`Archive::open`]
//! undoes what a crash left half done (see there). All I/O is synchronous:
//! async callers run it in `spawn_blocking`.

mod cursor;
mod error;
mod layout;
mod maintain;
mod record;
mod segment;
#[cfg(test)]
mod tests;
mod upload;
#[cfg(test)]
mod upload_tests;

use std::collections::hash_map::Entry::{Occupied, Vacant};
use std::collections::{HashMap, HashSet};
use std::fs::{self, OpenOptions};
use std::io::{self, Write as _};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use parking_lot::Mutex;

pub use cursor::ArchiveCursor;
pub use error::ArchiveError;
pub use layout::PendingUpload;
pub use record::{ArchivePage, ArchivedEntry, ArchivedMessage};

use layout::Entry;
use record::RestoreRecord;
use segment::io_at;

/// How the archive names and rotates its segments and how long it keeps them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchiveOptions {
    /// This node's name in segment names (kept to `[A-Za-z0-9_-]`, other
    /// characters become `_`); each node sharing a directory needs its own.
    pub node: String,
    /// An open segment is rotated once an append takes it past this size.
    pub segment_max_bytes: u64,
    /// An open segment is rotated by [`Archive::rotate_due`] once this old.
    pub segment_max_age_ms: u64,
    /// Rotated segments are deleted by [`Archive::expire`] this long after
    /// their rotation; `None` keeps them forever.
    pub retention_ms: Option<u64>,
}

impl Default for ArchiveOptions {
    fn default() -> Self {
        ArchiveOptions {
            node: "node".to_owned(),
            segment_max_bytes: 16 * 1024 * 1024,
            segment_max_age_ms: 60 * 60 * 1000,
            retention_ms: None,
        }
    }
}

/// The segment this node appends a queue's records to.
#[derive(Debug)]
struct Current {
    stem: String,
    file: fs::File,
    len: u64,
}

/// The archive in a directory, as one node sees it. One `Archive` per
/// directory and node name: two would append to the same segments.
#[derive(Debug)]
pub struct Archive {
    dir: PathBuf,
    node: String,
    options: ArchiveOptions,
    /// Open segments by queue key. Writers (append, rotation, expiry, restore
    /// marks) hold it; readers do not, and follow a segment renamed under them.
    current: Mutex<HashMap<String, Current>>,
}

impl Archive {
    /// Opens (creating) the archive directory and recovers it: removes this
    /// node's `*.tmp` (and other nodes' left for over an hour), removes
    /// `X.jsonl` where `X.jsonl.gz` exists (the rename happened, so the gzip
    /// is whole), and cuts this node's open segments back to their last
    /// whole record (a torn tail was never acknowledged). This node's open
    /// segments are not appended to again: [`Archive::rotate_due`] rotates them.
    pub fn open(dir: impl Into<PathBuf>, options: ArchiveOptions) -> Result<Self, ArchiveError> {
        let dir = dir.into();
        if !dir.is_dir() {
            fs::create_dir_all(&dir).map_err(io_at(&dir))?;
            if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
                segment::sync_dir(parent)?;
            }
        }
        let archive = Archive {
            node: layout::sanitize_node(&options.node),
            dir,
            options,
            current: Mutex::new(HashMap::new()),
        };
        for (_, queue_dir) in archive.queue_dirs()? {
            archive.recover(&queue_dir)?;
        }
        Ok(archive)
    }

    /// How old an open segment gets before [`Archive::rotate_due`] rotates it.
    pub fn segment_max_age_ms(&self) -> u64 {
        self.options.segment_max_age_ms
    }

    /// The archive's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Appends records (all of one queue, `queue`) and returns once they are
    /// durable. A rotation the append triggers that fails is logged, not
    /// returned: the records are safe, and the rotation is retried.
    pub fn append(&self, queue: &str, records: &[ArchivedMessage]) -> Result<(), ArchiveError> {
        let Some(first) = records.first() else {
            return Ok(());
        };
        let queue_dir = self.queue_dir(queue)?;
        let mut buf = Vec::new();
        for record in records {
            serde_json::to_writer(&mut buf, record)?;
            buf.push(b'\n');
        }
        let mut current = self.current.lock();
        let segment = match current.entry(queue.to_owned()) {
            Occupied(open) => open.into_mut(),
            Vacant(none) => none.insert(self.new_segment(&queue_dir, first.archived_at)?),
        };
        let path = layout::open_path(&queue_dir, &segment.stem);
        let written = segment
            .file
            .write_all(&buf)
            .and_then(|()| segment.file.sync_data());
        if let Err(e) = written {
            // What reached the file is unknown: cut it back and abandon the
            // segment, so later appends never follow a torn record.
            let _ = segment.file.set_len(segment.len);
            current.remove(queue);
            return Err(io_at(&path)(e));
        }
        segment.len += buf.len() as u64;
        if segment.len > self.options.segment_max_bytes {
            let stem = segment.stem.clone();
            current.remove(queue);
            if let Err(e) = segment::rotate(&queue_dir, &stem) {
                tracing::warn!(error = %e, "archive: rotation failed; retried by rotate_due");
            }
        }
        Ok(())
    }

    /// Queue keys that have an archive directory, sorted.
    pub fn queues(&self) -> Result<Vec<String>, ArchiveError> {
        let mut queues: Vec<String> = self.queue_dirs()?.into_iter().map(|(q, _)| q).collect();
        queues.sort();
        Ok(queues)
    }

    /// One page of a queue's archived messages, oldest first, those `keep`
    /// accepts, at most `limit`; `after` is a cursor from a previous page.
    /// Each comes with when it was last restored (None if never), from
    /// `restored.jsonl`. `next` is set only when another accepted message
    /// follows the page; a limit of 0 gives an empty page.
    pub fn list(
        &self,
        queue: &str,
        after: Option<&ArchiveCursor>,
        limit: usize,
        keep: &dyn Fn(&ArchivedMessage) -> bool,
    ) -> Result<ArchivePage, ArchiveError> {
        let mut page = ArchivePage {
            entries: Vec::new(),
            next: None,
        };
        if limit == 0 {
            return Ok(page);
        }
        let queue_dir = self.queue_dir(queue)?;
        let restored = segment::read_restored(&queue_dir)?;
        let mut last = None;
        for seg in layout::segments(segment::list_dir(&queue_dir)?) {
            let from = match after {
                Some(c) if seg.stem < c.stem => continue,
                Some(c) if seg.stem == c.stem => c.line.saturating_add(1),
                _ => 0,
            };
            let flow = segment::scan(&queue_dir, &seg, from, &mut |line, message| {
                if !keep(&message) {
                    return ControlFlow::Continue(());
                }
                if page.entries.len() == limit {
                    // One more accepted message: there is a next page.
                    page.next = last.take();
                    return ControlFlow::Break(());
                }
                last = Some(ArchiveCursor {
                    stem: seg.stem.clone(),
                    line,
                });
                let restored_at = restored_since(&restored, &message);
                page.entries.push(ArchivedEntry {
                    message,
                    restored_at,
                });
                ControlFlow::Continue(())
            })?;
            if flow.is_break() {
                break;
            }
        }
        Ok(page)
    }

    /// The archived messages of `queue` with these ids, in archive order.
    /// A message archived more than once (a crash between an append and
    /// the queue's delete) comes once: the copy archived last.
    pub fn find(&self, queue: &str, ids: &[String]) -> Result<Vec<ArchivedEntry>, ArchiveError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let wanted: HashSet<&str> = ids.iter().map(String::as_str).collect();
        let queue_dir = self.queue_dir(queue)?;
        let mut found: Vec<ArchivedMessage> = Vec::new();
        // Message id to its index in `found` of the copy kept.
        let mut kept: HashMap<String, usize> = HashMap::new();
        for seg in layout::segments(segment::list_dir(&queue_dir)?) {
            // Never breaks: every copy must be seen to keep the latest.
            let _ = segment::scan(&queue_dir, &seg, 0, &mut |_, message| {
                if wanted.contains(message.message_id.as_str()) {
                    let later = kept
                        .get(&message.message_id)
                        .is_none_or(|&i| message.archived_at >= found[i].archived_at);
                    if later {
                        kept.insert(message.message_id.clone(), found.len());
                    }
                    found.push(message);
                }
                ControlFlow::Continue(())
            })?;
        }
        let mut keep: Vec<usize> = kept.into_values().collect();
        keep.sort_unstable();
        let restored = segment::read_restored(&queue_dir)?;
        let mut slots: Vec<Option<ArchivedMessage>> = found.into_iter().map(Some).collect();
        Ok(keep
            .into_iter()
            .filter_map(|i| slots.get_mut(i).and_then(Option::take))
            .map(|message| ArchivedEntry {
                restored_at: restored_since(&restored, &message),
                message,
            })
            .collect())
    }

    /// Records that these messages were restored to `destination` at
    /// `at_ms`; durable on return.
    pub fn mark_restored(
        &self,
        queue: &str,
        ids: &[String],
        destination: &str,
        at_ms: u64,
    ) -> Result<(), ArchiveError> {
        if ids.is_empty() {
            return Ok(());
        }
        let queue_dir = self.queue_dir(queue)?;
        let records: Vec<RestoreRecord> = ids
            .iter()
            .map(|id| RestoreRecord {
                message_id: id.clone(),
                restored_at: at_ms,
                destination: destination.to_owned(),
            })
            .collect();
        let _writers = self.current.lock();
        segment::ensure_dir(&queue_dir)?;
        segment::append_restored(&queue_dir, &records)
    }

    /// The directory of a queue key.
    fn queue_dir(&self, queue: &str) -> Result<PathBuf, ArchiveError> {
        if queue.is_empty() {
            return Err(ArchiveError::Io {
                path: self.dir.clone(),
                source: io::Error::new(io::ErrorKind::InvalidInput, "empty queue key"),
            });
        }
        Ok(self.dir.join(layout::encode_queue(queue)))
    }

    /// The queue directories: queue key and path.
    fn queue_dirs(&self) -> Result<Vec<(String, PathBuf)>, ArchiveError> {
        let read = fs::read_dir(&self.dir).map_err(io_at(&self.dir))?;
        let mut dirs = Vec::new();
        for item in read {
            let item = item.map_err(io_at(&self.dir))?;
            let is_dir = item.file_type().map_err(io_at(&item.path()))?.is_dir();
            let key = item.file_name().to_str().and_then(layout::decode_queue);
            if let (true, Some(key)) = (is_dir, key) {
                dirs.push((key, item.path()));
            }
        }
        Ok(dirs)
    }

    /// Creates a new open segment for a queue, durably. Its start is the
    /// first record's archive time, moved past this node's newest segment
    /// of the queue so names stay unique and in order.
    fn new_segment(&self, queue_dir: &Path, archived_at: u64) -> Result<Current, ArchiveError> {
        segment::ensure_dir(queue_dir)?;
        let newest = segment::list_dir(queue_dir)?
            .into_iter()
            .filter_map(|e| match e {
                Entry::Open(s) | Entry::Rotated(s) | Entry::Tmp(s) => layout::parse_stem(&s)
                    .filter(|(_, node)| *node == self.node)
                    .map(|(start, _)| start),
                Entry::Uploaded(_) | Entry::Restored => None,
            })
            .max();
        let start = newest.map_or(archived_at, |n| archived_at.max(n.saturating_add(1)));
        let stem = layout::stem(start, &self.node);
        let path = layout::open_path(queue_dir, &stem);
        let file = OpenOptions::new()
            .append(true)
            .create_new(true)
            .open(&path)
            .map_err(io_at(&path))?;
        segment::sync_dir(queue_dir)?;
        Ok(Current { stem, file, len: 0 })
    }
}

/// When this copy of a message was restored: a restore noted before it
/// was archived was of an earlier copy (the message came back, expired
/// again and was archived anew), so this one is not restored yet.
fn restored_since(
    restored: &std::collections::HashMap<String, u64>,
    message: &ArchivedMessage,
) -> Option<u64> {
    restored
        .get(&message.message_id)
        .copied()
        .filter(|&at| at >= message.archived_at)
}

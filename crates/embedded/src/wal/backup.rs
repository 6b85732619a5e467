//! What an online backup needs of the log: holding the segments open so
//! that none a copied store points into can be deleted under the copy,
//! copying them, and the empty segment that ends a backup's log. A backup
//! reads and writes the machine's own files ([`OsStorage`]): the
//! fault-injecting storage of tests holds no directory to copy.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

use super::files::{LOG_DIR, list_segments, segment_path, sync_dir};
use super::record::MAGIC;
use crate::storage::OsStorage;

/// Segment files held open: an open file stays readable after the log
/// writer deletes it.
pub struct HeldSegments {
    log_dir: std::path::PathBuf,
    files: BTreeMap<u64, File>,
}

impl HeldSegments {
    /// Opens every segment of data directory `dir` (a segment deleted
    /// between the listing and its opening is left out).
    pub fn hold(dir: &Path) -> io::Result<Self> {
        let log_dir = dir.join(LOG_DIR);
        let mut files = BTreeMap::new();
        for id in list_segments(&OsStorage, &log_dir)? {
            match File::open(segment_path(&log_dir, id)) {
                Ok(file) => {
                    files.insert(id, file);
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        Ok(Self { log_dir, files })
    }

    /// Copies segment `id` into data directory `dest` and syncs it: from
    /// the file held, or opened now for a segment started after [`hold`].
    /// `NotFound` when it is gone. Returns the bytes copied.
    ///
    /// [`hold`]: HeldSegments::hold
    pub fn copy(&self, id: u64, dest: &Path) -> io::Result<u64> {
        let opened;
        let source = match self.files.get(&id) {
            Some(file) => file,
            None => {
                opened = File::open(segment_path(&self.log_dir, id))?;
                &opened
            }
        };
        let dest_log = dest.join(LOG_DIR);
        std::fs::create_dir_all(&dest_log)?;
        let mut out = File::create(segment_path(&dest_log, id))?;
        let mut reader = source;
        io::Seek::seek(&mut reader, io::SeekFrom::Start(0))?;
        let bytes = io::copy(&mut reader, &mut out)?;
        out.sync_all()?;
        Ok(bytes)
    }
}

/// Writes segment `id` of data directory `dest` holding no record: the
/// newest segment, which a start reads alone, so that a start on the
/// backup replays nothing past the copied store. Syncs it and the log
/// directory.
pub fn write_empty_segment(dest: &Path, id: u64) -> io::Result<()> {
    let dest_log = dest.join(LOG_DIR);
    std::fs::create_dir_all(&dest_log)?;
    let path = segment_path(&dest_log, id);
    let mut out = File::create(&path)?;
    out.write_all(MAGIC)?;
    out.sync_all()?;
    sync_dir(&OsStorage, &path)
}

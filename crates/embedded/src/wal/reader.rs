//! Reading message data back from segments: positioned reads through a
//! bounded set of open segment files.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use super::files::{LOG_DIR, list_segments, segment_path};
use super::record::BodyAt;
use crate::storage::{Storage, StorageFile};

/// Most segment files kept open for reads: a backlog can span thousands
/// of segments, more than a process may have files open.
pub(super) const MAX_OPEN_SEGMENTS: usize = 256;

/// Data in one segment at most this many bytes apart is read in one
/// `pread` (see [`Segments::read_many`]), up to [`READ_SPAN`] bytes a read.
pub(super) const READ_GAP: u64 = 4096;

pub(super) const READ_SPAN: u64 = 256 << 10;

/// The segments' files, opened on first read and shared by readers of
/// message data.
#[derive(Debug)]
pub struct Segments {
    storage: Arc<dyn Storage>,
    log_dir: PathBuf,
    open: Mutex<HashMap<u64, Arc<dyn StorageFile>>>,
}

impl Segments {
    /// The segments of data directory `dir`.
    pub fn new(storage: Arc<dyn Storage>, dir: &Path) -> Self {
        Self {
            storage,
            log_dir: dir.join(LOG_DIR),
            open: Mutex::new(HashMap::new()),
        }
    }

    /// How many segment files are on disk, and their bytes.
    pub fn disk_use(&self) -> io::Result<(u64, u64)> {
        let (mut files, mut bytes) = (0, 0);
        for id in list_segments(&*self.storage, &self.log_dir)? {
            // A segment deleted since the listing is no longer on disk.
            if let Ok(len) = self.storage.len(&segment_path(&self.log_dir, id)) {
                files += 1;
                bytes += len;
            }
        }
        Ok((files, bytes))
    }

    /// Segment `id`'s file, opened on first use; `None` when it is gone
    /// (deleted once no stored message lies in it).
    fn file(&self, id: u64) -> io::Result<Option<Arc<dyn StorageFile>>> {
        let mut open = self.open.lock();
        if let Some(file) = open.get(&id) {
            return Ok(Some(file.clone()));
        }
        match self.storage.open(&segment_path(&self.log_dir, id), false) {
            Ok(file) => {
                if open.len() >= MAX_OPEN_SEGMENTS {
                    // Readers keep the handles they hold.
                    open.clear();
                }
                open.insert(id, file.clone());
                Ok(Some(file))
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Reads the data at `at`; `None` when its segment is gone.
    pub fn read(&self, at: BodyAt) -> io::Result<Option<Vec<u8>>> {
        let Some(file) = self.file(at.segment)? else {
            return Ok(None);
        };
        let mut out = vec![0; at.len as usize];
        file.read_exact_at(&mut out, at.offset)?;
        Ok(Some(out))
    }

    /// Reads the data at each of `ats` and hands it to `each` with its
    /// index in `ats`, skipping those whose segment is gone. The oldest
    /// messages a receive takes were mostly sent together and lie a few
    /// bytes apart in one record: data close together in a segment is
    /// read with one `pread` instead of one each, and handed over in place.
    pub fn read_many<E: From<io::Error>>(
        &self,
        ats: &[BodyAt],
        mut each: impl FnMut(usize, &[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut order: Vec<usize> = (0..ats.len()).collect();
        order.sort_unstable_by_key(|&i| (ats[i].segment, ats[i].offset));
        let mut rest = &order[..];
        while let Some((&first, _)) = rest.split_first() {
            let (segment, start) = (ats[first].segment, ats[first].offset);
            let mut end = start + u64::from(ats[first].len);
            let mut taken = 1;
            for &i in &rest[1..] {
                let at = ats[i];
                let next_end = at.offset + u64::from(at.len);
                if at.segment != segment
                    || at.offset > end + READ_GAP
                    || next_end.max(end) - start > READ_SPAN
                {
                    break;
                }
                end = end.max(next_end);
                taken += 1;
            }
            let (run, after) = rest.split_at(taken);
            rest = after;
            let Some(file) = self.file(segment)? else {
                continue;
            };
            let mut span = vec![0; (end - start) as usize];
            file.read_exact_at(&mut span, start)?;
            for &i in run {
                let from = (ats[i].offset - start) as usize;
                each(i, &span[from..from + ats[i].len as usize])?;
            }
        }
        Ok(())
    }

    /// The length of segment `id`'s file (0 when it is gone).
    pub fn len(&self, id: u64) -> u64 {
        self.storage
            .len(&segment_path(&self.log_dir, id))
            .unwrap_or(0)
    }

    /// Closes segment `id` before it is deleted.
    pub fn forget(&self, id: u64) {
        self.open.lock().remove(&id);
    }
}

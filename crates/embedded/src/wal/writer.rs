//! The log writer's side: appending records to the newest segment,
//! syncing them, moving to the next segment.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::files::{LOG_DIR, READY_SUFFIX, segment_path, sync_dir, unready_path};
use super::preparer::{Preparer, START_READY};
use super::record::{HEADER, MAGIC, START, seal};
use crate::storage::{Storage, StorageFile};

/// The newest segment, open for appending.
pub struct Log {
    storage: Arc<dyn Storage>,
    dir: PathBuf,
    segment: u64,
    file: Arc<dyn StorageFile>,
    /// Where the next record goes.
    end: u64,
    /// The file's length: past `end`, zeros made ready ahead.
    len: u64,
    /// What makes the next segments ready, if anything.
    ahead: Option<Preparer>,
    /// A run's first segment: the length its zeros are to reach, and the
    /// length the next segment is to be sized after, both put off until
    /// its first record (see [`Log::start`]).
    at_first_record: Option<(u64, u64)>,
}

impl Log {
    /// Creates segment `id` in data directory `dir` and opens it for
    /// appending: call only once the store holds every earlier record
    /// durably (a start reads only the newest segment).
    pub fn create(storage: &Arc<dyn Storage>, dir: &Path, id: u64) -> io::Result<Self> {
        let log_dir = dir.join(LOG_DIR);
        storage.create_dir_all(&log_dir)?;
        let path = segment_path(&log_dir, id);
        let file = storage.create(&path)?;
        file.write_all_at(MAGIC, 0)?;
        file.sync_all()?;
        sync_dir(&**storage, &path)?;
        Ok(Self {
            storage: storage.clone(),
            dir: dir.to_path_buf(),
            segment: id,
            file,
            end: START,
            len: START,
            ahead: None,
            at_first_record: None,
        })
    }

    /// Segment `id` of data directory `dir`, if it was made ready ahead
    /// (see [`Preparer`]): renamed into the log and open for writing after
    /// its magic. Same condition as [`Log::create`].
    pub fn take_ready(storage: &Arc<dyn Storage>, dir: &Path, id: u64) -> io::Result<Option<Self>> {
        let log_dir = dir.join(LOG_DIR);
        let ready = unready_path(&log_dir, id, READY_SUFFIX);
        let path = segment_path(&log_dir, id);
        match storage.rename(&ready, &path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            other => other?,
        }
        sync_dir(&**storage, &path)?;
        let file = storage.open(&path, true)?;
        let len = file.len()?;
        Ok(Some(Self {
            storage: storage.clone(),
            dir: dir.to_path_buf(),
            segment: id,
            file,
            end: START,
            len: len.max(START),
            ahead: None,
            at_first_record: None,
        }))
    }

    /// A log on `path` whose every write fails, as on a failing disk.
    #[cfg(test)]
    pub fn failing(dir: &Path) -> io::Result<Self> {
        let storage: Arc<dyn Storage> = Arc::new(crate::storage::OsStorage);
        let path = dir.join("failing.wal");
        std::fs::write(&path, MAGIC)?;
        let file = storage.open(&path, false)?;
        Ok(Self {
            storage,
            dir: dir.to_path_buf(),
            segment: u64::MAX,
            file,
            end: START,
            len: START,
            ahead: None,
            at_first_record: None,
        })
    }

    /// Deletes segment `id`, which must not be the one being written;
    /// close it in [`Segments`] first.
    pub fn remove(&self, id: u64) -> io::Result<()> {
        debug_assert_ne!(id, self.segment);
        match self
            .storage
            .remove(&segment_path(&self.dir.join(LOG_DIR), id))
        {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    /// The segment being written.
    pub fn segment(&self) -> u64 {
        self.segment
    }

    /// Where the next record starts in the segment.
    pub fn end(&self) -> u64 {
        self.end
    }

    /// Clears `buf` and reserves room for a record's header; the caller
    /// appends the payload after it.
    pub fn start_record(buf: &mut Vec<u8>) {
        buf.clear();
        buf.resize(HEADER, 0);
    }

    /// Writes the record `lsn` whose payload follows the header room in
    /// `buf` (see [`Log::start_record`]) at [`Log::end`], without syncing.
    pub fn write(&mut self, lsn: u64, buf: &mut [u8]) -> io::Result<()> {
        seal(lsn, buf)?;
        // After a failed write nothing more is written (the engine stops).
        self.file.write_all_at(buf, self.end)?;
        self.end += buf.len() as u64;
        self.len = self.len.max(self.end);
        if let Some((zeros, last)) = self.at_first_record.take() {
            self.fill_first(zeros, last);
        }
        Ok(())
    }

    /// At the first record of a run: zero-fills the segment up to `zeros`
    /// bytes and has the next one made ready, sized after a segment `last`
    /// bytes long. The zeros become durable with the record's sync. On a
    /// disk without room for them the records are appended as they come
    /// (the zeros that fitted are cut off again).
    fn fill_first(&mut self, zeros: u64, last: u64) {
        if let Some(ahead) = &self.ahead {
            ahead.prepare(self.segment + 1, last);
        }
        if self.len >= zeros {
            return;
        }
        let filler = vec![0u8; (zeros - self.len) as usize];
        match self.file.write_all_at(&filler, self.len) {
            Ok(()) => self.len = zeros,
            Err(e) => {
                tracing::warn!(segment = self.segment, error = %e, "could not zero-fill the log segment: appending without");
                let cut = self.file.set_len(self.end);
                self.len = match cut.and_then(|()| self.file.len()) {
                    Ok(len) => len,
                    // Cut off at the segment's end by `finish` if not now.
                    Err(_) => zeros,
                };
            }
        }
    }

    /// Makes every record written so far survive a crash (`fdatasync`).
    pub fn sync(&mut self) -> io::Result<()> {
        self.file.sync_data()
    }

    /// [`Log::write`] then [`Log::sync`].
    #[cfg(test)]
    pub fn append(&mut self, lsn: u64, buf: &mut [u8]) -> io::Result<()> {
        self.write(lsn, buf)?;
        self.sync()
    }

    /// Cuts the zeros after the last record off the segment: call once no
    /// more records go to it, before anything reads its length.
    pub fn finish(&mut self) -> io::Result<()> {
        if self.len > self.end {
            self.file.set_len(self.end)?;
            self.len = self.end;
        }
        Ok(())
    }

    /// Starts the next segment, the one made ready ahead if there is one;
    /// call only once the store holds every record written so far
    /// durably.
    pub fn next_segment(&mut self) -> io::Result<()> {
        self.finish()?;
        let (id, last) = (self.segment + 1, self.end);
        let mut next = match Self::take_ready(&self.storage, &self.dir, id)? {
            Some(ready) => ready,
            None => Self::create(&self.storage, &self.dir, id)?,
        };
        next.ahead = self.ahead.take();
        if let Some(ahead) = &next.ahead {
            ahead.prepare(id + 1, last);
        }
        *self = next;
        Ok(())
    }

    /// The first segment of a run, `id` in data directory `dir`, with a
    /// [`Preparer`] for the ones after. A start writes only the segment's
    /// magic: its zeros ([`START_READY`] bytes, like the ones made ready
    /// ahead) and the next segment (sized after a segment `last` bytes
    /// long) wait for the first record, so that a start on a nearly full
    /// disk, which may serve reads only, does not take what room is left.
    /// Same condition as [`Log::create`].
    pub fn start(storage: &Arc<dyn Storage>, dir: &Path, id: u64, last: u64) -> io::Result<Self> {
        // The store's file and the log's directory are entries of the data
        // directory: durable once it is synced.
        storage.create_dir_all(&dir.join(LOG_DIR))?;
        storage.sync_dir(dir)?;
        let mut log = Self::create(storage, dir, id)?;
        log.ahead = Some(Preparer::spawn(storage.clone(), dir));
        log.at_first_record = Some((START_READY, last));
        Ok(log)
    }

    /// Has a [`Preparer`] make each next segment ready ahead, the first
    /// sized after a segment `last` bytes long.
    #[cfg(test)]
    pub fn ready_ahead(mut self, last: u64) -> Self {
        let ahead = Preparer::spawn(self.storage.clone(), &self.dir);
        ahead.prepare(self.segment + 1, last);
        self.ahead = Some(ahead);
        self
    }
}

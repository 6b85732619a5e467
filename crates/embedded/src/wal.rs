//! The write-ahead log: each group commit is one record appended to the
//! newest segment file and made durable with one `fdatasync`, before redb
//! holds it durably.
//!
//! The log is also where message bodies live: redb holds, for a message
//! sent through the log, only where its data lies in a segment
//! ([`BodyAt`]), so a message that stays is written once, not once to the
//! log and again to redb. So segments are not reused after a checkpoint:
//! each checkpoint starts a new one, and an older segment is deleted once
//! redb durably holds no message in it (the store counts them).
//!
//! Segment layout: an 8-byte magic, then records, each a 16-byte header —
//! CRC-32 (crc32fast) (over the rest of the header and the payload),
//! payload length, log sequence number (LSN), all little-endian — and the
//! payload ([`crate::log_record`]). LSNs run without a gap. A reader stops at
//! the first record that is torn, fails its checksum, or does not continue
//! the chain (a torn tail is what a kill -9 normally leaves, not an error).
//!
//! Every record after the last checkpoint is in the newest segment: a new
//! segment starts only once redb holds every record before it durably. So
//! a start reads only that one.
//!
//! Segments are zero-filled ahead of the writer. An `fdatasync` after an
//! append must also make the file's new size durable, a journal commit of
//! the file system on top of the data's flush; over bytes already allocated
//! it flushes the data alone, about a third faster, and every answer of a
//! durable server waits for one. So a [`Preparer`] thread writes the next
//! segment (magic, then zeros, about as long as the last segment grew) as
//! a `.ready` file, off the answers' path, and the log renames it to a
//! `.wal` when it moves there. A reader takes zeros after the last record
//! as the end of the log (a zero header fails its checksum); a finished
//! segment is cut to its records, and a start cuts a zero tail a crash
//! left. A segment that outgrows its zeros goes on by appending.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::Mutex;

/// The directory of the log's segments, inside the data directory.
pub const LOG_DIR: &str = "log";

/// The single log file of stores written before segments (replayed once,
/// then removed).
pub const LEGACY_LOG_FILE: &str = "sluice.wal";

const MAGIC: &[u8; 8] = b"SLUICEW1";
const START: u64 = MAGIC.len() as u64;

/// Most segment files kept open for reads: a backlog can span thousands
/// of segments, more than a process may have files open.
const MAX_OPEN_SEGMENTS: usize = 256;

/// Bytes of a record's header.
pub const HEADER: usize = 16;

/// Data in one segment at most this many bytes apart is read in one
/// `pread` (see [`Segments::read_many`]), up to [`READ_SPAN`] bytes a read.
const READ_GAP: u64 = 4096;
const READ_SPAN: u64 = 256 << 10;

/// Suffix of a segment made ready ahead, not yet part of the log.
const READY_SUFFIX: &str = ".ready";

/// Suffix of a segment being made ready.
const PREPARING_SUFFIX: &str = ".preparing";

/// Fewest and most bytes a segment is made ready with: a trickle of
/// changes needs a page or so a checkpoint, a segment ends at
/// `CHECKPOINT_BYTES` (64 MiB) of records (and a commit may go past it).
const READY_MIN: u64 = 16 << 10;
const READY_MAX: u64 = 80 << 20;

/// Bytes of zeros a start writes into its first segment before it serves
/// (the following ones are made ready in the background, sized after the
/// last). Without them, every commit of a run's first second, a
/// short-lived server's whole life, would pay for appending; with the
/// least a segment is made ready with, all but its first dozen did
/// (a second of a thousand single sends fills 1 MiB).
const START_READY: u64 = 1 << 20;

/// Zeros written and synced at a time. The log's own syncs share the
/// disk and wait behind whatever flush is under way: many small flushes
/// keep that wait short (with 1 MiB ones, the 99th percentile of a send's
/// answer at half load doubled; with 64 KiB ones it stayed the same).
const READY_CHUNK: usize = 64 << 10;

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

/// Where a message's encoded data lies in the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyAt {
    /// The segment.
    pub segment: u64,
    /// Its first byte in the segment file.
    pub offset: u64,
    /// Its length.
    pub len: u32,
}

/// A record read back at start-up.
#[derive(Debug)]
pub struct Recovered {
    /// Its sequence number.
    pub lsn: u64,
    /// Its encoded changes.
    pub payload: Vec<u8>,
    /// The segment and file offset of its payload; `None` for a record of
    /// the legacy file, which is removed once replayed.
    pub at: Option<(u64, u64)>,
}

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
pub fn open(dir: &Path, applied: u64) -> Result<Found, LogError> {
    let log_dir = dir.join(LOG_DIR);
    std::fs::create_dir_all(&log_dir)?;
    let legacy_path = dir.join(LEGACY_LOG_FILE);
    let legacy = legacy_path.exists();
    let mut records = if legacy {
        read_file(&legacy_path, applied, None)?
    } else {
        Vec::new()
    };
    let segments = list_segments(&log_dir)?;
    let mut newest_len = 0;
    if let Some(&newest) = segments.last() {
        let after = records.last().map_or(applied, |r| r.lsn);
        let path = segment_path(&log_dir, newest);
        let (read, end) = read_segment(&path, after, newest)?;
        records.extend(read);
        newest_len = end;
    }
    remove_unready(&log_dir)?;
    Ok(Found {
        records,
        segments,
        legacy,
        newest_len,
    })
}

/// The records after `applied` in segment `id` at `path`, and where they
/// end; zeros after them (made ready, not written yet when the process
/// stopped) are cut off.
fn read_segment(path: &Path, applied: u64, id: u64) -> Result<(Vec<Recovered>, u64), LogError> {
    let bytes = read_log_file(path)?;
    if bytes.is_empty() {
        return Ok((Vec::new(), 0));
    }
    let (records, end) = read_records(&bytes[MAGIC.len()..], applied, Some(id))?;
    let tail = &bytes[end as usize..];
    if !tail.is_empty() && tail.iter().all(|&b| b == 0) {
        // Only zeros go: a torn record stays for whoever looks into it.
        OpenOptions::new().write(true).open(path)?.set_len(end)?;
    }
    Ok((records, end))
}

/// The records after `applied` in the log file at `path`, which is
/// `segment` (`None`: the legacy file).
fn read_file(path: &Path, applied: u64, segment: Option<u64>) -> Result<Vec<Recovered>, LogError> {
    let bytes = read_log_file(path)?;
    if bytes.is_empty() {
        return Ok(Vec::new());
    }
    Ok(read_records(&bytes[MAGIC.len()..], applied, segment)?.0)
}

/// The bytes of the log file at `path`, magic included; empty for a file
/// whose magic a crash cut short.
fn read_log_file(path: &Path) -> Result<Vec<u8>, LogError> {
    let mut bytes = Vec::new();
    File::open(path)?.read_to_end(&mut bytes)?;
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

/// The segment ids in `log_dir`, oldest first.
fn list_segments(log_dir: &Path) -> io::Result<Vec<u64>> {
    let mut ids = Vec::new();
    for entry in std::fs::read_dir(log_dir)? {
        let name = entry?.file_name();
        if let Some(id) = name
            .to_str()
            .and_then(|n| n.strip_suffix(".wal"))
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
    list_segments(&dir.join(LOG_DIR))
}

/// The file of segment `id`.
fn segment_path(log_dir: &Path, id: u64) -> PathBuf {
    log_dir.join(format!("{id:020}.wal"))
}

/// The file of segment `id` made ready ahead (`suffix` [`READY_SUFFIX`]),
/// or being made ready ([`PREPARING_SUFFIX`]).
fn unready_path(log_dir: &Path, id: u64, suffix: &str) -> PathBuf {
    log_dir.join(format!("{id:020}{suffix}"))
}

/// Deletes the segments made ready by an earlier run: their ids may be
/// taken by now, and the next is made ready again.
fn remove_unready(log_dir: &Path) -> io::Result<()> {
    for entry in std::fs::read_dir(log_dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.ends_with(READY_SUFFIX) || name.ends_with(PREPARING_SUFFIX) {
            std::fs::remove_file(entry.path())?;
        }
    }
    Ok(())
}

/// Writes segment `id` ahead, `len` bytes long (magic, then zeros), synced,
/// as a `.ready` file: it becomes the log's when the log moves to `id`.
/// Leaves nothing when it fails, or stops once `stop` is set.
fn prepare(log_dir: &Path, id: u64, len: u64, stop: &AtomicBool) -> io::Result<()> {
    let preparing = unready_path(log_dir, id, PREPARING_SUFFIX);
    let prepared = write_zeros(&preparing, len, stop)
        .and_then(|()| std::fs::rename(&preparing, unready_path(log_dir, id, READY_SUFFIX)));
    if prepared.is_err() {
        let _ = std::fs::remove_file(&preparing);
    }
    prepared
}

/// Writes the magic then zeros to `path`, `len` bytes in all, synced.
fn write_zeros(path: &Path, len: u64, stop: &AtomicBool) -> io::Result<()> {
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)?;
    file.write_all(MAGIC)?;
    let zeros = vec![0u8; READY_CHUNK];
    let mut left = len.saturating_sub(START);
    while left > 0 {
        if stop.load(Ordering::Relaxed) {
            // A stopping server does not wait for a segment it won't use.
            return Err(io::Error::new(io::ErrorKind::Interrupted, "stopping"));
        }
        let n = left.min(READY_CHUNK as u64) as usize;
        file.write_all(&zeros[..n])?;
        left -= n as u64;
        file.sync_data()?;
    }
    // Only whole files are ever found ready (renamed once synced); the
    // directory is synced when the log takes one.
    file.sync_all()
}

/// How long to make a segment ready after one that ended `last` bytes
/// long: a quarter more, in whole pages, within bounds.
fn ready_len(last: u64) -> u64 {
    (last + last / 4)
        .next_multiple_of(4096)
        .clamp(READY_MIN, READY_MAX)
}

/// The thread that makes the next segment ready while the writer fills
/// the current one (see the module's doc).
pub struct Preparer {
    tx: Option<std::sync::mpsc::Sender<(u64, u64)>>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// Set when the log goes: a segment being made ready is dropped.
    stop: Arc<AtomicBool>,
}

impl Preparer {
    /// Starts the thread for the segments of data directory `dir`; without
    /// one (the thread could not start) segments are created when needed.
    pub fn spawn(dir: &Path) -> Self {
        let log_dir = dir.join(LOG_DIR);
        let (tx, rx) = std::sync::mpsc::channel::<(u64, u64)>();
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let thread = std::thread::Builder::new()
            .name("sluice-log-ahead".into())
            .spawn(move || {
                let mut last: Option<u64> = None;
                while let Ok((id, len)) = rx.recv() {
                    // One the log passed by before it was ready is stale.
                    if let Some(stale) = last.filter(|&stale| stale != id) {
                        let _ = std::fs::remove_file(unready_path(&log_dir, stale, READY_SUFFIX));
                    }
                    last = Some(id);
                    if let Err(e) = prepare(&log_dir, id, len, &stopping) {
                        // The log creates the segment itself, as before.
                        if e.kind() != io::ErrorKind::Interrupted {
                            tracing::warn!(segment = id, error = %e, "could not make a log segment ready");
                        }
                    }
                }
            });
        match thread {
            Ok(thread) => Self {
                tx: Some(tx),
                thread: Some(thread),
                stop,
            },
            Err(e) => {
                tracing::warn!(error = %e, "could not start the thread that makes log segments ready");
                Self {
                    tx: None,
                    thread: None,
                    stop,
                }
            }
        }
    }

    /// Makes segment `id` ready, sized after a segment `last` bytes long.
    pub fn prepare(&self, id: u64, last: u64) {
        if let Some(tx) = &self.tx {
            let _ = tx.send((id, ready_len(last)));
        }
    }
}

impl Drop for Preparer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.tx.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Path of the newest segment in data directory `dir` (for tests that
/// tamper with the log).
pub fn newest_segment(dir: &Path) -> io::Result<Option<PathBuf>> {
    let log_dir = dir.join(LOG_DIR);
    Ok(list_segments(&log_dir)?
        .last()
        .map(|&id| segment_path(&log_dir, id)))
}

/// Deletes the legacy log file once what it held is durable in the store.
pub fn remove_legacy(dir: &Path) -> io::Result<()> {
    std::fs::remove_file(dir.join(LEGACY_LOG_FILE))?;
    sync_dir(&dir.join(LEGACY_LOG_FILE))
}

/// The newest segment, open for appending.
pub struct Log {
    dir: PathBuf,
    segment: u64,
    file: File,
    /// Where the next record goes.
    end: u64,
    /// The file's length: past `end`, zeros made ready ahead.
    len: u64,
    /// What makes the next segments ready, if anything.
    ahead: Option<Preparer>,
}

impl Log {
    /// Creates segment `id` in data directory `dir` and opens it for
    /// appending: call only once the store holds every earlier record
    /// durably (a start reads only the newest segment).
    pub fn create(dir: &Path, id: u64) -> io::Result<Self> {
        let log_dir = dir.join(LOG_DIR);
        std::fs::create_dir_all(&log_dir)?;
        let path = segment_path(&log_dir, id);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)?;
        file.write_all(MAGIC)?;
        file.sync_all()?;
        sync_dir(&path)?;
        Ok(Self {
            dir: dir.to_path_buf(),
            segment: id,
            file,
            end: START,
            len: START,
            ahead: None,
        })
    }

    /// Segment `id` of data directory `dir`, if it was made ready ahead
    /// (see [`Preparer`]): renamed into the log and open for writing after
    /// its magic. Same condition as [`Log::create`].
    pub fn take_ready(dir: &Path, id: u64) -> io::Result<Option<Self>> {
        let log_dir = dir.join(LOG_DIR);
        let ready = unready_path(&log_dir, id, READY_SUFFIX);
        let path = segment_path(&log_dir, id);
        match std::fs::rename(&ready, &path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            other => other?,
        }
        sync_dir(&path)?;
        let mut file = OpenOptions::new().read(true).write(true).open(&path)?;
        let len = file.metadata()?.len();
        io::Seek::seek(&mut file, io::SeekFrom::Start(START))?;
        Ok(Some(Self {
            dir: dir.to_path_buf(),
            segment: id,
            file,
            end: START,
            len: len.max(START),
            ahead: None,
        }))
    }

    /// A log on `path` whose every write fails, as on a failing disk.
    #[cfg(test)]
    pub fn failing(dir: &Path) -> io::Result<Self> {
        let path = dir.join("failing.wal");
        std::fs::write(&path, MAGIC)?;
        let file = OpenOptions::new().read(true).open(&path)?;
        Ok(Self {
            dir: dir.to_path_buf(),
            segment: u64::MAX,
            file,
            end: START,
            len: START,
            ahead: None,
        })
    }

    /// Deletes segment `id`, which must not be the one being written;
    /// close it in [`Segments`] first.
    pub fn remove(&self, id: u64) -> io::Result<()> {
        debug_assert_ne!(id, self.segment);
        match std::fs::remove_file(segment_path(&self.dir.join(LOG_DIR), id)) {
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
        // The cursor is at `end`: after a failed write nothing more is
        // written (the engine stops).
        self.file.write_all(buf)?;
        self.end += buf.len() as u64;
        self.len = self.len.max(self.end);
        Ok(())
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
        let mut next = match Self::take_ready(&self.dir, id)? {
            Some(ready) => ready,
            None => Self::create(&self.dir, id)?,
        };
        next.ahead = self.ahead.take();
        if let Some(ahead) = &next.ahead {
            ahead.prepare(id + 1, last);
        }
        *self = next;
        Ok(())
    }

    /// The first segment of a run, `id` in data directory `dir`: zero-filled
    /// like the ones made ready ahead ([`START_READY`] bytes, a few
    /// milliseconds' writing), with a [`Preparer`] for the ones after, the
    /// first sized after a segment `last` bytes long. Same condition as
    /// [`Log::create`].
    pub fn start(dir: &Path, id: u64, last: u64) -> io::Result<Self> {
        let log_dir = dir.join(LOG_DIR);
        std::fs::create_dir_all(&log_dir)?;
        let log = match prepare(&log_dir, id, START_READY, &AtomicBool::new(false)) {
            Ok(()) => Self::take_ready(dir, id)?,
            Err(e) => {
                tracing::warn!(segment = id, error = %e, "could not make a log segment ready");
                None
            }
        };
        let log = match log {
            Some(log) => log,
            None => Self::create(dir, id)?,
        };
        Ok(log.ready_ahead(last))
    }

    /// Has a [`Preparer`] make each next segment ready ahead, the first
    /// sized after a segment `last` bytes long.
    pub fn ready_ahead(mut self, last: u64) -> Self {
        let ahead = Preparer::spawn(&self.dir);
        ahead.prepare(self.segment + 1, last);
        self.ahead = Some(ahead);
        self
    }
}

/// Fills in the header of record `lsn`, whose payload follows the header
/// room in `buf`.
fn seal(lsn: u64, buf: &mut [u8]) -> io::Result<()> {
    let len = u32::try_from(buf.len() - HEADER)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "log record over 4 GiB"))?;
    buf[4..8].copy_from_slice(&len.to_le_bytes());
    buf[8..16].copy_from_slice(&lsn.to_le_bytes());
    let crc = crc32fast::hash(&buf[4..]);
    buf[0..4].copy_from_slice(&crc.to_le_bytes());
    Ok(())
}

/// The segments' files, opened on first read and shared by readers of
/// message data.
#[derive(Debug)]
pub struct Segments {
    log_dir: PathBuf,
    open: Mutex<HashMap<u64, Arc<File>>>,
}

impl Segments {
    /// The segments of data directory `dir`.
    pub fn new(dir: &Path) -> Self {
        Self {
            log_dir: dir.join(LOG_DIR),
            open: Mutex::new(HashMap::new()),
        }
    }

    /// How many segment files are on disk, and their bytes.
    pub fn disk_use(&self) -> io::Result<(u64, u64)> {
        let (mut files, mut bytes) = (0, 0);
        for id in list_segments(&self.log_dir)? {
            // A segment deleted since the listing is no longer on disk.
            if let Ok(meta) = std::fs::metadata(segment_path(&self.log_dir, id)) {
                files += 1;
                bytes += meta.len();
            }
        }
        Ok((files, bytes))
    }

    /// Segment `id`'s file, opened on first use; `None` when it is gone
    /// (deleted once no stored message lies in it).
    fn file(&self, id: u64) -> io::Result<Option<Arc<File>>> {
        let mut open = self.open.lock();
        if let Some(file) = open.get(&id) {
            return Ok(Some(file.clone()));
        }
        match File::open(segment_path(&self.log_dir, id)) {
            Ok(file) => {
                if open.len() >= MAX_OPEN_SEGMENTS {
                    // Readers keep the handles they hold.
                    open.clear();
                }
                let file = Arc::new(file);
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
        read_exact_at(&file, &mut out, at.offset)?;
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
            read_exact_at(&file, &mut span, start)?;
            for &i in run {
                let from = (ats[i].offset - start) as usize;
                each(i, &span[from..from + ats[i].len as usize])?;
            }
        }
        Ok(())
    }

    /// The length of segment `id`'s file (0 when it is gone).
    pub fn len(&self, id: u64) -> u64 {
        std::fs::metadata(segment_path(&self.log_dir, id)).map_or(0, |m| m.len())
    }

    /// Closes segment `id` before it is deleted.
    pub fn forget(&self, id: u64) {
        self.open.lock().remove(&id);
    }
}

#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(windows)]
fn read_exact_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        match file.seek_read(buf, offset)? {
            0 => return Err(io::ErrorKind::UnexpectedEof.into()),
            n => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
        }
    }
    Ok(())
}

/// The records of `bytes` (a log without its magic) after `applied`; with
/// `segment`, each with where its payload starts in that segment's file.
/// Also returns the file offset where the last record read ends.
fn read_records(
    bytes: &[u8],
    applied: u64,
    segment: Option<u64>,
) -> Result<(Vec<Recovered>, u64), LogError> {
    let mut out = Vec::new();
    let mut last: Option<u64> = None;
    let mut at = START;
    let mut rest = bytes;
    while rest.len() >= HEADER {
        let crc = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]);
        let len = u32::from_le_bytes([rest[4], rest[5], rest[6], rest[7]]) as usize;
        let Some(record) = rest.get(..HEADER + len) else {
            break;
        };
        if crc32fast::hash(&record[4..]) != crc {
            break;
        }
        let mut lsn = [0u8; 8];
        lsn.copy_from_slice(&record[8..16]);
        let lsn = u64::from_le_bytes(lsn);
        match last {
            Some(prev) if lsn != prev + 1 => break,
            None if lsn > applied + 1 => {
                return Err(LogError::Gap {
                    first: lsn,
                    applied,
                });
            }
            _ => {}
        }
        if lsn > applied {
            out.push(Recovered {
                lsn,
                payload: record[HEADER..].to_vec(),
                at: segment.map(|s| (s, at + HEADER as u64)),
            });
        }
        last = Some(lsn);
        at += (HEADER + len) as u64;
        rest = &rest[HEADER + len..];
    }
    Ok((out, at))
}

/// Makes a new or removed file's directory entry durable.
fn sync_dir(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    if let Some(dir) = path.parent() {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        File::open(dir)?.sync_all()?;
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn append(log: &mut Log, lsn: u64, payload: &[u8]) {
        let mut buf = Vec::new();
        Log::start_record(&mut buf);
        buf.extend_from_slice(payload);
        log.append(lsn, &mut buf).unwrap();
    }

    fn lsns(records: &[Recovered]) -> Vec<u64> {
        records.iter().map(|r| r.lsn).collect()
    }

    fn read(dir: &Path, applied: u64) -> Vec<Recovered> {
        open(dir, applied).unwrap().records
    }

    /// A data directory whose segment 1 holds records 1..=n, each with a
    /// 10-byte payload; returns it with the segment's path.
    fn written(n: u64) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        assert!(open(dir.path(), 0).unwrap().records.is_empty());
        let mut log = Log::create(dir.path(), 1).unwrap();
        for lsn in 1..=n {
            append(&mut log, lsn, &[lsn as u8; 10]);
        }
        let path = newest_segment(dir.path()).unwrap().unwrap();
        (dir, path)
    }

    #[test]
    fn reads_back_the_records_after_the_stores_last_with_where_they_lie() {
        let (dir, _) = written(5);
        let records = read(dir.path(), 0);
        assert_eq!(lsns(&records), [1, 2, 3, 4, 5]);
        assert_eq!(records[2].payload, [3; 10]);
        // Each record is 16 + 10 bytes, after the 8-byte magic.
        assert_eq!(records[2].at, Some((1, START + 2 * 26 + HEADER as u64)));
        assert_eq!(lsns(&read(dir.path(), 3)), [4, 5]);
        assert!(read(dir.path(), 5).is_empty(), "nothing is replayed twice");
    }

    /// What a put's position names is what a reader of the segment gets.
    #[test]
    fn segments_read_what_a_position_names_and_nothing_once_gone() {
        let (dir, _) = written(3);
        let records = read(dir.path(), 0);
        let (segment, offset) = records[1].at.unwrap();
        let segments = Segments::new(dir.path());
        let at = BodyAt {
            segment,
            offset: offset + 2,
            len: 5,
        };
        assert_eq!(segments.read(at).unwrap(), Some(vec![2; 5]));
        let log = Log::create(dir.path(), 2).unwrap();
        segments.forget(1);
        log.remove(1).unwrap();
        assert_eq!(segments.read(at).unwrap(), None);
        assert_eq!(open(dir.path(), 3).unwrap().segments, [2]);
    }

    /// Only the newest segment holds records after the last checkpoint: an
    /// older one is not read, and a new one (even one whose magic a crash
    /// cut short) holds nothing yet.
    #[test]
    fn only_the_newest_segment_is_read() {
        let (dir, _) = written(3);
        let mut log = Log::create(dir.path(), 2).unwrap();
        append(&mut log, 4, b"four");
        let found = open(dir.path(), 3).unwrap();
        assert_eq!(lsns(&found.records), [4]);
        assert_eq!(found.records[0].at, Some((2, START + HEADER as u64)));
        assert_eq!(found.segments, [1, 2]);
        // A segment created and cut before its magic was synced.
        std::fs::write(segment_path(&dir.path().join(LOG_DIR), 3), &MAGIC[..3]).unwrap();
        let found = open(dir.path(), 4).unwrap();
        assert!(found.records.is_empty());
        assert_eq!(found.segments, [1, 2, 3]);
    }

    /// A store from before segments: its single log is replayed (its puts
    /// keep their data in redb), ahead of the segments.
    #[test]
    fn the_legacy_log_file_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let mut bytes = MAGIC.to_vec();
        for lsn in 1..=2u64 {
            let mut buf = Vec::new();
            Log::start_record(&mut buf);
            buf.extend_from_slice(b"old");
            seal(lsn, &mut buf).unwrap();
            bytes.extend_from_slice(&buf);
        }
        std::fs::write(dir.path().join(LEGACY_LOG_FILE), &bytes).unwrap();
        let found = open(dir.path(), 1).unwrap();
        assert!(found.legacy);
        assert_eq!(lsns(&found.records), [2]);
        assert_eq!(found.records[0].at, None);
        remove_legacy(dir.path()).unwrap();
        assert!(!open(dir.path(), 1).unwrap().legacy);
    }

    #[test]
    fn a_torn_tail_record_ends_the_log() {
        let (dir, path) = written(3);
        // Each record is 16 + 10 bytes; cut the third.
        let file = OpenOptions::new().write(true).open(&path).unwrap();
        file.set_len(START + 3 * 26 - 4).unwrap();
        assert_eq!(lsns(&read(dir.path(), 0)), [1, 2]);
        // A header cut short ends it too.
        file.set_len(START + 26 + 5).unwrap();
        assert_eq!(lsns(&read(dir.path(), 0)), [1]);
    }

    #[test]
    fn a_record_failing_its_checksum_ends_the_log() {
        let (dir, path) = written(3);
        let mut bytes = std::fs::read(&path).unwrap();
        // Flip one payload byte of record 2 (each record is 16 + 10 bytes).
        bytes[START as usize + 26 + HEADER + 3] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(lsns(&read(dir.path(), 0)), [1]);
    }

    #[test]
    fn garbage_after_the_last_record_is_ignored() {
        let (dir, path) = written(2);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.extend((0..200usize).map(|i| (i * 7919 % 251) as u8));
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(lsns(&read(dir.path(), 0)), [1, 2]);
    }

    #[test]
    fn a_record_that_breaks_the_sequence_ends_the_log() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = Log::create(dir.path(), 1).unwrap();
        for lsn in [1, 2, 4] {
            append(&mut log, lsn, b"x");
        }
        assert_eq!(lsns(&read(dir.path(), 0)), [1, 2]);
    }

    #[test]
    fn a_log_starting_after_the_store_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = Log::create(dir.path(), 1).unwrap();
        append(&mut log, 7, b"x");
        assert!(matches!(
            open(dir.path(), 5),
            Err(LogError::Gap {
                first: 7,
                applied: 5
            })
        ));
        assert_eq!(lsns(&read(dir.path(), 6)), [7]);
    }

    #[test]
    fn a_file_that_is_not_a_log_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(LOG_DIR)).unwrap();
        let path = segment_path(&dir.path().join(LOG_DIR), 1);
        std::fs::write(&path, b"something else entirely").unwrap();
        assert!(matches!(open(dir.path(), 0), Err(LogError::NotALog(_))));
    }

    /// Waits (bounded) until segment `id` of `dir` is ready.
    fn await_ready(dir: &Path, id: u64) -> PathBuf {
        let ready = unready_path(&dir.join(LOG_DIR), id, READY_SUFFIX);
        for _ in 0..500 {
            if ready.exists() {
                return ready;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        panic!("segment {id} was not made ready");
    }

    /// Records written over zeros made ready ahead read back, and the
    /// zeros after them end the log (a zero header fails its checksum); a
    /// start cuts them off, as the writer does when it finishes a segment.
    #[test]
    fn zeros_after_the_last_record_end_the_log_and_are_cut_off() {
        let dir = tempfile::tempdir().unwrap();
        let log_dir = dir.path().join(LOG_DIR);
        std::fs::create_dir_all(&log_dir).unwrap();
        prepare(&log_dir, 1, 64 << 10, &AtomicBool::new(false)).unwrap();
        let mut log = Log::take_ready(dir.path(), 1).unwrap().unwrap();
        for lsn in 1..=3 {
            append(&mut log, lsn, &[lsn as u8; 10]);
        }
        let path = segment_path(&log_dir, 1);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 64 << 10);
        // As a kill -9 leaves it: no finish.
        drop(log);
        let found = open(dir.path(), 0).unwrap();
        assert_eq!(lsns(&found.records), [1, 2, 3]);
        assert_eq!(
            found.records[2].at,
            Some((1, START + 2 * 26 + HEADER as u64))
        );
        assert_eq!(found.newest_len, START + 3 * 26);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), START + 3 * 26);
        assert_eq!(
            lsns(&read(dir.path(), 1)),
            [2, 3],
            "nothing is lost by the cut"
        );
    }

    /// What follows the last record and is not all zeros (a torn record)
    /// stays on disk.
    #[test]
    fn a_torn_record_before_zeros_is_not_cut_off() {
        let (dir, path) = written(2);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.extend_from_slice(&[7; 20]);
        bytes.extend_from_slice(&[0; 4096]);
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(lsns(&read(dir.path(), 0)), [1, 2]);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), bytes.len() as u64);
    }

    /// With a preparer, the log moves to a segment made ready ahead, cut the
    /// one it leaves to its records, and the one after is made ready.
    #[test]
    fn the_log_moves_to_the_segment_made_ready_ahead() {
        let dir = tempfile::tempdir().unwrap();
        let log_dir = dir.path().join(LOG_DIR);
        let mut log = Log::create(dir.path(), 1).unwrap().ready_ahead(100 << 10);
        let ready = await_ready(dir.path(), 2);
        assert_eq!(
            std::fs::metadata(&ready).unwrap().len(),
            ready_len(100 << 10)
        );
        append(&mut log, 1, b"one");
        log.next_segment().unwrap();
        assert_eq!(log.segment(), 2);
        assert!(!ready.exists());
        assert_eq!(
            std::fs::metadata(segment_path(&log_dir, 1)).unwrap().len(),
            START + HEADER as u64 + 3
        );
        append(&mut log, 2, b"two");
        assert_eq!(
            std::fs::metadata(segment_path(&log_dir, 2)).unwrap().len(),
            ready_len(100 << 10),
            "records went over the zeros"
        );
        // Sized after the segment just finished.
        let next = await_ready(dir.path(), 3);
        assert_eq!(std::fs::metadata(&next).unwrap().len(), READY_MIN);
        let found = open(dir.path(), 1).unwrap();
        assert_eq!(lsns(&found.records), [2]);
        assert_eq!(found.records[0].at, Some((2, START + HEADER as u64)));
        // A start removes what an earlier run made ready.
        assert!(!next.exists());
        assert_eq!(found.segments, [1, 2]);
    }

    /// Without a segment made ready the log creates one; a segment made
    /// ready too late for the log (it created that one itself) is removed
    /// when the next is asked for.
    #[test]
    fn a_segment_not_ready_in_time_is_created_and_the_late_one_removed() {
        let dir = tempfile::tempdir().unwrap();
        let log_dir = dir.path().join(LOG_DIR);
        let mut log = Log::create(dir.path(), 1).unwrap();
        log.next_segment().unwrap();
        assert_eq!(log.segment(), 2);
        assert_eq!(
            std::fs::metadata(segment_path(&log_dir, 2)).unwrap().len(),
            START
        );
        let preparer = Preparer::spawn(dir.path());
        preparer.prepare(3, 0);
        let late = await_ready(dir.path(), 3);
        preparer.prepare(4, 0);
        await_ready(dir.path(), 4);
        assert!(!late.exists());
    }

    /// Records past the zeros made ready go on by appending.
    #[test]
    fn a_segment_outgrowing_its_zeros_goes_on_appending() {
        let dir = tempfile::tempdir().unwrap();
        let log_dir = dir.path().join(LOG_DIR);
        std::fs::create_dir_all(&log_dir).unwrap();
        prepare(&log_dir, 1, READY_MIN, &AtomicBool::new(false)).unwrap();
        let mut log = Log::take_ready(dir.path(), 1).unwrap().unwrap();
        let payload = vec![9u8; 1000];
        for lsn in 1..=40 {
            append(&mut log, lsn, &payload);
        }
        let found = open(dir.path(), 0).unwrap();
        assert_eq!(found.records.len(), 40);
        assert!(found.records.iter().all(|r| r.payload == payload));
        assert_eq!(found.newest_len, START + 40 * 1016);
    }

    #[test]
    fn segments_are_made_ready_a_quarter_longer_within_bounds() {
        assert_eq!(ready_len(0), READY_MIN);
        assert_eq!(ready_len(4 << 20), 5 << 20);
        assert_eq!(ready_len(4_000_001) % 4096, 0);
        assert_eq!(ready_len(1 << 40), READY_MAX);
    }

    /// A stopping log does not wait for the segment being made ready: the
    /// preparer drops it, and leaves nothing behind.
    #[test]
    fn a_stopping_preparer_drops_the_segment_it_was_making_ready() {
        let dir = tempfile::tempdir().unwrap();
        let log_dir = dir.path().join(LOG_DIR);
        std::fs::create_dir_all(&log_dir).unwrap();
        let stopped = prepare(&log_dir, 1, READY_MAX, &AtomicBool::new(true));
        assert_eq!(stopped.unwrap_err().kind(), io::ErrorKind::Interrupted);
        let preparer = Preparer::spawn(dir.path());
        preparer.prepare(2, READY_MAX);
        drop(preparer);
        let left: Vec<_> = std::fs::read_dir(&log_dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }

    /// A run's first segment is zero-filled before it serves, whatever the
    /// last segment's size, and the next one is made ready behind it,
    /// sized after the last.
    #[test]
    fn a_start_zero_fills_its_first_segment() {
        let dir = tempfile::tempdir().unwrap();
        let log_dir = dir.path().join(LOG_DIR);
        let mut log = Log::start(dir.path(), 1, 0).unwrap();
        let len = |id| std::fs::metadata(segment_path(&log_dir, id)).unwrap().len();
        assert_eq!(len(1), START_READY);
        append(&mut log, 1, b"one");
        assert_eq!(len(1), START_READY, "written over the zeros");
        let next = await_ready(dir.path(), 2);
        assert_eq!(std::fs::metadata(next).unwrap().len(), READY_MIN);
        drop(log);
        let found = open(dir.path(), 0).unwrap();
        assert_eq!(lsns(&found.records), [1]);
        let log = Log::start(dir.path(), 2, 100 << 20).unwrap();
        assert_eq!(len(2), START_READY);
        drop(log);
    }

    /// Data close together is read in one go, data far apart or in other
    /// segments on its own, and each reads back what a read of it alone
    /// gives, in the order asked; a gone segment gives `None`.
    #[test]
    fn reads_of_many_match_reads_of_each() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = Log::create(dir.path(), 1).unwrap();
        let payload: Vec<u8> = (0..20_000u32).map(|i| (i % 251) as u8).collect();
        append(&mut log, 1, &payload);
        let mut log = Log::create(dir.path(), 2).unwrap();
        append(&mut log, 2, &payload);
        let mut log = Log::create(dir.path(), 3).unwrap();
        append(&mut log, 3, b"gone");
        let at = |segment, offset, len| BodyAt {
            segment,
            offset: START + HEADER as u64 + offset,
            len,
        };
        let ats = [
            at(1, 9_000, 100), // far from the others in segment 1
            at(2, 10, 5),      // another segment
            at(1, 30, 20),     // close to the next two
            at(1, 0, 20),      // overlapping one another
            at(1, 40, 60),
            at(3, 0, 4),       // a segment deleted below
            at(1, 19_990, 10), // the record's last bytes
            at(2, 10, 5),      // asked twice
        ];
        let segments = Segments::new(dir.path());
        drop(log);
        std::fs::remove_file(segment_path(&dir.path().join(LOG_DIR), 3)).unwrap();
        let mut many = vec![None; ats.len()];
        segments
            .read_many(&ats, |i, data| {
                assert!(many[i].replace(data.to_vec()).is_none(), "{i} twice");
                Ok::<(), io::Error>(())
            })
            .unwrap();
        let each: Vec<_> = ats.iter().map(|&a| segments.read(a).unwrap()).collect();
        assert_eq!(many, each);
        assert_eq!(many[2].as_deref(), Some(&payload[30..50]));
        assert_eq!(many[5], None);
        let none = segments.read_many(&[], |_, _| Err(io::Error::other("called")));
        assert!(none.is_ok());
    }
}

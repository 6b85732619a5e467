//! Zero-filling ahead: the thread that writes the next segment as a
//! `.ready` file while the writer fills the current one.

use std::io;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::files::{LOG_DIR, PREPARING_SUFFIX, READY_SUFFIX, unready_path};
use super::record::{MAGIC, START};
use crate::storage::Storage;

/// Fewest and most bytes a segment is made ready with: a trickle of
/// changes needs a page or so a checkpoint, a segment ends at
/// `CHECKPOINT_BYTES` (64 MiB) of records (and a commit may go past it).
pub(super) const READY_MIN: u64 = 16 << 10;

pub(super) const READY_MAX: u64 = 80 << 20;

/// Bytes of zeros a start writes into its first segment before it serves
/// (the following ones are made ready in the background, sized after the
/// last). Without them, every commit of a run's first second, a
/// short-lived server's whole life, would pay for appending; with the
/// least a segment is made ready with, all but its first dozen did
/// (a second of a thousand single sends fills 1 MiB).
pub(super) const START_READY: u64 = 1 << 20;

/// Zeros written and synced at a time. The log's own syncs share the
/// disk and wait behind whatever flush is under way: many small flushes
/// keep that wait short (with 1 MiB ones, the 99th percentile of a send's
/// answer at half load doubled; with 64 KiB ones it stayed the same).
pub(super) const READY_CHUNK: usize = 64 << 10;

/// Writes segment `id` ahead, `len` bytes long (magic, then zeros), synced,
/// as a `.ready` file: it becomes the log's when the log moves to `id`.
/// Leaves nothing when it fails, or stops once `stop` is set.
pub(super) fn prepare(
    storage: &dyn Storage,
    log_dir: &Path,
    id: u64,
    len: u64,
    stop: &AtomicBool,
) -> io::Result<()> {
    let preparing = unready_path(log_dir, id, PREPARING_SUFFIX);
    let prepared = write_zeros(storage, &preparing, len, stop)
        .and_then(|()| storage.rename(&preparing, &unready_path(log_dir, id, READY_SUFFIX)));
    if prepared.is_err() {
        let _ = storage.remove(&preparing);
    }
    prepared
}

/// Writes the magic then zeros to `path`, `len` bytes in all, synced.
pub(super) fn write_zeros(
    storage: &dyn Storage,
    path: &Path,
    len: u64,
    stop: &AtomicBool,
) -> io::Result<()> {
    let file = storage.create(path)?;
    file.write_all_at(MAGIC, 0)?;
    let zeros = vec![0u8; READY_CHUNK];
    let mut at = START;
    let mut left = len.saturating_sub(START);
    while left > 0 {
        if stop.load(Ordering::Relaxed) {
            // A stopping server does not wait for a segment it won't use.
            return Err(io::Error::new(io::ErrorKind::Interrupted, "stopping"));
        }
        let n = left.min(READY_CHUNK as u64) as usize;
        file.write_all_at(&zeros[..n], at)?;
        at += n as u64;
        left -= n as u64;
        file.sync_data()?;
    }
    // Only whole files are ever found ready (renamed once synced); the
    // directory is synced when the log takes one.
    file.sync_all()
}

/// How long to make a segment ready after one that ended `last` bytes
/// long: a quarter more, in whole pages, within bounds.
pub(super) fn ready_len(last: u64) -> u64 {
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
    pub fn spawn(storage: Arc<dyn Storage>, dir: &Path) -> Self {
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
                        let _ = storage.remove(&unready_path(&log_dir, stale, READY_SUFFIX));
                    }
                    last = Some(id);
                    if let Err(e) = prepare(&*storage, &log_dir, id, len, &stopping) {
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

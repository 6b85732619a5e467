//! The file system under the durable engine: a small trait for everything
//! the write-ahead log and the store do with files, the operating
//! system's implementation ([`OsStorage`]), and one for tests that injects
//! faults ([`FaultStorage`]): failed writes and syncs, a full disk, and a
//! crash that keeps only what was synced.
//!
//! The engine holds one `Arc<dyn Storage>`, made at open, and each open
//! file as an `Arc<dyn StorageFile>`: a write or a sync costs one dynamic
//! call on top of its system call, nothing measurable beside it.

mod fault;
mod os;
mod redb_backend;

use std::fmt;
use std::io;
use std::path::Path;
use std::sync::Arc;

pub use fault::FaultStorage;
pub use os::OsStorage;
pub use redb_backend::DatabaseBackend;

/// What the durable engine does with its directory.
pub trait Storage: Send + Sync + fmt::Debug + 'static {
    /// Creates directory `dir` and its parents; the directories are there
    /// after a crash once created.
    fn create_dir_all(&self, dir: &Path) -> io::Result<()>;
    /// Creates the file at `path`, or empties it, open for reading and
    /// writing. Its name survives a crash only after [`Storage::sync_dir`].
    fn create(&self, path: &Path) -> io::Result<Arc<dyn StorageFile>>;
    /// Opens the file at `path`, for writing too when `write`.
    fn open(&self, path: &Path, write: bool) -> io::Result<Arc<dyn StorageFile>>;
    /// Renames `from` to `to` (replacing it); durable after a directory sync.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Deletes the file at `path`; durable after a directory sync.
    fn remove(&self, path: &Path) -> io::Result<()>;
    /// The names of the entries of directory `dir`.
    fn list(&self, dir: &Path) -> io::Result<Vec<String>>;
    /// Makes the entries created, renamed or removed in `dir` survive a
    /// crash.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
    /// Whether a file is at `path`.
    fn exists(&self, path: &Path) -> io::Result<bool>;
    /// The length of the file at `path`.
    fn len(&self, path: &Path) -> io::Result<u64>;
    /// The redb database file at `path` as a redb storage backend, or
    /// `None` to let redb open the file itself (with its file lock).
    fn database(&self, path: &Path) -> io::Result<Option<DatabaseBackend>>;
}

/// One open file.
#[allow(clippy::len_without_is_empty)] // a file's length, not a collection's
pub trait StorageFile: Send + Sync + fmt::Debug {
    /// Writes all of `buf` at `offset`, growing the file if needed.
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()>;
    /// Fills `buf` from `offset`; an error past the end.
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()>;
    /// Makes the data written so far survive a crash (`fdatasync`).
    fn sync_data(&self) -> io::Result<()>;
    /// Makes the data and the file's metadata survive a crash (`fsync`).
    fn sync_all(&self) -> io::Result<()>;
    /// Cuts or extends (with zeros) the file to `len` bytes.
    fn set_len(&self, len: u64) -> io::Result<()>;
    /// The file's length.
    fn len(&self) -> io::Result<u64>;
    /// Reads the whole file.
    fn read_all(&self) -> io::Result<Vec<u8>> {
        let mut bytes = vec![0; self.len()? as usize];
        self.read_exact_at(&mut bytes, 0)?;
        Ok(bytes)
    }
}

/// The directory of `path`, `.` when it has none.
pub(crate) fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

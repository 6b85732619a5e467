//! The [`Storage`] trait: what the durable engine does with its directory.

use std::fmt;
use std::io;
use std::path::Path;
use std::sync::Arc;

use super::file::StorageFile;
use super::redb_backend::DatabaseBackend;

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

/// The directory of `path`, `.` when it has none.
pub(crate) fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

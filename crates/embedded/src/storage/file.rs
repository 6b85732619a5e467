//! The [`StorageFile`] trait: one open file of the durable engine.

use std::fmt;
use std::io;

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

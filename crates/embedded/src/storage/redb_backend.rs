//! A [`Storage`](super::Storage) file as redb's storage backend.

use std::io;
use std::sync::Arc;

use super::file::StorageFile;

/// redb's database file through a [`StorageFile`]: with
/// [`FaultStorage`](super::FaultStorage), redb's writes and syncs meet the
/// same injected faults as the log's, and a crash drops what redb wrote
/// without syncing, as redb's own crash model assumes.
#[derive(Debug, Clone)]
pub struct DatabaseBackend(pub Arc<dyn StorageFile>);

impl redb::StorageBackend for DatabaseBackend {
    fn len(&self) -> Result<u64, io::Error> {
        self.0.len()
    }

    fn read(&self, offset: u64, out: &mut [u8]) -> Result<(), io::Error> {
        self.0.read_exact_at(out, offset)
    }

    fn set_len(&self, len: u64) -> Result<(), io::Error> {
        self.0.set_len(len)
    }

    fn sync_data(&self) -> Result<(), io::Error> {
        self.0.sync_data()
    }

    fn write(&self, offset: u64, data: &[u8]) -> Result<(), io::Error> {
        self.0.write_all_at(data, offset)
    }
}

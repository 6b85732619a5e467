//! The file system under the durable engine: a small trait for everything
//! the write-ahead log and the store do with files, the operating
//! system's implementation ([`OsStorage`]), and one for tests that injects
//! faults ([`FaultStorage`]): failed writes and syncs, a full disk, and a
//! crash that keeps only what was synced. An [`Overlay`] over either keeps
//! every change in memory, for a start on a full disk (rule D6).
//!
//! The engine holds one `Arc<dyn Storage>`, made at open, and each open
//! file as an `Arc<dyn StorageFile>`: a write or a sync costs one dynamic
//! call on top of its system call, nothing measurable beside it.

mod directory;
mod fault;
mod file;
mod os;
mod overlay;
mod probe;
mod redb_backend;

pub use directory::Storage;
pub(crate) use directory::parent;
pub use fault::FaultStorage;
pub use file::StorageFile;
pub use os::OsStorage;
pub(crate) use overlay::Overlay;
pub(crate) use probe::probe;
pub use redb_backend::DatabaseBackend;

//! The tiny storage interface the spike drives. It mirrors what sluice's
//! embedded engine needs from a store: one durable group commit, a full scan
//! at recovery, and an explicit "give space back" hook.

use std::error::Error;
use std::path::Path;

pub type Res<T> = Result<T, Box<dyn Error + Send + Sync>>;

/// 16-byte key: queue id (u64 BE) ++ sequence (u64 BE).
pub type Key = [u8; 16];
/// Small state record: receive count u32 BE, visible-at ms u64 BE, first-receive ms u64 BE.
pub type State = [u8; 20];

/// Everything the single writer thread drained from its channel for ONE commit.
#[derive(Default)]
pub struct Batch {
    /// New messages: key, message record (~100 B metadata + 1 KiB body), initial state.
    pub inserts: Vec<(Key, Vec<u8>, State)>,
    /// Receives: overwrite the state record.
    pub updates: Vec<(Key, State)>,
    /// Deletes: remove both records.
    pub deletes: Vec<Key>,
}

impl Batch {
    pub fn clear(&mut self) {
        self.inserts.clear();
        self.updates.clear();
        self.deletes.clear();
    }
}

/// What a recovery scan returns: every state record and every message record.
pub struct Scan {
    pub states: Vec<(Key, State)>,
    pub messages: Vec<(Key, Vec<u8>)>,
}

pub trait Engine {
    /// Apply the batch in ONE transaction and make it durable (fsync) before returning.
    fn commit(&mut self, batch: &Batch) -> Res<()>;
    /// Read every state and message record into memory (what startup recovery does).
    fn scan_all(&mut self) -> Res<Scan>;
    /// Engine-specific explicit space reclaim (compaction / VACUUM / checkpoint).
    fn reclaim(&mut self) -> Res<()>;
}

pub const ENGINES: &[&str] = &["fjall", "redb", "redb-qr", "sqlite"];

/// Open (creating if needed) the named engine in `dir`.
pub fn open(name: &str, dir: &Path) -> Res<Box<dyn Engine>> {
    std::fs::create_dir_all(dir)?;
    Ok(match name {
        #[cfg(feature = "fjall")]
        "fjall" => Box::new(crate::fjall_engine::FjallEngine::open(dir)?),
        #[cfg(feature = "redb")]
        "redb" => Box::new(crate::redb_engine::RedbEngine::open(dir, false)?),
        #[cfg(feature = "redb")]
        "redb-qr" => Box::new(crate::redb_engine::RedbEngine::open(dir, true)?),
        #[cfg(feature = "sqlite")]
        "sqlite" => Box::new(crate::sqlite_engine::SqliteEngine::open(dir)?),
        other => return Err(format!("unknown or not compiled-in engine {other:?}").into()),
    })
}

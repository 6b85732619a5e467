//! The store: the redb database, opening it, and checkpoints that make
//! what the applier wrote durable.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use redb::{Database, Durability, ReadableDatabase, ReadableTable};
use sluice_broker::HandleSecret;
use sluice_keyring::DataKeys;

use super::error::StoreError;
use super::heads::{build_heads, set_up};
use super::tables::{
    APPLIED_LSN, DATA_KEYS, DEDUP, FAILURES, HANDLE_SECRET, IDEMPOTENCY, MESSAGES, META, QUEUES,
    SECRETS, SEGMENTS, STATES, TASKS,
};
#[cfg(test)]
use crate::storage::OsStorage;
use crate::storage::{Storage, parent};
use crate::wal::Segments;

/// Empties the store's file at `path` when it holds only zeros: what a
/// creation that failed before redb wrote its header leaves. redb grows
/// the new file first, which takes no room where files may be sparse, so
/// it succeeds on a full disk, and writes its magic number last; it then
/// refuses the file as not a database, at every start after. A file of
/// zeros never held a database, so nothing is lost; any other file is
/// left to redb.
fn discard_unfinished(storage: &dyn Storage, path: &Path) -> Result<(), StoreError> {
    let file = match storage.open(path, false) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    let len = file.len()?;
    if len == 0 {
        return Ok(());
    }
    // A database's first bytes are redb's magic number: one read decides.
    let mut chunk = vec![0; 64 << 10];
    let mut at = 0;
    while at < len {
        let n = chunk.len().min((len - at) as usize);
        file.read_exact_at(&mut chunk[..n], at)?;
        if chunk[..n].iter().any(|&b| b != 0) {
            return Ok(());
        }
        at += n as u64;
    }
    tracing::warn!(path = %path.display(), bytes = len, "the store's file holds only zeros, left by a creation that never finished: creating the store again");
    let file = storage.open(path, true)?;
    file.set_len(0)?;
    file.sync_all()?;
    Ok(())
}

/// The redb database.
#[derive(Clone)]
pub struct Store {
    pub(super) db: Arc<Database>,
    /// The files under the store and the log.
    pub(super) storage: Arc<dyn Storage>,
    /// The log's segments, where most messages' data lies.
    pub(super) segments: Arc<Segments>,
    /// Whether opening had to rebuild redb's allocator state by reading
    /// the whole file (a crash before any quick-repair commit).
    pub(super) repaired: bool,
    /// The data directory the database file is in.
    pub(super) dir: PathBuf,
    /// The data keys that open sealed message records.
    pub(super) keys: Arc<DataKeys>,
}

impl Store {
    /// Opens or creates the database file; `cache_bytes` bounds redb's
    /// page cache (redb's own default, 1 GiB, when `None`).
    #[cfg(test)]
    pub fn open(path: &Path, cache_bytes: Option<usize>) -> Result<Self, StoreError> {
        Self::open_on(Arc::new(OsStorage), path, cache_bytes)
    }

    /// The store opening sealed records with `keys`.
    pub fn with_keys(mut self, keys: Arc<DataKeys>) -> Self {
        self.keys = keys;
        self
    }

    /// [`Store::open`] on `storage`.
    pub fn open_on(
        storage: Arc<dyn Storage>,
        path: &Path,
        cache_bytes: Option<usize>,
    ) -> Result<Self, StoreError> {
        let mut builder = Database::builder();
        if let Some(bytes) = cache_bytes {
            builder.set_cache_size(bytes);
        }
        let repairing = Arc::new(AtomicBool::new(false));
        let seen = repairing.clone();
        builder.set_repair_callback(move |_| {
            if !seen.swap(true, Ordering::Relaxed) {
                tracing::warn!("the store was not closed cleanly: rebuilding its allocator state");
            }
        });
        let began = Instant::now();
        discard_unfinished(&*storage, path)?;
        let db = match storage.database(path)? {
            Some(backend) => builder.create_with_backend(backend)?,
            None => builder.create(path)?,
        };
        let db = Arc::new(db);
        let segments = Arc::new(Segments::new(storage.clone(), parent(path)));
        let repaired = repairing.load(Ordering::Relaxed);
        if repaired {
            tracing::warn!(
                elapsed_ms = began.elapsed().as_millis() as u64,
                "store repaired"
            );
        }
        let dir = parent(path).to_path_buf();
        if set_up(&db)? {
            return Ok(Self {
                db,
                storage,
                segments,
                repaired,
                dir,
                keys: Arc::new(DataKeys::new(None)),
            });
        }
        let mut txn = db.begin_write()?;
        // Like every durable commit here (see `checkpoint`): a commit
        // without it would drop the allocator state the last one saved.
        txn.set_quick_repair(true);
        {
            txn.open_table(QUEUES)?;
            txn.open_table(MESSAGES)?;
            txn.open_table(STATES)?;
            txn.open_table(META)?;
            txn.open_table(DEDUP)?;
            txn.open_table(TASKS)?;
            txn.open_table(FAILURES)?;
            txn.open_table(SEGMENTS)?;
            txn.open_table(DATA_KEYS)?;
            txn.open_table(IDEMPOTENCY)?;
        }
        build_heads(&txn, &segments)?;
        txn.commit()?;
        Ok(Self {
            db,
            storage,
            segments,
            repaired,
            dir,
            keys: Arc::new(DataKeys::new(None)),
        })
    }

    /// The files under the store and the log.
    pub fn storage(&self) -> &Arc<dyn Storage> {
        &self.storage
    }

    /// The data directory the store and its log are in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The log's segments, shared with the log writer, which closes one
    /// before it deletes it.
    pub fn segments(&self) -> &Arc<Segments> {
        &self.segments
    }

    /// Whether opening had to walk the whole file to repair it: a crash
    /// normally does not need that (see [`Store::checkpoint`]).
    pub fn repaired_on_open(&self) -> bool {
        self.repaired
    }

    /// The last log record the store holds (0 before the first).
    pub fn applied_lsn(&self) -> Result<u64, StoreError> {
        let txn = self.db.begin_read()?;
        let meta = txn.open_table(META)?;
        Ok(meta.get(APPLIED_LSN)?.map(|v| v.value()).unwrap_or(0))
    }

    /// The key receipt handles are sealed with (rule A3): made at random
    /// and committed at the first call, read back at every later one (a
    /// read only: a start on a full disk need not write).
    pub fn handle_secret(&self) -> Result<HandleSecret, StoreError> {
        let read = |bytes: &[u8]| {
            HandleSecret::from_slice(bytes).ok_or_else(|| {
                StoreError::Redb("the stored receipt handle secret is not 32 bytes".into())
            })
        };
        {
            let txn = self.db.begin_read()?;
            // The table is made by the first write below.
            if let Ok(table) = txn.open_table(SECRETS)
                && let Some(v) = table.get(HANDLE_SECRET)?
            {
                return read(v.value());
            }
        }
        let mut txn = self.db.begin_write()?;
        txn.set_quick_repair(true);
        let secret = {
            let mut table = txn.open_table(SECRETS)?;
            let stored = table.get(HANDLE_SECRET)?.map(|v| read(v.value()));
            match stored {
                Some(secret) => secret?,
                None => {
                    let secret =
                        HandleSecret::random().map_err(|e| StoreError::Redb(e.to_sqs().message))?;
                    table.insert(HANDLE_SECRET, &secret.0[..])?;
                    secret
                }
            }
        };
        txn.commit()?;
        Ok(secret)
    }

    /// Makes every change applied so far durable: one redb commit with
    /// immediate durability, which writes out what the commits without
    /// durability left in memory.
    ///
    /// With quick repair the commit also saves redb's allocator state (and
    /// commits in two phases), so that opening after a crash need not walk
    /// every page of the file to rebuild it: that walk took seconds with a
    /// million messages stored, and grows with the store.
    pub fn checkpoint(&self) -> Result<(), StoreError> {
        let mut txn = self.db.begin_write()?;
        txn.set_durability(Durability::Immediate)?;
        txn.set_quick_repair(true);
        txn.commit()?;
        Ok(())
    }
}

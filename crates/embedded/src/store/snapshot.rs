//! An online copy of the store: every table as one read transaction sees
//! it, written into a new redb file, while the engine goes on writing.
//!
//! redb has no copy of its own, and the file cannot be copied byte for
//! byte while commits change it; a read transaction is a consistent view
//! (redb keeps its pages until it ends), so the copy walks that view.

use std::collections::BTreeSet;
use std::path::Path;

use redb::{
    Database, Durability, Key, ReadTransaction, ReadableDatabase, ReadableTable, TableDefinition,
    TableError, TableHandle, Value, WriteTransaction,
};

use super::database::Store;
use super::error::StoreError;
use super::segment_use::SegmentUse;
use super::tables::{
    APPLIED_LSN, DATA_KEYS, DEDUP, FAILURES, HEADS, IDEMPOTENCY, MESSAGES, META, QUEUES, SECRETS,
    SEGMENTS, STATES, TASKS,
};

/// Rows copied per transaction of the copy (each without durability until
/// the last): bounds what one transaction holds in memory.
const ROWS_PER_COMMIT: usize = 50_000;

/// What [`Store::copy_to`] copied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreCopy {
    /// The last log record the copy holds.
    pub applied_lsn: u64,
    /// The log segments in which the copy's messages have their data.
    pub segments: BTreeSet<u64>,
    /// Rows copied, all tables together.
    pub rows: u64,
}

impl Store {
    /// Copies every table, as one read transaction sees them now, into a
    /// new database at `dest`, made durable before this returns. The log
    /// segments the copy points into must be copied beside it.
    pub fn copy_to(&self, dest: &Path) -> Result<StoreCopy, StoreError> {
        let source = self.db.begin_read()?;
        check_tables_known(&source)?;
        let applied_lsn = match source.open_table(META) {
            Ok(meta) => meta.get(APPLIED_LSN)?.map(|v| v.value()).unwrap_or(0),
            Err(TableError::TableDoesNotExist(_)) => 0,
            Err(e) => return Err(e.into()),
        };
        let mut segments = BTreeSet::new();
        if let Ok(table) = source.open_table(SEGMENTS) {
            for row in table.iter()? {
                let (id, v) = row?;
                if SegmentUse::decode(v.value())?.messages > 0 {
                    segments.insert(id.value());
                }
            }
        }
        let db = Database::builder().create(dest)?;
        let mut copier = Copier {
            db: &db,
            txn: Some(db.begin_write()?),
            in_txn: 0,
            rows: 0,
        };
        copier.table(&source, QUEUES)?;
        copier.table(&source, MESSAGES)?;
        copier.table(&source, STATES)?;
        copier.table(&source, META)?;
        copier.table(&source, DEDUP)?;
        copier.table(&source, TASKS)?;
        copier.table(&source, FAILURES)?;
        copier.table(&source, HEADS)?;
        copier.table(&source, SEGMENTS)?;
        copier.table(&source, SECRETS)?;
        copier.table(&source, DATA_KEYS)?;
        copier.table(&source, IDEMPOTENCY)?;
        let rows = copier.rows;
        copier.finish()?;
        Ok(StoreCopy {
            applied_lsn,
            segments,
            rows,
        })
    }
}

/// The tables [`Store::copy_to`] copies: a table it does not know would be
/// left out of backups, so the copy refuses instead.
const KNOWN: [&str; 12] = [
    "queues",
    "messages",
    "states",
    "meta",
    "dedup",
    "move_tasks",
    "failures",
    "heads",
    "segments",
    "secrets",
    "data_keys",
    "idempotency",
];

fn check_tables_known(txn: &ReadTransaction) -> Result<(), StoreError> {
    for table in txn.list_tables()? {
        if !KNOWN.contains(&table.name()) {
            return Err(StoreError::Redb(format!(
                "the store has a table the backup does not know: {}",
                table.name()
            )));
        }
    }
    Ok(())
}

/// Writes rows into the copy in transactions of [`ROWS_PER_COMMIT`].
struct Copier<'a> {
    db: &'a Database,
    txn: Option<WriteTransaction>,
    in_txn: usize,
    rows: u64,
}

impl Copier<'_> {
    fn table<K: Key + 'static, V: Value + 'static>(
        &mut self,
        source: &ReadTransaction,
        def: TableDefinition<K, V>,
    ) -> Result<(), StoreError> {
        let from = match source.open_table(def) {
            Ok(table) => table,
            Err(TableError::TableDoesNotExist(_)) => return Ok(()),
            Err(e) => return Err(e.into()),
        };
        let mut rows = from.iter()?;
        loop {
            let txn = self
                .txn
                .as_ref()
                .ok_or_else(|| StoreError::Failed("the backup copy lost its transaction".into()))?;
            {
                let mut to = txn.open_table(def)?;
                while self.in_txn < ROWS_PER_COMMIT {
                    let Some(row) = rows.next() else {
                        return Ok(());
                    };
                    let (k, v) = row?;
                    to.insert(k.value(), v.value())?;
                    self.in_txn += 1;
                    self.rows += 1;
                }
            }
            self.commit_part()?;
        }
    }

    /// Commits the rows so far without durability and opens the next
    /// transaction: the last commit makes them all durable.
    fn commit_part(&mut self) -> Result<(), StoreError> {
        if let Some(mut txn) = self.txn.take() {
            txn.set_durability(Durability::None)?;
            txn.commit()?;
        }
        self.txn = Some(self.db.begin_write()?);
        self.in_txn = 0;
        Ok(())
    }

    /// The durable commit, with quick repair like every durable commit of
    /// the store (`Store::checkpoint`).
    fn finish(mut self) -> Result<(), StoreError> {
        let mut txn = self
            .txn
            .take()
            .ok_or_else(|| StoreError::Failed("the backup copy lost its transaction".into()))?;
        txn.set_durability(Durability::Immediate)?;
        txn.set_quick_repair(true);
        txn.commit()?;
        Ok(())
    }
}

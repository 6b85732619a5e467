//! The `heads` table: building it for stores written before it, and
//! reading a message record's data whether it holds it or points into
//! the log.

use std::time::Instant;

use redb::{ReadableTable, ReadableTableMetadata};

use super::error::StoreError;
use super::tables::{
    DATA_KEYS, DEDUP, FAILURES, HEADS, HEADS_BUILT, IDEMPOTENCY, MESSAGES, META, QUEUES, SEGMENTS,
    STATES, TASKS,
};
use crate::codec::{self, CorruptRecord};
use crate::wal::Segments;

/// Whether every table is there and `heads` matches `messages`, read
/// without writing: then opening needs no commit, so a start on a full
/// disk gets past it (rule D6).
pub(super) fn set_up(db: &redb::Database) -> Result<bool, StoreError> {
    use redb::{ReadableDatabase, TableError};
    let txn = db.begin_read()?;
    let exists = |e: &TableError| matches!(e, TableError::TableDoesNotExist(_));
    macro_rules! table {
        ($t:expr) => {
            match txn.open_table($t) {
                Ok(table) => table,
                Err(e) if exists(&e) => return Ok(false),
                Err(e) => return Err(e.into()),
            }
        };
    }
    table!(QUEUES);
    table!(STATES);
    table!(DEDUP);
    table!(TASKS);
    table!(FAILURES);
    table!(SEGMENTS);
    table!(DATA_KEYS);
    table!(IDEMPOTENCY);
    let messages = table!(MESSAGES);
    let heads = table!(HEADS);
    let meta = table!(META);
    Ok(meta.get(HEADS_BUILT)?.is_some() && heads.len()? == messages.len()?)
}

/// Fills `heads` from `messages` unless it already matches them: a store
/// written before the table existed, or one an older binary wrote in
/// since (the counts then differ).
pub(super) fn build_heads(
    txn: &redb::WriteTransaction,
    segments: &Segments,
) -> Result<(), StoreError> {
    let messages = txn.open_table(MESSAGES)?;
    let mut heads = txn.open_table(HEADS)?;
    let mut meta = txn.open_table(META)?;
    if meta.get(HEADS_BUILT)?.is_some() && heads.len()? == messages.len()? {
        return Ok(());
    }
    let began = Instant::now();
    heads.retain(|_, _| false)?;
    let mut built = 0u64;
    for row in messages.iter()? {
        let (key, record) = row?;
        let Some(data) = record_data(segments, record.value())? else {
            return Err(CorruptRecord("message data missing from the log").into());
        };
        heads.insert(key.value(), codec::head_prefix(&data)?)?;
        built += 1;
    }
    meta.insert(HEADS_BUILT, 1)?;
    if built > 0 {
        tracing::info!(
            messages = built,
            elapsed_ms = began.elapsed().as_millis() as u64,
            "indexed the stored messages' heads (once, for faster starts)"
        );
    }
    Ok(())
}

/// A message record's data: the record itself, or what it points at in
/// the log; `None` when that segment is gone.
pub(super) fn record_data<'a>(
    segments: &Segments,
    record: &'a [u8],
) -> Result<Option<std::borrow::Cow<'a, [u8]>>, StoreError> {
    match codec::decode_in_log(record)? {
        None => Ok(Some(std::borrow::Cow::Borrowed(record))),
        Some(at) => Ok(segments
            .read(at)
            .map_err(|e| StoreError::Log(e.to_string()))?
            .map(std::borrow::Cow::Owned)),
    }
}

/// A row read from `heads`.
pub(super) type HeadRow<'a> = Result<
    (
        redb::AccessGuard<'a, (u64, u64)>,
        redb::AccessGuard<'a, &'static [u8]>,
    ),
    redb::StorageError,
>;

/// The sequence of a row read from `heads`, unless reading it failed.
pub(super) fn head_seq(row: &HeadRow<'_>) -> Option<u64> {
    row.as_ref().ok().map(|(key, _)| key.value().1)
}

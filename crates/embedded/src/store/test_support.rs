//! Store layouts of earlier versions and held locks, made for tests.

use redb::{ReadableDatabase, ReadableTable, ReadableTableMetadata};

use super::database::Store;
use super::error::StoreError;
use super::tables::{HEADS, HEADS_BUILT, MESSAGES, META, STATES};
use crate::change::Change;
use crate::codec;

impl Store {
    /// Makes this a store from before the heads table (for tests).
    #[cfg(test)]
    pub fn drop_heads(&self) {
        let mut txn = self.db.begin_write().unwrap();
        txn.set_quick_repair(true);
        txn.delete_table(HEADS).unwrap();
        txn.open_table(META).unwrap().remove(HEADS_BUILT).unwrap();
        txn.commit().unwrap();
    }

    /// Applies `puts` as a binary from before the heads table would:
    /// without their heads (for tests).
    #[cfg(test)]
    pub fn put_without_heads(&self, puts: &[Change]) {
        let mut txn = self.db.begin_write().unwrap();
        txn.set_quick_repair(true);
        {
            let mut messages = txn.open_table(MESSAGES).unwrap();
            let mut states = txn.open_table(STATES).unwrap();
            for change in puts {
                if let Change::PutMessage {
                    queue,
                    seq,
                    data,
                    state,
                    ..
                } = change
                {
                    messages.insert((*queue, *seq), data.as_slice()).unwrap();
                    states.insert((*queue, *seq), state.as_slice()).unwrap();
                }
            }
        }
        txn.commit().unwrap();
    }

    /// Rows in `messages`, `heads` and `states` (for tests).
    #[cfg(test)]
    pub fn rows(&self) -> Result<(u64, u64, u64), StoreError> {
        let txn = self.db.begin_read()?;
        Ok((
            txn.open_table(MESSAGES)?.len()?,
            txn.open_table(HEADS)?.len()?,
            txn.open_table(STATES)?.len()?,
        ))
    }

    /// Rewrites each message whose state row says where its data lies in
    /// the log as the earlier layout stored it: a pointer record in
    /// `messages`, its head in `heads`, its state alone (for tests).
    #[cfg(test)]
    pub fn to_pointer_records(&self) {
        let txn = self.db.begin_write().unwrap();
        {
            let mut messages = txn.open_table(MESSAGES).unwrap();
            let mut heads = txn.open_table(HEADS).unwrap();
            let mut states = txn.open_table(STATES).unwrap();
            let rows: Vec<((u64, u64), Vec<u8>)> = states
                .iter()
                .unwrap()
                .map(|r| {
                    let (k, v) = r.unwrap();
                    (k.value(), v.value().to_vec())
                })
                .collect();
            for (key, row) in rows {
                let Some((at, head)) = codec::state_in_log(&row).unwrap() else {
                    continue;
                };
                messages
                    .insert(key, codec::encode_in_log(at).as_slice())
                    .unwrap();
                heads.insert(key, head).unwrap();
                states
                    .insert(key, codec::state_only(&row).unwrap().as_slice())
                    .unwrap();
            }
        }
        txn.commit().unwrap();
    }

    /// Takes redb's write lock until the transaction is dropped: the next
    /// apply waits for it, as it would behind a slow one.
    #[cfg(test)]
    pub fn hold_writes(&self) -> Result<redb::WriteTransaction, StoreError> {
        Ok(self.db.begin_write()?)
    }
}

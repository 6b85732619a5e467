//! Applying a commit's changes to the tables, as the applier does.

use redb::{Durability, ReadableTable};
use sluice_keyring::DataKeyRecord;

use super::database::Store;
use super::error::StoreError;
use super::heads::record_data;
use super::segment_use::SegmentTally;
use super::tables::{
    APPLIED_LSN, DATA_KEYS, DEDUP, FAILURES, HEADS, IDEMPOTENCY, MESSAGES, META, NEXT_QUEUE_ID,
    NEXT_SEQ, QUEUES, SEGMENTS, STATES, TASKS,
};
use crate::change::Change;
use crate::codec;
use crate::log_record;

impl Store {
    /// Applies changes in one transaction, as log record `lsn`, without
    /// syncing: visible to every later read at once, durable at the next
    /// [`Store::checkpoint`]; the log makes them durable before that.
    ///
    /// With `log`, appends the changes as applied to it
    /// ([`crate::log_record`]): a move of a message on disk is written as
    /// the delete and put it became.
    pub fn apply<'a>(
        &self,
        changes: impl Iterator<Item = &'a Change>,
        lsn: u64,
        mut log: Option<&mut Vec<u8>>,
    ) -> Result<(), StoreError> {
        let mut txn = self.db.begin_write()?;
        txn.set_durability(Durability::None)?;
        {
            let mut queues = txn.open_table(QUEUES)?;
            let mut messages = txn.open_table(MESSAGES)?;
            let mut heads = txn.open_table(HEADS)?;
            let mut states = txn.open_table(STATES)?;
            let mut meta = txn.open_table(META)?;
            let mut dedup = txn.open_table(DEDUP)?;
            let mut tasks = txn.open_table(TASKS)?;
            let mut failures = txn.open_table(FAILURES)?;
            let mut segment_table = txn.open_table(SEGMENTS)?;
            let mut data_keys = txn.open_table(DATA_KEYS)?;
            let mut idempotency = txn.open_table(IDEMPOTENCY)?;
            let mut tally = SegmentTally::default();
            let mut max_seq = None::<u64>;
            let mut max_queue = None::<u64>;
            for change in changes {
                if let Some(out) = log.as_deref_mut()
                    && !matches!(change, Change::MoveMessage { .. })
                {
                    log_record::encode(change, out);
                }
                match change {
                    Change::PutQueue { id, record } => {
                        queues.insert(*id, record.as_slice())?;
                        max_queue = max_queue.max(Some(*id));
                    }
                    Change::DeleteQueue { id } => {
                        queues.remove(*id)?;
                        let range = (*id, 0)..=(*id, u64::MAX);
                        messages.retain_in(range.clone(), |_, record| {
                            tally.removed(record);
                            false
                        })?;
                        heads.retain_in(range.clone(), |_, _| false)?;
                        states.retain_in(range, |_, row| {
                            tally.removed_state(row);
                            false
                        })?;
                        dedup.retain_in((*id, "")..(*id + 1, ""), |_, _| false)?;
                        failures.retain_in((*id, 0)..=(*id, u64::MAX), |_, _| false)?;
                        // Crypto-shredding: the queue's data keys go with
                        // it, so what the log still holds of it is unreadable.
                        data_keys.retain(|_, record| {
                            serde_json::from_slice::<DataKeyRecord>(record)
                                .map_or(true, |r| r.queue != *id)
                        })?;
                    }
                    Change::PutDataKey { id, record } => {
                        data_keys.insert(*id, record.as_slice())?;
                    }
                    Change::DeleteDataKey { id } => {
                        data_keys.remove(*id)?;
                    }
                    Change::PutDedup { queue, key, seen } => {
                        dedup.insert((*queue, key.as_str()), seen.as_slice())?;
                    }
                    Change::DeleteDedup { queue, key } => {
                        dedup.remove((*queue, key.as_str()))?;
                    }
                    Change::PutFailure { queue, seq, reason } => {
                        failures.insert((*queue, *seq), reason.as_str())?;
                    }
                    Change::PutTask { handle, record } => {
                        tasks.insert(handle.as_str(), record.as_slice())?;
                    }
                    Change::PutIdempotency { key, record } => {
                        idempotency.insert(key.as_str(), record.as_slice())?;
                    }
                    Change::DeleteIdempotency { key } => {
                        idempotency.remove(key.as_str())?;
                    }
                    Change::PutMessage {
                        queue,
                        seq,
                        data,
                        state,
                        in_log,
                    } => {
                        let key = (*queue, *seq);
                        // Sequences are never reused; were one put twice,
                        // the segment of the row replaced must not count it
                        // any more.
                        let old = match in_log {
                            Some(at) => {
                                tally.put(*at, *seq);
                                let row = codec::encode_state_in_log(
                                    state,
                                    *at,
                                    codec::head_prefix(data)?,
                                );
                                states
                                    .insert(key, row.as_slice())?
                                    .map(|v| v.value().to_vec())
                            }
                            None => {
                                if let Some(old) = messages.insert(key, data.as_slice())? {
                                    tally.removed(old.value());
                                }
                                heads.insert(key, codec::head_prefix(data)?)?;
                                states
                                    .insert(key, state.as_slice())?
                                    .map(|v| v.value().to_vec())
                            }
                        };
                        if let Some(old) = old {
                            tally.removed_state(&old);
                            // A row of the other layout must not outlive it.
                            if in_log.is_some() && codec::state_in_log(&old)?.is_none() {
                                if let Some(record) = messages.remove(key)? {
                                    tally.removed(record.value());
                                }
                                heads.remove(key)?;
                            }
                        }
                        max_seq = max_seq.max(Some(*seq));
                    }
                    Change::PutState { queue, seq, state } => {
                        let key = (*queue, *seq);
                        let merged = match states.get(key)? {
                            // The message was deleted meanwhile: its state
                            // must not outlive it.
                            None => continue,
                            Some(old) => codec::state_in_log(old.value())?
                                .map(|_| codec::restate(old.value(), state)),
                        };
                        match merged {
                            Some(row) => states.insert(key, row.as_slice())?,
                            None => states.insert(key, state.as_slice())?,
                        };
                    }
                    Change::DeleteMessage { queue, seq } => {
                        let key = (*queue, *seq);
                        let in_log = match states.remove(key)? {
                            Some(old) => codec::state_in_log(old.value())?.map(|(at, _)| at),
                            None => None,
                        };
                        match in_log {
                            Some(at) => tally.taken(at),
                            None => {
                                if let Some(old) = messages.remove(key)? {
                                    tally.removed(old.value());
                                }
                                heads.remove(key)?;
                            }
                        }
                        failures.remove(key)?;
                    }
                    Change::MoveMessage {
                        from,
                        to,
                        state,
                        rewrite,
                        seal,
                    } => {
                        let in_log = match states.remove(*from)? {
                            Some(row) => codec::state_in_log(row.value())?.map(|(at, _)| at),
                            None => None,
                        };
                        let old = match in_log {
                            Some(at) => {
                                tally.taken(at);
                                self.segments
                                    .read(at)
                                    .map_err(|e| StoreError::Log(e.to_string()))?
                            }
                            None => {
                                let old = messages.remove(*from)?.map(|v| v.value().to_vec());
                                heads.remove(*from)?;
                                match old {
                                    Some(old) => {
                                        tally.removed(&old);
                                        record_data(&self.segments, &old)?.map(|d| d.into_owned())
                                    }
                                    None => None,
                                }
                            }
                        };
                        failures.remove(*from)?;
                        if let Some(out) = log.as_deref_mut() {
                            log_record::delete_message(out, *from);
                        }
                        let Some(old) = old else {
                            // Whoever took it out of the index owned it; a
                            // missing record is a bug, not a reason to stop.
                            tracing::warn!(
                                queue = from.0,
                                seq = from.1,
                                "moved message not in store"
                            );
                            continue;
                        };
                        let mut data = codec::decode_message(&old, &self.keys)?;
                        (rewrite.0)(&mut data);
                        let data = codec::encode_message(&data, seal.as_ref());
                        messages.insert(*to, data.as_slice())?;
                        heads.insert(*to, codec::head_prefix(&data)?)?;
                        states.insert(*to, state.as_slice())?;
                        if let Some(out) = log.as_deref_mut() {
                            log_record::put_message(out, *to, &data, state);
                        }
                        max_seq = max_seq.max(Some(to.1));
                    }
                    Change::Purge { queue, below } => {
                        let range = (*queue, 0)..(*queue, *below);
                        messages.retain_in(range.clone(), |_, record| {
                            tally.removed(record);
                            false
                        })?;
                        heads.retain_in(range.clone(), |_, _| false)?;
                        states.retain_in(range.clone(), |_, row| {
                            tally.removed_state(row);
                            false
                        })?;
                        failures.retain_in(range, |_, _| false)?;
                    }
                }
            }
            if let Some(seq) = max_seq {
                let stored = meta.get(NEXT_SEQ)?.map(|v| v.value()).unwrap_or(0);
                if seq + 1 > stored {
                    meta.insert(NEXT_SEQ, seq + 1)?;
                }
            }
            if let Some(id) = max_queue {
                let stored = meta.get(NEXT_QUEUE_ID)?.map(|v| v.value()).unwrap_or(0);
                if id + 1 > stored {
                    meta.insert(NEXT_QUEUE_ID, id + 1)?;
                }
            }
            meta.insert(APPLIED_LSN, lsn)?;
            tally.write(&mut segment_table)?;
        }
        txn.commit()?;
        Ok(())
    }
}

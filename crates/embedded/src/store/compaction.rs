//! Reclaiming segments: what each holds, and copying the data of the
//! few messages left in one into redb.

use std::collections::BTreeMap;

use redb::{Durability, ReadableDatabase, ReadableTable};

use super::database::Store;
use super::error::StoreError;
use super::segment_use::{SegmentTally, SegmentUse};
use super::tables::{HEADS, MESSAGES, QUEUES, SEGMENTS, STATES};
use crate::codec::{self, CorruptRecord};

impl Store {
    /// The segments holding the data of a stored message, with what they
    /// hold.
    pub fn segment_use(&self) -> Result<BTreeMap<u64, SegmentUse>, StoreError> {
        let txn = self.db.begin_read()?;
        let table = txn.open_table(SEGMENTS)?;
        let mut out = BTreeMap::new();
        for row in table.iter()? {
            let (id, v) = row?;
            out.insert(id.value(), SegmentUse::decode(v.value())?);
        }
        Ok(out)
    }

    /// Copies into redb the data of up to `limit` messages still in
    /// `segment`, going on from queue and sequence `from`: how a segment
    /// that a few long-lived messages hold is reclaimed (once none is left
    /// in it, it goes at the next checkpoint). Returns where to go on
    /// from, or `None` once the segment is done.
    pub fn take_in(
        &self,
        segment: u64,
        from: (u64, u64),
        limit: usize,
    ) -> Result<Option<(u64, u64)>, StoreError> {
        let mut txn = self.db.begin_write()?;
        txn.set_durability(Durability::None)?;
        let mut resume = None;
        {
            let queues = txn.open_table(QUEUES)?;
            let mut messages = txn.open_table(MESSAGES)?;
            let mut heads = txn.open_table(HEADS)?;
            let mut states = txn.open_table(STATES)?;
            let mut table = txn.open_table(SEGMENTS)?;
            let Some(used) = table.get(segment)?.map(|v| SegmentUse::decode(v.value())) else {
                return Ok(None);
            };
            let (low, high) = used?.seqs;
            // (key, where its data lies, its state alone when that row also
            // held the data's place and head; `None` for a pointer record in
            // `messages`, as stores from before such rows hold).
            let mut found = Vec::new();
            'queues: for row in queues.range(from.0..)? {
                let queue = row?.0.value();
                let start = if queue == from.0 {
                    low.max(from.1)
                } else {
                    low
                };
                // Every message has a state row, so this walk meets them all.
                for row in states.range((queue, start)..=(queue, high.max(start)))? {
                    let (key, value) = row?;
                    let key = key.value();
                    let here = match codec::state_in_log(value.value())? {
                        Some((at, _)) => Some((at, Some(codec::state_only(value.value())?))),
                        None => match messages.get(key)? {
                            Some(record) => {
                                codec::decode_in_log(record.value())?.map(|at| (at, None))
                            }
                            None => None,
                        },
                    };
                    if let Some((at, state)) = here
                        && at.segment == segment
                    {
                        if found.len() == limit {
                            resume = Some(key);
                            break 'queues;
                        }
                        found.push((key, at, state));
                    }
                }
            }
            let mut tally = SegmentTally::default();
            for (key, at, state) in found {
                let data = self
                    .segments
                    .read(at)
                    .map_err(|e| StoreError::Log(e.to_string()))?
                    .ok_or(CorruptRecord("message data missing from the log"))?;
                messages.insert(key, data.as_slice())?;
                if let Some(state) = state {
                    heads.insert(key, codec::head_prefix(&data)?)?;
                    states.insert(key, state.as_slice())?;
                }
                tally.taken(at);
            }
            tally.write(&mut table)?;
        }
        txn.commit()?;
        Ok(resume)
    }
}

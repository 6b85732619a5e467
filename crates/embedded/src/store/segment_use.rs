//! The `segments` table: its rows' codec and the tally a transaction
//! keeps of the segments' use.

use std::collections::BTreeMap;

use redb::ReadableTable;

use super::error::StoreError;
use crate::codec::{self, CorruptRecord};
use crate::wal::BodyAt;

/// What one log segment holds for the store: see [`SEGMENTS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentUse {
    /// Messages whose data lies in it.
    pub messages: u64,
    /// Their data's bytes.
    pub bytes: u64,
    /// The lowest and highest of their sequences (bounds: deletes do not
    /// narrow them).
    pub seqs: (u64, u64),
}

impl SegmentUse {
    pub(super) fn encode(&self) -> [u8; 32] {
        let mut out = [0u8; 32];
        for (i, v) in [self.messages, self.bytes, self.seqs.0, self.seqs.1]
            .into_iter()
            .enumerate()
        {
            out[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes());
        }
        out
    }

    pub(super) fn decode(bytes: &[u8]) -> Result<Self, CorruptRecord> {
        let v = |i: usize| -> Result<u64, CorruptRecord> {
            let b = bytes
                .get(i * 8..i * 8 + 8)
                .ok_or(CorruptRecord("segment entry"))?;
            Ok(u64::from_le_bytes(
                b.try_into().map_err(|_| CorruptRecord("segment entry"))?,
            ))
        };
        Ok(Self {
            messages: v(0)?,
            bytes: v(1)?,
            seqs: (v(2)?, v(3)?),
        })
    }
}

/// The changes one transaction makes to segments' use, written to
/// [`SEGMENTS`] once at its end.
#[derive(Default)]
pub(super) struct SegmentTally(BTreeMap<u64, (i64, i64, u64, u64)>);

impl SegmentTally {
    pub(super) fn put(&mut self, at: BodyAt, seq: u64) {
        let e = self.0.entry(at.segment).or_insert((0, 0, u64::MAX, 0));
        e.0 += 1;
        e.1 += i64::from(at.len);
        e.2 = e.2.min(seq);
        e.3 = e.3.max(seq);
    }

    /// A message record leaves the store: counts it out of its segment if
    /// it points into one.
    pub(super) fn removed(&mut self, record: &[u8]) {
        if let Ok(Some(at)) = codec::decode_in_log(record) {
            self.taken(at);
        }
    }

    /// A state row leaves the store: counts its message out of its
    /// segment if the row holds where its data lies.
    pub(super) fn removed_state(&mut self, row: &[u8]) {
        if let Ok(Some((at, _))) = codec::state_in_log(row) {
            self.taken(at);
        }
    }

    /// The data at `at` no longer lies in its segment for the store.
    pub(super) fn taken(&mut self, at: BodyAt) {
        let e = self.0.entry(at.segment).or_insert((0, 0, u64::MAX, 0));
        e.0 -= 1;
        e.1 -= i64::from(at.len);
    }

    pub(super) fn write(self, table: &mut redb::Table<u64, &[u8]>) -> Result<(), StoreError> {
        for (segment, (messages, bytes, low, high)) in self.0 {
            let old = match table.get(segment)? {
                Some(v) => SegmentUse::decode(v.value())?,
                None => SegmentUse {
                    messages: 0,
                    bytes: 0,
                    seqs: (u64::MAX, 0),
                },
            };
            let messages = old.messages.saturating_add_signed(messages);
            if messages == 0 {
                table.remove(segment)?;
                continue;
            }
            let now = SegmentUse {
                messages,
                bytes: old.bytes.saturating_add_signed(bytes),
                seqs: (old.seqs.0.min(low), old.seqs.1.max(high)),
            };
            table.insert(segment, now.encode().as_slice())?;
        }
        Ok(())
    }
}

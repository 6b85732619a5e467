//! Reading messages' data for receives, peeks and redrives.

use redb::ReadableDatabase;

use super::database::Store;
use super::error::StoreError;
use super::heads::record_data;
use super::tables::{MESSAGES, STATES};
use crate::codec;
use crate::message::MessageData;
use crate::wal::BodyAt;

impl Store {
    /// A message record's data, read from the log when it lies there;
    /// `None` when its segment is gone (the message was deleted meanwhile).
    fn decode_record(&self, record: &[u8]) -> Result<Option<MessageData>, StoreError> {
        match record_data(&self.segments, record)? {
            Some(data) => Ok(Some(codec::decode_message(&data, &self.keys)?)),
            None => Ok(None),
        }
    }

    /// Reads the data of some of a queue's messages in one read
    /// transaction; `None` for a message no longer (or not yet) stored.
    pub fn read_messages(
        &self,
        queue: u64,
        seqs: &[u64],
    ) -> Result<Vec<Option<MessageData>>, StoreError> {
        let txn = self.db.begin_read()?;
        let messages = txn.open_table(MESSAGES)?;
        let states = txn.open_table(STATES)?;
        let (Some(&low), Some(&high)) = (seqs.iter().min(), seqs.iter().max()) else {
            return Ok(Vec::new());
        };
        let mut out: Vec<Option<MessageData>> = seqs.iter().map(|_| None).collect();
        // Positions in `seqs` whose data lies in the log, and where; and
        // those whose state row does not say where the data is: their
        // data, if any, is in `messages`.
        let (mut in_log, mut elsewhere) = (Vec::new(), Vec::new());
        let mut found = |i: usize, row: &[u8]| -> Result<(), StoreError> {
            match codec::state_in_log(row)? {
                Some((at, _)) => in_log.push((i, at)),
                None => elsewhere.push(i),
            }
            Ok(())
        };
        if high - low > 2 * seqs.len() as u64 + 16 {
            for (i, &seq) in seqs.iter().enumerate() {
                if let Some(row) = states.get((queue, seq))? {
                    found(i, row.value())?;
                }
            }
        } else {
            // Close together, as the oldest messages a receive takes are:
            // one walk along the leaves instead of a descent from the root
            // for each (with millions of messages, through pages mostly not
            // cached).
            let mut order: Vec<usize> = (0..seqs.len()).collect();
            order.sort_by_key(|&i| seqs[i]);
            let mut wanted = order.iter().peekable();
            for row in states.range((queue, low)..=(queue, high))? {
                let (key, value) = row?;
                let seq = key.value().1;
                while wanted.next_if(|&&i| seqs[i] < seq).is_some() {}
                while let Some(&i) = wanted.next_if(|&&i| seqs[i] == seq) {
                    found(i, value.value())?;
                }
                if wanted.peek().is_none() {
                    break;
                }
            }
        }
        // A segment is gone once its messages were deleted meanwhile.
        let ats: Vec<BodyAt> = in_log.iter().map(|&(_, at)| at).collect();
        self.segments.read_many(&ats, |k, data| {
            out[in_log[k].0] = Some(codec::decode_message(data, &self.keys)?);
            Ok::<(), StoreError>(())
        })?;
        for i in elsewhere {
            if let Some(record) = messages.get((queue, seqs[i]))? {
                out[i] = self.decode_record(record.value())?;
            }
        }
        Ok(out)
    }
}

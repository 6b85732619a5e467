//! Start-up: every queue read back, and each queue's messages streamed
//! from their heads.

use redb::{ReadableDatabase, ReadableTable};
use sluice_broker::MoveTask;
use sluice_broker::idempotency::IdempotencyRecord;
use sluice_keyring::DataKeyRecord;

use super::database::Store;
use super::error::StoreError;
use super::heads::head_seq;
use super::tables::{
    DATA_KEYS, DEDUP, FAILURES, HEADS, IDEMPOTENCY, MESSAGES, META, NEXT_QUEUE_ID, NEXT_SEQ,
    QUEUES, STATES, TASKS,
};
use crate::change::QueueRecord;
use crate::codec::{self, CorruptRecord};
use crate::dedup::Seen;
use crate::message::MessageState;

/// Everything read back at start-up but the messages, which
/// [`Store::for_each_message`] streams.
#[derive(Debug, Default)]
pub struct Recovered {
    /// Queues with their messages.
    pub queues: Vec<RecoveredQueue>,
    /// First sequence not yet used.
    pub next_seq: u64,
    /// First queue id not yet used.
    pub next_queue_id: u64,
    /// Message move tasks.
    pub tasks: Vec<MoveTask>,
    /// Idempotency records, by key (expired ones too: the sweeper
    /// deletes them).
    pub idempotency: Vec<(String, IdempotencyRecord)>,
}

/// A queue read back at start-up.
#[derive(Debug)]
pub struct RecoveredQueue {
    /// Queue id.
    pub id: u64,
    /// Its record.
    pub record: QueueRecord,
    /// Its FIFO deduplication window.
    pub dedup: Vec<(String, Seen)>,
    /// Failure reasons consumers gave, by sequence.
    pub failures: Vec<(u64, String)>,
}

impl Store {
    /// Every stored data key (encryption at rest), wrapped.
    pub fn data_key_records(&self) -> Result<Vec<DataKeyRecord>, StoreError> {
        let txn = self.db.begin_read()?;
        let mut out = Vec::new();
        for row in txn.open_table(DATA_KEYS)?.iter()? {
            let (_, record) = row?;
            out.push(serde_json::from_slice(record.value())?);
        }
        Ok(out)
    }

    /// Stores `rewrapped` in place of the records of the same ids and
    /// deletes the `shredded` ones, durably, before the log begins: a key
    /// rotation is on disk before the start completes, so the old key can
    /// be retired safely once a start has logged it.
    pub fn update_data_keys(
        &self,
        rewrapped: &[DataKeyRecord],
        shredded: &[u64],
    ) -> Result<(), StoreError> {
        if rewrapped.is_empty() && shredded.is_empty() {
            return Ok(());
        }
        let mut txn = self.db.begin_write()?;
        txn.set_durability(redb::Durability::Immediate)?;
        txn.set_quick_repair(true);
        {
            let mut table = txn.open_table(DATA_KEYS)?;
            for r in rewrapped {
                table.insert(r.id, serde_json::to_vec(r)?.as_slice())?;
            }
            for id in shredded {
                table.remove(*id)?;
            }
        }
        txn.commit()?;
        Ok(())
    }

    /// Reads every queue back, without its messages.
    pub fn load(&self) -> Result<Recovered, StoreError> {
        let txn = self.db.begin_read()?;
        let meta = txn.open_table(META)?;
        let mut out = Recovered {
            next_seq: meta.get(NEXT_SEQ)?.map(|v| v.value()).unwrap_or(1).max(1),
            next_queue_id: meta
                .get(NEXT_QUEUE_ID)?
                .map(|v| v.value())
                .unwrap_or(1)
                .max(1),
            queues: Vec::new(),
            tasks: Vec::new(),
            idempotency: Vec::new(),
        };
        for row in txn.open_table(IDEMPOTENCY)?.iter()? {
            let (key, record) = row?;
            let record = serde_json::from_slice(record.value())?;
            out.idempotency.push((key.value().to_string(), record));
        }
        for row in txn.open_table(TASKS)?.iter()? {
            let (_, record) = row?;
            out.tasks.push(serde_json::from_slice(record.value())?);
        }
        let queues = txn.open_table(QUEUES)?;
        let dedup = txn.open_table(DEDUP)?;
        let failures = txn.open_table(FAILURES)?;
        for row in queues.iter()? {
            let (id, record) = row?;
            let id = id.value();
            let record: QueueRecord = serde_json::from_slice(record.value())?;
            let mut recovered = RecoveredQueue {
                id,
                record,
                dedup: Vec::new(),
                failures: Vec::new(),
            };
            for row in failures.range((id, 0)..=(id, u64::MAX))? {
                let (key, reason) = row?;
                recovered
                    .failures
                    .push((key.value().1, reason.value().to_string()));
            }
            for row in dedup.range((id, "")..(id + 1, ""))? {
                let (key, value) = row?;
                let (_, key) = key.value();
                let seen = Seen::decode(value.value()).ok_or(CorruptRecord("dedup entry"))?;
                recovered.dedup.push((key.to_string(), seen));
            }
            out.queues.push(recovered);
        }
        Ok(out)
    }

    /// Streams one queue's messages in sequence order to `each` as the
    /// index needs them: sequence, start of the retention clock, group,
    /// delivery state and the data key its record is sealed by. Reads the messages' heads, not their records: a
    /// start costs tens of bytes per message whatever the bodies' size.
    /// Returns how many there were.
    pub fn for_each_message(
        &self,
        queue: u64,
        mut each: impl FnMut(u64, u64, Option<&str>, MessageState, Option<u64>),
    ) -> Result<usize, StoreError> {
        let txn = self.db.begin_read()?;
        let messages = txn.open_table(MESSAGES)?;
        let heads = txn.open_table(HEADS)?;
        let states = txn.open_table(STATES)?;
        let range = (queue, 0)..=(queue, u64::MAX);
        // Every message has a state row; `heads` has rows, in the same
        // order, for the messages whose state row does not hold the head.
        let mut head_rows = heads.range(range.clone())?.peekable();
        let mut count = 0;
        for row in states.range(range)? {
            let (key, value) = row?;
            let (_, seq) = key.value();
            let row = value.value();
            let state = codec::decode_state(row)?;
            match codec::state_in_log(row)? {
                Some((_, head)) => {
                    let (enqueued_at, group) = codec::decode_head(head)?;
                    each(seq, enqueued_at, group, state, codec::sealed_by(head)?);
                }
                None => {
                    while head_rows
                        .next_if(|r| head_seq(r).is_some_and(|s| s < seq))
                        .is_some()
                    {}
                    match head_rows.next_if(|r| head_seq(r) == Some(seq)) {
                        Some(head) => {
                            let (_, head) = head?;
                            let head = head.value();
                            let (enqueued_at, group) = codec::decode_head(head)?;
                            each(seq, enqueued_at, group, state, codec::sealed_by(head)?);
                        }
                        None => {
                            if let Some(Err(_)) = head_rows.peek() {
                                head_rows.next().transpose()?;
                            }
                            if messages.get(key.value())?.is_some() {
                                return Err(CorruptRecord("message without head").into());
                            }
                            // A state row without a message, which stores
                            // from before a state was written only for a
                            // stored message may hold: nothing to index.
                            continue;
                        }
                    }
                }
            }
            count += 1;
        }
        Ok(count)
    }
}

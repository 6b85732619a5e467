//! The byte layout of the changes one log record holds.
//!
//! A record is the changes of one group commit, as the store applied them:
//! a move of a message whose body was on disk is written as the delete and
//! the put it became, so replaying a record never depends on what the store
//! held when it was first applied.

use crate::change::Change;
use crate::codec::CorruptRecord;
use crate::wal::BodyAt;

const PUT_QUEUE: u8 = 1;
const DELETE_QUEUE: u8 = 2;
const PUT_MESSAGE: u8 = 3;
const PUT_STATE: u8 = 4;
const DELETE_MESSAGE: u8 = 5;
const PUT_DEDUP: u8 = 6;
const DELETE_DEDUP: u8 = 7;
const PUT_FAILURE: u8 = 8;
const PUT_TASK: u8 = 9;
const PURGE: u8 = 10;
const PUT_DATA_KEY: u8 = 11;
const DELETE_DATA_KEY: u8 = 12;
const PUT_IDEMPOTENCY: u8 = 13;
const DELETE_IDEMPOTENCY: u8 = 14;

/// Appends `change` to `out`. A [`Change::MoveMessage`] has no layout:
/// the store writes what it resolved to instead (see [`put_message`]).
/// For a put of a message, returns where its data starts in `out`.
pub fn encode(change: &Change, out: &mut Vec<u8>) -> Option<usize> {
    match change {
        Change::PutQueue { id, record } => {
            out.push(PUT_QUEUE);
            u64s(out, &[*id]);
            bytes(out, record);
        }
        Change::DeleteQueue { id } => {
            out.push(DELETE_QUEUE);
            u64s(out, &[*id]);
        }
        Change::PutMessage {
            queue,
            seq,
            data,
            state,
            ..
        } => return Some(put_message(out, (*queue, *seq), data, state)),
        Change::PutState { queue, seq, state } => {
            out.push(PUT_STATE);
            u64s(out, &[*queue, *seq]);
            out.extend_from_slice(state);
        }
        Change::DeleteMessage { queue, seq } => delete_message(out, (*queue, *seq)),
        Change::PutDedup { queue, key, seen } => {
            out.push(PUT_DEDUP);
            u64s(out, &[*queue]);
            bytes(out, key.as_bytes());
            out.extend_from_slice(seen);
        }
        Change::DeleteDedup { queue, key } => {
            out.push(DELETE_DEDUP);
            u64s(out, &[*queue]);
            bytes(out, key.as_bytes());
        }
        Change::PutFailure { queue, seq, reason } => {
            out.push(PUT_FAILURE);
            u64s(out, &[*queue, *seq]);
            bytes(out, reason.as_bytes());
        }
        Change::PutTask { handle, record } => {
            out.push(PUT_TASK);
            bytes(out, handle.as_bytes());
            bytes(out, record);
        }
        Change::MoveMessage { .. } => {
            // Store::apply never hands a move here; writing nothing would
            // lose it silently, so make a debug build say so.
            debug_assert!(false, "a move is logged as what it resolved to");
        }
        Change::Purge { queue, below } => {
            out.push(PURGE);
            u64s(out, &[*queue, *below]);
        }
        Change::PutDataKey { id, record } => {
            out.push(PUT_DATA_KEY);
            u64s(out, &[*id]);
            bytes(out, record);
        }
        Change::DeleteDataKey { id } => {
            out.push(DELETE_DATA_KEY);
            u64s(out, &[*id]);
        }
        Change::PutIdempotency { key, record } => {
            out.push(PUT_IDEMPOTENCY);
            bytes(out, key.as_bytes());
            bytes(out, record);
        }
        Change::DeleteIdempotency { key } => {
            out.push(DELETE_IDEMPOTENCY);
            bytes(out, key.as_bytes());
        }
    }
    None
}

/// Appends the put of a message at `at` (queue, sequence); returns where
/// its data starts in `out`.
pub fn put_message(out: &mut Vec<u8>, at: (u64, u64), data: &[u8], state: &[u8]) -> usize {
    out.push(PUT_MESSAGE);
    u64s(out, &[at.0, at.1]);
    bytes(out, data);
    out.extend_from_slice(state);
    out.len() - state.len() - data.len()
}

/// Appends the delete of the message at `at` (queue, sequence).
pub fn delete_message(out: &mut Vec<u8>, at: (u64, u64)) {
    out.push(DELETE_MESSAGE);
    u64s(out, &[at.0, at.1]);
}

/// Decodes every change [`encode`] wrote into `bytes`. With `at`, the
/// segment and file offset `bytes` were read from, each put of a message
/// gets where its data lies there.
pub fn decode(mut bytes: &[u8], at: Option<(u64, u64)>) -> Result<Vec<Change>, CorruptRecord> {
    let total = bytes.len();
    let mut out = Vec::new();
    while let Some((&tag, rest)) = bytes.split_first() {
        let mut r = Reader(rest);
        out.push(match tag {
            PUT_QUEUE => Change::PutQueue {
                id: r.u64()?,
                record: r.bytes()?.to_vec(),
            },
            DELETE_QUEUE => Change::DeleteQueue { id: r.u64()? },
            PUT_MESSAGE => {
                let queue = r.u64()?;
                let seq = r.u64()?;
                let data = r.bytes()?.to_vec();
                let in_log = at.map(|(segment, base)| BodyAt {
                    segment,
                    offset: base + (total - r.0.len() - data.len()) as u64,
                    len: data.len() as u32,
                });
                Change::PutMessage {
                    queue,
                    seq,
                    data,
                    state: r.array()?,
                    in_log,
                }
            }
            PUT_STATE => Change::PutState {
                queue: r.u64()?,
                seq: r.u64()?,
                state: r.array()?,
            },
            DELETE_MESSAGE => Change::DeleteMessage {
                queue: r.u64()?,
                seq: r.u64()?,
            },
            PUT_DEDUP => Change::PutDedup {
                queue: r.u64()?,
                key: r.string()?,
                seen: r.array()?,
            },
            DELETE_DEDUP => Change::DeleteDedup {
                queue: r.u64()?,
                key: r.string()?,
            },
            PUT_FAILURE => Change::PutFailure {
                queue: r.u64()?,
                seq: r.u64()?,
                reason: r.string()?,
            },
            PUT_TASK => Change::PutTask {
                handle: r.string()?,
                record: r.bytes()?.to_vec(),
            },
            PURGE => Change::Purge {
                queue: r.u64()?,
                below: r.u64()?,
            },
            PUT_DATA_KEY => Change::PutDataKey {
                id: r.u64()?,
                record: r.bytes()?.to_vec(),
            },
            DELETE_DATA_KEY => Change::DeleteDataKey { id: r.u64()? },
            PUT_IDEMPOTENCY => Change::PutIdempotency {
                key: r.string()?,
                record: r.bytes()?.to_vec(),
            },
            DELETE_IDEMPOTENCY => Change::DeleteIdempotency { key: r.string()? },

            _ => return Err(CorruptRecord("log change tag")),
        });
        bytes = r.0;
    }
    Ok(out)
}

fn u64s(out: &mut Vec<u8>, values: &[u64]) {
    for v in values {
        out.extend_from_slice(&v.to_le_bytes());
    }
}

fn bytes(out: &mut Vec<u8>, b: &[u8]) {
    // Records are bounded well below 4 GiB by the request size limits.
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b);
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], CorruptRecord> {
        if self.0.len() < n {
            return Err(CorruptRecord("log change truncated"));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], CorruptRecord> {
        self.take(N)?
            .try_into()
            .map_err(|_| CorruptRecord("log change truncated"))
    }

    fn u64(&mut self) -> Result<u64, CorruptRecord> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    fn bytes(&mut self) -> Result<&'a [u8], CorruptRecord> {
        let n = u32::from_le_bytes(self.array()?) as usize;
        self.take(n)
    }

    fn string(&mut self) -> Result<String, CorruptRecord> {
        let b = self.bytes()?;
        String::from_utf8(b.to_vec()).map_err(|_| CorruptRecord("log change utf-8"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec;

    #[test]
    fn every_change_round_trips() {
        let changes = vec![
            Change::PutQueue {
                id: 3,
                record: b"{}".to_vec(),
            },
            Change::DeleteQueue { id: 4 },
            Change::PutMessage {
                queue: 3,
                seq: 9,
                data: vec![1, 2, 3],
                state: [7; codec::STATE_LEN],
                in_log: None,
            },
            Change::PutState {
                queue: 3,
                seq: 9,
                state: [8; codec::STATE_LEN],
            },
            Change::DeleteMessage { queue: 3, seq: 10 },
            Change::PutDedup {
                queue: 3,
                key: "k".into(),
                seen: [5; 32],
            },
            Change::DeleteDedup {
                queue: 3,
                key: "k".into(),
            },
            Change::PutFailure {
                queue: 3,
                seq: 9,
                reason: "boom".into(),
            },
            Change::PutTask {
                handle: "h".into(),
                record: b"[]".to_vec(),
            },
            Change::Purge { queue: 3, below: 8 },
            Change::PutDataKey {
                id: 12,
                record: b"{}".to_vec(),
            },
            Change::DeleteDataKey { id: 12 },
            Change::PutIdempotency {
                key: "000000000000/order-7".into(),
                record: b"{}".to_vec(),
            },
            Change::DeleteIdempotency {
                key: "000000000000/order-7".into(),
            },
        ];
        let mut out = Vec::new();
        for c in &changes {
            encode(c, &mut out);
        }
        let back = decode(&out, None).unwrap();
        assert_eq!(format!("{changes:?}"), format!("{back:?}"));
        assert!(decode(&out[..out.len() - 1], None).is_err());
    }

    /// A put's data is found where encoding said it starts, and decoding
    /// from a file position points each put at its data there: what redb
    /// keeps instead of the data (D1 relies on both agreeing).
    #[test]
    fn d1_puts_point_at_their_data_in_the_record() {
        let put = |seq: u64, data: &[u8]| Change::PutMessage {
            queue: 2,
            seq,
            data: data.to_vec(),
            state: [1; codec::STATE_LEN],
            in_log: None,
        };
        let changes = [
            Change::DeleteQueue { id: 9 },
            put(5, b"first body"),
            Change::DeleteMessage { queue: 2, seq: 4 },
            put(6, b"second, longer body"),
        ];
        let mut out = Vec::new();
        let starts: Vec<Option<usize>> = changes.iter().map(|c| encode(c, &mut out)).collect();
        let start = |i: usize| starts[i].unwrap();
        assert_eq!(starts[0], None);
        assert_eq!(&out[start(1)..start(1) + 10], b"first body");
        assert_eq!(&out[start(3)..start(3) + 19], b"second, longer body");
        let back = decode(&out, Some((7, 1000))).unwrap();
        let located: Vec<BodyAt> = back
            .iter()
            .filter_map(|c| match c {
                Change::PutMessage { in_log, .. } => *in_log,
                _ => None,
            })
            .collect();
        assert_eq!(
            located,
            [
                BodyAt {
                    segment: 7,
                    offset: 1000 + start(1) as u64,
                    len: 10
                },
                BodyAt {
                    segment: 7,
                    offset: 1000 + start(3) as u64,
                    len: 19
                },
            ]
        );
    }
}

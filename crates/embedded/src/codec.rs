//! The byte layout of durable message and state records.
//!
//! Hand-written rather than serde-derived because it sits on the hot path of
//! every send and receive, and because a fixed layout is easy to keep
//! readable across versions: every record starts with a version byte.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use sluice_core::message::{AttributeValue, MessageAttributeValue, MessageAttributes};
use sluice_keyring::{DataKeys, Sealer, envelope};

use crate::message::{MessageData, MessageState};
use crate::wal::BodyAt;

/// Version of the message record; version 1 lacked the body's MD5, which
/// receives of a body read back from disk then had to compute again.
const VERSION: u8 = 2;

/// Version of a sealed message record (encryption at rest): the head as
/// version 2 writes it with the id of the data key after the times, then
/// the rest of the record sealed by that key, bound to the head. The head
/// stays clear because a start reads it for every message without any key.
const SEALED: u8 = 3;

/// A record that could not be decoded.
#[derive(Debug, thiserror::Error)]
#[error("corrupt record: {0}")]
pub struct CorruptRecord(pub &'static str);

/// Encodes a message's immutable part, sealed by `seal` when given.
pub fn encode_message(m: &MessageData, seal: Option<&Sealer>) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + m.body.len() + envelope::OVERHEAD);
    out.push(if seal.is_some() { SEALED } else { VERSION });
    out.extend_from_slice(&m.message_id);
    out.extend_from_slice(&m.sent_at.to_be_bytes());
    out.extend_from_slice(&m.enqueued_at.to_be_bytes());
    let Some(seal) = seal else {
        put_opt(&mut out, m.group_id.as_deref());
        put_rest(&mut out, m);
        return out;
    };
    out.extend_from_slice(&seal.id.to_be_bytes());
    put_opt(&mut out, m.group_id.as_deref());
    let mut rest = Vec::with_capacity(32 + m.body.len());
    put_rest(&mut rest, m);
    let head = out.clone();
    seal.key.seal_into(&head, &rest, &mut out);
    out
}

/// What follows the group in a record: the part a sealed record seals.
fn put_rest(out: &mut Vec<u8>, m: &MessageData) {
    put_opt(out, m.dedup_id.as_deref());
    put_bytes(out, m.body.as_bytes());
    put_attrs(out, &m.attributes);
    put_attrs(out, &m.system_attributes);
    match &m.body_md5 {
        Some(md5) => {
            out.push(1);
            out.extend_from_slice(md5);
        }
        None => out.push(0),
    }
}

/// Decodes what [`encode_message`] wrote, opening a sealed record with its
/// data key from `keys`.
pub fn decode_message(bytes: &[u8], keys: &DataKeys) -> Result<MessageData, CorruptRecord> {
    let mut r = Reader(bytes);
    let version = r.u8()?;
    if version != 1 && version != VERSION && version != SEALED {
        return Err(CorruptRecord("message version"));
    }
    let message_id: [u8; 16] = r.take(16)?.try_into().map_err(|_| CorruptRecord("id"))?;
    let sent_at = r.u64()?;
    let enqueued_at = r.u64()?;
    let key_id = if version == SEALED {
        Some(r.u64()?)
    } else {
        None
    };
    let group_id = r.opt_string()?;
    let opened;
    if let Some(id) = key_id {
        let key = keys
            .get(id)
            .ok_or(CorruptRecord("sealed by a data key no longer kept"))?;
        let head = &bytes[..bytes.len() - r.0.len()];
        opened = key
            .open(head, r.0)
            .map_err(|_| CorruptRecord("sealed data does not open"))?;
        r = Reader(&opened);
    }
    let dedup_id = r.opt_string()?;
    let body = r.string()?;
    let attributes = r.attrs()?;
    let system_attributes = r.attrs()?;
    let body_md5 = match version {
        1 => None,
        _ => match r.u8()? {
            0 => None,
            1 => Some(r.take(16)?.try_into().map_err(|_| CorruptRecord("md5"))?),
            _ => return Err(CorruptRecord("md5 tag")),
        },
    };
    Ok(MessageData {
        message_id,
        sent_at,
        enqueued_at,
        body,
        attributes,
        system_attributes,
        group_id,
        dedup_id,
        body_md5,
    })
}

/// The data key a record is sealed by, `None` for a clear record.
pub fn sealed_by(bytes: &[u8]) -> Result<Option<u64>, CorruptRecord> {
    let mut r = Reader(bytes);
    if r.u8()? != SEALED {
        return Ok(None);
    }
    r.take(16 + 8 + 8)?;
    Ok(Some(r.u64()?))
}

/// Marks a stored failure reason that is sealed (then base64 of its data
/// key's id and the sealed text follows) or a clear one that begins with
/// NUL itself (then the reason follows): any other text is a clear reason.
const REASON_SEALED: &str = "\u{0}S";
const REASON_ESCAPED: &str = "\u{0}C";

/// A consumer's failure reason as stored: sealed by `seal` when given.
pub fn seal_reason(reason: &str, seal: Option<&Sealer>) -> String {
    match seal {
        Some(seal) => {
            let mut bytes = seal.id.to_be_bytes().to_vec();
            seal.key
                .seal_into(b"failure reason", reason.as_bytes(), &mut bytes);
            format!("{REASON_SEALED}{}", BASE64.encode(bytes))
        }
        None if reason.starts_with('\u{0}') => format!("{REASON_ESCAPED}{reason}"),
        None => reason.to_string(),
    }
}

/// The reason [`seal_reason`] stored; `None` when it is sealed by a data
/// key no longer kept, or corrupt.
pub fn open_reason(stored: &str, keys: &DataKeys) -> Option<String> {
    if let Some(clear) = stored.strip_prefix(REASON_ESCAPED) {
        return Some(clear.to_string());
    }
    let Some(sealed) = stored.strip_prefix(REASON_SEALED) else {
        return Some(stored.to_string());
    };
    let bytes = BASE64.decode(sealed).ok()?;
    let (id, sealed) = bytes.split_at_checked(8)?;
    let key = keys.get(u64::from_be_bytes(id.try_into().ok()?))?;
    String::from_utf8(key.open(b"failure reason", sealed).ok()?).ok()
}

/// What recovery needs of a message record, read without copying its body:
/// the start of its retention clock and its group.
pub fn decode_head(bytes: &[u8]) -> Result<(u64, Option<&str>), CorruptRecord> {
    read_head(&mut Reader(bytes))
}

/// The head of a message record: its bytes up to and including the group,
/// all that recovery needs, which [`decode_head`] reads as it reads a
/// whole record.
pub fn head_prefix(bytes: &[u8]) -> Result<&[u8], CorruptRecord> {
    let mut r = Reader(bytes);
    read_head(&mut r)?;
    Ok(&bytes[..bytes.len() - r.0.len()])
}

/// Reads a message record up to its group, leaving `r` just after it.
fn read_head<'a>(r: &mut Reader<'a>) -> Result<(u64, Option<&'a str>), CorruptRecord> {
    let version = r.u8()?;
    if version != 1 && version != VERSION && version != SEALED {
        return Err(CorruptRecord("message version"));
    }
    r.take(16 + 8)?;
    let enqueued_at = r.u64()?;
    if version == SEALED {
        r.take(8)?;
    }
    let group = match r.u8()? {
        0 => None,
        1 => {
            let n = r.u32()? as usize;
            Some(std::str::from_utf8(r.take(n)?).map_err(|_| CorruptRecord("utf-8"))?)
        }
        _ => return Err(CorruptRecord("option tag")),
    };
    Ok((enqueued_at, group))
}

/// First byte of a message record that holds where the message's data
/// lies in the write-ahead log instead of the data (see [`crate::wal`]).
const IN_LOG: u8 = 0x80;

/// Length of an encoded [`BodyAt`] record.
pub const IN_LOG_LEN: usize = 21;

/// Encodes a message record that points at its data in the log. Stores
/// since keep that place in the message's state row instead
/// ([`encode_state_in_log`]) and only read these; tests write them to
/// stand for an earlier store.
#[cfg(test)]
pub fn encode_in_log(at: BodyAt) -> [u8; IN_LOG_LEN] {
    let mut out = [0u8; IN_LOG_LEN];
    out[0] = IN_LOG;
    out[1..9].copy_from_slice(&at.segment.to_be_bytes());
    out[9..17].copy_from_slice(&at.offset.to_be_bytes());
    out[17..21].copy_from_slice(&at.len.to_be_bytes());
    out
}

/// Where a message record written by [`encode_in_log`] points; `None` for
/// a record holding the data itself.
pub fn decode_in_log(bytes: &[u8]) -> Result<Option<BodyAt>, CorruptRecord> {
    if bytes.first() != Some(&IN_LOG) {
        return Ok(None);
    }
    let mut r = Reader(&bytes[1..]);
    Ok(Some(BodyAt {
        segment: r.u64()?,
        offset: r.u64()?,
        len: r.u32()?,
    }))
}

/// Version of the state record; version 1 lacked the last receive time.
const STATE_VERSION: u8 = 2;

/// Length of an encoded state record.
pub const STATE_LEN: usize = 29;

/// Encodes a message's mutable delivery state.
pub fn encode_state(s: &MessageState) -> [u8; STATE_LEN] {
    let mut out = [0u8; STATE_LEN];
    out[0] = STATE_VERSION;
    out[1..9].copy_from_slice(&s.visible_at.to_be_bytes());
    out[9..13].copy_from_slice(&s.receive_count.to_be_bytes());
    out[13..21].copy_from_slice(&s.first_receive_at.to_be_bytes());
    out[21..29].copy_from_slice(&s.last_receive_at.to_be_bytes());
    out
}

/// Version of a state record followed by where the message's data lies
/// in the log and the message's head: the one row a message sent to the
/// log has in redb (see the store's `states` table).
const STATE_IN_LOG: u8 = 3;

/// Encodes a message's row in the store when its data lies in the log:
/// its encoded `state`, then `at`, then `head` ([`head_prefix`]).
pub fn encode_state_in_log(state: &[u8; STATE_LEN], at: BodyAt, head: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(STATE_LEN + IN_LOG_LEN - 1 + head.len());
    out.extend_from_slice(state);
    out[0] = STATE_IN_LOG;
    out.extend_from_slice(&at.segment.to_be_bytes());
    out.extend_from_slice(&at.offset.to_be_bytes());
    out.extend_from_slice(&at.len.to_be_bytes());
    out.extend_from_slice(head);
    out
}

/// Where the data of a message lies in the log, and its head, when its
/// state `row` was written by [`encode_state_in_log`]; `None` for a state
/// alone (the data is then in the store's `messages` table).
pub fn state_in_log(row: &[u8]) -> Result<Option<(BodyAt, &[u8])>, CorruptRecord> {
    if row.first() != Some(&STATE_IN_LOG) {
        return Ok(None);
    }
    let mut r = Reader(row.get(STATE_LEN..).ok_or(CorruptRecord("state row"))?);
    let at = BodyAt {
        segment: r.u64()?,
        offset: r.u64()?,
        len: r.u32()?,
    };
    Ok(Some((at, r.0)))
}

/// The row `row` with its state replaced by `state`, keeping what follows
/// the state.
pub fn restate(row: &[u8], state: &[u8; STATE_LEN]) -> Vec<u8> {
    let mut out = row.to_vec();
    if let Some(first) = out.get_mut(..STATE_LEN) {
        first[1..].copy_from_slice(&state[1..]);
    }
    out
}

/// The state alone of a row written by [`encode_state_in_log`], as
/// [`encode_state`] writes it.
pub fn state_only(row: &[u8]) -> Result<[u8; STATE_LEN], CorruptRecord> {
    let mut out: [u8; STATE_LEN] = row
        .get(..STATE_LEN)
        .and_then(|s| s.try_into().ok())
        .ok_or(CorruptRecord("state row"))?;
    out[0] = STATE_VERSION;
    Ok(out)
}

/// Decodes what [`encode_state`] wrote, or the state at the start of what
/// [`encode_state_in_log`] wrote.
pub fn decode_state(bytes: &[u8]) -> Result<MessageState, CorruptRecord> {
    let mut r = Reader(bytes);
    let version = r.u8()?;
    if version != 1 && version != STATE_VERSION && version != STATE_IN_LOG {
        return Err(CorruptRecord("state version"));
    }
    let visible_at = r.u64()?;
    let receive_count = r.u32()?;
    let first_receive_at = r.u64()?;
    let last_receive_at = if version == 1 {
        first_receive_at
    } else {
        r.u64()?
    };
    Ok(MessageState {
        visible_at,
        receive_count,
        first_receive_at,
        last_receive_at,
    })
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u32).to_be_bytes());
    out.extend_from_slice(b);
}

fn put_opt(out: &mut Vec<u8>, s: Option<&str>) {
    match s {
        Some(s) => {
            out.push(1);
            put_bytes(out, s.as_bytes());
        }
        None => out.push(0),
    }
}

fn put_attrs(out: &mut Vec<u8>, attrs: &MessageAttributes) {
    out.extend_from_slice(&(attrs.len() as u16).to_be_bytes());
    for (name, v) in attrs {
        put_bytes(out, name.as_bytes());
        put_bytes(out, v.data_type.as_bytes());
        match &v.value {
            AttributeValue::String(s) => {
                out.push(1);
                put_bytes(out, s.as_bytes());
            }
            AttributeValue::Binary(b) => {
                out.push(2);
                put_bytes(out, b);
            }
        }
    }
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], CorruptRecord> {
        if self.0.len() < n {
            return Err(CorruptRecord("truncated"));
        }
        let (head, tail) = self.0.split_at(n);
        self.0 = tail;
        Ok(head)
    }
    fn u8(&mut self) -> Result<u8, CorruptRecord> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, CorruptRecord> {
        Ok(u16::from_be_bytes(
            self.take(2)?.try_into().map_err(|_| CorruptRecord("u16"))?,
        ))
    }
    fn u32(&mut self) -> Result<u32, CorruptRecord> {
        Ok(u32::from_be_bytes(
            self.take(4)?.try_into().map_err(|_| CorruptRecord("u32"))?,
        ))
    }
    fn u64(&mut self) -> Result<u64, CorruptRecord> {
        Ok(u64::from_be_bytes(
            self.take(8)?.try_into().map_err(|_| CorruptRecord("u64"))?,
        ))
    }
    fn bytes(&mut self) -> Result<Vec<u8>, CorruptRecord> {
        let n = self.u32()? as usize;
        Ok(self.take(n)?.to_vec())
    }
    fn string(&mut self) -> Result<String, CorruptRecord> {
        String::from_utf8(self.bytes()?).map_err(|_| CorruptRecord("utf-8"))
    }
    fn opt_string(&mut self) -> Result<Option<String>, CorruptRecord> {
        match self.u8()? {
            0 => Ok(None),
            1 => Ok(Some(self.string()?)),
            _ => Err(CorruptRecord("option tag")),
        }
    }
    fn attrs(&mut self) -> Result<MessageAttributes, CorruptRecord> {
        let n = self.u16()?;
        let mut attrs = MessageAttributes::new();
        for _ in 0..n {
            let name = self.string()?;
            let data_type = self.string()?;
            let value = match self.u8()? {
                1 => AttributeValue::String(self.string()?),
                2 => AttributeValue::Binary(self.bytes()?),
                _ => return Err(CorruptRecord("attribute kind")),
            };
            attrs.insert(name, MessageAttributeValue { data_type, value });
        }
        Ok(attrs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_and_state_round_trip() {
        let mut attributes = MessageAttributes::new();
        attributes.insert(
            "b".into(),
            MessageAttributeValue {
                data_type: "Binary.x".into(),
                value: AttributeValue::Binary(vec![0, 255, 7]),
            },
        );
        attributes.insert(
            "s".into(),
            MessageAttributeValue {
                data_type: "String".into(),
                value: AttributeValue::String("ü".into()),
            },
        );
        let m = MessageData {
            message_id: [9; 16],
            sent_at: 1,
            enqueued_at: 2,
            body: "hello 😀".into(),
            attributes,
            system_attributes: MessageAttributes::new(),
            group_id: Some("g".into()),
            dedup_id: None,
            body_md5: None,
        };
        let bytes = encode_message(&m, None);
        assert_eq!(decode_message(&bytes, &no_keys()).unwrap(), m);
        assert_eq!(decode_head(&bytes).unwrap(), (2, Some("g")));
        let ungrouped = encode_message(
            &MessageData {
                group_id: None,
                ..m.clone()
            },
            None,
        );
        assert_eq!(decode_head(&ungrouped).unwrap(), (2, None));
        // The head alone reads the same, and stops before the body.
        let head = head_prefix(&bytes).unwrap();
        assert_eq!(decode_head(head).unwrap(), (2, Some("g")));
        assert_eq!(head.len(), 1 + 16 + 8 + 8 + 1 + 4 + 1);
        let head = head_prefix(&ungrouped).unwrap();
        assert_eq!(decode_head(head).unwrap(), (2, None));
        assert_eq!(head.len(), 1 + 16 + 8 + 8 + 1);
        assert!(head_prefix(&bytes[..30]).is_err());
        assert!(decode_message(&bytes[..bytes.len() - 1], &no_keys()).is_err());
        let s = MessageState {
            visible_at: 77,
            receive_count: 3,
            first_receive_at: 5,
            last_receive_at: 9,
        };
        assert_eq!(decode_state(&encode_state(&s)).unwrap(), s);
    }

    /// A message whose data lies in the log has one row in the store: its
    /// state, its data's place and its head, each read back exactly, and
    /// its state replaced without touching the rest.
    #[test]
    fn a_state_row_holds_the_data_s_place_and_the_head() {
        let s = MessageState {
            visible_at: 77,
            receive_count: 3,
            first_receive_at: 5,
            last_receive_at: 9,
        };
        let at = BodyAt {
            segment: 7,
            offset: 1 << 40,
            len: 1234,
        };
        let head = [1u8, 2, 3, 4, 5];
        let row = encode_state_in_log(&encode_state(&s), at, &head);
        assert_eq!(decode_state(&row).unwrap(), s);
        assert_eq!(state_in_log(&row).unwrap(), Some((at, &head[..])));
        assert_eq!(state_only(&row).unwrap(), encode_state(&s));
        assert_eq!(state_in_log(&encode_state(&s)).unwrap(), None);
        assert!(state_in_log(&row[..STATE_LEN + 10]).is_err());

        let later = MessageState {
            visible_at: 100,
            receive_count: 4,
            first_receive_at: 5,
            last_receive_at: 99,
        };
        let row = restate(&row, &encode_state(&later));
        assert_eq!(decode_state(&row).unwrap(), later);
        assert_eq!(state_in_log(&row).unwrap(), Some((at, &head[..])));
    }

    fn no_keys() -> DataKeys {
        DataKeys::new(None)
    }

    /// A sealed record keeps its head readable without a key (a start
    /// reads only heads) and nothing else: the body, attributes and
    /// deduplication id open only with the data key named in the head,
    /// and a changed head no longer opens.
    #[test]
    fn a_sealed_record_hides_all_but_its_head() {
        use sluice_keyring::{Keyring, QueueSse};
        let ring = Keyring::from_base64("test", "k", &format!("{}=", "A".repeat(43))).unwrap();
        let keys = DataKeys::new(Some(std::sync::Arc::new(ring)));
        let sse = QueueSse {
            sse_sqs: true,
            kms_key_id: None,
            reuse_seconds: 300,
        };
        let seal = keys.sealer(1, sse, 0, |_| Ok(())).unwrap().unwrap();
        let m = MessageData {
            message_id: [4; 16],
            sent_at: 10,
            enqueued_at: 11,
            body: "the secret body".into(),
            attributes: MessageAttributes::new(),
            system_attributes: MessageAttributes::new(),
            group_id: Some("g".into()),
            dedup_id: Some("dedup-secret".into()),
            body_md5: Some([7; 16]),
        };
        let bytes = encode_message(&m, Some(&seal));
        for secret in [&b"the secret body"[..], b"dedup-secret"] {
            assert!(!bytes.windows(secret.len()).any(|w| w == secret));
        }
        assert_eq!(decode_message(&bytes, &keys).unwrap(), m);
        assert_eq!(sealed_by(&bytes).unwrap(), Some(seal.id));
        assert_eq!(sealed_by(&encode_message(&m, None)).unwrap(), None);
        assert_eq!(decode_head(&bytes).unwrap(), (11, Some("g")));
        let head = head_prefix(&bytes).unwrap();
        assert_eq!(head.len(), 1 + 16 + 8 + 8 + 8 + 1 + 4 + 1);
        assert!(decode_message(&bytes, &no_keys()).is_err());
        let mut changed = bytes.clone();
        changed[2] ^= 1;
        assert!(decode_message(&changed, &keys).is_err());
    }

    /// E1: a failure reason is stored sealed when its queue's messages
    /// are, and any clear reason reads back as given, even one that looks
    /// like the sealed form's mark.
    #[test]
    fn e1_failure_reasons_are_sealed_and_clear_ones_read_back_as_given() {
        use sluice_keyring::{Keyring, QueueSse};
        let ring = Keyring::from_base64("test", "k", &format!("{}=", "A".repeat(43))).unwrap();
        let keys = DataKeys::new(Some(std::sync::Arc::new(ring)));
        let sse = QueueSse {
            sse_sqs: true,
            kms_key_id: None,
            reuse_seconds: 300,
        };
        let seal = keys.sealer(1, sse, 0, |_| Ok(())).unwrap().unwrap();
        let stored = seal_reason("card 4111 declined", Some(&seal));
        assert!(!stored.contains("4111"));
        assert_eq!(
            open_reason(&stored, &keys).as_deref(),
            Some("card 4111 declined")
        );
        assert_eq!(open_reason(&stored, &no_keys()), None);
        for clear in ["timeout", "", "\u{0}Sfake", "\u{0}Cfake", "\u{0}"] {
            let stored = seal_reason(clear, None);
            assert_eq!(open_reason(&stored, &no_keys()).as_deref(), Some(clear));
        }
    }

    /// The body's MD5 is kept with the message, so a receive of a body
    /// read back from disk does not hash it again; records written before
    /// it was kept (version 1) still read, without it.
    #[test]
    fn the_body_md5_is_kept_and_version_1_records_still_read() {
        let m = MessageData {
            message_id: [3; 16],
            sent_at: 10,
            enqueued_at: 11,
            body: "body".into(),
            attributes: MessageAttributes::new(),
            system_attributes: MessageAttributes::new(),
            group_id: None,
            dedup_id: Some("d".into()),
            body_md5: Some([7; 16]),
        };
        let bytes = encode_message(&m, None);
        assert_eq!(decode_message(&bytes, &no_keys()).unwrap(), m);
        assert!(decode_message(&bytes[..bytes.len() - 1], &no_keys()).is_err());

        // Version 1: the same layout without the MD5 part at the end.
        let mut v1 = encode_message(
            &MessageData {
                body_md5: None,
                ..m.clone()
            },
            None,
        );
        v1.pop();
        v1[0] = 1;
        let read = decode_message(&v1, &no_keys()).unwrap();
        assert_eq!(read.body_md5, None);
        assert_eq!(read.body, "body");
        assert_eq!(decode_head(&v1).unwrap(), (11, None));
    }
}

//! Receipt handles: which delivery of which message a consumer holds.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

const VERSION: u8 = 2;
const LEN: usize = 1 + 8 + 8 + 4 + 8;
/// Handles issued before they carried their receive time: still taken, so
/// that an upgrade does not void the handles consumers hold.
const VERSION_1: u8 = 1;
const LEN_1: usize = 1 + 8 + 8 + 4;

/// The decoded content of a receipt handle.
///
/// `receive` is the message's receive count when this handle was issued, so
/// a handle from an earlier delivery can be told apart from the current one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReceiptHandle {
    /// The engine's id of the queue the message was received from.
    pub queue_id: u64,
    /// The engine's id of the message in that queue.
    pub seq: u64,
    /// The receive count at the delivery that issued this handle.
    pub receive: u32,
    /// When that delivery began (ms since the epoch), which bounds how long
    /// the message may stay invisible under it (rule V26); 0 when not known.
    pub received_at: u64,
}

impl ReceiptHandle {
    /// The opaque string given to clients.
    pub fn encode(&self) -> String {
        let mut buf = [0u8; LEN];
        buf[0] = VERSION;
        buf[1..9].copy_from_slice(&self.queue_id.to_be_bytes());
        buf[9..17].copy_from_slice(&self.seq.to_be_bytes());
        buf[17..21].copy_from_slice(&self.receive.to_be_bytes());
        buf[21..29].copy_from_slice(&self.received_at.to_be_bytes());
        URL_SAFE_NO_PAD.encode(buf)
    }

    /// Parses a handle; `None` when it is not one of ours.
    pub fn decode(s: &str) -> Option<Self> {
        let bytes = URL_SAFE_NO_PAD.decode(s.as_bytes()).ok()?;
        let received_at = match (bytes.first(), bytes.len()) {
            (Some(&VERSION), LEN) => u64::from_be_bytes(bytes[21..29].try_into().ok()?),
            (Some(&VERSION_1), LEN_1) => 0,
            _ => return None,
        };
        Some(Self {
            queue_id: u64::from_be_bytes(bytes[1..9].try_into().ok()?),
            seq: u64::from_be_bytes(bytes[9..17].try_into().ok()?),
            receive: u32::from_be_bytes(bytes[17..21].try_into().ok()?),
            received_at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_rejects_garbage() {
        let h = ReceiptHandle {
            queue_id: 7,
            seq: u64::MAX - 3,
            receive: 42,
            received_at: 1_796_349_853_566,
        };
        assert_eq!(ReceiptHandle::decode(&h.encode()), Some(h));
        assert_eq!(ReceiptHandle::decode(""), None);
        assert_eq!(ReceiptHandle::decode("not a handle"), None);
        assert_eq!(ReceiptHandle::decode(&h.encode()[1..]), None);
    }

    /// A handle issued before handles carried their receive time is still
    /// one of ours, its receive time unknown.
    #[test]
    fn version_1_handles_still_decode() {
        let mut bytes = vec![VERSION_1];
        bytes.extend_from_slice(&7u64.to_be_bytes());
        bytes.extend_from_slice(&3u64.to_be_bytes());
        bytes.extend_from_slice(&2u32.to_be_bytes());
        let old = URL_SAFE_NO_PAD.encode(bytes);
        let expected = ReceiptHandle {
            queue_id: 7,
            seq: 3,
            receive: 2,
            received_at: 0,
        };
        assert_eq!(ReceiptHandle::decode(&old), Some(expected));
    }
}

//! Receipt handles: which delivery of which message a consumer holds.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

const VERSION: u8 = 1;
const LEN: usize = 1 + 8 + 8 + 4;

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
}

impl ReceiptHandle {
    /// The opaque string given to clients.
    pub fn encode(&self) -> String {
        let mut buf = [0u8; LEN];
        buf[0] = VERSION;
        buf[1..9].copy_from_slice(&self.queue_id.to_be_bytes());
        buf[9..17].copy_from_slice(&self.seq.to_be_bytes());
        buf[17..21].copy_from_slice(&self.receive.to_be_bytes());
        URL_SAFE_NO_PAD.encode(buf)
    }

    /// Parses a handle; `None` when it is not one of ours.
    pub fn decode(s: &str) -> Option<Self> {
        let bytes = URL_SAFE_NO_PAD.decode(s.as_bytes()).ok()?;
        if bytes.len() != LEN || bytes[0] != VERSION {
            return None;
        }
        Some(Self {
            queue_id: u64::from_be_bytes(bytes[1..9].try_into().ok()?),
            seq: u64::from_be_bytes(bytes[9..17].try_into().ok()?),
            receive: u32::from_be_bytes(bytes[17..21].try_into().ok()?),
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
        };
        assert_eq!(ReceiptHandle::decode(&h.encode()), Some(h));
        assert_eq!(ReceiptHandle::decode(""), None);
        assert_eq!(ReceiptHandle::decode("not a handle"), None);
        assert_eq!(ReceiptHandle::decode(&h.encode()[1..]), None);
    }
}

//! Sealed receipt handles (rule A3): what clients get is the engine's
//! handle with a keyed MAC over it and the queue's key, so that a handle
//! cannot be guessed, edited into another delivery's handle, or used on
//! another queue. Engines never see sealed handles; the actions unseal
//! what clients send before they call the engine, and seal what the
//! engine gives out (ReceiveMessage, push deliveries).
//!
//! A sealed handle is URL-safe base64 (no padding) of
//! `version (1) ‖ tag (16) ‖ engine handle`, where the tag is the first 16
//! bytes (128 bits) of HMAC-SHA256 under the engine's secret
//! ([`sluice_broker::Coordination::handle_secret`]) of a domain label, the
//! queue key's length and bytes, and the engine handle.

use crate::coordination::HandleSecret;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use sluice_core::SqsError;
use subtle::ConstantTimeEq;

/// The format's version, the first byte of every sealed handle.
const VERSION: u8 = 1;

/// Bytes of the MAC kept in a handle: 128 bits.
const TAG_LEN: usize = 16;

/// What the MAC covers first, so that no other MAC under the same key
/// can be taken for a handle's.
const DOMAIN: &[u8] = b"sluice receipt handle v1\0";

/// Seals and unseals receipt handles under one secret.
#[derive(Clone)]
pub struct HandleSealer {
    mac: Hmac<Sha256>,
}

impl std::fmt::Debug for HandleSealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HandleSealer(…)")
    }
}

impl HandleSealer {
    /// A sealer keyed with `secret`.
    pub fn new(secret: &HandleSecret) -> Self {
        // HMAC takes a key of any length: this cannot fail.
        let mac = <Hmac<Sha256> as Mac>::new_from_slice(&secret.0)
            .unwrap_or_else(|_| unreachable!("HMAC accepts any key length"));
        Self { mac }
    }

    fn tag(&self, queue_key: &str, handle: &[u8]) -> [u8; TAG_LEN] {
        let mut mac = self.mac.clone();
        mac.update(DOMAIN);
        mac.update(&(queue_key.len() as u64).to_be_bytes());
        mac.update(queue_key.as_bytes());
        mac.update(handle);
        let full = mac.finalize().into_bytes();
        let mut tag = [0u8; TAG_LEN];
        tag.copy_from_slice(&full[..TAG_LEN]);
        tag
    }

    /// The handle a client gets for the engine's `handle` of a delivery
    /// from the queue stored under `queue_key`.
    pub fn seal(&self, queue_key: &str, handle: &str) -> String {
        let mut bytes = Vec::with_capacity(1 + TAG_LEN + handle.len());
        bytes.push(VERSION);
        bytes.extend_from_slice(&self.tag(queue_key, handle.as_bytes()));
        bytes.extend_from_slice(handle.as_bytes());
        URL_SAFE_NO_PAD.encode(bytes)
    }

    /// The engine's handle inside `sealed`, if this server sealed it for
    /// the queue stored under `queue_key`; otherwise `ReceiptHandleIsInvalid`
    /// naming `sealed`, as SQS answers a malformed handle.
    pub fn unseal(&self, queue_key: &str, sealed: &str) -> Result<String, SqsError> {
        let invalid = || SqsError::bad_receipt(sealed);
        let bytes = URL_SAFE_NO_PAD.decode(sealed).map_err(|_| invalid())?;
        // One spelling per handle: an edit that decodes to the same bytes
        // (unused trailing bits) is refused too.
        if URL_SAFE_NO_PAD.encode(&bytes) != sealed {
            return Err(invalid());
        }
        let (version, rest) = bytes.split_first().ok_or_else(invalid)?;
        if *version != VERSION || rest.len() <= TAG_LEN {
            return Err(invalid());
        }
        let (tag, handle) = rest.split_at(TAG_LEN);
        let expected = self.tag(queue_key, handle);
        if !bool::from(expected.ct_eq(tag)) {
            return Err(invalid());
        }
        String::from_utf8(handle.to_vec()).map_err(|_| invalid())
    }
}

/// An engine's error about the handle `inner` as the client should read
/// it: naming the handle the client sent (`sealed`), never the engine's.
pub fn in_client_terms(error: impl Into<SqsError>, inner: &str, sealed: &str) -> SqsError {
    let mut error = error.into();
    if error.message.contains(inner) {
        error.message = error.message.replace(inner, sealed);
    }
    error
}

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_core::ErrorCode;

    fn sealer(byte: u8) -> HandleSealer {
        HandleSealer::new(&HandleSecret([byte; 32]))
    }

    /// A3: a sealed handle unseals to the engine's, on its own queue only,
    /// under its own key only.
    #[test]
    fn a3_seal_round_trip_bound_to_queue_and_key() {
        let s = sealer(7);
        let sealed = s.seal("orders", "AQAAAAAAAAABAAAAAAAAAAEAAAAB");
        assert_ne!(sealed, "AQAAAAAAAAABAAAAAAAAAAEAAAAB");
        assert_eq!(
            s.unseal("orders", &sealed).unwrap(),
            "AQAAAAAAAAABAAAAAAAAAAEAAAAB"
        );
        let err = s.unseal("payments", &sealed).unwrap_err();
        assert_eq!(err, SqsError::bad_receipt(&sealed));
        assert!(sealer(8).unseal("orders", &sealed).is_err());
        // The same inputs seal the same way (another node, a restart).
        assert_eq!(
            sealed,
            sealer(7).seal("orders", "AQAAAAAAAAABAAAAAAAAAAEAAAAB")
        );
    }

    /// A3: every one-character edit of a sealed handle, to every character
    /// of its alphabet and a few others, is refused as SQS refuses a
    /// malformed handle.
    #[test]
    fn a3_every_one_character_edit_is_refused() {
        let s = sealer(1);
        let sealed = s.seal("q", "AQAAAAAAAAABAAAAAAAAAAEAAAAB");
        let alphabet: Vec<char> =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/=. "
                .chars()
                .collect();
        let mut tried = 0;
        for i in 0..sealed.len() {
            for &c in &alphabet {
                let mut edited: Vec<char> = sealed.chars().collect();
                if edited[i] == c {
                    continue;
                }
                edited[i] = c;
                let edited: String = edited.into_iter().collect();
                let err = s.unseal("q", &edited).unwrap_err();
                assert_eq!(err.code, ErrorCode::ReceiptHandleIsInvalid, "{edited}");
                tried += 1;
            }
        }
        assert!(tried > 1000);
        for bad in ["", "garbage", "INVALID", "AQ", &sealed[..sealed.len() - 1]] {
            assert!(s.unseal("q", bad).is_err(), "{bad}");
        }
    }

    /// A3: the engine's words about a handle name the one the client sent.
    #[test]
    fn a3_errors_name_the_client_handle() {
        let e = SqsError::bad_receipt("inner");
        assert_eq!(
            in_client_terms(e, "inner", "SEALED"),
            SqsError::bad_receipt("SEALED")
        );
    }
}

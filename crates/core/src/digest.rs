//! The MD5 digests SQS returns so clients can check what was stored (rule
//! W4), SHA-256 in hex (content-based deduplication, SigV4's payload
//! hash), and the one lower-case hex encoder every crate writes digests
//! with.

use md5::{Digest, Md5};
use sha2::Sha256;

use crate::message::{AttributeValue, MessageAttributes};

/// Hex MD5 of the UTF-8 body.
pub fn md5_of_body(body: &str) -> String {
    hex(&body_digest(body))
}

/// The raw MD5 of a body, for engines that keep it with the message so
/// that a receive need not hash the body again.
pub fn body_digest(body: &str) -> [u8; 16] {
    Md5::digest(body.as_bytes()).into()
}

/// The raw MD5 of each body, as [`body_digest`] gives it, hashing the
/// bodies side by side where the CPU can.
pub fn body_digests<B: AsRef<[u8]>>(bodies: &[B]) -> Vec<[u8; 16]> {
    crate::md5_many::digests(bodies)
}

/// A raw digest from [`body_digest`] as `MD5OfBody` shows it.
pub fn digest_hex(digest: &[u8; 16]) -> String {
    hex(digest)
}

/// MD5 of message attributes as SQS computes it: sorted by name; for each,
/// length-prefixed name and data type, a transport byte (1 string, 2 binary),
/// and the length-prefixed value. `None` for no attributes.
pub fn md5_of_attributes(attrs: &MessageAttributes) -> Option<String> {
    if attrs.is_empty() {
        return None;
    }
    let mut hasher = Md5::new();
    // BTreeMap iterates in byte order of the names, which is SQS's order.
    for (name, value) in attrs {
        put(&mut hasher, name.as_bytes());
        put(&mut hasher, value.data_type.as_bytes());
        match &value.value {
            AttributeValue::String(s) => {
                hasher.update([1u8]);
                put(&mut hasher, s.as_bytes());
            }
            AttributeValue::Binary(b) => {
                hasher.update([2u8]);
                put(&mut hasher, b);
            }
        }
    }
    Some(hex(&hasher.finalize()))
}

fn put(hasher: &mut Md5, bytes: &[u8]) {
    hasher.update((bytes.len() as u32).to_be_bytes());
    hasher.update(bytes);
}

/// Hex SHA-256 of `data`.
pub fn sha256_hex(data: &[u8]) -> String {
    hex(&Sha256::digest(data))
}

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    let mut s = vec![0; bytes.len() * 2];
    hex_into(bytes, &mut s);
    // Hex digits are ASCII: this never falls back.
    String::from_utf8(s).unwrap_or_default()
}

/// Writes the lower-case hex of `bytes` into the first `2 × bytes.len()`
/// bytes of `out` (a buffer on the stack, say), which must hold them.
pub fn hex_into(bytes: &[u8], out: &mut [u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    // Bytes, not chars: pushing chars cost 50 instructions a byte.
    for (b, pair) in bytes.iter().zip(out.chunks_exact_mut(2)) {
        pair[0] = DIGITS[usize::from(b >> 4)];
        pair[1] = DIGITS[usize::from(b & 15)];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::MessageAttributeValue;

    #[test]
    fn w4_body_digest() {
        assert_eq!(md5_of_body("hello"), "5d41402abc4b2a76b9719d911017c592");
        assert_eq!(md5_of_body(""), "d41d8cd98f00b204e9800998ecf8427e");
    }

    /// Vectors computed independently (Python hashlib, following the
    /// algorithm the AWS SDKs use to verify `MD5OfMessageAttributes`).
    #[test]
    fn w4_attribute_digest_matches_sdk_algorithm() {
        let attr = |t: &str, v: AttributeValue| MessageAttributeValue {
            data_type: t.into(),
            value: v,
        };
        let mut attrs = MessageAttributes::new();
        attrs.insert(
            "a".into(),
            attr("String", AttributeValue::String("b".into())),
        );
        assert_eq!(
            md5_of_attributes(&attrs).as_deref(),
            Some("bef8bf215374a0a228d67533b1a488be")
        );
        let mut attrs = MessageAttributes::new();
        attrs.insert(
            "num".into(),
            attr("Number", AttributeValue::String("42".into())),
        );
        attrs.insert(
            "bin".into(),
            attr("Binary", AttributeValue::Binary(vec![0, 1, 2])),
        );
        assert_eq!(
            md5_of_attributes(&attrs).as_deref(),
            Some("041c9e287d6f033dc77cba9a6707c543")
        );
        assert_eq!(md5_of_attributes(&MessageAttributes::new()), None);
    }

    #[test]
    fn hex_and_sha256_hex() {
        assert_eq!(hex(&[0x00, 0x0f, 0xa5, 0xff]), "000fa5ff");
        assert_eq!(hex(&[]), "");
        let mut out = [0u8; 4];
        hex_into(&[0xab, 0x01], &mut out);
        assert_eq!(&out, b"ab01");
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}

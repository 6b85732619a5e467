//! The sealed form of a message's columns in the PostgreSQL engine (rule
//! E1): a sealed message keeps its body column for `\x01S<data key
//! id>:<base64>` of its body and attributes (no valid body begins with
//! U+0001), and empty attribute columns; failure reasons the same way.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::Deserialize;
use sluice_broker::EngineError;
use sluice_core::message::MessageAttributes;
use sluice_keyring::{DataKeys, Sealer};

/// Marks a sealed body or reason.
pub(crate) const SEALED: &str = "\u{1}S";
/// Marks a clear reason that began with U+0001 itself.
const ESCAPED: &str = "\u{1}C";
/// What a sealed body's data is bound to (with its data key's id).
const BODY_AAD: &[u8] = b"sluice message";
const REASON_AAD: &[u8] = b"sluice failure reason";

/// The first byte of a sealed body's plaintext in the binary form: the
/// body's length (4 bytes, little-endian), the body, then, when either
/// is not empty, the JSON of the message and system attributes. A
/// plaintext beginning with `{` is the JSON form of earlier builds.
const BINARY: u8 = 2;

/// The JSON form of earlier builds, still read.
#[derive(Deserialize)]
struct SealedJson {
    body: String,
    attributes: MessageAttributes,
    system_attributes: MessageAttributes,
}

/// A message's body and attribute columns as stored: sealed by `seal`
/// when given.
pub(crate) fn seal_message(
    seal: Option<&Sealer>,
    body: &str,
    attributes: &MessageAttributes,
    system_attributes: &MessageAttributes,
) -> (String, MessageAttributes, MessageAttributes) {
    let Some(seal) = seal else {
        return (
            body.to_string(),
            attributes.clone(),
            system_attributes.clone(),
        );
    };
    let mut plain = Vec::with_capacity(5 + body.len());
    plain.push(BINARY);
    plain.extend_from_slice(&(body.len() as u32).to_le_bytes());
    plain.extend_from_slice(body.as_bytes());
    if !attributes.is_empty() || !system_attributes.is_empty() {
        // Serializing maps of strings cannot fail.
        let _ = serde_json::to_writer(&mut plain, &(attributes, system_attributes));
    }
    (
        sealed_text(seal, BODY_AAD, &plain),
        MessageAttributes::new(),
        MessageAttributes::new(),
    )
}

/// Opens a body column [`seal_message`] sealed; `None` for a clear one.
pub(crate) fn open_message(
    stored: &str,
    keys: &DataKeys,
) -> Result<Option<(String, MessageAttributes, MessageAttributes)>, EngineError> {
    let Some(rest) = stored.strip_prefix(SEALED) else {
        return Ok(None);
    };
    let plain = open_text(rest, keys, BODY_AAD)?;
    if plain.first() == Some(&b'{') {
        let SealedJson {
            body,
            attributes,
            system_attributes,
        } = serde_json::from_slice(&plain).map_err(|_| unreadable())?;
        return Ok(Some((body, attributes, system_attributes)));
    }
    let (&format, rest) = plain.split_first().ok_or_else(unreadable)?;
    let (len, rest) = rest.split_at_checked(4).ok_or_else(unreadable)?;
    let len = u32::from_le_bytes(len.try_into().map_err(|_| unreadable())?) as usize;
    let (body, attrs) = rest.split_at_checked(len).ok_or_else(unreadable)?;
    if format != BINARY {
        return Err(unreadable());
    }
    let body = String::from_utf8(body.to_vec()).map_err(|_| unreadable())?;
    let (attributes, system_attributes) = if attrs.is_empty() {
        (MessageAttributes::new(), MessageAttributes::new())
    } else {
        serde_json::from_slice(attrs).map_err(|_| unreadable())?
    };
    Ok(Some((body, attributes, system_attributes)))
}

/// A failure reason as stored: sealed by `seal` when given.
pub(crate) fn seal_reason(seal: Option<&Sealer>, reason: &str) -> String {
    match seal {
        Some(seal) => sealed_text(seal, REASON_AAD, reason.as_bytes()),
        None if reason.starts_with('\u{1}') => format!("{ESCAPED}{reason}"),
        None => reason.to_string(),
    }
}

/// The reason [`seal_reason`] stored.
pub(crate) fn open_reason(stored: &str, keys: &DataKeys) -> Result<String, EngineError> {
    if let Some(clear) = stored.strip_prefix(ESCAPED) {
        return Ok(clear.to_string());
    }
    match stored.strip_prefix(SEALED) {
        Some(rest) => {
            String::from_utf8(open_text(rest, keys, REASON_AAD)?).map_err(|_| unreadable())
        }
        None => Ok(stored.to_string()),
    }
}

fn sealed_text(seal: &Sealer, aad: &[u8], plain: &[u8]) -> String {
    let mut sealed = Vec::with_capacity(plain.len() + sluice_keyring::envelope::OVERHEAD);
    seal.key
        .seal_into(&aad_of(aad, seal.id), plain, &mut sealed);
    let mut out = String::with_capacity(24 + sealed.len().div_ceil(3) * 4);
    out.push_str(SEALED);
    out.push_str(&seal.id.to_string());
    out.push(':');
    BASE64.encode_string(&sealed, &mut out);
    out
}

fn open_text(rest: &str, keys: &DataKeys, aad: &[u8]) -> Result<Vec<u8>, EngineError> {
    let (id, data) = rest.split_once(':').ok_or_else(unreadable)?;
    let id: u64 = id.parse().map_err(|_| unreadable())?;
    let key = keys.get(id).ok_or_else(unreadable)?;
    let data = BASE64.decode(data).map_err(|_| unreadable())?;
    key.open(&aad_of(aad, id), &data).map_err(|_| unreadable())
}

fn aad_of(aad: &[u8], id: u64) -> Vec<u8> {
    let mut out = aad.to_vec();
    out.extend_from_slice(&id.to_be_bytes());
    out
}

/// The id of the data key a stored body or reason is sealed by.
pub(crate) fn sealed_by(stored: &str) -> Option<u64> {
    stored.strip_prefix(SEALED)?.split_once(':')?.0.parse().ok()
}

fn unreadable() -> EngineError {
    EngineError::Storage("a sealed message could not be opened".into())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use sluice_core::message::{AttributeValue, MessageAttributeValue};
    use sluice_keyring::{Keyring, QueueSse};

    use super::*;

    fn keys() -> (DataKeys, Sealer) {
        let ring =
            Keyring::from_base64("test", "k", "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=")
                .expect("keyring");
        let keys = DataKeys::new(Some(Arc::new(ring)));
        let sse = QueueSse {
            sse_sqs: true,
            kms_key_id: None,
            reuse_seconds: 300,
        };
        let seal = keys.sealer(1, sse, 1, |_| Ok(())).unwrap().unwrap();
        (keys, seal)
    }

    /// E1: a sealed message opens to its body and attributes, with or
    /// without attributes; the columns hold neither in the clear.
    #[test]
    fn e1_a_sealed_message_opens_to_what_was_sealed() {
        let (keys, seal) = keys();
        let mut attrs = MessageAttributes::new();
        attrs.insert(
            "tenant".into(),
            MessageAttributeValue {
                data_type: "String".into(),
                value: AttributeValue::String("acme-secret".into()),
            },
        );
        for (body, attributes) in [("plain body", MessageAttributes::new()), ("ü body", attrs)] {
            let system = MessageAttributes::new();
            let (stored, a, s) = seal_message(Some(&seal), body, &attributes, &system);
            assert!(a.is_empty() && s.is_empty());
            assert!(!stored.contains("body") && !stored.contains("acme"));
            let opened = open_message(&stored, &keys).unwrap().unwrap();
            assert_eq!(opened, (body.to_string(), attributes, system));
        }
        assert!(open_message("clear", &keys).unwrap().is_none());
    }

    /// E1: what earlier builds sealed (the JSON form) still opens; a
    /// changed sealed column does not.
    #[test]
    fn e1_the_json_form_still_opens_and_a_changed_column_does_not() {
        let (keys, seal) = keys();
        let json = br#"{"body":"old","attributes":{},"system_attributes":{}}"#;
        let stored = sealed_text(&seal, BODY_AAD, json);
        let opened = open_message(&stored, &keys).unwrap().unwrap();
        assert_eq!(opened.0, "old");
        let (stored, ..) = seal_message(
            Some(&seal),
            "x",
            &MessageAttributes::new(),
            &MessageAttributes::new(),
        );
        let mut changed = stored.into_bytes();
        let last = changed.len() - 2;
        changed[last] = if changed[last] == b'A' { b'B' } else { b'A' };
        let changed = String::from_utf8(changed).unwrap();
        assert!(open_message(&changed, &keys).is_err());
    }
}

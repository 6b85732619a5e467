//! The sealed form of a message's columns in the PostgreSQL engine (rule
//! E1): a sealed message keeps its body column for `\x01S<data key
//! id>:<base64>` of its body and attributes (no valid body begins with
//! U+0001), and empty attribute columns; failure reasons the same way.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::{Deserialize, Serialize};
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

/// What a sealed body holds.
#[derive(Serialize, Deserialize)]
struct Sealed {
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
    let plain = serde_json::to_vec(&Sealed {
        body: body.to_string(),
        attributes: attributes.clone(),
        system_attributes: system_attributes.clone(),
    })
    .unwrap_or_default();
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
    let Sealed {
        body,
        attributes,
        system_attributes,
    } = serde_json::from_slice(&plain).map_err(|_| unreadable())?;
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
    format!("{SEALED}{}:{}", seal.id, BASE64.encode(sealed))
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

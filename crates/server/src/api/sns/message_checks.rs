//! What a published message must be (rules N1, N7), in SNS's words: its
//! body, subject, structure, attributes, size and FIFO ids. Recorded
//! answers: LocalStack test_sns.py (`test_empty_or_wrong_message_attributes`,
//! `test_message_attributes_prefixes`, `test_publish_too_long_message`,
//! `test_message_structure_json_exc`, `test_publish_with_empty_subject`,
//! `test_validations_for_fifo`).

use std::collections::BTreeMap;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;
use sluice_protocol::sns::{ErrorCode, MessageAttributeValue, SnsError};

/// The most bytes a message may have (body and attributes) unless its
/// topic's `MaximumMessageSize` says otherwise.
pub const DEFAULT_MAX_SIZE: usize = 262_144;

/// A published attribute, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attribute {
    /// Its name.
    pub name: String,
    /// Its data type as published.
    pub data_type: String,
    /// Its value: text, or for binary types base64 and the bytes.
    pub value: AttributeData,
}

/// A published attribute's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttributeData {
    /// `String`, `Number`, `String.Array` and their custom types.
    Text(String),
    /// `Binary` and its custom types: base64 as published, and the bytes.
    Binary(String, Vec<u8>),
}

impl Attribute {
    /// The value as an envelope and a filter policy read it (base64 for
    /// binary).
    pub fn text(&self) -> &str {
        match &self.value {
            AttributeData::Text(t) | AttributeData::Binary(t, _) => t,
        }
    }

    /// How many bytes it counts towards the message's size: name, type
    /// and value (binary values by their bytes).
    fn size(&self) -> usize {
        self.name.len()
            + self.data_type.len()
            + match &self.value {
                AttributeData::Text(t) => t.len(),
                AttributeData::Binary(_, bytes) => bytes.len(),
            }
    }
}

/// `ParameterValueInvalid`, the code SNS refuses an attribute with.
fn attribute_error(message: String) -> SnsError {
    SnsError::new(ErrorCode::InvalidParameterValueException, message)
}

/// Checks the published attributes; `entry` is a batch entry's 1-based
/// position (it names the member of a missing type).
pub fn check_attributes(
    attributes: BTreeMap<String, MessageAttributeValue>,
    entry: Option<usize>,
) -> Result<Vec<Attribute>, SnsError> {
    let mut out = Vec::with_capacity(attributes.len());
    for (name, value) in attributes {
        check_name(&name)?;
        let Some(data_type) = value.data_type else {
            let member = match entry {
                Some(i) => format!(
                    "publishBatchRequestEntries.{i}.member.messageAttributes.{name}.member.dataType"
                ),
                None => format!("messageAttributes.{name}.member.dataType"),
            };
            return Err(SnsError::new(
                ErrorCode::ValidationError,
                format!(
                    "1 validation error detected: Value null at '{member}' failed to satisfy constraint: Member must not be null"
                ),
            ));
        };
        let base = match data_type.split_once('.') {
            Some((base, custom)) if !custom.is_empty() => base,
            Some(_) => "",
            None => data_type.as_str(),
        };
        let value = match base {
            "String" | "Number" => {
                if value.binary_value.is_some() {
                    return Err(attribute_error(format!(
                        "The message attribute '{name}' with type '{base}' must use field 'String'."
                    )));
                }
                let text = value.string_value.unwrap_or_default();
                if text.is_empty() {
                    return Err(empty_value(&name, base));
                }
                if base == "Number" && !is_number(&text) {
                    return Err(attribute_error(format!(
                        "Could not cast message attribute '{name}' value to number."
                    )));
                }
                AttributeData::Text(text)
            }
            "Binary" => {
                if value.string_value.is_some() {
                    return Err(attribute_error(format!(
                        "The message attribute '{name}' with type 'Binary' must use field 'Binary'."
                    )));
                }
                let b64 = value.binary_value.unwrap_or_default();
                let bytes = STANDARD.decode(b64.as_bytes()).map_err(|_| {
                    attribute_error(format!(
                        "The binary value of message attribute '{name}' is not valid base64."
                    ))
                })?;
                if bytes.is_empty() {
                    return Err(empty_value(&name, "Binary"));
                }
                AttributeData::Binary(b64, bytes)
            }
            _ => {
                return Err(attribute_error(format!(
                    "The message attribute '{name}' has an invalid message attribute type, the set of supported type prefixes is Binary, Number, and String."
                )));
            }
        };
        out.push(Attribute {
            name,
            data_type,
            value,
        });
    }
    Ok(out)
}

fn empty_value(name: &str, base: &str) -> SnsError {
    attribute_error(format!(
        "The message attribute '{name}' must contain non-empty message attribute value for message attribute type '{base}'."
    ))
}

/// A number as SNS reads a `Number` attribute (a finite decimal).
fn is_number(text: &str) -> bool {
    text.trim().parse::<f64>().is_ok_and(f64::is_finite)
}

/// A message attribute's name: at most 256 bytes of letters, digits, `-`,
/// `_` and `.`, no `.` first, last or twice in a row.
fn check_name(name: &str) -> Result<(), SnsError> {
    if name.len() >= 256 {
        return Err(attribute_error(
            "Length of message attribute name must be less than 256 bytes.".into(),
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
    {
        return Err(attribute_error(format!(
            "Invalid non-alphanumeric character '#x{:X}' was found in the message attribute name. Can only include alphanumeric characters, hyphens, underscores, or dots.",
            c as u32
        )));
    }
    if name.starts_with('.') {
        return Err(attribute_error(
            "Invalid message attribute name starting with character '.' was found.".into(),
        ));
    }
    if name.ends_with('.') {
        return Err(attribute_error(
            "Invalid message attribute name ending with character '.' was found.".into(),
        ));
    }
    if name.contains("..") {
        return Err(attribute_error(
            "Message attribute name can not have successive '.' character.".into(),
        ));
    }
    Ok(())
}

/// The message's bytes as SNS counts them against its limit: the body and
/// every attribute's name, type and value.
pub fn size(message: &str, attributes: &[Attribute]) -> usize {
    message.len() + attributes.iter().map(Attribute::size).sum::<usize>()
}

/// A subject: given, shorter than 100 characters, no control characters.
pub fn check_subject(subject: Option<&str>) -> Result<(), SnsError> {
    match subject {
        Some(s) if s.is_empty() || s.chars().count() >= 100 || s.chars().any(char::is_control) => {
            Err(SnsError::invalid_parameter("Subject"))
        }
        _ => Ok(()),
    }
}

/// A message with `MessageStructure=json`: a JSON object whose `default`
/// is a string; its messages by protocol (only string values count).
pub fn structured(message: &str) -> Result<BTreeMap<String, String>, SnsError> {
    let doc: Value = serde_json::from_str(message).map_err(|_| {
        SnsError::invalid_parameter("Message Structure - JSON message body failed to parse")
    })?;
    let by_protocol: BTreeMap<String, String> = doc
        .as_object()
        .map(|o| {
            o.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default();
    if !by_protocol.contains_key("default") {
        return Err(SnsError::invalid_parameter(
            "Message Structure - No default entry in JSON message body",
        ));
    }
    Ok(by_protocol)
}

/// A message group or deduplication id: 1–128 characters of letters,
/// digits and punctuation.
pub fn check_fifo_token(name: &str, value: &str) -> Result<(), SnsError> {
    let ok = !value.is_empty() && value.len() <= 128 && value.bytes().all(|b| b.is_ascii_graphic());
    if ok {
        Ok(())
    } else {
        Err(SnsError::invalid_parameter(format!(
            "{name} Reason: {name} can only include alphanumeric and punctuation characters. 1 to 128 in length."
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(
        name: &str,
        data_type: Option<&str>,
        string: Option<&str>,
        binary: Option<&str>,
    ) -> String {
        let value = MessageAttributeValue {
            data_type: data_type.map(str::to_string),
            string_value: string.map(str::to_string),
            binary_value: binary.map(str::to_string),
        };
        check_attributes(BTreeMap::from([(name.to_string(), value)]), None)
            .unwrap_err()
            .message
    }

    /// N1: attribute refusals in SNS's words (recorded: LocalStack
    /// test_empty_or_wrong_message_attributes, test_message_attributes_prefixes).
    #[test]
    fn n1_attribute_refusals() {
        assert_eq!(
            refused("attr1", Some("String"), Some(""), None),
            "The message attribute 'attr1' must contain non-empty message attribute value for message attribute type 'String'."
        );
        assert_eq!(
            refused("attr1", Some("String"), None, None),
            "The message attribute 'attr1' must contain non-empty message attribute value for message attribute type 'String'."
        );
        assert_eq!(
            refused("attr1", None, Some("value"), None),
            "1 validation error detected: Value null at 'messageAttributes.attr1.member.dataType' failed to satisfy constraint: Member must not be null"
        );
        assert_eq!(
            refused("attr1", Some("String"), None, Some("MTIz")),
            "The message attribute 'attr1' with type 'String' must use field 'String'."
        );
        assert_eq!(
            refused("attr1", Some("Number"), None, Some("MTIz")),
            "The message attribute 'attr1' with type 'Number' must use field 'String'."
        );
        assert_eq!(
            refused("attr1", Some("Binary"), Some("123"), None),
            "The message attribute 'attr1' with type 'Binary' must use field 'Binary'."
        );
        for bad in ["InvalidType", "String.", "Stringprefixed"] {
            assert_eq!(
                refused("attr1", Some(bad), Some("v"), None),
                "The message attribute 'attr1' has an invalid message attribute type, the set of supported type prefixes is Binary, Number, and String."
            );
        }
        assert_eq!(
            refused(&"a".repeat(257), Some("String"), Some("v"), None),
            "Length of message attribute name must be less than 256 bytes."
        );
        assert_eq!(
            refused("a^*?", Some("String"), Some("v"), None),
            "Invalid non-alphanumeric character '#x5E' was found in the message attribute name. Can only include alphanumeric characters, hyphens, underscores, or dots."
        );
        assert_eq!(
            refused(".abc", Some("String"), Some("v"), None),
            "Invalid message attribute name starting with character '.' was found."
        );
        assert_eq!(
            refused("abc.", Some("String"), Some("v"), None),
            "Invalid message attribute name ending with character '.' was found."
        );
        assert_eq!(
            refused("a..bc", Some("String"), Some("v"), None),
            "Message attribute name can not have successive '.' character."
        );
        let ok = MessageAttributeValue {
            data_type: Some("String.  prefixed.".into()),
            string_value: Some("v".into()),
            binary_value: None,
        };
        assert!(check_attributes(BTreeMap::from([("a".into(), ok)]), None).is_ok());
    }

    /// N1: the size counts attributes' names, types and values (recorded:
    /// test_publish_too_long_message: attr1 Number "1" counts 12 bytes).
    #[test]
    fn n1_size_counts_attributes() {
        let attrs = check_attributes(
            BTreeMap::from([(
                "attr1".to_string(),
                MessageAttributeValue {
                    data_type: Some("Number".into()),
                    string_value: Some("1".into()),
                    binary_value: None,
                },
            )]),
            None,
        )
        .unwrap();
        assert_eq!(size("", &attrs), 12);
    }

    /// N1: subjects and structured messages (recorded:
    /// test_publish_with_empty_subject, test_message_structure_json_exc).
    #[test]
    fn n1_subjects_and_structures() {
        assert!(check_subject(Some("")).is_err());
        assert!(check_subject(Some("a\nb")).is_err());
        assert!(check_subject(Some("fine")).is_ok());
        assert!(check_subject(None).is_ok());
        assert_eq!(
            structured(r#"{"sqs":"Test message"}"#).unwrap_err().message,
            "Invalid parameter: Message Structure - No default entry in JSON message body"
        );
        assert_eq!(
            structured(r#"{"default": "x"} }"#).unwrap_err().message,
            "Invalid parameter: Message Structure - JSON message body failed to parse"
        );
        assert!(structured(r#"{"default":{"object":"test"}}"#).is_err());
        let m = structured(r#"{"default":"d","sqs":"s","http":{"x":1}}"#).unwrap();
        assert_eq!(m.get("sqs").map(String::as_str), Some("s"));
        assert!(
            !m.contains_key("http"),
            "a value that is no string does not count"
        );
    }
}

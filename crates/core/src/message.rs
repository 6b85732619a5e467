//! Message bodies and message attributes, and their validation (rule L1, L3).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::{ErrorCode, SqsError};
use crate::limits::MAX_MESSAGE_ATTRIBUTES;

/// A message attribute's value: text (String and Number types) or bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum AttributeValue {
    /// For `String`, `Number` and their custom subtypes.
    String(String),
    /// For `Binary` and its custom subtypes.
    Binary(Vec<u8>),
}

/// One message attribute: a data type (`String`, `Number`, `Binary`, each
/// with an optional `.custom` suffix) and its value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageAttributeValue {
    /// `String`, `Number`, `Binary`, optionally followed by `.label`.
    pub data_type: String,
    /// The value, typed by the base of `data_type`.
    pub value: AttributeValue,
}

/// A message's attributes by name, in SQS's digest order.
pub type MessageAttributes = BTreeMap<String, MessageAttributeValue>;

/// The base type of a data type string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BaseType {
    /// `String` or `String.x`.
    String,
    /// `Number` or `Number.x`.
    Number,
    /// `Binary` or `Binary.x`.
    Binary,
}

/// The base type of `data_type`, or `None` if it is not an SQS type.
pub fn base_type(data_type: &str) -> Option<BaseType> {
    let (base, custom) = match data_type.split_once('.') {
        Some((b, c)) => (b, Some(c)),
        None => (data_type, None),
    };
    if custom.is_some_and(str::is_empty) || data_type.len() > 256 {
        return None;
    }
    match base {
        "String" => Some(BaseType::String),
        "Number" => Some(BaseType::Number),
        "Binary" => Some(BaseType::Binary),
        _ => None,
    }
}

/// True for a character SQS allows in bodies and string values:
/// #x9 #xA #xD #x20–#xD7FF #xE000–#xFFFD #x10000–#x10FFFF.
pub fn is_allowed_char(c: char) -> bool {
    matches!(c, '\u{9}' | '\u{A}' | '\u{D}' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..='\u{10FFFF}')
}

/// True when every character of `text` is one SQS accepts.
///
/// Every send checks its whole body, so this scans bytes: in UTF-8 the only
/// refused characters are the C0 controls other than tab, LF and CR (single
/// bytes below 0x20) and U+FFFE/U+FFFF (which start with byte 0xEF);
/// surrogates cannot occur in a `str`. Only a body with an 0xEF byte takes
/// the character-by-character path.
pub fn all_chars_allowed(text: &str) -> bool {
    let bytes = text.as_bytes();
    // One pass for both checks, which the compiler vectorises.
    let (controls_ok, has_ef) = bytes.iter().fold((true, false), |(ok, ef), &b| {
        (
            ok & (b >= 0x20 || b == b'\t' || b == b'\n' || b == b'\r'),
            ef | (b == 0xEF),
        )
    });
    if !controls_ok {
        return false;
    }
    !has_ef || text.chars().all(is_allowed_char)
}

/// Checks a message body's characters (rule L1). Size is checked with the
/// attributes by [`message_size`].
pub fn validate_body(body: &str) -> Result<(), SqsError> {
    if body.is_empty() {
        return Err(SqsError::missing("MessageBody"));
    }
    if !all_chars_allowed(body) {
        return Err(SqsError::new(
            ErrorCode::InvalidMessageContents,
            "Invalid characters found. Valid unicode characters are #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF",
        ));
    }
    Ok(())
}

/// Checks message attributes: at most 10, valid names, known types,
/// non-empty values of the right kind, well-formed numbers.
pub fn validate_message_attributes(attrs: &MessageAttributes) -> Result<(), SqsError> {
    if attrs.len() > MAX_MESSAGE_ATTRIBUTES {
        return Err(SqsError::invalid_parameter(format!(
            "Number of message attributes [{}] exceeds the allowed maximum [{MAX_MESSAGE_ATTRIBUTES}].",
            attrs.len()
        )));
    }
    for (name, value) in attrs {
        validate_attribute_name(name)?;
        let Some(base) = base_type(&value.data_type) else {
            return Err(SqsError::invalid_parameter(format!(
                "The type of message (user) attribute '{name}' is invalid. You must use only the following supported type prefixes: Binary, Number, String."
            )));
        };
        let empty = |kind: &str| {
            SqsError::invalid_parameter(format!(
                "Message (user) attribute '{name}' must contain a non-empty value of type '{kind}'."
            ))
        };
        match (&value.value, base) {
            (AttributeValue::String(s), BaseType::String) => {
                if s.is_empty() {
                    return Err(empty("String"));
                }
                if !all_chars_allowed(s) {
                    return Err(SqsError::invalid_parameter(format!(
                        "Message (user) attribute '{name}' contains invalid characters."
                    )));
                }
            }
            (AttributeValue::String(s), BaseType::Number) => {
                if s.is_empty() {
                    return Err(empty("Number"));
                }
                if !is_sqs_number(s) {
                    return Err(SqsError::invalid_parameter(format!(
                        "Can't cast the value of message (user) attribute '{name}' to a number."
                    )));
                }
            }
            (AttributeValue::Binary(b), BaseType::Binary) => {
                if b.is_empty() {
                    return Err(empty("Binary"));
                }
            }
            (_, BaseType::Binary) => return Err(empty("Binary")),
            (_, BaseType::String) => return Err(empty("String")),
            (_, BaseType::Number) => return Err(empty("Number")),
        }
    }
    Ok(())
}

/// Attribute names (rule L6): up to 256 characters of letters and digits of
/// any script (AWS accepts `attr.1øßä`), `_`, `-` and `.`; no leading,
/// trailing or doubled period, and not starting with the reserved
/// `AWS.`/`Amazon.` in any case.
fn validate_attribute_name(name: &str) -> Result<(), SqsError> {
    if is_valid_attribute_name(name) {
        Ok(())
    } else {
        Err(SqsError::invalid_parameter(format!(
            "Message (user) attribute name '{name}' is invalid. The attribute name can contain A-Z, a-z, 0-9, underscore (_), hyphen (-), and period (.) characters."
        )))
    }
}

/// True for a name a message attribute may have (rule L6).
pub fn is_valid_attribute_name(name: &str) -> bool {
    let lower = name.to_lowercase();
    !name.is_empty()
        && name.chars().count() <= 256
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
        && !name.starts_with('.')
        && !name.ends_with('.')
        && !name.contains("..")
        && !lower.starts_with("aws.")
        && !lower.starts_with("amazon.")
}

/// SQS numbers: an optional sign, digits with an optional fraction, and an
/// optional exponent; up to 38 significant digits once leading and trailing
/// zeros are trimmed, and zero or a magnitude from 10^-128 to 10^126, the
/// range the SQS developer guide gives (rule H4: `1e400` is refused, not
/// stored as a number no consumer can read).
fn is_sqs_number(s: &str) -> bool {
    let s = s.strip_prefix(['-', '+']).unwrap_or(s);
    let (mantissa, exponent) = match s.split_once(['e', 'E']) {
        Some((m, e)) => (m, Some(e)),
        None => (s, None),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let well_formed = !(int.is_empty() && frac.is_empty())
        && int.bytes().all(|b| b.is_ascii_digit())
        && frac.bytes().all(|b| b.is_ascii_digit());
    if !well_formed {
        return false;
    }
    let exponent: i64 = match exponent {
        None => 0,
        Some(e) => {
            let digits = e.strip_prefix(['-', '+']).unwrap_or(e);
            if digits.is_empty() || digits.len() > 4 || !digits.bytes().all(|b| b.is_ascii_digit())
            {
                return false;
            }
            match e.parse() {
                Ok(v) => v,
                Err(_) => return false,
            }
        }
    };
    // The digits as one string with the decimal point after `int`.
    let all: Vec<u8> = int.bytes().chain(frac.bytes()).collect();
    let Some(first) = all.iter().position(|&b| b != b'0') else {
        return true; // zero, however written
    };
    let last = all.iter().rposition(|&b| b != b'0').unwrap_or(first);
    let significant = &all[first..=last];
    if significant.len() > 38 {
        return false;
    }
    // The value is d.ddd × 10^magnitude.
    let magnitude = int.len() as i64 - 1 - first as i64 + exponent;
    match magnitude {
        -128..=125 => true,
        126 => significant == b"1",
        _ => false,
    }
}

/// The size SQS counts against `MaximumMessageSize`: the body plus each
/// attribute's name, data type and value.
pub fn message_size(body: &str, attrs: &MessageAttributes) -> usize {
    body.len()
        + attrs
            .iter()
            .map(|(name, v)| {
                name.len()
                    + v.data_type.len()
                    + match &v.value {
                        AttributeValue::String(s) => s.len(),
                        AttributeValue::Binary(b) => b.len(),
                    }
            })
            .sum::<usize>()
}

/// Checks a body and its attributes against a queue's size limit (rule L1).
pub fn validate_size(body: &str, attrs: &MessageAttributes, limit: u32) -> Result<(), SqsError> {
    if message_size(body, attrs) > limit as usize {
        return Err(SqsError::invalid_parameter(format!(
            "One or more parameters are invalid. Reason: Message must be shorter than {limit} bytes."
        )));
    }
    Ok(())
}

/// The `MessageAttributeNames` of a receive that AWS acts on (rule V21):
/// `All`, `*` and `.*` (every attribute), `prefix.*` (names starting with
/// `prefix`) and exact names. Names no attribute could have, such as
/// `AWS.` or `..foo`, are ignored as AWS ignores them.
pub fn attribute_filters(requested: &[String]) -> Vec<&str> {
    requested
        .iter()
        .map(String::as_str)
        .filter(|r| {
            matches!(*r, "All" | "*" | ".*")
                || is_valid_attribute_name(r.strip_suffix(".*").unwrap_or(r))
        })
        .collect()
}

/// Does one of `filters` (from [`attribute_filters`]) select `name`?
pub fn attribute_selected(filters: &[&str], name: &str) -> bool {
    filters.iter().any(|r| {
        matches!(*r, "All" | "*" | ".*")
            || *r == name
            || r.strip_suffix(".*")
                .is_some_and(|prefix| name.starts_with(prefix))
    })
}

/// The `SequenceNumber` of a FIFO message (rules F3, F16): SQS answers
/// 20-digit decimals, strictly increasing per queue, so the engine's
/// sequence is shown offset by 10^19, never as a zero-padded counter.
pub fn sequence_number(seq: u64) -> String {
    const BASE: u128 = 10_000_000_000_000_000_000;
    (BASE + u128::from(seq)).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attr(t: &str, v: AttributeValue) -> MessageAttributeValue {
        MessageAttributeValue {
            data_type: t.into(),
            value: v,
        }
    }

    /// The byte scan agrees with the rule, character by character, on
    /// every code point class at every position.
    #[test]
    fn l1_fast_character_check_matches_the_rule() {
        let samples: Vec<char> = (0u32..0x110000)
            .step_by(97)
            .chain([
                0x9, 0xA, 0xD, 0x1F, 0x20, 0x7F, 0xD7FF, 0xE000, 0xFFFD, 0xFFFE, 0xFFFF, 0xFEFF,
                0xEFFF, 0x10000, 0x10FFFF,
            ])
            .chain(0..0x20)
            .filter_map(char::from_u32)
            .collect();
        for c in &samples {
            for text in [format!("{c}"), format!("ab{c}cd"), format!("é{c}\u{FFFD}")] {
                assert_eq!(
                    all_chars_allowed(&text),
                    text.chars().all(is_allowed_char),
                    "U+{:04X} in {text:?}",
                    *c as u32
                );
            }
        }
    }

    #[test]
    fn l1_body_characters() {
        assert!(validate_body("hello\tworld\n\r ü 😀").is_ok());
        assert_eq!(
            validate_body("bad\u{1}").unwrap_err().code,
            ErrorCode::InvalidMessageContents
        );
        assert_eq!(
            validate_body("\u{FFFE}").unwrap_err().code,
            ErrorCode::InvalidMessageContents
        );
        assert_eq!(
            validate_body("").unwrap_err().code,
            ErrorCode::MissingParameter
        );
    }

    #[test]
    fn l1_size_counts_attributes() {
        let mut attrs = MessageAttributes::new();
        attrs.insert(
            "ab".into(),
            attr("String", AttributeValue::String("xyz".into())),
        );
        assert_eq!(message_size("body", &attrs), 4 + 2 + 6 + 3);
        assert!(validate_size("body", &attrs, 15).is_ok());
        assert!(validate_size("body", &attrs, 14).is_err());
    }

    #[test]
    fn l3_attribute_rules() {
        let mut ok = MessageAttributes::new();
        ok.insert(
            "n".into(),
            attr("Number.int", AttributeValue::String("-1.5e3".into())),
        );
        ok.insert("b".into(), attr("Binary", AttributeValue::Binary(vec![1])));
        ok.insert(
            "s.x-y_z".into(),
            attr("String", AttributeValue::String("v".into())),
        );
        assert!(validate_message_attributes(&ok).is_ok());

        for (name, a) in [
            ("AWS.x", attr("String", AttributeValue::String("v".into()))),
            (".x", attr("String", AttributeValue::String("v".into()))),
            ("a..b", attr("String", AttributeValue::String("v".into()))),
            ("x", attr("Strin", AttributeValue::String("v".into()))),
            ("x", attr("String.", AttributeValue::String("v".into()))),
            ("x", attr("String", AttributeValue::String("".into()))),
            ("x", attr("Number", AttributeValue::String("12a".into()))),
            ("x", attr("Binary", AttributeValue::String("v".into()))),
            ("x", attr("String", AttributeValue::Binary(vec![1]))),
        ] {
            let mut m = MessageAttributes::new();
            m.insert(name.into(), a);
            assert_eq!(
                validate_message_attributes(&m).unwrap_err().code,
                ErrorCode::InvalidParameterValue,
                "{name}"
            );
        }
        let many: MessageAttributes = (0..11)
            .map(|i| {
                (
                    format!("a{i}"),
                    attr("String", AttributeValue::String("v".into())),
                )
            })
            .collect();
        assert!(validate_message_attributes(&many).is_err());
    }

    /// H4: numbers within SQS's range and precision, counted after
    /// trimming zeros; beyond ±10^126 or under 10^-128 they are refused.
    #[test]
    fn h4_number_range_and_precision() {
        for ok in [
            "0",
            "-0.0",
            "0e999",
            "1e126",
            "-1E+126",
            "1e-128",
            "9.99e125",
            "000012.5000",
            "12345678901234567890123456789012345678",
            ".5",
            "5.",
            "+7",
        ] {
            assert!(is_sqs_number(ok), "{ok}");
        }
        for bad in [
            "1e400",
            "1.1e126",
            "10e126",
            "9e-129",
            "1e-129",
            "2e126",
            "123456789012345678901234567890123456789",
            "",
            ".",
            "e5",
            "1e",
            "1e+",
            "--1",
            "0x10",
            "1e99999",
        ] {
            assert!(!is_sqs_number(bad), "{bad}");
        }
    }

    #[test]
    /// V21: `prefix.*` selects names that start with `prefix` (AWS answers
    /// `Hel.*` with `Hello` and `Help.Me`, LocalStack snapshot
    /// test_receive_message_message_attribute_names_filters); `*`, `.*` and
    /// `All` select all; names no attribute could have are ignored.
    fn v21_attribute_name_selection() {
        let req: Vec<String> = ["Hel.*", "bar", "AWS.", "..foo"].map(String::from).into();
        let filters = attribute_filters(&req);
        assert_eq!(filters, ["Hel.*", "bar"]);
        assert!(attribute_selected(&filters, "Hello"));
        assert!(attribute_selected(&filters, "Help.Me"));
        assert!(!attribute_selected(&filters, "He"));
        assert!(attribute_selected(&filters, "bar"));
        assert!(!attribute_selected(&filters, "baz"));
        for all in ["All", "*", ".*"] {
            assert!(attribute_selected(&[all], "anything"));
        }
    }

    #[test]
    /// L6: attribute names may hold letters of any script; the reserved
    /// prefixes in any case and a leading or trailing period are refused
    /// (LocalStack test_sqs.py::test_send_message_with_invalid_string_attributes,
    /// validated against AWS).
    fn l6_attribute_names() {
        for ok in ["attr.1øßä", "a-b_c.d", &"L".repeat(256)] {
            assert!(is_valid_attribute_name(ok), "{ok}");
        }
        for bad in [
            "aWs.-x",
            "AMAZON.-x",
            ".-x",
            "x.",
            "a..b",
            "Invalid-!-attr",
            "Invalid-§-attr",
            "Invalid-?-attr",
            "",
            &"L".repeat(257),
        ] {
            assert!(!is_valid_attribute_name(bad), "{bad}");
        }
    }

    /// F16: 20 decimal digits, increasing with the sequence, not a padded
    /// counter (AWS recorded answer, LocalStack test_sqs.py::test_fifo_sequence_number_increases).
    #[test]
    fn f16_sequence_numbers_look_like_sqs() {
        let a = sequence_number(1);
        let b = sequence_number(2);
        assert_eq!(a, "10000000000000000001");
        assert_eq!((a.len(), b.len()), (20, 20));
        assert!(a < b && a.parse::<u64>().unwrap() < b.parse::<u64>().unwrap());
        assert_eq!(sequence_number(u64::MAX).len(), 20);
    }
}

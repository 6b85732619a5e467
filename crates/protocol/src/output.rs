//! What a successful action answers: a JSON-shaped [`Value`] for most
//! actions; for ReceiveMessage, the received messages themselves; for the
//! batch actions, their entries ([`BatchResult`]).
//!
//! ReceiveMessage is the answer that carries bodies, and building it as a
//! `Value` tree (a hashed map per message, then its drop) cost about a tenth
//! of the server's instructions under load. [`Output::Messages`] is written
//! straight into the JSON answer; the Query protocol, which is rarer, still
//! goes through [`Output::into_value`], so both protocols carry the same
//! fields (tested: the direct JSON equals the `Value`'s).

use serde_json::{Map, Value};

use crate::batch_result::BatchResult;
use crate::json_writer::{write_str, write_value};

/// A successful action's output.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// Any action's output as a JSON-shaped value.
    Value(Value),
    /// ReceiveMessage's messages (the `Messages` member; absent when empty).
    Messages(Vec<OutMessage>),
    /// A batch action's `{Successful, Failed}` entries.
    Batch(BatchResult),
}

/// One received message as it is answered.
#[derive(Debug, Clone, PartialEq)]
pub struct OutMessage {
    /// `MessageId`.
    pub message_id: String,
    /// `ReceiptHandle`.
    pub receipt_handle: String,
    /// `MD5OfBody`, hex.
    pub md5_of_body: String,
    /// `Body`.
    pub body: String,
    /// `Attributes`: the system attributes asked for, in answer order.
    pub attributes: Vec<(&'static str, String)>,
    /// `MD5OfMessageAttributes`, when message attributes are returned.
    pub md5_of_message_attributes: Option<String>,
    /// `MessageAttributes`: name, data type and value, in answer order.
    pub message_attributes: Vec<(String, String, OutAttributeValue)>,
}

/// A message attribute's value as it is answered.
#[derive(Debug, Clone, PartialEq)]
pub enum OutAttributeValue {
    /// `StringValue`.
    String(String),
    /// `BinaryValue`, already base64-encoded.
    Binary(String),
}

impl From<Value> for Output {
    fn from(value: Value) -> Self {
        Output::Value(value)
    }
}

impl Output {
    /// The output as a JSON-shaped value (for the Query protocol and tests).
    pub fn into_value(self) -> Value {
        match self {
            Output::Value(v) => v,
            Output::Messages(messages) => {
                let mut out = Map::new();
                if !messages.is_empty() {
                    out.insert(
                        "Messages".into(),
                        Value::Array(messages.into_iter().map(OutMessage::into_value).collect()),
                    );
                }
                Value::Object(out)
            }
            Output::Batch(result) => result.into_value(),
        }
    }

    /// Appends the output as compact JSON.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            Output::Value(v) => write_value(out, v),
            Output::Batch(result) => result.write_json(out),
            Output::Messages(messages) => {
                if messages.is_empty() {
                    out.extend_from_slice(b"{}");
                    return;
                }
                // One allocation for the whole answer: growing it message
                // by message copied it over and over (3 % of a loaded
                // server's instructions).
                out.reserve(
                    messages
                        .iter()
                        .map(OutMessage::json_len_hint)
                        .sum::<usize>()
                        + 16,
                );
                out.extend_from_slice(b"{\"Messages\":[");
                for (i, m) in messages.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    m.write_json(out);
                }
                out.extend_from_slice(b"]}");
            }
        }
    }
}

impl OutMessage {
    fn into_value(self) -> Value {
        let mut fields = Map::with_capacity(7);
        fields.insert("MessageId".into(), Value::String(self.message_id));
        fields.insert("ReceiptHandle".into(), Value::String(self.receipt_handle));
        fields.insert("MD5OfBody".into(), Value::String(self.md5_of_body));
        fields.insert("Body".into(), Value::String(self.body));
        if !self.attributes.is_empty() {
            let attrs = self
                .attributes
                .into_iter()
                .map(|(name, v)| (name.to_string(), Value::String(v)))
                .collect();
            fields.insert("Attributes".into(), Value::Object(attrs));
        }
        if let Some(md5) = self.md5_of_message_attributes {
            fields.insert("MD5OfMessageAttributes".into(), Value::String(md5));
        }
        if !self.message_attributes.is_empty() {
            let attrs = self
                .message_attributes
                .into_iter()
                .map(|(name, data_type, value)| {
                    let mut a = Map::with_capacity(2);
                    a.insert("DataType".into(), Value::String(data_type));
                    match value {
                        OutAttributeValue::String(s) => {
                            a.insert("StringValue".into(), Value::String(s))
                        }
                        OutAttributeValue::Binary(b) => {
                            a.insert("BinaryValue".into(), Value::String(b))
                        }
                    };
                    (name, Value::Object(a))
                })
                .collect();
            fields.insert("MessageAttributes".into(), Value::Object(attrs));
        }
        Value::Object(fields)
    }

    /// About how many bytes [`OutMessage::write_json`] writes: every
    /// string as it is (escapes make it longer), plus the member names.
    fn json_len_hint(&self) -> usize {
        // The member names, quotes, colons and braces of every member.
        const FRAMING: usize = 128;
        let attributes: usize = (self.attributes.iter())
            .map(|(name, value)| name.len() + value.len() + 8)
            .sum();
        let message_attributes: usize = (self.message_attributes.iter())
            .map(|(name, data_type, value)| {
                let value = match value {
                    OutAttributeValue::String(s) | OutAttributeValue::Binary(s) => s.len(),
                };
                name.len() + data_type.len() + value + 48
            })
            .sum();
        FRAMING
            + self.message_id.len()
            + self.receipt_handle.len()
            + self.md5_of_body.len()
            + self.body.len()
            + attributes
            + self
                .md5_of_message_attributes
                .as_ref()
                .map_or(0, |m| m.len() + 28)
            + message_attributes
    }

    fn write_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"MessageId\":");
        write_str(out, &self.message_id);
        out.extend_from_slice(b",\"ReceiptHandle\":");
        write_str(out, &self.receipt_handle);
        out.extend_from_slice(b",\"MD5OfBody\":");
        write_str(out, &self.md5_of_body);
        out.extend_from_slice(b",\"Body\":");
        write_str(out, &self.body);
        if !self.attributes.is_empty() {
            out.extend_from_slice(b",\"Attributes\":{");
            for (i, (name, value)) in self.attributes.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_str(out, name);
                out.push(b':');
                write_str(out, value);
            }
            out.push(b'}');
        }
        if let Some(md5) = &self.md5_of_message_attributes {
            out.extend_from_slice(b",\"MD5OfMessageAttributes\":");
            write_str(out, md5);
        }
        if !self.message_attributes.is_empty() {
            out.extend_from_slice(b",\"MessageAttributes\":{");
            for (i, (name, data_type, value)) in self.message_attributes.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_str(out, name);
                out.extend_from_slice(b":{\"DataType\":");
                write_str(out, data_type);
                match value {
                    OutAttributeValue::String(s) => {
                        out.extend_from_slice(b",\"StringValue\":");
                        write_str(out, s);
                    }
                    OutAttributeValue::Binary(b) => {
                        out.extend_from_slice(b",\"BinaryValue\":");
                        write_str(out, b);
                    }
                }
                out.push(b'}');
            }
            out.push(b'}');
        }
        out.push(b'}');
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn message(n: usize) -> OutMessage {
        OutMessage {
            message_id: format!("id-{n}"),
            receipt_handle: format!("handle+/={n}"),
            md5_of_body: "0123456789abcdef0123456789abcdef".into(),
            body: format!(
                "body {n} with \"quotes\", \\ and\nnewline é 😀 {}",
                "x".repeat(40)
            ),
            attributes: vec![],
            md5_of_message_attributes: None,
            message_attributes: vec![],
        }
    }

    /// `message(n)` with every kind of attribute, escapes in their values.
    fn with_attributes(n: usize) -> OutMessage {
        let mut full = message(n);
        full.attributes = vec![
            ("SenderId", "000000000000".into()),
            ("ApproximateReceiveCount", "3".into()),
            ("MessageGroupId", "g \"1\"".into()),
        ];
        full.md5_of_message_attributes = Some("fedcba9876543210fedcba9876543210".into());
        full.message_attributes = vec![
            (
                "trace".into(),
                "String".into(),
                OutAttributeValue::String("a\tb".into()),
            ),
            (
                "blob".into(),
                "Binary.png".into(),
                OutAttributeValue::Binary("AAEC".into()),
            ),
        ];
        full
    }

    /// Holds the JSON protocol's direct answer to the Query protocol's
    /// Value: the same members, in the same order.
    pub(crate) fn same_json_as_the_value(output: Output) {
        let mut direct = Vec::new();
        output.write_json(&mut direct);
        let value = output.into_value();
        assert_eq!(
            String::from_utf8(direct).unwrap(),
            serde_json::to_string(&value).unwrap()
        );
    }

    /// W1: the JSON protocol's direct answer carries exactly what the
    /// Query protocol's Value does.
    #[test]
    fn w1_received_messages_write_the_json_of_their_value() {
        same_json_as_the_value(Output::Messages(vec![]));
        same_json_as_the_value(Output::Messages(vec![message(1)]));
        same_json_as_the_value(Output::Messages(vec![
            message(3),
            with_attributes(2),
            message(4),
        ]));
    }

    #[test]
    fn a_receive_answer_is_written_into_one_allocation() {
        let messages: Vec<OutMessage> = (0..10)
            .map(|n| {
                if n % 2 == 1 {
                    with_attributes(n)
                } else {
                    message(n)
                }
            })
            .collect();
        let hint: usize = messages.iter().map(OutMessage::json_len_hint).sum();
        for m in &messages {
            let mut one = Vec::new();
            m.write_json(&mut one);
            assert!(one.len() <= m.json_len_hint(), "{} > hint", one.len());
        }
        let mut out = Vec::new();
        Output::Messages(messages).write_json(&mut out);
        assert!(out.len() <= hint + 16, "the reserve covers the answer");
    }

    #[test]
    fn w1_an_empty_receive_has_no_messages_member() {
        let value = Output::Messages(vec![]).into_value();
        assert_eq!(value, serde_json::json!({}));
    }
}

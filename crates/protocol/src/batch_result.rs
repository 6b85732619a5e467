//! The `{Successful, Failed}` answer of SendMessageBatch,
//! DeleteMessageBatch and ChangeMessageVisibilityBatch, written straight
//! into the JSON answer as received messages are ([`crate::output`]).
//!
//! Built as a `Value` tree, each entry was a map whose keys were hashed as
//! they went in, then walked and dropped: with a batch answer for every ten
//! messages sent and every ten deleted, about a tenth of a loaded server's
//! instructions. The Query protocol still goes through
//! [`BatchResult::into_value`], and both carry the same members (tested).

use serde_json::{Map, Value};

use crate::json_writer::write_str;

/// A batch action's answer: one entry per request entry, in either list.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BatchResult {
    /// `Successful`.
    pub successful: Vec<BatchSuccess>,
    /// `Failed`.
    pub failed: Vec<BatchFailure>,
}

/// A `Successful` entry: its `Id`, and for a sent message what SQS
/// answers about it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BatchSuccess {
    /// `Id`: the request entry's.
    pub id: String,
    /// `MessageId` (sends only).
    pub message_id: Option<String>,
    /// `MD5OfMessageBody` (sends only).
    pub md5_of_message_body: Option<String>,
    /// `MD5OfMessageAttributes`, when the message has attributes.
    pub md5_of_message_attributes: Option<String>,
    /// `MD5OfMessageSystemAttributes`, when the message has system attributes.
    pub md5_of_message_system_attributes: Option<String>,
    /// `SequenceNumber` (FIFO sends only).
    pub sequence_number: Option<String>,
}

/// A `Failed` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchFailure {
    /// `Id`: the request entry's.
    pub id: String,
    /// `SenderFault`.
    pub sender_fault: bool,
    /// `Code`: the Query error code.
    pub code: &'static str,
    /// `Message`.
    pub message: String,
}

impl BatchSuccess {
    /// The members in answer order, those present only.
    fn members(&self) -> impl Iterator<Item = (&'static str, &str)> {
        [
            ("Id", Some(self.id.as_str())),
            ("MessageId", self.message_id.as_deref()),
            ("MD5OfMessageBody", self.md5_of_message_body.as_deref()),
            (
                "MD5OfMessageAttributes",
                self.md5_of_message_attributes.as_deref(),
            ),
            (
                "MD5OfMessageSystemAttributes",
                self.md5_of_message_system_attributes.as_deref(),
            ),
            ("SequenceNumber", self.sequence_number.as_deref()),
        ]
        .into_iter()
        .filter_map(|(name, value)| value.map(|v| (name, v)))
    }
}

impl BatchResult {
    /// The answer as a JSON-shaped value (for the Query protocol and tests).
    pub fn into_value(self) -> Value {
        let successful = (self.successful.iter())
            .map(|s| {
                let fields = (s.members())
                    .map(|(name, value)| (name.to_string(), Value::String(value.to_string())));
                Value::Object(fields.collect())
            })
            .collect();
        let failed_empty = self.failed.is_empty();
        let failed = (self.failed.into_iter())
            .map(|f| {
                let mut fields = Map::with_capacity(4);
                fields.insert("Id".into(), Value::String(f.id));
                fields.insert("SenderFault".into(), Value::Bool(f.sender_fault));
                fields.insert("Code".into(), Value::String(f.code.into()));
                fields.insert("Message".into(), Value::String(f.message));
                Value::Object(fields)
            })
            .collect();
        // An empty list is left out, as AWS answers (rule V23).
        let mut out = Map::with_capacity(2);
        if !self.successful.is_empty() {
            out.insert("Successful".into(), Value::Array(successful));
        }
        if !failed_empty {
            out.insert("Failed".into(), Value::Array(failed));
        }
        Value::Object(out)
    }

    /// Appends the answer as compact JSON.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        out.reserve(64 + 160 * self.successful.len() + 160 * self.failed.len());
        // An empty list is left out, as AWS answers (rule V23).
        out.push(b'{');
        if !self.successful.is_empty() {
            out.extend_from_slice(b"\"Successful\":[");
        }
        for (i, s) in self.successful.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.push(b'{');
            for (j, (name, value)) in s.members().enumerate() {
                if j > 0 {
                    out.push(b',');
                }
                write_str(out, name);
                out.push(b':');
                write_str(out, value);
            }
            out.push(b'}');
        }
        match (self.successful.is_empty(), self.failed.is_empty()) {
            (false, false) => out.extend_from_slice(b"],\"Failed\":["),
            (false, true) => out.push(b']'),
            (true, false) => out.extend_from_slice(b"\"Failed\":["),
            (true, true) => {}
        }
        for (i, f) in self.failed.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(b"{\"Id\":");
            write_str(out, &f.id);
            out.extend_from_slice(if f.sender_fault {
                b",\"SenderFault\":true,\"Code\":"
            } else {
                b",\"SenderFault\":false,\"Code\":"
            });
            write_str(out, f.code);
            out.extend_from_slice(b",\"Message\":");
            write_str(out, &f.message);
            out.push(b'}');
        }
        if !self.failed.is_empty() {
            out.push(b']');
        }
        out.push(b'}');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Output;

    fn same_json_as_the_value(result: BatchResult) {
        crate::output::tests::same_json_as_the_value(Output::Batch(result));
    }

    /// W1: the JSON protocol's direct answer carries exactly what the
    /// Query protocol's Value does, whichever members an entry has.
    #[test]
    fn w1_batch_results_write_the_json_of_their_value() {
        same_json_as_the_value(BatchResult::default());
        let deleted = |id: &str| BatchSuccess {
            id: id.into(),
            ..BatchSuccess::default()
        };
        same_json_as_the_value(BatchResult {
            successful: vec![deleted("a"), deleted("b-2")],
            failed: vec![],
        });
        let sent = BatchSuccess {
            id: "m_1".into(),
            message_id: Some("5fea7756-0ea4-451a-a703-a558b933e274".into()),
            md5_of_message_body: Some("0123456789abcdef0123456789abcdef".into()),
            md5_of_message_attributes: Some("fedcba9876543210fedcba9876543210".into()),
            md5_of_message_system_attributes: Some("00112233445566778899aabbccddeeff".into()),
            sequence_number: Some("00000000000000000042".into()),
        };
        let plain = BatchSuccess {
            id: "m_2".into(),
            message_id: Some("id-2".into()),
            md5_of_message_body: Some("0123456789abcdef0123456789abcdef".into()),
            ..BatchSuccess::default()
        };
        same_json_as_the_value(BatchResult {
            successful: vec![sent, plain],
            failed: vec![
                BatchFailure {
                    id: "m_3".into(),
                    sender_fault: true,
                    code: "InvalidParameterValue",
                    message: "The message \"body\" is\tnot valid".into(),
                },
                BatchFailure {
                    id: "m_4".into(),
                    sender_fault: false,
                    code: "InternalError",
                    message: "no".into(),
                },
            ],
        });
    }

    #[test]
    fn absent_members_are_left_out() {
        let value = BatchResult {
            successful: vec![BatchSuccess {
                id: "x".into(),
                ..BatchSuccess::default()
            }],
            failed: vec![],
        }
        .into_value();
        assert_eq!(value, serde_json::json!({"Successful": [{"Id": "x"}]}));
    }

    /// V23: a list with no entry is left out of the answer, as AWS answers a
    /// batch whose entries all succeeded (LocalStack snapshot
    /// test_send_message_batch_with_oversized_contents_with_updated_maximum_message_size[sqs]).
    #[test]
    fn v23_empty_lists_are_left_out() {
        let failure = BatchFailure {
            id: "f".into(),
            sender_fault: true,
            code: "InvalidParameterValue",
            message: "m".into(),
        };
        let cases = [
            (vec![], vec![], serde_json::json!({})),
            (
                vec![],
                vec![failure.clone()],
                serde_json::json!({"Failed": [{"Id": "f", "SenderFault": true,
                    "Code": "InvalidParameterValue", "Message": "m"}]}),
            ),
        ];
        for (successful, failed, want) in cases {
            let result = BatchResult { successful, failed };
            let mut direct = Vec::new();
            result.write_json(&mut direct);
            assert_eq!(serde_json::from_slice::<Value>(&direct).unwrap(), want);
            assert_eq!(result.into_value(), want);
        }
    }
}

//! The AWS JSON 1.0 shapes of the actions the benchmark uses, shared by the
//! client (which writes requests and reads responses) and the null server
//! (which does the opposite). Only the members the benchmark needs are here;
//! unknown members are ignored when reading.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

/// One message of a SendMessageBatch request.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct SendEntry<'a> {
    /// The entry id, unique in the batch.
    #[serde(borrow)]
    pub id: Cow<'a, str>,
    /// The body.
    #[serde(borrow)]
    pub message_body: Cow<'a, str>,
    /// FIFO: the message group.
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    pub message_group_id: Option<Cow<'a, str>>,
    /// FIFO: the deduplication id.
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    pub message_deduplication_id: Option<Cow<'a, str>>,
}

/// SendMessageBatch input.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct SendMessageBatchRequest<'a> {
    /// The queue.
    #[serde(borrow)]
    pub queue_url: Cow<'a, str>,
    /// The messages.
    #[serde(borrow)]
    pub entries: Vec<SendEntry<'a>>,
}

impl SendMessageBatchRequest<'_> {
    /// The request as JSON, byte for byte what serde_json writes, with the
    /// strings escaped by sluice-protocol's writer: serde_json's
    /// byte-by-byte escaping of the bodies was 28 % of the load
    /// generator's instructions, CPU taken from the server it measures.
    pub fn to_json(&self) -> Vec<u8> {
        use sluice_protocol::json_writer::write_str;
        let bodies: usize = self.entries.iter().map(|e| e.message_body.len() + 64).sum();
        let mut out = Vec::with_capacity(self.queue_url.len() + bodies + 32);
        out.extend_from_slice(b"{\"QueueUrl\":");
        write_str(&mut out, &self.queue_url);
        out.extend_from_slice(b",\"Entries\":[");
        for (i, entry) in self.entries.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(b"{\"Id\":");
            write_str(&mut out, &entry.id);
            out.extend_from_slice(b",\"MessageBody\":");
            write_str(&mut out, &entry.message_body);
            if let Some(group) = &entry.message_group_id {
                out.extend_from_slice(b",\"MessageGroupId\":");
                write_str(&mut out, group);
            }
            if let Some(dedup) = &entry.message_deduplication_id {
                out.extend_from_slice(b",\"MessageDeduplicationId\":");
                write_str(&mut out, dedup);
            }
            out.push(b'}');
        }
        out.extend_from_slice(b"]}");
        out
    }
}

/// One stored message of a SendMessageBatch response.
#[derive(Debug, Serialize, Deserialize)]
pub struct SendResultEntry {
    /// The entry id of the request.
    #[serde(rename = "Id")]
    pub id: String,
    /// The id the server gave the message.
    #[serde(rename = "MessageId", default)]
    pub message_id: String,
    /// Hex MD5 of the body.
    #[serde(rename = "MD5OfMessageBody", default)]
    pub md5_of_message_body: String,
}

/// One failed entry of a batch response.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct BatchErrorEntry {
    /// The entry id of the request.
    pub id: String,
    /// The SQS error code.
    #[serde(default)]
    pub code: String,
    /// The error message.
    #[serde(default)]
    pub message: Option<String>,
    /// Whether the client is at fault.
    #[serde(default)]
    pub sender_fault: bool,
}

/// SendMessageBatch output.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct SendMessageBatchResponse {
    /// Stored entries.
    #[serde(default)]
    pub successful: Vec<SendResultEntry>,
    /// Refused entries.
    #[serde(default)]
    pub failed: Vec<BatchErrorEntry>,
}

/// ReceiveMessage input.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ReceiveMessageRequest<'a> {
    /// The queue.
    #[serde(borrow)]
    pub queue_url: Cow<'a, str>,
    /// At most this many messages (1 to 10; SQS's default is 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_number_of_messages: Option<u32>,
    /// Long polling: wait up to this many seconds for a message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_time_seconds: Option<u32>,
}

/// One message of a ReceiveMessage response, borrowing from the response
/// bytes when it can (bodies are the bulk of a receive).
#[derive(Debug, Serialize, Deserialize)]
pub struct ReceivedMessage<'a> {
    /// The server's id of the message.
    #[serde(rename = "MessageId", borrow, default)]
    pub message_id: Cow<'a, str>,
    /// The handle that deletes this delivery.
    #[serde(rename = "ReceiptHandle", borrow)]
    pub receipt_handle: Cow<'a, str>,
    /// Hex MD5 of the body.
    #[serde(rename = "MD5OfBody", borrow, default)]
    pub md5_of_body: Cow<'a, str>,
    /// The body.
    #[serde(rename = "Body", borrow, default)]
    pub body: Cow<'a, str>,
}

/// ReceiveMessage output.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ReceiveMessageResponse<'a> {
    /// The messages; absent when none was ready.
    #[serde(borrow, default, skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<ReceivedMessage<'a>>,
}

/// One entry of a DeleteMessageBatch request.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DeleteEntry<'a> {
    /// The entry id, unique in the batch.
    #[serde(borrow)]
    pub id: Cow<'a, str>,
    /// The receipt handle of the delivery to delete.
    #[serde(borrow)]
    pub receipt_handle: Cow<'a, str>,
}

/// DeleteMessageBatch input.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DeleteMessageBatchRequest<'a> {
    /// The queue.
    #[serde(borrow)]
    pub queue_url: Cow<'a, str>,
    /// The deliveries to delete.
    #[serde(borrow)]
    pub entries: Vec<DeleteEntry<'a>>,
}

/// One deleted entry of a DeleteMessageBatch response.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct IdEntry {
    /// The entry id of the request.
    pub id: String,
}

/// DeleteMessageBatch output.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DeleteMessageBatchResponse {
    /// Deleted entries.
    #[serde(default)]
    pub successful: Vec<IdEntry>,
    /// Refused entries.
    #[serde(default)]
    pub failed: Vec<BatchErrorEntry>,
}

/// The entry ids `"0"` to `"9"`, so batches need not format them.
pub const ENTRY_IDS: [&str; 10] = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"];

/// The position in its batch of an entry named by [`ENTRY_IDS`].
pub fn entry_index(id: &str) -> Option<usize> {
    ENTRY_IDS.iter().position(|candidate| *candidate == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn send_batch_json_is_what_serde_json_writes() {
        let entries = vec![
            SendEntry {
                id: "0".into(),
                message_body: "plain body padded to more than sixteen bytes".into(),
                message_group_id: None,
                message_deduplication_id: None,
            },
            SendEntry {
                id: "1".into(),
                message_body: "quote \" backslash \\ newline \n tab \t nul \u{0} é 😀".into(),
                message_group_id: Some("group \"7\"".into()),
                message_deduplication_id: Some("dedup-1".into()),
            },
            SendEntry {
                id: "2".into(),
                message_body: "x".into(),
                message_group_id: None,
                message_deduplication_id: Some("only-dedup".into()),
            },
        ];
        let request = SendMessageBatchRequest {
            queue_url: "http://127.0.0.1:9324/000000000000/q".into(),
            entries,
        };
        assert_eq!(
            String::from_utf8(request.to_json()).unwrap(),
            serde_json::to_string(&request).unwrap()
        );
    }
}

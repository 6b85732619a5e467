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

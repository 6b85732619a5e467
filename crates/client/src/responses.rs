//! The outputs of the actions the client calls, in AWS JSON 1.0's member
//! names. The inputs are `sluice-protocol`'s request types, the ones the
//! server decodes; the server writes its outputs without typed structs, so
//! these are their one typed reading. The bench's null server writes the
//! message loop's outputs with them too.
//!
//! Lists of rows the operator commands print as the server wrote them
//! (PeekMessages' messages, alarms, consumers, move tasks) are kept as JSON
//! values, so `--json` shows every member, the future ones included.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An output with no members (PurgeQueue, PutAlarm, CreateConsumer, …).
#[derive(Debug, Default, Deserialize)]
pub struct Empty {}

/// CreateQueue and GetQueueUrl output.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct QueueUrlOutput {
    /// The queue's URL.
    pub queue_url: String,
}

/// ListQueues output.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListQueuesOutput {
    /// The queues of this page.
    #[serde(default)]
    pub queue_urls: Vec<String>,
    /// The next page's token.
    #[serde(default)]
    pub next_token: Option<String>,
}

/// GetQueueAttributes output.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct GetQueueAttributesOutput {
    /// The attributes asked for, by name.
    #[serde(default)]
    pub attributes: BTreeMap<String, String>,
}

/// ListQueueTags output.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListQueueTagsOutput {
    /// The tags, by key.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
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

/// StartMessageMoveTask output.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct StartMessageMoveTaskOutput {
    /// The task's handle, for CancelMessageMoveTask.
    pub task_handle: String,
}

/// ListMessageMoveTasks output.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListMessageMoveTasksOutput {
    /// The tasks, newest first, as the server wrote them.
    #[serde(default)]
    pub results: Vec<Value>,
}

/// CancelMessageMoveTask output.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct CancelMessageMoveTaskOutput {
    /// How many messages the task had moved (they stay moved).
    #[serde(default)]
    pub approximate_number_of_messages_moved: u64,
}

/// PeekMessages output (sluice's own).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct PeekMessagesOutput {
    /// The messages of this page, as the server wrote them.
    #[serde(default)]
    pub messages: Vec<Value>,
    /// The next page's token.
    #[serde(default)]
    pub next_token: Option<String>,
}

/// RedriveMessages output (sluice's own).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct RedriveMessagesOutput {
    /// Messages moved (or that would move, on a dry run).
    #[serde(default)]
    pub moved: u64,
    /// Their ids as they were in the dead-letter queue.
    #[serde(default)]
    pub message_ids: Vec<String>,
    /// Matching messages refused for their replay count.
    #[serde(default)]
    pub refused: u64,
    /// Matching messages with nowhere to go, left in place.
    #[serde(default)]
    pub unmovable: u64,
    /// Why messages were unmovable.
    #[serde(default)]
    pub reason: Option<String>,
}

/// DescribeAlarms output (sluice's own).
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeAlarmsOutput {
    /// The alarms, as the server wrote them.
    #[serde(default)]
    pub alarms: Vec<Value>,
}

/// ListConsumers output (sluice's own).
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListConsumersOutput {
    /// The consumers, as the server wrote them.
    #[serde(default)]
    pub consumers: Vec<Value>,
}

/// GetDepthHistory output (sluice's own).
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct GetDepthHistoryOutput {
    /// Seconds between two samples.
    #[serde(default)]
    pub interval_seconds: u64,
    /// The queues' histories.
    #[serde(default)]
    pub queues: Vec<QueueDepthHistory>,
}

/// One queue's depths over the last hour.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct QueueDepthHistory {
    /// The queue's URL.
    pub queue_url: String,
    /// Its samples, oldest first.
    #[serde(default)]
    pub samples: Vec<DepthSample>,
}

/// A queue's message counts at one moment.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DepthSample {
    /// When, in ms since the epoch.
    pub timestamp: u64,
    /// Messages a receive could get.
    pub visible: u64,
    /// Messages received and not yet deleted.
    pub in_flight: u64,
    /// Messages not yet visible.
    pub delayed: u64,
}

/// CreateBackup output (sluice's own).
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct CreateBackupOutput {
    /// The backup's directory, as the server resolved it.
    #[serde(default)]
    pub directory: String,
    /// Files written.
    #[serde(default)]
    pub files: u64,
    /// Bytes written.
    #[serde(default)]
    pub bytes: u64,
    /// The last log record the backup holds.
    #[serde(default)]
    pub applied_lsn: u64,
}

//! The values that cross the broker trait.

use std::collections::BTreeMap;
use std::time::Duration;

use sluice_core::attributes::QueueConfig;
use sluice_core::clock::Millis;
use sluice_core::digest::body_digests;
use sluice_core::message::MessageAttributes;

/// A CreateQueue request, validated.
#[derive(Debug, Clone)]
pub struct CreateQueue {
    /// The queue's name.
    pub name: String,
    /// The configuration built from `requested`.
    pub config: QueueConfig,
    /// The attributes as the client gave them, to compare with an existing
    /// queue of the same name (rule V9).
    pub requested: BTreeMap<String, String>,
    /// Tags to set on a new queue.
    pub tags: BTreeMap<String, String>,
}

/// A queue's configuration, tags and timestamps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueMeta {
    /// The queue's name.
    pub name: String,
    /// Its configuration.
    pub config: QueueConfig,
    /// Its tags.
    pub tags: BTreeMap<String, String>,
    /// When it was created (ms since the epoch).
    pub created_at: Millis,
    /// When its attributes last changed (ms since the epoch).
    pub modified_at: Millis,
}

/// Approximate counts of a queue's messages (rule V11).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueueCounts {
    /// Receivable now.
    pub visible: u64,
    /// Received and not yet deleted or expired from visibility.
    pub in_flight: u64,
    /// Waiting for their delay to end.
    pub delayed: u64,
}

/// A message to store, already validated.
#[derive(Debug, Clone, Default)]
pub struct NewMessage {
    /// The body.
    pub body: String,
    /// User message attributes.
    pub attributes: MessageAttributes,
    /// System message attributes (`AWSTraceHeader`).
    pub system_attributes: MessageAttributes,
    /// Per-message delay; the queue's when `None`.
    pub delay_seconds: Option<u32>,
    /// The message group (FIFO, or fair queues).
    pub group_id: Option<String>,
    /// The deduplication id (FIFO).
    pub dedup_id: Option<String>,
    /// The body's MD5 when the sender already computed it: an engine may
    /// keep it and return it with receives, which then skip hashing.
    pub body_md5: Option<[u8; 16]>,
    /// The message id to keep (a restore from the archive, rule X8); a new
    /// one when `None`.
    pub keep_id: Option<[u8; 16]>,
}

/// What a send assigned to a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentMessage {
    /// The new message's id.
    pub message_id: String,
    /// FIFO sequence number.
    pub sequence_number: Option<String>,
}

/// How to receive.
#[derive(Debug, Clone)]
pub struct ReceiveOptions {
    /// 1–10.
    pub max_messages: u32,
    /// Overrides the queue's visibility timeout.
    pub visibility_timeout: Option<u32>,
    /// How long to wait for a message when none is receivable.
    pub wait: Duration,
    /// FIFO receive retry id.
    pub attempt_id: Option<String>,
}

/// A delivered message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReceivedMessage {
    /// The message's id.
    pub message_id: String,
    /// The handle of this delivery.
    pub receipt_handle: String,
    /// The body.
    pub body: String,
    /// User message attributes, all of them (the service filters).
    pub attributes: MessageAttributes,
    /// System message attributes given at send.
    pub system_attributes: MessageAttributes,
    /// When it was sent (ms).
    pub sent_at: Millis,
    /// When it was first received (ms).
    pub first_receive_at: Millis,
    /// How many times it has been received, this time included.
    pub receive_count: u32,
    /// The message group, if any.
    pub group_id: Option<String>,
    /// The deduplication id, if any.
    pub dedup_id: Option<String>,
    /// FIFO sequence number.
    pub sequence_number: Option<String>,
    /// The body's MD5 if the engine kept it (see [`NewMessage::body_md5`]).
    pub body_md5: Option<[u8; 16]>,
}

impl ReceivedMessage {
    /// Fills in the body digest of each message whose engine kept none
    /// (the PostgreSQL engine's, a topic's deliveries), the bodies hashed
    /// together, side by side where the CPU can: cheaper than one by one
    /// where each is wanted (ReceiveMessage's answer, a consumer's event).
    pub fn fill_body_digests(messages: &mut [ReceivedMessage]) {
        let missing: Vec<&str> = messages
            .iter()
            .filter(|m| m.body_md5.is_none())
            .map(|m| m.body.as_str())
            .collect();
        if missing.is_empty() {
            return;
        }
        let mut digests = body_digests(&missing).into_iter();
        for m in messages.iter_mut().filter(|m| m.body_md5.is_none()) {
            m.body_md5 = digests.next();
        }
    }
}

/// One ChangeMessageVisibility entry.
#[derive(Debug, Clone)]
pub struct VisibilityChange {
    /// The handle of the delivery to change.
    pub receipt_handle: String,
    /// The new remaining invisibility, seconds from now.
    pub visibility_timeout: u32,
}

/// The state of a message move task (rule R7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum MoveTaskStatus {
    /// Moving messages.
    #[serde(rename = "RUNNING")]
    Running,
    /// Every message counted at the start was handled.
    #[serde(rename = "COMPLETED")]
    Completed,
    /// Asked to stop; stops after the messages in hand.
    #[serde(rename = "CANCELLING")]
    Cancelling,
    /// Stopped on request; moved messages stay moved.
    #[serde(rename = "CANCELLED")]
    Cancelled,
    /// Stopped by an error; see the failure reason.
    #[serde(rename = "FAILED")]
    Failed,
}

impl MoveTaskStatus {
    /// The SQS spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            MoveTaskStatus::Running => "RUNNING",
            MoveTaskStatus::Completed => "COMPLETED",
            MoveTaskStatus::Cancelling => "CANCELLING",
            MoveTaskStatus::Cancelled => "CANCELLED",
            MoveTaskStatus::Failed => "FAILED",
        }
    }

    /// True while the task may still move messages.
    pub fn is_active(self) -> bool {
        matches!(self, MoveTaskStatus::Running | MoveTaskStatus::Cancelling)
    }
}

/// A message move task (StartMessageMoveTask), as stored.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MoveTask {
    /// The opaque handle given to clients.
    pub handle: String,
    /// ARN of the dead-letter queue messages move out of.
    pub source_arn: String,
    /// ARN of the queue they move to; each message's own source when `None`.
    pub destination_arn: Option<String>,
    /// Rate limit, messages per second.
    pub max_per_second: Option<u32>,
    /// Where the task is.
    pub status: MoveTaskStatus,
    /// Messages moved so far.
    pub moved: u64,
    /// Messages in the source when the task started.
    pub to_move: u64,
    /// Why the task failed.
    pub failure_reason: Option<String>,
    /// When it started (ms since the epoch).
    pub started_at: Millis,
}

/// What one step of a redrive did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RedriveOutcome {
    /// Messages moved.
    pub moved: u64,
    /// Messages left in place because they have no destination: no
    /// `DeadLetterQueueSourceArn` and no destination given, or a
    /// destination queue that does not exist.
    pub unmovable: u64,
    /// Messages left in place because they were replayed too often.
    pub refused: u64,
    /// Why the last unmovable or refused message could not move.
    pub reason: Option<String>,
    /// Ids of the messages moved (or, in a dry run, that would move).
    pub message_ids: Vec<String>,
}

/// What the storage engine holds, for `/metrics`: an operator's view of
/// the disk a write-ahead log takes and the memory bodies take.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StorageStats {
    /// Write-ahead log segment files on disk and their bytes; `None`
    /// while the storage is closed (refusing writes, or being reopened).
    pub log: Option<(u64, u64)>,
    /// Bytes of message bodies the durable engine keeps in memory.
    pub cached_body_bytes: u64,
    /// Whether the engine refuses writes now, after a failed write to
    /// storage (rules D5, D6), until it has reopened its storage.
    pub writes_refused: bool,
}

/// What encryption at rest did on this node, for `/metrics`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EncryptionStats {
    /// Data keys made since the start: a queue's first sealed message
    /// makes one, and so does each rotation (its reuse period over, or its
    /// key changed).
    pub data_keys_made: u64,
}

/// What [`Broker::rekey`](crate::Broker::rekey) did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Rekey {
    /// Data keys wrapped again by the new active key, and stored.
    pub rewrapped: usize,
    /// Data keys whose master the new keyring retired: what they sealed
    /// stays readable until the next start shreds it.
    pub retired: usize,
}

/// A queue's counts and activity since the server started (rule M1).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueueStats {
    /// Visible, in flight, delayed.
    pub counts: QueueCounts,
    /// Age of the oldest message, ms (0 when empty).
    pub oldest_age_ms: u64,
    /// Messages stored by sends (duplicates not counted).
    pub sent: u64,
    /// Bytes of the messages sent (body and attributes).
    pub sent_bytes: u64,
    /// Messages delivered by receives.
    pub received: u64,
    /// Messages deleted by consumers.
    pub deleted: u64,
    /// Receives that returned nothing.
    pub empty_receives: u64,
    /// Messages moved to the dead-letter queue.
    pub dead_lettered: u64,
    /// Of those, the ones whose last failure had a class, by class (rule
    /// X7), counted by this node.
    pub dead_lettered_by_class: Vec<(String, u64)>,
    /// Messages moved out by a redrive.
    pub redriven: u64,
    /// Messages deleted by retention.
    pub expired: u64,
    /// FIFO sends answered as duplicates within the deduplication window,
    /// nothing stored (NumberOfDeduplicatedSentMessages).
    pub deduplicated: u64,
    /// FIFO: message groups with a message in flight
    /// (ApproximateNumberOfGroupsWithInflightMessages); 0 for a standard
    /// queue.
    pub groups_in_flight: u64,
    /// Messages past retention held until the archive has them (rule X8):
    /// above 0 for long, the archive is failing.
    pub awaiting_archive: u64,
    /// Fair queues: the noisy tenants and the quiet ones' messages; zeros
    /// for any other queue.
    pub fair: FairStats,
}

/// A fair queue's metrics as SQS publishes them (rule V10).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FairStats {
    /// Tenants noisy now (ApproximateNumberOfNoisyGroups).
    pub noisy_groups: u64,
    /// Quiet tenants' messages ready to be received
    /// (ApproximateNumberOfMessagesVisibleInQuietGroups).
    pub quiet_visible: u64,
    /// Quiet tenants' messages in flight
    /// (ApproximateNumberOfMessagesNotVisibleInQuietGroups).
    pub quiet_in_flight: u64,
    /// Quiet tenants' delayed messages
    /// (ApproximateNumberOfMessagesDelayedInQuietGroups).
    pub quiet_delayed: u64,
    /// Age of the oldest quiet tenant's message waiting to be received, ms
    /// (ApproximateAgeOfOldestMessageInQuietGroups).
    pub quiet_oldest_age_ms: u64,
}

/// A consumer's report that it failed to process a message (rule X2).
#[derive(Debug, Clone, Default)]
pub struct Nack {
    /// Why, for the people who will read the DLQ.
    pub reason: Option<String>,
    /// The kind of failure, which `SluiceDeadLetterRoutes` may route (rule X7).
    pub class: Option<String>,
    /// Deterministic failure: move to the DLQ now instead of retrying.
    pub permanent: bool,
    /// Retry no sooner than this many seconds from now (0 when absent).
    pub retry_after_seconds: Option<u32>,
}

/// Which messages a peek or a selective redrive takes (rules X1, X3).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MessageFilter {
    /// Sent at or after (ms).
    pub sent_after: Option<Millis>,
    /// Sent before (ms).
    pub sent_before: Option<Millis>,
    /// The body contains this text.
    pub body_contains: Option<String>,
    /// A message attribute with this name has this string value.
    pub attribute: Option<(String, String)>,
    /// Dead-lettered from this queue ARN.
    pub source_arn: Option<String>,
    /// The last failure reason contains this text.
    pub reason_contains: Option<String>,
    /// The last failure's class is this one (rule X7).
    pub failure_class: Option<String>,
}

impl MessageFilter {
    /// Does `m` pass every condition given?
    pub fn matches(&self, m: &PeekedMessage) -> bool {
        use sluice_core::message::AttributeValue;
        self.sent_after.is_none_or(|t| m.sent_at >= t)
            && self.sent_before.is_none_or(|t| m.sent_at < t)
            && self
                .body_contains
                .as_ref()
                .is_none_or(|s| m.body.contains(s.as_str()))
            && self.attribute.as_ref().is_none_or(|(name, value)| {
                m.attributes
                    .get(name)
                    .is_some_and(|a| matches!(&a.value, AttributeValue::String(v) if v == value))
            })
            && self.source_arn.as_ref().is_none_or(|arn| {
                m.system_attributes
                    .get("DeadLetterQueueSourceArn")
                    .is_some_and(|a| matches!(&a.value, AttributeValue::String(v) if v == arn))
            })
            && self.reason_contains.as_ref().is_none_or(|s| {
                m.failure_reason
                    .as_deref()
                    .is_some_and(|r| r.contains(s.as_str()))
            })
            && self
                .failure_class
                .as_ref()
                .is_none_or(|c| m.failure_class.as_deref() == Some(c.as_str()))
    }
}

/// A message seen without receiving it (rule X1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeekedMessage {
    /// Position in the queue, for paging.
    pub position: u64,
    /// The message id.
    pub message_id: String,
    /// The body.
    pub body: String,
    /// User attributes.
    pub attributes: MessageAttributes,
    /// System attributes kept with the message, provenance included.
    pub system_attributes: MessageAttributes,
    /// When it was sent (ms).
    pub sent_at: Millis,
    /// Receives so far.
    pub receive_count: u32,
    /// First receive (ms), 0 before it.
    pub first_receive_at: Millis,
    /// Latest receive (ms), 0 before the first.
    pub last_receive_at: Millis,
    /// `visible`, `in_flight` or `delayed`.
    pub state: &'static str,
    /// The message group.
    pub group_id: Option<String>,
    /// The deduplication id (FIFO), so an export can keep it.
    pub dedup_id: Option<String>,
    /// The sequence number (FIFO).
    pub sequence_number: Option<String>,
    /// The last failure reason a consumer gave.
    pub failure_reason: Option<String>,
    /// The class of the last classified failure (rule X7).
    pub failure_class: Option<String>,
}

/// One page of a peek.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PeekPage {
    /// Matching messages in queue order.
    pub messages: Vec<PeekedMessage>,
    /// Where the next page starts, when there may be more.
    pub next: Option<u64>,
}

/// The message attribute counting how many times a message was redriven
/// by a selective redrive (rule X3); its presence marks a replay.
pub const REPLAY_COUNT_ATTRIBUTE: &str = "sluice.replay-count";

/// What a redrive moves and how (rules R7, X3).
#[derive(Debug, Clone, Default)]
pub struct Redrive {
    /// Destination queue name; each message's source when `None`.
    pub destination: Option<String>,
    /// Most messages to move.
    pub max: usize,
    /// Only messages matching this.
    pub filter: MessageFilter,
    /// A replay (sluice's selective redrive, rule X3): moved messages keep
    /// their message ids, so idempotency keys made from them match (rule
    /// I1), and are marked as replays with a count. Otherwise (SQS's move
    /// tasks) each moved message gets a new id, as SQS gives it.
    pub mark_replay: bool,
    /// Refuse messages already replayed this many times (rule X3).
    pub max_replays: Option<u32>,
    /// Report what would move and move nothing.
    pub dry_run: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_core::digest::body_digest;

    fn received(body: &str, body_md5: Option<[u8; 16]>) -> ReceivedMessage {
        ReceivedMessage {
            body: body.into(),
            body_md5,
            ..Default::default()
        }
    }

    /// W4: each message without a digest gets its own body's, in its own
    /// place among those that had one; a kept digest is left as it was.
    #[test]
    fn w4_fill_body_digests_fills_only_the_missing_in_place() {
        let kept = [7u8; 16];
        let long = "x".repeat(130);
        let bodies = ["a", "", "ünïcödé", long.as_str(), "b"];
        let mut messages: Vec<ReceivedMessage> = bodies
            .iter()
            .enumerate()
            .map(|(i, b)| received(b, (i % 2 == 1).then_some(kept)))
            .collect();
        ReceivedMessage::fill_body_digests(&mut messages);
        for (i, m) in messages.iter().enumerate() {
            let want = if i % 2 == 1 {
                kept
            } else {
                body_digest(bodies[i])
            };
            assert_eq!(m.body_md5, Some(want), "message {i}");
        }
    }
}

//! The records the archive keeps: archived messages and restores.

use serde::{Deserialize, Serialize};
use sluice_broker::PeekedMessage;
use sluice_core::message::MessageAttributes;

use crate::cursor::ArchiveCursor;

/// One archived message: one JSON line in a segment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArchivedMessage {
    /// The queue's key in the engine (may contain '/', e.g.
    /// "eu-west-1/000000000000/orders").
    pub queue: String,
    /// The message id.
    pub message_id: String,
    /// The body.
    pub body: String,
    /// User message attributes.
    #[serde(default)]
    pub attributes: MessageAttributes,
    /// System message attributes, provenance included.
    #[serde(default)]
    pub system_attributes: MessageAttributes,
    /// When it was sent (ms since the epoch).
    pub sent_at: u64,
    /// When it was archived (ms since the epoch).
    pub archived_at: u64,
    /// Receives before it was archived.
    pub receive_count: u32,
    /// First receive (ms), 0 if never received.
    #[serde(default)]
    pub first_receive_at: u64,
    /// Latest receive (ms), 0 if never received.
    #[serde(default)]
    pub last_receive_at: u64,
    /// The message group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_id: Option<String>,
    /// The deduplication id (FIFO).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dedup_id: Option<String>,
    /// The sequence number (FIFO).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequence_number: Option<String>,
    /// The last failure reason a consumer gave.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
    /// The class of the last classified failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_class: Option<String>,
}

impl ArchivedMessage {
    /// The record of a message of `queue` seen by a peek, archived at
    /// `archived_at` (ms).
    pub fn from_peeked(queue: &str, m: &PeekedMessage, archived_at: u64) -> Self {
        ArchivedMessage {
            queue: queue.to_owned(),
            message_id: m.message_id.clone(),
            body: m.body.clone(),
            attributes: m.attributes.clone(),
            system_attributes: m.system_attributes.clone(),
            sent_at: m.sent_at,
            archived_at,
            receive_count: m.receive_count,
            first_receive_at: m.first_receive_at,
            last_receive_at: m.last_receive_at,
            group_id: m.group_id.clone(),
            dedup_id: m.dedup_id.clone(),
            sequence_number: m.sequence_number.clone(),
            failure_reason: m.failure_reason.clone(),
            failure_class: m.failure_class.clone(),
        }
    }

    /// The message as a peek shows it (state `archived`, position 0), so
    /// that `MessageFilter::matches` applies to archived messages too.
    pub fn peeked(&self) -> PeekedMessage {
        PeekedMessage {
            position: 0,
            message_id: self.message_id.clone(),
            body: self.body.clone(),
            attributes: self.attributes.clone(),
            system_attributes: self.system_attributes.clone(),
            sent_at: self.sent_at,
            receive_count: self.receive_count,
            first_receive_at: self.first_receive_at,
            last_receive_at: self.last_receive_at,
            state: "archived",
            group_id: self.group_id.clone(),
            dedup_id: self.dedup_id.clone(),
            sequence_number: self.sequence_number.clone(),
            failure_reason: self.failure_reason.clone(),
            failure_class: self.failure_class.clone(),
        }
    }
}

/// An archived message and when it was last restored.
#[derive(Debug, Clone, PartialEq)]
pub struct ArchivedEntry {
    /// The record.
    pub message: ArchivedMessage,
    /// When it was last restored (ms), `None` if never.
    pub restored_at: Option<u64>,
}

/// One page of a queue's archive.
#[derive(Debug, Clone, PartialEq)]
pub struct ArchivePage {
    /// Entries in archive order.
    pub entries: Vec<ArchivedEntry>,
    /// Where the next page starts; `None` when nothing more matched.
    pub next: Option<ArchiveCursor>,
}

/// One line of `restored.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RestoreRecord {
    /// The restored message.
    pub message_id: String,
    /// When (ms).
    pub restored_at: u64,
    /// The queue it went to.
    pub destination: String,
}

//! A message as the index and the store hold it: its data, which never
//! changes once sent, and its delivery state. A leaf: every layer above
//! (the index, the codecs, the store, the operations) speaks of these.

use sluice_core::clock::Millis;
use sluice_core::message::MessageAttributes;

/// What never changes about a stored message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageData {
    /// The message id (a UUID's bytes).
    pub message_id: [u8; 16],
    /// When the message was sent.
    pub sent_at: Millis,
    /// Start of its retention clock.
    pub enqueued_at: Millis,
    /// The body.
    pub body: String,
    /// User attributes.
    pub attributes: MessageAttributes,
    /// System attributes (`AWSTraceHeader`).
    pub system_attributes: MessageAttributes,
    /// Message group id.
    pub group_id: Option<String>,
    /// Deduplication id.
    pub dedup_id: Option<String>,
    /// The body's MD5, kept with the message so receives need not hash the
    /// body (records written before it was stored have none, and their
    /// receives hash the body).
    pub body_md5: Option<[u8; 16]>,
}

/// What changes with each delivery; persisted on every change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageState {
    /// When the message is (again) receivable.
    pub visible_at: Millis,
    /// Receives so far.
    pub receive_count: u32,
    /// Time of the first receive, 0 before it.
    pub first_receive_at: Millis,
    /// Time of the latest receive, 0 before the first.
    pub last_receive_at: Millis,
}

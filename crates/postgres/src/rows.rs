//! Rows as the engine reads them, and how they look to clients.

use std::collections::BTreeMap;

use sluice_broker::EngineError;
use sluice_broker::{PeekedMessage, QueueMeta, ReceivedMessage};
use sluice_core::attributes::QueueConfig;
use sluice_core::clock::Millis;
use sluice_core::message::MessageAttributes;
use sluice_core::receipt::ReceiptHandle;
use tokio_postgres::Row;
use tokio_postgres::types::Json;

use sluice_broker::failure;
use sluice_keyring::DataKeys;

use crate::sealing;

/// The columns of a message, in the order [`MessageRow::from_row`] reads.
pub(crate) const MESSAGE_COLUMNS: &str = "seq, message_id, body, attributes, system_attributes, \
     group_id, dedup_id, sent_at, enqueued_at, visible_at, receive_count, first_receive_at, \
     last_receive_at, failure_reason";

/// The columns of a queue, in the order [`QueueRow::from_row`] reads.
pub(crate) const QUEUE_COLUMNS: &str =
    "id, name, config, tags, created_at, modified_at, last_purge, fair";

/// The group id a fair queue's ungrouped messages are stored under: the
/// group index holds grouped messages only (migration 0007), and a fair
/// receive must find every message of its queue there. No client can send
/// it (MessageGroupId is 1 to 128 characters); it reads back as no group.
pub(crate) const UNGROUPED_IN_FAIR_QUEUE: &str = "";

/// A queue's row.
#[derive(Debug, Clone)]
pub(crate) struct QueueRow {
    pub id: i64,
    pub name: String,
    pub config: QueueConfig,
    pub tags: BTreeMap<String, String>,
    pub created_at: Millis,
    pub modified_at: Millis,
    pub last_purge: Option<Millis>,
    pub fair: bool,
}

impl QueueRow {
    pub fn from_row(row: &Row) -> Result<Self, EngineError> {
        let Json(config): Json<QueueConfig> = row.try_get(2).map_err(corrupt)?;
        let Json(tags): Json<BTreeMap<String, String>> = row.try_get(3).map_err(corrupt)?;
        Ok(Self {
            id: row.try_get(0).map_err(corrupt)?,
            name: row.try_get(1).map_err(corrupt)?,
            config,
            tags,
            created_at: millis(row.try_get(4).map_err(corrupt)?),
            modified_at: millis(row.try_get(5).map_err(corrupt)?),
            last_purge: row
                .try_get::<_, Option<i64>>(6)
                .map_err(corrupt)?
                .map(millis),
            fair: row.try_get(7).map_err(corrupt)?,
        })
    }

    pub fn meta(&self) -> QueueMeta {
        QueueMeta {
            name: self.name.clone(),
            config: self.config.clone(),
            tags: self.tags.clone(),
            created_at: self.created_at,
            modified_at: self.modified_at,
        }
    }

    /// Retention in ms.
    pub fn retention_ms(&self) -> i64 {
        i64::from(self.config.message_retention_period) * 1000
    }
}

/// A message's row.
#[derive(Debug, Clone)]
pub(crate) struct MessageRow {
    pub seq: i64,
    pub message_id: uuid::Uuid,
    pub body: String,
    pub attributes: MessageAttributes,
    pub system_attributes: MessageAttributes,
    pub group_id: Option<String>,
    pub dedup_id: Option<String>,
    pub sent_at: i64,
    pub enqueued_at: i64,
    pub visible_at: i64,
    pub receive_count: i32,
    pub first_receive_at: i64,
    pub last_receive_at: i64,
    pub failure_reason: Option<String>,
}

impl MessageRow {
    /// The message of `row`, opened with `keys` when sealed (rule E1);
    /// the data keys of its sealed columns must be loaded
    /// ([`crate::encryption::load_keys_of`]).
    pub fn from_row(row: &Row, keys: &DataKeys) -> Result<Self, EngineError> {
        let Json(mut attributes): Json<MessageAttributes> = row.try_get(3).map_err(corrupt)?;
        let Json(mut system_attributes): Json<MessageAttributes> =
            row.try_get(4).map_err(corrupt)?;
        let mut body: String = row.try_get(2).map_err(corrupt)?;
        if let Some(opened) = sealing::open_message(&body, keys)? {
            (body, attributes, system_attributes) = opened;
        }
        let failure_reason = row
            .try_get::<_, Option<String>>(13)
            .map_err(corrupt)?
            .map(|stored| sealing::open_reason(&stored, keys))
            .transpose()?;
        Ok(Self {
            seq: row.try_get(0).map_err(corrupt)?,
            message_id: row.try_get(1).map_err(corrupt)?,
            body,
            attributes,
            system_attributes,
            group_id: row
                .try_get::<_, Option<String>>(5)
                .map_err(corrupt)?
                .filter(|g| g != UNGROUPED_IN_FAIR_QUEUE),
            dedup_id: row.try_get(6).map_err(corrupt)?,
            sent_at: row.try_get(7).map_err(corrupt)?,
            enqueued_at: row.try_get(8).map_err(corrupt)?,
            visible_at: row.try_get(9).map_err(corrupt)?,
            receive_count: row.try_get(10).map_err(corrupt)?,
            first_receive_at: row.try_get(11).map_err(corrupt)?,
            last_receive_at: row.try_get(12).map_err(corrupt)?,
            failure_reason,
        })
    }

    /// [`MessageRow::from_row`] of each row.
    pub fn all(rows: &[Row], keys: &DataKeys) -> Result<Vec<Self>, EngineError> {
        rows.iter().map(|r| Self::from_row(r, keys)).collect()
    }

    /// What a client receives for this row, as it is now.
    pub fn received(&self, queue_id: i64, fifo: bool) -> ReceivedMessage {
        ReceivedMessage {
            message_id: self.message_id.hyphenated().to_string(),
            receipt_handle: ReceiptHandle {
                queue_id: queue_id as u64,
                seq: self.seq as u64,
                receive: self.receive_count as u32,
                received_at: millis(self.last_receive_at),
            }
            .encode(),
            body: self.body.clone(),
            attributes: self.attributes.clone(),
            system_attributes: self.system_attributes.clone(),
            sent_at: millis(self.sent_at),
            first_receive_at: millis(self.first_receive_at),
            receive_count: self.receive_count as u32,
            group_id: self.group_id.clone(),
            dedup_id: self.dedup_id.clone(),
            sequence_number: fifo.then(|| sequence_number(self.seq)),
            // Not stored: the server hashes the body.
            body_md5: None,
        }
    }

    /// How the message looks to a peek or a redrive filter (rules X1, X3).
    pub fn peeked(&self, now: i64, fifo: bool) -> PeekedMessage {
        let (failure_reason, failure_class) =
            failure::shown(self.failure_reason.as_deref(), &self.system_attributes);
        PeekedMessage {
            position: self.seq as u64,
            message_id: self.message_id.hyphenated().to_string(),
            body: self.body.clone(),
            attributes: self.attributes.clone(),
            system_attributes: self.system_attributes.clone(),
            sent_at: millis(self.sent_at),
            receive_count: self.receive_count as u32,
            first_receive_at: millis(self.first_receive_at),
            last_receive_at: millis(self.last_receive_at),
            state: if self.visible_at <= now {
                "visible"
            } else if self.receive_count == 0 {
                "delayed"
            } else {
                "in_flight"
            },
            group_id: self.group_id.clone(),
            dedup_id: self.dedup_id.clone(),
            sequence_number: fifo.then(|| sequence_number(self.seq)),
            failure_reason,
            failure_class,
        }
    }
}

/// A FIFO sequence number as SQS writes them: a decimal string.
pub(crate) fn sequence_number(seq: i64) -> String {
    sluice_core::message::sequence_number(seq.max(0) as u64)
}

/// A stored time back as [`Millis`].
pub(crate) fn millis(t: i64) -> Millis {
    t.max(0) as Millis
}

/// Column `idx` of `row`; a value of another type is a schema mismatch,
/// answered as an internal error rather than a panic.
pub(crate) fn col<'a, T: tokio_postgres::types::FromSql<'a>>(
    row: &'a Row,
    idx: usize,
) -> Result<T, EngineError> {
    row.try_get(idx).map_err(corrupt)
}

/// A row the engine cannot read: a schema mismatch, logged, never shown.
fn corrupt(e: tokio_postgres::Error) -> EngineError {
    tracing::error!(error = %e, "unreadable row");
    EngineError::Storage("An internal error occurred.".into())
}

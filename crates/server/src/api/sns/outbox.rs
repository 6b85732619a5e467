//! The outbox of HTTP/S deliveries (rule N6): one of sluice's own queues,
//! under an account no request can name, holding one message per
//! delivery to make. A publish, a Subscribe or an Unsubscribe stores its
//! deliveries here before it is answered, so they are as durable as a
//! send (they survive kill -9), and every node sharing the storage can
//! make them: the deliverer (`deliverer.rs`) receives them with a
//! visibility timeout that is its lease on each, deletes what was
//! delivered and makes what is to be retried visible again when its retry
//! is due.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sluice_broker::{Broker, CreateQueue, EngineError, NewMessage};
use sluice_core::attributes::QueueConfig;
use sluice_core::limits::MAX_RETENTION;
use sluice_core::queue_name::{SNS_HTTP_OUTBOX, internal_key};
use sluice_protocol::sns::SnsError;

use super::errors::engine;
use crate::service::Service;

/// How long a deliverer holds a delivery it received before another may
/// take it: longer than an attempt ([`ATTEMPT_TIMEOUT_SECS`]) by far.
pub const LEASE_SECS: u32 = 60;

/// How long one HTTP attempt may take before it counts as failed (SNS's
/// delivery timeout is 15 s).
pub const ATTEMPT_TIMEOUT_SECS: u64 = 15;

/// The outbox's key.
pub fn key() -> String {
    internal_key(SNS_HTTP_OUTBOX)
}

/// What an HTTP/S delivery sends: SNS's three message types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Kind {
    /// A published message.
    Notification,
    /// Sent when an HTTP/S endpoint subscribes.
    SubscriptionConfirmation,
    /// Sent when a confirmed HTTP/S subscription is removed.
    UnsubscribeConfirmation,
}

impl Kind {
    /// The `x-amz-sns-message-type` header's value.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Notification => "Notification",
            Kind::SubscriptionConfirmation => "SubscriptionConfirmation",
            Kind::UnsubscribeConfirmation => "UnsubscribeConfirmation",
        }
    }
}

/// One delivery to make, as the outbox keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Which message type it is.
    pub kind: Kind,
    /// The subscription's id.
    pub subscription: String,
    /// Its topic's key.
    pub topic: String,
    /// The URL to POST to.
    pub endpoint: String,
    /// The SNS message id (`x-amz-sns-message-id`).
    pub message_id: String,
    /// Raw delivery: the body is the bare message.
    pub raw: bool,
    /// The body to POST: the signed document, or the raw message.
    pub body: String,
}

/// Stores `entries` in the outbox, durably, before the caller answers.
pub async fn enqueue<B: Broker>(svc: &Service<B>, entries: Vec<Entry>) -> Result<(), SnsError> {
    if entries.is_empty() {
        return Ok(());
    }
    ready(svc).await?;
    let messages = entries
        .iter()
        .map(|e| {
            serde_json::to_string(e)
                .map(|body| NewMessage {
                    body,
                    ..Default::default()
                })
                .map_err(|e| SnsError::internal(e.to_string()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    for chunk in messages.chunks(10) {
        svc.broker
            .send_messages(&key(), chunk.to_vec())
            .await
            .map_err(engine)?;
    }
    Ok(())
}

/// Creates the outbox once per process (creating it again is a no-op).
pub async fn ready<B: Broker>(svc: &Service<B>) -> Result<(), SnsError> {
    svc.sns
        .outbox_ready
        .get_or_try_init(|| async {
            let spec = CreateQueue {
                name: key(),
                config: QueueConfig {
                    message_retention_period: MAX_RETENTION,
                    visibility_timeout: LEASE_SECS,
                    ..QueueConfig::default()
                },
                requested: BTreeMap::new(),
                tags: BTreeMap::new(),
            };
            match svc.broker.create_queue(spec).await {
                Ok(_) | Err(EngineError::QueueNameExists { .. }) => Ok(()),
                Err(e) => Err(engine(e)),
            }
        })
        .await
        .map(|_| ())
}

/// An outbox message's entry; `None` for one that is not (never written
/// by sluice: dropped).
pub fn parse(body: &str) -> Option<Entry> {
    serde_json::from_str(body).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// N6: an entry reads back as written; the outbox is one of sluice's
    /// own queues.
    #[test]
    fn n6_entries_round_trip() {
        let entry = Entry {
            kind: Kind::SubscriptionConfirmation,
            subscription: "s".into(),
            topic: "t".into(),
            endpoint: "http://127.0.0.1:1/x".into(),
            message_id: "m".into(),
            raw: false,
            body: "{\n  \"Type\" : \"SubscriptionConfirmation\"\n}".into(),
        };
        let text = serde_json::to_string(&entry).unwrap();
        assert_eq!(parse(&text), Some(entry));
        assert_eq!(parse("{}"), None);
        assert!(sluice_core::queue_name::is_internal_key(&key()));
    }
}

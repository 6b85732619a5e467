//! A published message on its way to the subscriptions, and what every
//! kind of delivery (to queues in the engine, to HTTP/S endpoints through
//! the outbox) shares: the filter decision, the envelope's attributes, the
//! signature version, the outcome counts.

use std::collections::BTreeMap;

use sluice_broker::{Broker, Subscription, Topic};
use sluice_sns::envelope::EnvelopeAttribute;
use sluice_sns::filter;
use sluice_sns::signing::SignatureVersion;

use super::message_checks::Attribute;
use crate::metrics::topics::Outcome;
use crate::service::Service;

/// A published message on its way to the subscriptions.
#[derive(Debug, Clone)]
pub struct Outgoing {
    /// Its id.
    pub message_id: String,
    /// Its sequence number, on a FIFO topic.
    pub sequence_number: Option<String>,
    /// The message (the default one when structured).
    pub message: String,
    /// With `MessageStructure=json`: the message for each protocol.
    pub by_protocol: Option<BTreeMap<String, String>>,
    /// Its subject.
    pub subject: Option<String>,
    /// Its attributes.
    pub attributes: Vec<Attribute>,
    /// Its message group.
    pub group_id: Option<String>,
    /// Its deduplication id (FIFO topics).
    pub dedup_id: Option<String>,
    /// Its bytes as SNS counts them.
    pub size: usize,
}

impl Outgoing {
    /// The message a subscriber of `protocol` gets.
    pub fn message_for(&self, protocol: &str) -> &str {
        self.by_protocol
            .as_ref()
            .and_then(|m| m.get(protocol).or_else(|| m.get("default")))
            .map_or(self.message.as_str(), String::as_str)
    }

    /// Whether `policy` lets it through to a subscriber of `protocol`.
    pub(super) fn passes(&self, policy: &filter::FilterPolicy, protocol: &str) -> bool {
        if policy.scope() == filter::Scope::MessageBody {
            return policy.matches_body(self.message_for(protocol));
        }
        let attributes: Vec<filter::Attribute<'_>> = self
            .attributes
            .iter()
            .map(|a| filter::Attribute {
                name: &a.name,
                data_type: &a.data_type,
                value: a.text(),
            })
            .collect();
        policy.matches_attributes(&attributes)
    }
}

/// The signature version a topic's messages are signed with.
pub(super) fn signature_version(topic: &Topic) -> SignatureVersion {
    match topic.attributes.get("SignatureVersion").map(String::as_str) {
        Some("2") => SignatureVersion::V2,
        _ => SignatureVersion::V1,
    }
}

/// The message attributes an envelope of `m` carries.
pub(super) fn envelope_attributes(m: &Outgoing) -> Vec<EnvelopeAttribute> {
    if m.by_protocol.is_some() {
        // Structured messages carry no attributes (the SNS developer
        // guide).
        return Vec::new();
    }
    m.attributes
        .iter()
        .map(|a| EnvelopeAttribute {
            name: a.name.clone(),
            data_type: a.data_type.clone(),
            value: a.text().to_string(),
        })
        .collect()
}

/// Counts `n` messages of subscription `s` that met `outcome`.
pub(super) fn count<B: Broker>(svc: &Service<B>, s: &Subscription, outcome: Outcome, n: usize) {
    (svc.metrics.topics).count(&s.topic, &s.id, &s.protocol, outcome, n as u64);
}

//! A publish's deliveries to the topic's confirmed HTTP/S subscriptions
//! (rule N6): each subscription's filter policy decides (N4), and each
//! delivery that passes is stored in the outbox before the publish is
//! answered, its body made now: the bare message for raw delivery, or
//! SNS's envelope signed over the message for the subscriber's protocol.

use std::collections::HashMap;

use sluice_broker::{Broker, Subscription, Topic};
use sluice_core::timestamp::rfc3339;
use sluice_protocol::sns::SnsError;
use sluice_sns::envelope::{Notification, Signed};
use sluice_sns::signing::SigningKey;

use super::outbox::{self, Entry, Kind};
use super::outgoing::{Outgoing, count, envelope_attributes, signature_version};
use super::topic_attributes::is_fifo;
use crate::metrics::topics::Outcome;
use crate::service::{RequestContext, Service};

/// Stores in the outbox what each of `subscriptions` (confirmed, HTTP/S)
/// gets of `messages`.
pub async fn enqueue<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    topic: &Topic,
    messages: &[Outgoing],
    subscriptions: &[&Subscription],
) -> Result<(), SnsError> {
    if subscriptions.is_empty() {
        return Ok(());
    }
    let key = if is_fifo(topic) {
        // SNS does not sign a FIFO topic's envelopes.
        None
    } else {
        Some(
            svc.sns_signing_key()
                .await
                .map_err(|e| SnsError::internal(e.to_string()))?,
        )
    };
    let mut writer = Writer {
        svc,
        topic,
        key: key.as_deref(),
        base_url: svc.sns_base(ctx),
        timestamp: rfc3339(svc.now()),
        signed: HashMap::new(),
    };
    let mut entries = Vec::new();
    for s in subscriptions {
        let before = entries.len();
        for (i, m) in messages.iter().enumerate() {
            if svc.sns.filter(s).is_none_or(|p| m.passes(&p, &s.protocol)) {
                entries.push(writer.entry(s, i, m)?);
            }
        }
        let passed = entries.len() - before;
        count(svc, s, Outcome::FilteredOut, messages.len() - passed);
    }
    outbox::enqueue(svc, entries).await
}

/// Writes the deliveries of one publish, signing each message once per
/// protocol.
struct Writer<'a, B> {
    svc: &'a Service<B>,
    topic: &'a Topic,
    key: Option<&'a SigningKey>,
    base_url: String,
    timestamp: String,
    /// Signatures by message index and protocol.
    signed: HashMap<(usize, String), Signed>,
}

impl<B: Broker> Writer<'_, B> {
    /// The outbox entry of message `m` (the `i`th) for subscription `s`.
    fn entry(&mut self, s: &Subscription, i: usize, m: &Outgoing) -> Result<Entry, SnsError> {
        let raw = (s.attributes.get("RawMessageDelivery")).is_some_and(|v| v == "true");
        let message = m.message_for(&s.protocol);
        let body = if raw {
            message.to_string()
        } else {
            self.envelope(s, i, m)?
        };
        Ok(Entry {
            kind: Kind::Notification,
            subscription: s.id.clone(),
            topic: s.topic.clone(),
            endpoint: s.endpoint.clone(),
            message_id: m.message_id.clone(),
            raw,
            body,
        })
    }

    /// SNS's envelope of `m` for `s`, signed unless the topic is FIFO.
    fn envelope(&mut self, s: &Subscription, i: usize, m: &Outgoing) -> Result<String, SnsError> {
        let account = &self.svc.config.account;
        let topic_arn = account.topic_arn(&self.topic.key);
        let subscription_arn = account.subscription_arn(&s.topic, &s.id);
        let unsubscribe_url = format!(
            "{}/?Action=Unsubscribe&SubscriptionArn={subscription_arn}",
            self.base_url
        );
        let attributes = envelope_attributes(m);
        let notification = Notification {
            message_id: &m.message_id,
            sequence_number: m.sequence_number.as_deref(),
            topic_arn: &topic_arn,
            subject: m.subject.as_deref(),
            message: m.message_for(&s.protocol),
            timestamp: &self.timestamp,
            unsubscribe_url: &unsubscribe_url,
            attributes: &attributes,
        };
        let Some(key) = self.key else {
            return Ok(notification.to_json(None));
        };
        let slot = (i, s.protocol.clone());
        if !self.signed.contains_key(&slot) {
            let version = signature_version(self.topic);
            let signature = key
                .sign(version, &notification.string_to_sign())
                .map_err(|e| SnsError::internal(e.to_string()))?;
            let signed = Signed {
                version,
                signature,
                signing_cert_url: format!("{}/{}", self.base_url, key.certificate_name()),
            };
            self.signed.insert(slot.clone(), signed);
        }
        Ok(notification.to_json(self.signed.get(&slot)))
    }
}

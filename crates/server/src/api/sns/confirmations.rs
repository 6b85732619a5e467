//! The confirmations an HTTP/S endpoint gets (rule N6): a
//! `SubscriptionConfirmation` when it subscribes, whose `SubscribeURL`
//! (a plain GET of ConfirmSubscription) confirms it, and an
//! `UnsubscribeConfirmation` when its confirmed subscription is removed;
//! both signed, both stored in the outbox before the request is answered.
//! Their fields are SNS's (recorded: LocalStack test_sns.snapshot.json,
//! `test_subscribe_external_http_endpoint`).

use sluice_broker::{Broker, Subscription, Topic};
use sluice_core::timestamp::rfc3339;
use sluice_protocol::sns::SnsError;
use sluice_sns::envelope::{Confirmation, ConfirmationKind, Signed};

use super::outbox::{self, Entry, Kind};
use super::outgoing::signature_version;
use crate::service::{RequestContext, Service};

/// Whether subscription `s` is one an HTTP/S endpoint confirms.
pub fn is_web(s: &Subscription) -> bool {
    matches!(s.protocol.as_str(), "http" | "https")
}

/// Stores in the outbox the confirmation of `kind` that `s`'s endpoint
/// gets, carrying `token`.
pub async fn send<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    topic: &Topic,
    s: &Subscription,
    kind: ConfirmationKind,
    token: &str,
) -> Result<(), SnsError> {
    let account = &svc.config.account;
    let topic_arn = account.topic_arn(&topic.key);
    let subscription_arn = account.subscription_arn(&s.topic, &s.id);
    let base_url = svc.sns_base(ctx);
    let subscribe_url =
        format!("{base_url}/?Action=ConfirmSubscription&TopicArn={topic_arn}&Token={token}");
    let message_id = uuid::Uuid::new_v4().to_string();
    let timestamp = rfc3339(svc.now());
    let confirmation = Confirmation {
        kind,
        message_id: &message_id,
        token,
        topic_arn: &topic_arn,
        subscription_arn: &subscription_arn,
        subscribe_url: &subscribe_url,
        timestamp: &timestamp,
    };
    let key = svc
        .sns_signing_key()
        .await
        .map_err(|e| SnsError::internal(e.to_string()))?;
    let version = signature_version(topic);
    let signature = key
        .sign(version, &confirmation.string_to_sign())
        .map_err(|e| SnsError::internal(e.to_string()))?;
    let signed = Signed {
        version,
        signature,
        signing_cert_url: format!("{base_url}/{}", key.certificate_name()),
    };
    let body = confirmation.to_json(&signed);
    let entry = Entry {
        kind: match kind {
            ConfirmationKind::Subscription => Kind::SubscriptionConfirmation,
            ConfirmationKind::Unsubscribe => Kind::UnsubscribeConfirmation,
        },
        subscription: s.id.clone(),
        topic: s.topic.clone(),
        endpoint: s.endpoint.clone(),
        message_id,
        raw: false,
        body,
    };
    outbox::enqueue(svc, vec![entry]).await
}

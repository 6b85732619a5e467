//! Delivering published messages to the topic's SQS subscriptions, in the
//! engine, before the publish is answered (rules N2–N5, N7): each
//! subscription's filter policy decides; the queue gets the message raw
//! (its attributes as SQS message attributes) or in SNS's signed envelope;
//! a queue that is gone, or a raw message of more than 10 attributes,
//! goes to the subscription's dead-letter queue when it has one, and is
//! dropped when it has not; a storage failure fails the publish. HTTP/S
//! subscriptions' deliveries go to the outbox (`http_fanout.rs`, rule N6).

use futures_util::future::join_all;
use sluice_broker::moves::LAST_FAILURE_REASON;
use sluice_broker::{Broker, EngineError, NewMessage, Subscription, Topic};
use sluice_core::message::{AttributeValue, MessageAttributeValue, MessageAttributes};
use sluice_core::queue_name::Account;
use sluice_core::timestamp::rfc3339;
use sluice_protocol::sns::SnsError;
use sluice_sns::envelope::{Notification, Signed};
use sluice_sns::signing::SignatureVersion;

use super::errors::engine;
use super::message_checks::{Attribute, AttributeData};
use super::outgoing::{Outgoing, count, envelope_attributes, signature_version};
use super::queue_access;
use super::topic_attributes::is_fifo;
use crate::metrics::topics::Outcome;
use crate::service::{RequestContext, Service};

/// The most attributes raw delivery takes to a queue (more are a
/// client-side failure: the SNS developer guide, message attributes).
const MAX_RAW_ATTRIBUTES: usize = 10;

/// What a subscription's queue gets of one message.
struct Delivery {
    message: NewMessage,
    /// A client-side failure: to the dead-letter queue without trying.
    refused: bool,
}

/// Delivers `messages` (published to `topic`, in order) to every confirmed
/// SQS subscription of it; returns when every delivery is durable.
pub async fn deliver<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    topic: &Topic,
    messages: &[Outgoing],
) -> Result<(), SnsError> {
    let subscriptions = svc
        .broker
        .subscriptions(Some(&topic.key))
        .await
        .map_err(engine)?;
    let confirmed = subscriptions.iter().filter(|s| s.pending_token.is_none());
    let (web, subscriptions): (Vec<&Subscription>, Vec<&Subscription>) = confirmed
        .filter(|s| matches!(s.protocol.as_str(), "sqs" | "http" | "https"))
        .partition(|s| s.protocol != "sqs");
    // HTTP/S deliveries are made from the outbox, stored before the answer
    // (rule N6).
    super::http_fanout::enqueue(svc, ctx, topic, messages, &web).await?;
    if subscriptions.is_empty() {
        return Ok(());
    }
    let timestamp = rfc3339(svc.now());
    // Raw deliveries carry no signature: an RSA signature costs more than
    // the rest of a publish, so it is made only when an envelope needs it.
    let (signatures, certificate) = if subscriptions.iter().all(|s| is_raw(s)) {
        (vec![None; messages.len()], None)
    } else {
        sign(svc, topic, messages, &timestamp).await?
    };
    let base_url = svc.sns_base(ctx);
    let context = Context {
        account: &svc.config.account,
        topic,
        certificate_url: certificate.map(|name| format!("{base_url}/{name}")),
        base_url,
        trace_header: ctx.trace_header.as_deref(),
        timestamp,
    };
    let sends = subscriptions.into_iter().map(|s| {
        let deliveries: Vec<Delivery> = messages
            .iter()
            .zip(signatures.iter())
            .filter(|(m, _)| svc.sns.filter(s).is_none_or(|p| m.passes(&p, "sqs")))
            .map(|(m, signed)| context.delivery(s, m, signed.as_ref()))
            .collect();
        count(
            svc,
            s,
            Outcome::FilteredOut,
            messages.len() - deliveries.len(),
        );
        send(svc, s, deliveries)
    });
    for sent in join_all(sends).await {
        sent?;
    }
    Ok(())
}

/// Each message's signature made at `timestamp` (it covers no
/// subscriber's fields), and the name of the certificate that verifies
/// them; none on a FIFO topic, whose envelopes SNS does not sign.
async fn sign<B: Broker>(
    svc: &Service<B>,
    topic: &Topic,
    messages: &[Outgoing],
    timestamp: &str,
) -> Result<(Vec<Signature>, Option<String>), SnsError> {
    if is_fifo(topic) {
        return Ok((vec![None; messages.len()], None));
    }
    let version = signature_version(topic);
    let key = svc
        .sns_signing_key()
        .await
        .map_err(|e| SnsError::internal(e.to_string()))?;
    let arn = svc.config.account.topic_arn(&topic.key);
    let mut out = Vec::with_capacity(messages.len());
    for m in messages {
        // The text signed is the one every subscriber's envelope carries
        // but for the message of a structured publish, which differs by
        // protocol: SQS's.
        let text = Notification {
            message_id: &m.message_id,
            sequence_number: None,
            topic_arn: &arn,
            subject: m.subject.as_deref(),
            message: m.message_for("sqs"),
            timestamp,
            unsubscribe_url: "",
            attributes: &[],
        }
        .string_to_sign();
        let signature = key
            .sign(version, &text)
            .map_err(|e| SnsError::internal(e.to_string()))?;
        out.push(Some((version, signature)));
    }
    Ok((out, Some(key.certificate_name().to_string())))
}

/// Whether `s` gets the bare message rather than the envelope.
fn is_raw(s: &Subscription) -> bool {
    s.attributes
        .get("RawMessageDelivery")
        .is_some_and(|v| v == "true")
}

/// A message's signature and its version; `None` unsigned.
type Signature = Option<(SignatureVersion, String)>;

/// What every delivery of one publish shares.
struct Context<'a> {
    account: &'a Account,
    topic: &'a Topic,
    /// The server's public address, for the `UnsubscribeURL`.
    base_url: String,
    /// Where the certificate that verifies the signatures is served.
    certificate_url: Option<String>,
    trace_header: Option<&'a str>,
    timestamp: String,
}

impl Context<'_> {
    /// The message subscription `s` gets of `m`: raw or the envelope, with
    /// the group and deduplication ids its queue needs.
    fn delivery(
        &self,
        s: &Subscription,
        m: &Outgoing,
        signed: Option<&(SignatureVersion, String)>,
    ) -> Delivery {
        let raw = is_raw(s);
        let topic_fifo = is_fifo(self.topic);
        let queue_fifo = s.endpoint.ends_with(".fifo");
        let mut system_attributes = MessageAttributes::new();
        if let Some(trace) = self.trace_header {
            system_attributes.insert(
                "AWSTraceHeader".into(),
                MessageAttributeValue {
                    data_type: "String".into(),
                    value: AttributeValue::String(trace.to_string()),
                },
            );
        }
        let (body, attributes, refused) = if raw {
            (
                m.message_for("sqs").to_string(),
                sqs_attributes(&m.attributes),
                m.attributes.len() > MAX_RAW_ATTRIBUTES,
            )
        } else {
            (self.envelope(s, m, signed), MessageAttributes::new(), false)
        };
        // A FIFO topic's ids reach FIFO queues only; a standard topic's
        // group reaches standard queues (fair queues).
        let (group_id, dedup_id) = match (topic_fifo, queue_fifo) {
            (true, true) => (m.group_id.clone(), m.dedup_id.clone()),
            (true, false) => (None, None),
            (false, _) => (m.group_id.clone(), None),
        };
        Delivery {
            message: NewMessage {
                body,
                attributes,
                system_attributes,
                delay_seconds: None,
                group_id,
                dedup_id,
                body_md5: None,
                keep_id: None,
            },
            refused,
        }
    }

    /// The signed envelope subscription `s` gets of `m`.
    fn envelope(
        &self,
        s: &Subscription,
        m: &Outgoing,
        signed: Option<&(SignatureVersion, String)>,
    ) -> String {
        let topic_arn = self.account.topic_arn(&self.topic.key);
        let subscription_arn = self.account.subscription_arn(&s.topic, &s.id);
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
            message: m.message_for("sqs"),
            timestamp: &self.timestamp,
            unsubscribe_url: &unsubscribe_url,
            attributes: &attributes,
        };
        let signed =
            signed
                .zip(self.certificate_url.as_ref())
                .map(|((version, signature), url)| Signed {
                    version: *version,
                    signature: signature.clone(),
                    signing_cert_url: url.clone(),
                });
        notification.to_json(signed.as_ref())
    }
}

/// A published message's attributes as SQS message attributes of the same
/// types (raw delivery).
fn sqs_attributes(attributes: &[Attribute]) -> MessageAttributes {
    attributes
        .iter()
        .map(|a| {
            let value = match &a.value {
                AttributeData::Text(t) => AttributeValue::String(t.clone()),
                AttributeData::Binary(_, bytes) => AttributeValue::Binary(bytes.clone()),
            };
            (
                a.name.clone(),
                MessageAttributeValue {
                    data_type: a.data_type.clone(),
                    value,
                },
            )
        })
        .collect()
}

/// Sends one subscription's deliveries to its queue; what cannot be
/// delivered goes to its dead-letter queue, or nowhere.
async fn send<B: Broker>(
    svc: &Service<B>,
    s: &Subscription,
    deliveries: Vec<Delivery>,
) -> Result<(), SnsError> {
    if deliveries.is_empty() {
        return Ok(());
    }
    let (refused, sendable): (Vec<Delivery>, Vec<Delivery>) =
        deliveries.into_iter().partition(|d| d.refused);
    let mut undeliverable: Vec<NewMessage> = refused
        .into_iter()
        .map(|d| {
            failed_because(
                d.message,
                format!("more than {MAX_RAW_ATTRIBUTES} message attributes for raw delivery to an SQS queue"),
            )
        })
        .collect();
    let queue = svc.config.account.key_from_any_arn(&s.endpoint);
    if !sendable.is_empty() {
        let messages: Vec<NewMessage> = sendable.into_iter().map(|d| d.message).collect();
        let topic_arn = svc.config.account.topic_arn(&s.topic);
        let refused = match &queue {
            Some(queue) => queue_access::refusal(svc, queue, &topic_arn).await?,
            None => None,
        };
        let why = match queue {
            _ if refused.is_some() => refused,
            Some(queue) => match svc.broker.send_messages(&queue, messages.clone()).await {
                Ok(_) => None,
                // The endpoint is gone or refuses: a client-side failure.
                Err(EngineError::QueueDoesNotExist) => {
                    Some(format!("the queue {} does not exist", s.endpoint))
                }
                Err(EngineError::Rejected(e)) => Some(format!(
                    "the queue {} refused it: {}",
                    s.endpoint, e.message
                )),
                Err(e) => return Err(engine(e)),
            },
            None => Some(format!("{} is no queue of this server", s.endpoint)),
        };
        match why {
            None => count(svc, s, Outcome::Delivered, messages.len()),
            Some(why) => {
                undeliverable.extend(messages.into_iter().map(|m| failed_because(m, why.clone())))
            }
        }
    }
    if !undeliverable.is_empty() {
        count(svc, s, Outcome::Failed, undeliverable.len());
        dead_letter(svc, s, undeliverable).await?;
    }
    Ok(())
}

/// `message` noted with why its delivery failed, as a system attribute
/// SQS clients do not see and `sluice dlq`, PeekMessages and the console
/// show (SNS itself adds nothing to a subscription's dead-lettered
/// messages).
pub(super) fn failed_because(mut message: NewMessage, why: String) -> NewMessage {
    message.system_attributes.insert(
        LAST_FAILURE_REASON.to_string(),
        MessageAttributeValue {
            data_type: "String".into(),
            value: AttributeValue::String(format!("SNS delivery: {why}")),
        },
    );
    message
}

/// Sends what could not be delivered to the subscription's dead-letter
/// queue (rule N5), or drops it, logged, when there is none or it fails
/// too.
pub(super) async fn dead_letter<B: Broker>(
    svc: &Service<B>,
    s: &Subscription,
    messages: Vec<NewMessage>,
) -> Result<(), SnsError> {
    let dlq = s
        .attributes
        .get("RedrivePolicy")
        .and_then(|p| serde_json::from_str::<serde_json::Value>(p).ok())
        .and_then(|p| p.get("deadLetterTargetArn")?.as_str().map(str::to_string))
        .and_then(|arn| svc.config.account.key_from_any_arn(&arn));
    let n = messages.len();
    let Some(dlq) = dlq else {
        tracing::warn!(
            subscription = s.id,
            endpoint = s.endpoint,
            messages = n,
            "SNS delivery failed and the subscription has no dead-letter queue: dropped"
        );
        count(svc, s, Outcome::Dropped, n);
        return Ok(());
    };
    let topic_arn = svc.config.account.topic_arn(&s.topic);
    if let Some(why) = queue_access::refusal(svc, &dlq, &topic_arn).await? {
        tracing::warn!(
            subscription = s.id,
            dead_letter_queue = dlq,
            messages = n,
            why,
            "SNS delivery failed and its dead-letter queue refuses the topic: dropped"
        );
        count(svc, s, Outcome::Dropped, n);
        return Ok(());
    }
    match svc.broker.send_messages(&dlq, messages).await {
        Ok(_) => {
            count(svc, s, Outcome::DeadLettered, n);
            Ok(())
        }
        Err(EngineError::QueueDoesNotExist | EngineError::Rejected(_)) => {
            tracing::warn!(
                subscription = s.id,
                dead_letter_queue = dlq,
                messages = n,
                "SNS delivery failed and its dead-letter queue refused the messages: dropped"
            );
            count(svc, s, Outcome::Dropped, n);
            Ok(())
        }
        Err(e) => Err(engine(e)),
    }
}

//! The deliverer of HTTP/S subscriptions (rule N6): takes deliveries from
//! the outbox (`outbox.rs`) with a lease, POSTs each to its endpoint with
//! SNS's headers, and deletes it once answered 2xx–4xx. A 5xx answer, a
//! refused connection or no answer within 15 s is retried when the
//! delivery policy's schedule says (the message made visible again then);
//! past its last retry a notification goes to the subscription's
//! dead-letter queue with the reason, or is dropped (rule N5). Every node
//! runs one; the lease keeps two from making the same attempt, and a node
//! that dies mid-attempt leaves the delivery to be taken again when its
//! lease ends.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use serde_json::Value;
use sluice_broker::{
    Broker, EngineError, NewMessage, ReceiveOptions, ReceivedMessage, Subscription, Topic,
    VisibilityChange,
};
use sluice_outbound::{ConnectionSettings, OutboundClient};
use sluice_sns::delivery_policy::{
    RetrySchedule, effective_subscription_policy, effective_topic_policy,
};
use tokio::sync::Semaphore;

use super::fanout::{dead_letter, failed_because};
use super::outbox::{self, ATTEMPT_TIMEOUT_SECS, Entry, Kind, LEASE_SECS};
use super::outgoing::count;
use crate::metrics::topics::Outcome;
use crate::service::Service;

/// Most deliveries in progress at once on one node.
const IN_FLIGHT: usize = 32;

/// How long one receive waits for a delivery; also how soon the loop
/// notices the service is gone.
const POLL_WAIT: Duration = Duration::from_secs(1);

/// The header SNS's requests carry as `User-Agent`.
const USER_AGENT: &str = "Amazon Simple Notification Service Agent";

/// Starts `service`'s deliverer, once; it runs until the service is
/// dropped.
pub fn spawn<B: Broker>(service: &Arc<Service<B>>) {
    if service.sns.deliverer_started.swap(true, Ordering::SeqCst) {
        return;
    }
    let client = sluice_outbound::client(
        &service.config.consumer_tls,
        &ConnectionSettings {
            connect_timeout: Some(Duration::from_secs(5)),
            nodelay: true,
            ..Default::default()
        },
    );
    let weak = Arc::downgrade(service);
    let slots = Arc::new(Semaphore::new(IN_FLIGHT));
    tokio::spawn(async move {
        let mut failing = false;
        loop {
            let Ok(permits) = slots.clone().acquire_many_owned(1).await else {
                break;
            };
            drop(permits);
            let Some(svc) = weak.upgrade() else { break };
            let free = slots.available_permits().clamp(1, 10) as u32;
            let options = ReceiveOptions {
                max_messages: free,
                visibility_timeout: Some(LEASE_SECS),
                wait: POLL_WAIT,
                attempt_id: None,
            };
            match svc.broker.receive_messages(&outbox::key(), options).await {
                Ok(received) => {
                    failing = false;
                    for m in received {
                        let Ok(slot) = slots.clone().acquire_owned().await else {
                            break;
                        };
                        let (svc, client) = (svc.clone(), client.clone());
                        tokio::spawn(async move {
                            attempt(&svc, &client, m).await;
                            drop(slot);
                        });
                    }
                }
                // No HTTP/S delivery was ever stored.
                Err(EngineError::QueueDoesNotExist) => {
                    drop(svc);
                    tokio::time::sleep(POLL_WAIT).await;
                }
                Err(e) => {
                    if !failing {
                        tracing::warn!(error = %e, "cannot read the SNS outbox; retrying");
                    }
                    failing = true;
                    drop(svc);
                    tokio::time::sleep(POLL_WAIT).await;
                }
            }
        }
    });
}

/// One attempt at the delivery `m` holds, and what follows from it.
async fn attempt<B: Broker>(svc: &Service<B>, client: &OutboundClient, m: ReceivedMessage) {
    let key = outbox::key();
    let Some(entry) = outbox::parse(&m.body) else {
        finish(svc, &key, m.receipt_handle).await;
        return;
    };
    let subscription = match svc.broker.get_subscription(&entry.subscription).await {
        Ok(s) => Some(s),
        Err(EngineError::SubscriptionDoesNotExist) => None,
        Err(e) => {
            tracing::warn!(error = %e, "cannot read a subscription; its delivery waits");
            return;
        }
    };
    if entry.kind == Kind::Notification && subscription.is_none() {
        // Unsubscribed meanwhile: nobody to deliver to.
        finish(svc, &key, m.receipt_handle).await;
        return;
    }
    let topic = svc.broker.get_topic(&entry.topic).await.ok();
    let policy = Policy::of(topic.as_ref(), subscription.as_ref());
    let why = match post(svc, client, &entry, &policy.content_type).await {
        Ok(()) => {
            if let Some(s) = &subscription
                && entry.kind == Kind::Notification
            {
                count(svc, s, Outcome::Delivered, 1);
            }
            finish(svc, &key, m.receipt_handle).await;
            return;
        }
        Err(why) => why,
    };
    if let Some(s) = subscription
        .as_ref()
        .filter(|_| entry.kind == Kind::Notification)
    {
        count(svc, s, Outcome::Failed, 1);
    }
    match policy.schedule.delay(u64::from(m.receive_count)) {
        Some(wait) => retry_after(svc, &key, m.receipt_handle, wait).await,
        None => {
            give_up(
                svc,
                &key,
                m.receipt_handle,
                &entry,
                subscription.as_ref(),
                why,
            )
            .await
        }
    }
}

/// What the delivery policy in effect says of one delivery.
struct Policy {
    schedule: RetrySchedule,
    content_type: String,
}

impl Policy {
    /// The subscription's effective policy: its own, the rest its topic's,
    /// the rest SNS's defaults (rule N6).
    fn of(topic: Option<&Topic>, s: Option<&Subscription>) -> Self {
        let topic_policy = topic.and_then(|t| t.attributes.get("DeliveryPolicy"));
        let topic_effective = effective_topic_policy(topic_policy.map(String::as_str));
        let own = s.and_then(|s| s.attributes.get("DeliveryPolicy"));
        let effective = effective_subscription_policy(own.map(String::as_str), &topic_effective);
        let effective: Value = serde_json::from_str(&effective).unwrap_or(Value::Null);
        let content_type = effective["requestPolicy"]["headerContentType"]
            .as_str()
            .unwrap_or("text/plain; charset=UTF-8")
            .to_string();
        Policy {
            schedule: RetrySchedule::from_value(&effective["healthyRetryPolicy"]),
            content_type,
        }
    }
}

/// POSTs the delivery with SNS's headers; `Err` with why it failed when
/// it is to be retried.
async fn post<B: Broker>(
    svc: &Service<B>,
    client: &OutboundClient,
    entry: &Entry,
    content_type: &str,
) -> Result<(), String> {
    let account = &svc.config.account;
    let mut request = http::Request::post(&entry.endpoint)
        .header("x-amz-sns-message-type", entry.kind.as_str())
        .header("x-amz-sns-message-id", &entry.message_id)
        .header("x-amz-sns-topic-arn", account.topic_arn(&entry.topic))
        .header(http::header::CONTENT_TYPE, content_type)
        .header(http::header::USER_AGENT, USER_AGENT)
        // SNS's requests say so (recorded); the answer's body is never
        // read, so nothing needs decompressing.
        .header(http::header::ACCEPT_ENCODING, "gzip,deflate");
    if entry.kind != Kind::SubscriptionConfirmation {
        request = request.header(
            "x-amz-sns-subscription-arn",
            account.subscription_arn(&entry.topic, &entry.subscription),
        );
    }
    if entry.raw {
        request = request.header("x-amz-sns-rawdelivery", "true");
    }
    let request = request
        .body(Full::new(Bytes::from(entry.body.clone())))
        .map_err(|e| format!("the endpoint {} is no URL: {e}", entry.endpoint))?;
    let limit = Duration::from_secs(ATTEMPT_TIMEOUT_SECS);
    match tokio::time::timeout(limit, client.request(request)).await {
        Err(_) => Err(format!(
            "the endpoint {} did not answer within {ATTEMPT_TIMEOUT_SECS} s",
            entry.endpoint
        )),
        Ok(Err(e)) => Err(format!("cannot reach the endpoint {}: {e}", entry.endpoint)),
        Ok(Ok(answer)) if answer.status().is_server_error() => Err(format!(
            "the endpoint {} answered {}",
            entry.endpoint,
            answer.status()
        )),
        Ok(Ok(_)) => Ok(()),
    }
}

/// Makes the delivery visible again when its retry is due.
async fn retry_after<B: Broker>(svc: &Service<B>, key: &str, handle: String, wait: Duration) {
    let change = VisibilityChange {
        receipt_handle: handle,
        visibility_timeout: u32::try_from(wait.as_secs()).unwrap_or(u32::MAX),
    };
    if let Err(e) = svc.broker.change_visibility(key, vec![change]).await {
        // Its lease ends anyway: it is retried then.
        tracing::warn!(error = %e, "cannot schedule an SNS delivery's retry");
    }
}

/// Past the last retry: a notification to the subscription's dead-letter
/// queue with `why`, or dropped (rule N5); a confirmation dropped.
async fn give_up<B: Broker>(
    svc: &Service<B>,
    key: &str,
    handle: String,
    entry: &Entry,
    subscription: Option<&Subscription>,
    why: String,
) {
    tracing::warn!(
        subscription = entry.subscription,
        endpoint = entry.endpoint,
        why,
        "SNS HTTP/S delivery failed after its retries"
    );
    if let Some(s) = subscription.filter(|_| entry.kind == Kind::Notification) {
        let message = NewMessage {
            body: entry.body.clone(),
            ..Default::default()
        };
        if let Err(e) = dead_letter(svc, s, vec![failed_because(message, why)]).await {
            // Kept in the outbox: dead-lettered when its lease ends.
            tracing::warn!(error = %e.message, "cannot dead-letter an SNS delivery");
            return;
        }
    }
    finish(svc, key, handle).await;
}

/// Deletes a delivery that is done with.
async fn finish<B: Broker>(svc: &Service<B>, key: &str, handle: String) {
    if let Err(e) = svc.broker.delete_messages(key, vec![handle]).await {
        // Its lease ends and it is made again: at least once.
        tracing::warn!(error = %e, "cannot delete a made SNS delivery");
    }
}

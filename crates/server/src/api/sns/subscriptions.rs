//! Subscribe, ConfirmSubscription, Unsubscribe (rules N1, N6).
//! Recorded answers: LocalStack test_sns.py (`test_subscribe_idempotency`,
//! `test_subscribe_with_invalid_protocol`, `test_subscribe_unknown_sqs_queue`,
//! `test_validations_for_fifo`, `test_sns_confirm_subscription_wrong_token`,
//! `test_subscribe_external_http_endpoint`, `test_unsubscribe_wrong_arn_format`).

use std::collections::BTreeMap;

use sluice_broker::{Broker, EngineError, Subscription};
use sluice_core::queue_name::{arn_parts, is_fifo_name};
use sluice_protocol::sns::{
    ConfirmSubscriptionInput, ConfirmSubscriptionResponse, ErrorCode, SnsError, SubscribeInput,
    SubscribeResponse, UnsubscribeInput,
};
use sluice_sns::envelope::ConfirmationKind;

use super::arns;
use super::confirmations;
use super::errors::{engine, required};
use super::subscription_attributes::{self, AUTHENTICATED, CONFIRMED_TOKEN, PRINCIPAL, effective};
use super::topic_attributes::{Refused, is_fifo};
use super::topics::named_topic;
use crate::service::{RequestContext, Service};

/// The protocols SNS knows (the model's); sluice delivers to `sqs`,
/// `http` and `https`, and keeps the others' subscriptions.
const PROTOCOLS: [&str; 9] = [
    "http",
    "https",
    "email",
    "email-json",
    "sms",
    "sqs",
    "application",
    "lambda",
    "firehose",
];

/// Subscribe: idempotent for the same protocol, endpoint and attributes.
pub async fn subscribe<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    input: SubscribeInput,
) -> Result<SubscribeResponse, SnsError> {
    let topic = named_topic(svc, ctx, "TopicArn", input.topic_arn).await?;
    let protocol = required(input.protocol, "Protocol")?;
    if !PROTOCOLS.contains(&protocol.as_str()) {
        return Err(SnsError::invalid_parameter(format!(
            "Amazon SNS does not support this protocol string: {protocol}"
        )));
    }
    let endpoint = input.endpoint.unwrap_or_default();
    check_endpoint(&protocol, &endpoint, is_fifo(&topic))?;
    let attributes = checked_attributes(
        &protocol,
        &endpoint,
        is_fifo(&topic),
        input.attributes.unwrap_or_default(),
    )?;
    let owner = svc.request_account(ctx).to_string();
    let pending = needs_confirmation(
        &protocol,
        &endpoint,
        svc.config.account.owner_of(&topic.key),
    );
    let mut stored_attributes = attributes.clone();
    if let Some(p) = &ctx.principal {
        stored_attributes.insert(
            PRINCIPAL.into(),
            format!("arn:aws:iam::{}:user/{}", p.account_id, p.access_key_id),
        );
    }
    let subscription = Subscription {
        id: uuid::Uuid::new_v4().to_string(),
        topic: topic.key.clone(),
        protocol,
        endpoint,
        owner,
        attributes: stored_attributes,
        pending_token: pending.then(new_token),
        created_at: svc.now(),
    };
    let (stored, created) = svc.broker.subscribe(subscription).await.map_err(engine)?;
    if !created
        && attributes
            .iter()
            .any(|(k, v)| effective(&stored.attributes, k) != Some(v.as_str()))
    {
        return Err(SnsError::invalid_parameter(
            "Attributes Reason: Subscription already exists with different attributes",
        ));
    }
    // Subscribing a pending endpoint again sends its confirmation again,
    // as SNS does (the console's "Request confirmation" is that call).
    if confirmations::is_web(&stored)
        && let Some(token) = &stored.pending_token
    {
        confirmations::send(
            svc,
            ctx,
            &topic,
            &stored,
            ConfirmationKind::Subscription,
            token,
        )
        .await?;
    }
    let arn = svc
        .config
        .account
        .subscription_arn(&stored.topic, &stored.id);
    let shown = if stored.pending_token.is_some() && input.return_subscription_arn != Some(true) {
        "pending confirmation".to_string()
    } else {
        arn
    };
    Ok(SubscribeResponse {
        subscription_arn: Some(shown),
    })
}

/// Whether a new subscription waits for a confirmation: HTTP/S and email
/// endpoints, and a queue of another account than the topic's.
fn needs_confirmation(protocol: &str, endpoint: &str, topic_owner: &str) -> bool {
    match protocol {
        "http" | "https" | "email" | "email-json" => true,
        "sqs" => arn_parts(endpoint).is_some_and(|(_, account, _)| account != topic_owner),
        _ => false,
    }
}

/// A new confirmation token: 288 hex digits, as SNS's.
fn new_token() -> String {
    let mut bytes = [0u8; 144];
    if getrandom::fill(&mut bytes).is_err() {
        // Never expected; a token from two UUIDs is still unguessable.
        return format!(
            "{}{}",
            uuid::Uuid::new_v4().simple(),
            uuid::Uuid::new_v4().simple()
        );
    }
    sluice_core::digest::hex(&bytes)
}

/// The endpoint a protocol takes, in SNS's words when it is not.
fn check_endpoint(protocol: &str, endpoint: &str, topic_fifo: bool) -> Result<(), SnsError> {
    match protocol {
        "sqs" => {
            let Some((_, _, queue)) = arn_parts(endpoint) else {
                return Err(SnsError::invalid_parameter("SQS endpoint ARN"));
            };
            if is_fifo_name(queue) && !topic_fifo {
                return Err(SnsError::invalid_parameter(
                    "Invalid parameter: Endpoint Reason: FIFO SQS Queues can not be subscribed to standard SNS topics",
                ));
            }
            Ok(())
        }
        "http" | "https" => {
            if endpoint.starts_with(&format!("{protocol}://")) {
                Ok(())
            } else {
                Err(SnsError::invalid_parameter(
                    "Endpoint must match the specified protocol",
                ))
            }
        }
        "email" | "email-json" => {
            if endpoint.contains('@') && !endpoint.contains(' ') {
                Ok(())
            } else {
                Err(SnsError::invalid_parameter("Email address"))
            }
        }
        "sms" if !is_phone_number(endpoint) => Err(SnsError::new(
            ErrorCode::InvalidParameterException,
            format!("Invalid SMS endpoint: {endpoint}"),
        )),
        "lambda" | "firehose" | "application" if !endpoint.starts_with("arn:") => Err(
            SnsError::invalid_parameter(format!("{protocol} endpoint ARN")),
        ),
        _ => Ok(()),
    }
}

/// A phone number as SNS takes one: digits with single separators (`+`
/// first, then `-`, `.`, `/`, spaces or parentheses), ending in a digit
/// (recorded: `+12/34-567.890` is one; `+15--551234567`,
/// `NAA+15551234567`, `+15551234567.` and `/+15551234567` are not).
fn is_phone_number(endpoint: &str) -> bool {
    let body = endpoint.strip_prefix('+').unwrap_or(endpoint);
    let bytes = body.as_bytes();
    let separator = |b: u8| matches!(b, b'-' | b'.' | b'/' | b' ' | b'(' | b')');
    !bytes.is_empty()
        && bytes[0].is_ascii_digit()
        && bytes[bytes.len() - 1].is_ascii_digit()
        && bytes.iter().all(|&b| b.is_ascii_digit() || separator(b))
        && !bytes.windows(2).any(|w| separator(w[0]) && separator(w[1]))
}

/// A Subscribe's attributes, checked (the filter policy's scope first, so
/// the policy is read in it) and kept as SNS keeps them.
fn checked_attributes(
    protocol: &str,
    endpoint: &str,
    topic_fifo: bool,
    given: BTreeMap<String, String>,
) -> Result<BTreeMap<String, String>, SnsError> {
    let mut kept = BTreeMap::new();
    let mut names: Vec<&String> = given.keys().collect();
    names.sort_by_key(|n| *n != "FilterPolicyScope");
    for name in names {
        match subscription_attributes::check(protocol, &kept, name, &given[name]) {
            Ok(Some(value)) => {
                kept.insert(name.clone(), value);
            }
            Ok(None) => {}
            Err(Refused(why)) => {
                return Err(SnsError::invalid_parameter(format!(
                    "Attributes Reason: {why}"
                )));
            }
        }
    }
    if let Some(policy) = kept.get("RedrivePolicy") {
        check_fifo_dead_letter(protocol, endpoint, topic_fifo, policy).map_err(
            |Refused(why)| SnsError::invalid_parameter(format!("Attributes Reason: {why}")),
        )?;
    }
    Ok(kept)
}

/// A FIFO queue subscribed to a FIFO topic needs a FIFO dead-letter queue
/// (recorded: test_validations_for_fifo).
pub fn check_fifo_dead_letter(
    protocol: &str,
    endpoint: &str,
    topic_fifo: bool,
    policy: &str,
) -> Result<(), Refused> {
    let fifo_subscription = protocol == "sqs"
        && topic_fifo
        && arn_parts(endpoint).is_some_and(|(_, _, q)| is_fifo_name(q));
    let dlq_fifo = serde_json::from_str::<serde_json::Value>(policy)
        .ok()
        .and_then(|d| d.get("deadLetterTargetArn")?.as_str().map(str::to_string))
        .and_then(|arn| arn_parts(&arn).map(|(_, _, q)| is_fifo_name(q)))
        .unwrap_or(false);
    if fifo_subscription && !dlq_fifo {
        return Err(Refused(
            "RedrivePolicy: must use a FIFO queue as DLQ for a FIFO Subscription to a FIFO Topic."
                .into(),
        ));
    }
    Ok(())
}

/// ConfirmSubscription: the token decides; a token once confirmed
/// confirms again (recorded: test_subscribe_external_http_endpoint).
pub async fn confirm_subscription<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    input: ConfirmSubscriptionInput,
) -> Result<ConfirmSubscriptionResponse, SnsError> {
    let topic_arn = required(input.topic_arn, "TopicArn")?;
    let token = required(input.token, "Token")?;
    arns::topic_key(svc, ctx, "Topic", &topic_arn)
        .map_err(|_| SnsError::invalid_parameter("Topic"))?;
    // Recorded: `randomtoken` is "Invalid token", while `abc123`, hex
    // digits like every token SNS makes, is a token not found.
    let well_formed = token.len() <= 1024 && token.bytes().all(|b| b.is_ascii_hexdigit());
    if !well_formed {
        return Err(SnsError::new(
            ErrorCode::InvalidParameterException,
            "Invalid token",
        ));
    }
    let region = svc.request_region(ctx).to_string();
    let account = &svc.config.account;
    let found = svc
        .broker
        .subscriptions(None)
        .await
        .map_err(engine)?
        .into_iter()
        .find(|s| {
            account.region_of(&s.topic) == region
                && (s.pending_token.as_deref() == Some(token.as_str())
                    || s.attributes.get(CONFIRMED_TOKEN) == Some(&token))
        })
        .ok_or_else(|| SnsError::invalid_parameter("Token"))?;
    let signed = ctx.principal.is_some();
    let confirmed = svc
        .broker
        .update_subscription(&found.id, move |s: &mut Subscription| {
            if s.pending_token.take().is_some() {
                s.attributes.insert(CONFIRMED_TOKEN.into(), token);
                s.attributes
                    .insert(AUTHENTICATED.into(), signed.to_string());
            }
            Ok::<(), SnsError>(())
        })
        .await;
    match confirmed {
        Ok(done) => done?,
        // Unsubscribed meanwhile: the token names nothing now.
        Err(EngineError::SubscriptionDoesNotExist) => {
            return Err(SnsError::invalid_parameter("Token"));
        }
        Err(e) => return Err(engine(e)),
    };
    Ok(ConfirmSubscriptionResponse {
        subscription_arn: Some(account.subscription_arn(&found.topic, &found.id)),
    })
}

/// Unsubscribe: a subscription that is gone is unsubscribed already
/// (recorded: test_unsubscribe_idempotency).
pub async fn unsubscribe<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    input: UnsubscribeInput,
) -> Result<(), SnsError> {
    let arn = required(input.subscription_arn, "SubscriptionArn")?;
    let (_, id) = arns::subscription(svc, ctx, &arn)?;
    let gone = match svc.broker.get_subscription(&id).await {
        Ok(s) => Some(s),
        Err(EngineError::SubscriptionDoesNotExist) => None,
        Err(e) => return Err(engine(e)),
    };
    match svc.broker.delete_subscription(&id).await {
        Ok(()) => {}
        Err(EngineError::SubscriptionDoesNotExist) => return Ok(()),
        Err(e) => return Err(engine(e)),
    }
    // A confirmed HTTP/S endpoint is told (rule N6).
    match gone {
        Some(s) if confirmations::is_web(&s) && s.pending_token.is_none() => {
            let topic = match svc.broker.get_topic(&s.topic).await {
                Ok(topic) => topic,
                Err(EngineError::TopicDoesNotExist) => return Ok(()),
                Err(e) => return Err(engine(e)),
            };
            let token = s.attributes.get(CONFIRMED_TOKEN).cloned();
            let token = token.unwrap_or_else(new_token);
            confirmations::send(svc, ctx, &topic, &s, ConfirmationKind::Unsubscribe, &token).await
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// N1: phone numbers as SNS takes them (recorded: LocalStack
    /// test_subscribe_sms_obscure_phone_number, test_subscribe_invalid_sms).
    #[test]
    fn n1_phone_numbers() {
        assert!(is_phone_number("+1234567890"));
        assert!(is_phone_number("+12/34-567.890"));
        for bad in [
            "+15--551234567",
            "NAA+15551234567",
            "+15551234567.",
            "/+15551234567",
            "",
        ] {
            assert!(!is_phone_number(bad), "{bad}");
        }
    }

    /// N1: a FIFO queue on a standard topic is refused in SNS's (doubled)
    /// words; a queue URL is no queue ARN (recorded).
    #[test]
    fn n1_sqs_endpoints() {
        let e =
            check_endpoint("sqs", "arn:aws:sqs:us-east-1:000000000000:q.fifo", false).unwrap_err();
        assert_eq!(
            e.message,
            "Invalid parameter: Invalid parameter: Endpoint Reason: FIFO SQS Queues can not be subscribed to standard SNS topics"
        );
        assert!(check_endpoint("sqs", "arn:aws:sqs:us-east-1:000000000000:q.fifo", true).is_ok());
        let e = check_endpoint("sqs", "http://localhost/000000000000/q", false).unwrap_err();
        assert_eq!(e.message, "Invalid parameter: SQS endpoint ARN");
    }
}

//! The access check of an authenticated request (rule A2), the one place
//! the request path asks it: which action the request is and which queues
//! it names, against its credential's `allow` and `queues` patterns and its
//! account. The rules themselves are in `auth::access`.
//!
//! A key over its request rate (rule A8) is refused here too, before any
//! other check: `RequestThrottled`.
//!
//! ListQueues is not refused: it lists only the queues the key may see
//! (`actions::queues::list_queues`).

use serde::Deserialize;
use serde_json::Value;
use sluice_broker::Broker;
use sluice_core::SqsError;
use sluice_core::queue_name::{Account, key_parts, name_of_key, parse_queue_url};
use sluice_protocol::Request;
use sluice_protocol::requests::parse;

use crate::auth::Principal;
use crate::auth::access::{access_denied, explicit_deny, iam_action};
use crate::auth::rate::throttled;
use crate::policy::{Decision, Policy, RequestFacts};
use crate::service::{RequestContext, Service};

/// The members of an input that name queues, whatever the action. Any
/// JSON value parses (a member of another type is the action's to refuse),
/// so that no input the action accepts escapes the check.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Named {
    queue_url: Option<Value>,
    queue_name: Option<Value>,
    #[serde(rename = "QueueOwnerAWSAccountId")]
    queue_owner_aws_account_id: Option<Value>,
    source_arn: Option<Value>,
    destination_arn: Option<Value>,
    task_handle: Option<Value>,
    attributes: Option<Value>,
    /// A push consumer's name (UpdateConsumer, DeleteConsumer, ...).
    name: Option<Value>,
}

/// A member's text, when it is a string.
fn text(member: &Option<Value>) -> Option<&str> {
    member.as_ref().and_then(Value::as_str)
}

/// Refuses, with `AccessDenied`, a request `principal` may not make: an
/// action outside its `allow` patterns, a queue outside its `queues`
/// patterns, a queue whose policy denies it (rule A6: an explicit Deny
/// binds the owner's keys too), or an existing queue of another account
/// whose policy does not allow it. A queue that does not exist is left
/// to the action, which answers `NonExistentQueue`. Every refusal is
/// logged once, here.
pub async fn authorize<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    principal: &Principal,
    request: &Request,
) -> Result<(), SqsError> {
    let action = request.action.as_str();
    // Every request of the key counts against its rate (rule A8), first:
    // a throttled request costs no more than this.
    if let Some(bucket) = &principal.bucket
        && !bucket.try_take()
    {
        let named: Named = parse(request.input.clone()).unwrap_or_default();
        let queue = text(&named.queue_url).or(text(&named.queue_name));
        tracing::warn!(
            access_key = principal.access_key_id.as_str(),
            action,
            queue = queue.unwrap_or("-"),
            reason = "over the key's rate limit",
            "request refused: throttled"
        );
        return Err(throttled());
    }
    // Unknown actions get the dispatcher's UnsupportedOperation.
    if !sluice_protocol::is_known_action(action) {
        return Ok(());
    }
    let access = &principal.access;
    let own = principal.account_id.as_str();
    let keys = if access.is_unlimited() && !names_queues(action) {
        Vec::new()
    } else {
        // An input that does not parse is refused here, as the action
        // would: never let it through unchecked.
        let named: Named = parse(request.input.clone())?;
        named_keys(svc, ctx, own, action, &named)
    };
    let iam = iam_action(action);
    let deny = |key: Option<&str>, reason: &'static str| {
        let resource = match key {
            Some(key) => svc.queue_arn(key),
            None => format!("arn:aws:sqs:{}:{own}:", svc.request_region(ctx)),
        };
        tracing::warn!(
            access_key = principal.access_key_id.as_str(),
            action,
            queue = key.unwrap_or("-"),
            reason,
            "request refused: access denied"
        );
        access_denied(own, &principal.access_key_id, &iam, &resource)
    };
    if !access.allows_action(&iam) {
        return Err(deny(keys.first().map(String::as_str), "action not allowed"));
    }
    for key in &keys {
        if !access.allows_queue(name_of_key(key)) {
            return Err(deny(Some(key), "queue not allowed"));
        }
        let foreign = svc.config.account.owner_of(key) != own;
        // A queue that does not exist is the action's to answer
        // (NonExistentQueue), whoever owns it.
        let Ok(meta) = svc.broker.get_queue(key).await else {
            continue;
        };
        let resource = svc.queue_arn(key);
        let facts = RequestFacts {
            account: own,
            action: &iam,
            resource: &resource,
            // Clients' own requests carry no source: only a service
            // acting for a resource would.
            source_arn: None,
            source_account: None,
            secure_transport: ctx.scheme == "https",
        };
        let decision = match meta.config.policy.as_deref().map(Policy::parse) {
            None => Decision::NotNamed,
            Some(Ok(policy)) => policy.evaluate(&facts),
            // Kept from before authentication was on: it grants nothing.
            Some(Err(reason)) => {
                tracing::warn!(queue = key.as_str(), reason, "queue policy not enforceable");
                Decision::NotNamed
            }
        };
        match decision {
            Decision::Deny => {
                tracing::warn!(
                    access_key = principal.access_key_id.as_str(),
                    action,
                    queue = key.as_str(),
                    reason = "denied by the queue's policy",
                    "request refused: access denied"
                );
                return Err(explicit_deny(
                    own,
                    &principal.access_key_id,
                    &iam,
                    &resource,
                ));
            }
            Decision::NotNamed if foreign => {
                return Err(deny(Some(key), "queue of another account"));
            }
            Decision::Allow | Decision::NotNamed => {}
        }
    }
    Ok(())
}

/// True for the actions that may name a queue of another account: an
/// unlimited key still needs the account check on them. All but the
/// queue-less ones.
fn names_queues(action: &str) -> bool {
    !matches!(action, "ListQueues" | "DeleteAlarms" | "CreateBackup")
}

/// The keys of the queues a request names: the requested name (CreateQueue,
/// GetQueueUrl), the queue its URL names, the queue of the push consumer it
/// names, the queues of its ARNs, the source of a move task's handle, the
/// dead-letter queue of a
/// RedrivePolicy it sets (rule A9: a key must reach the queue it sends
/// messages on to).
fn named_keys<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    own: &str,
    action: &str,
    named: &Named,
) -> Vec<String> {
    let account = &svc.config.account;
    let mut keys = Vec::new();
    if matches!(action, "CreateQueue" | "GetQueueUrl") {
        if let Some(name) = text(&named.queue_name) {
            let owner = text(&named.queue_owner_aws_account_id).unwrap_or(own);
            keys.push(account.key(svc.request_region(ctx), owner, name));
        }
        keys.extend(redrive_target(named).and_then(|arn| account.key_from_any_arn(&arn)));
        return keys;
    }
    if let Some(key) = text(&named.queue_url).and_then(|u| url_key(account, u)) {
        keys.push(key);
    }
    // A consumer is reached through the queue it reads: a key may change
    // only the consumers of queues it may reach.
    if matches!(
        action,
        "UpdateConsumer" | "DeleteConsumer" | "PauseConsumer" | "ResumeConsumer"
    ) && let Some(status) = text(&named.name).and_then(|n| svc.consumers.get(n))
    {
        keys.push(account.key("", &account.id, &status.spec.queue));
    }
    let handle_source = text(&named.task_handle)
        .and_then(crate::move_tasks::decode_handle)
        .map(|(_, arn)| arn);
    let target = if action == "SetQueueAttributes" {
        redrive_target(named)
    } else {
        None
    };
    let arns = [
        text(&named.source_arn),
        text(&named.destination_arn),
        handle_source.as_deref(),
        target.as_deref(),
    ];
    keys.extend(
        arns.into_iter()
            .flatten()
            .filter_map(|arn| account.key_from_any_arn(arn)),
    );
    keys
}

/// The `deadLetterTargetArn` of the RedrivePolicy an input sets, when
/// it reads as one; a policy that does not is the action's to refuse.
fn redrive_target(named: &Named) -> Option<String> {
    let doc = named.attributes.as_ref()?.get("RedrivePolicy")?.as_str()?;
    let policy: Value = serde_json::from_str(doc).ok()?;
    Some(policy.get("deadLetterTargetArn")?.as_str()?.to_string())
}

/// The key of the queue a URL names, of whichever account it names.
fn url_key(account: &Account, url: &str) -> Option<String> {
    let (owner, key) = parse_queue_url(url)?;
    Some(match key_parts(key) {
        (Some(region), Some(owner), name) => account.key(region, owner, name),
        _ => account.key("", owner.unwrap_or(&account.id), key),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A2: a URL names its account's queue, in either URL form.
    #[test]
    fn a2_url_keys() {
        let acct = Account::default();
        let key = |url| url_key(&acct, url);
        assert_eq!(key("http://h/000000000000/q").as_deref(), Some("q"));
        assert_eq!(
            key("http://h/us-east-1/000000000000/q").as_deref(),
            Some("q")
        );
        assert_eq!(
            key("http://h/111122223333/q").as_deref(),
            Some("us-east-1/111122223333/q")
        );
        assert_eq!(
            key("http://h/eu-west-1/111122223333/q").as_deref(),
            Some("eu-west-1/111122223333/q")
        );
        assert_eq!(key("q").as_deref(), Some("q"));
        assert_eq!(key("http://h/"), None);
    }

    /// A2: a member of an unexpected type does not hide the queue the
    /// input names (the check never skips an input the action accepts).
    #[test]
    fn a2_any_member_type_parses() {
        let input = serde_json::json!({
            "QueueUrl": "http://h/000000000000/payments",
            "QueueName": 5,
            "TaskHandle": ["x"],
        });
        let named: Named = parse(input.into()).unwrap();
        assert_eq!(
            text(&named.queue_url),
            Some("http://h/000000000000/payments")
        );
        assert_eq!(text(&named.queue_name), None);
        assert_eq!(text(&named.task_handle), None);
    }
}

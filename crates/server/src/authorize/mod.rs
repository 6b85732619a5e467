//! The access check of an authenticated request (rule A2), the one place
//! the request path asks it: which action the request is and which queues
//! it names, against its credential's `allow` and `queues` patterns and its
//! account. The rules themselves are in `auth::access`.
//!
//! A key over its request rate (rule A8) is refused here too, before any
//! other check: `RequestThrottled`.
//!
//! ListQueues is not refused: it lists only the queues the key may see
//! (`actions::queues::list_queues`). DeleteAlarms is checked on the queues
//! of the alarms it names; PutAlarm also on the queues its `Actions` send
//! to, as `sqs:SendMessage` (rule A9).

mod named;

use sluice_broker::{Broker, EngineError};
use sluice_core::SqsError;
use sluice_core::queue_name::{Account, key_parts, name_of_key, parse_queue_url};
use sluice_protocol::Request;
use sluice_protocol::requests::parse_borrowed;

use crate::auth::Principal;
use crate::auth::access::{access_denied, explicit_deny, iam_action};
use crate::auth::rate::throttled;
use crate::policy::{Decision, RequestFacts};
use crate::service::{RequestContext, Service};

use named::Named;

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
        let named: Named = parse_borrowed(&request.input).unwrap_or_default();
        let queue = named.queue_url.text().or(named.queue_name.text());
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
    let named: Option<Named<'_>> = if access.is_unlimited() && !names_queues(action) {
        None
    } else {
        // An input that does not parse is refused here, as the action
        // would: never let it through unchecked.
        Some(parse_borrowed(&request.input)?)
    };
    if action == "DeleteAlarms" {
        // The alarms named are looked up by name: on shared storage, as
        // the node evaluating them last saved them.
        svc.alarms.refresh_shared().await?;
    }
    let keys = match &named {
        Some(named) => named_keys(svc, ctx, own, action, named),
        None => Vec::new(),
    };
    let check = Check {
        svc,
        ctx,
        principal,
        action,
    };
    let iam = iam_action(action);
    if !access.allows_action(&iam) {
        let first = keys.first().map(String::as_str);
        return Err(check.deny(&iam, first, "action not allowed"));
    }
    for key in &keys {
        check.queue(&iam, key).await?;
    }
    // An alarm's action that sends to a queue sends for the key that set
    // it: the key must be one that may send there (rule A9).
    if action == "PutAlarm" {
        let send = iam_action("SendMessage");
        let targets = named
            .as_ref()
            .map(|n| alarm_targets(&svc.config.account, n));
        for key in targets.unwrap_or_default() {
            if !access.allows_action(&send) {
                return Err(check.deny(&send, Some(&key), "alarm action: sending not allowed"));
            }
            check.queue(&send, &key).await?;
        }
    }
    Ok(())
}

/// One request's access check, queue by queue.
struct Check<'a, B: Broker> {
    svc: &'a Service<B>,
    ctx: &'a RequestContext,
    principal: &'a Principal,
    /// The request's action, for the log.
    action: &'a str,
}

impl<B: Broker> Check<'_, B> {
    /// AccessDenied for `iam` on the queue stored under `key` (or on no
    /// queue), logged once.
    fn deny(&self, iam: &str, key: Option<&str>, reason: &'static str) -> SqsError {
        let own = self.principal.account_id.as_str();
        let resource = match key {
            Some(key) => self.svc.queue_arn(key),
            None => format!("arn:aws:sqs:{}:{own}:", self.svc.request_region(self.ctx)),
        };
        tracing::warn!(
            access_key = self.principal.access_key_id.as_str(),
            action = self.action,
            queue = key.unwrap_or("-"),
            reason,
            "request refused: access denied"
        );
        access_denied(own, &self.principal.access_key_id, iam, &resource)
    }

    /// Refuses `iam` on the queue stored under `key` when the key's
    /// `queues` do not match it, its policy denies it, or it is another
    /// account's that its policy does not grant it to. A queue that does
    /// not exist is the action's to answer (NonExistentQueue), whoever
    /// owns it.
    async fn queue(&self, iam: &str, key: &str) -> Result<(), SqsError> {
        let (svc, principal) = (self.svc, self.principal);
        let own = principal.account_id.as_str();
        if !principal.access.allows_queue(name_of_key(key)) {
            return Err(self.deny(iam, Some(key), "queue not allowed"));
        }
        let foreign = svc.config.account.owner_of(key) != own;
        let policy = match svc.broker.queue_policy(key).await {
            Ok(policy) => policy,
            Err(EngineError::QueueDoesNotExist) => return Ok(()),
            // Fail closed: a policy that cannot be read (the database out
            // of reach) lets nothing through unchecked.
            Err(e) => return Err(e.into()),
        };
        let resource = svc.queue_arn(key);
        let facts = RequestFacts {
            account: own,
            action: iam,
            resource: &resource,
            // Clients' own requests carry no source: only a service
            // acting for a resource would.
            source_arn: None,
            source_account: None,
            secure_transport: self.ctx.scheme == "https",
        };
        let decision = match policy.as_deref() {
            None => Decision::NotNamed,
            Some(document) => match &*svc.policies.parsed(key, document) {
                Ok(policy) => policy.evaluate(&facts),
                // Kept from before authentication was on: it grants nothing.
                Err(reason) => {
                    tracing::warn!(
                        queue = key,
                        reason = reason.as_str(),
                        "queue policy not enforceable"
                    );
                    Decision::NotNamed
                }
            },
        };
        match decision {
            Decision::Deny => {
                tracing::warn!(
                    access_key = principal.access_key_id.as_str(),
                    action = self.action,
                    queue = key,
                    reason = "denied by the queue's policy",
                    "request refused: access denied"
                );
                Err(explicit_deny(own, &principal.access_key_id, iam, &resource))
            }
            Decision::NotNamed if foreign => {
                Err(self.deny(iam, Some(key), "queue of another account"))
            }
            Decision::Allow | Decision::NotNamed => Ok(()),
        }
    }
}

/// The keys of the queues a PutAlarm's `Actions` send to (its queue
/// ARNs, of any account: the action refuses those of another).
fn alarm_targets(account: &Account, named: &Named<'_>) -> Vec<String> {
    named
        .actions
        .texts()
        .filter(|a| a.starts_with("arn:"))
        .filter_map(|arn| account.key_from_any_arn(arn))
        .collect()
}

/// True for the actions that may name a queue of another account: an
/// unlimited key still needs the account check on them. All but
/// ListQueues and CreateBackup (DeleteAlarms names its alarms' queues).
fn names_queues(action: &str) -> bool {
    !matches!(action, "ListQueues" | "CreateBackup")
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
    named: &Named<'_>,
) -> Vec<String> {
    let account = &svc.config.account;
    let mut keys = Vec::new();
    if matches!(action, "CreateQueue" | "GetQueueUrl") {
        if let Some(name) = named.queue_name.text() {
            let owner = named.queue_owner_aws_account_id.text().unwrap_or(own);
            keys.push(account.key(svc.request_region(ctx), owner, name));
        }
        keys.extend(redrive_target(named).and_then(|arn| account.key_from_any_arn(&arn)));
        return keys;
    }
    if let Some(key) = named.queue_url.text().and_then(|u| url_key(account, u)) {
        keys.push(key);
    }
    // An alarm is reached through the queue it watches (rule A9).
    if action == "DeleteAlarms" {
        let store = svc.alarms.store();
        keys.extend(
            named
                .alarm_names
                .texts()
                .filter_map(|n| store.get(n))
                .map(|e| e.def.queue.clone()),
        );
    }
    // A consumer is reached through the queue it reads: a key may change
    // only the consumers of queues it may reach.
    if matches!(
        action,
        "UpdateConsumer" | "DeleteConsumer" | "PauseConsumer" | "ResumeConsumer"
    ) && let Some(status) = named.name.text().and_then(|n| svc.consumers.get(n))
    {
        keys.push(account.key("", &account.id, &status.spec.queue));
    }
    let handle_source = named
        .task_handle
        .text()
        .and_then(crate::move_tasks::decode_handle)
        .map(|(_, arn)| arn);
    let target = if action == "SetQueueAttributes" {
        redrive_target(named)
    } else {
        None
    };
    let arns = [
        named.source_arn.text(),
        named.destination_arn.text(),
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
fn redrive_target(named: &Named<'_>) -> Option<String> {
    let doc = named.attributes.redrive_policy()?;
    let policy: serde_json::Value = serde_json::from_str(doc).ok()?;
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
    use sluice_protocol::Input;

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
    /// input names (the check never skips an input the action accepts),
    /// in either form of input.
    #[test]
    fn a2_any_member_type_parses() {
        let input = serde_json::json!({
            "QueueUrl": "http://h/000000000000/payments",
            "QueueName": 5,
            "TaskHandle": ["x", {"y": [1.5, null]}],
            "SourceArn": {"a": "b"},
            "DestinationArn": null,
            "Attributes": {"RedrivePolicy": "{\"deadLetterTargetArn\":\"arn:aws:sqs:us-east-1:000000000000:dlq\"}", "Policy": {}},
            "Name": true,
            "AlarmNames": ["a", 1, {"b": 2}, "c"],
            "Actions": "not a list",
        });
        let from_value = Input::Value(input.clone());
        let from_json = Input::Json(serde_json::to_vec(&input).unwrap().into());
        for input in [&from_value, &from_json] {
            let named: Named = parse_borrowed(input).unwrap();
            assert_eq!(
                named.queue_url.text(),
                Some("http://h/000000000000/payments")
            );
            assert_eq!(named.queue_name.text(), None);
            assert_eq!(named.task_handle.text(), None);
            assert_eq!(named.source_arn.text(), None);
            assert_eq!(named.destination_arn.text(), None);
            assert_eq!(named.name.text(), None);
            assert_eq!(named.alarm_names.texts().collect::<Vec<_>>(), ["a", "c"]);
            assert_eq!(named.actions.texts().count(), 0);
            assert_eq!(
                redrive_target(&named).as_deref(),
                Some("arn:aws:sqs:us-east-1:000000000000:dlq")
            );
        }
    }

    /// A2: an input the check cannot read is refused with the words the
    /// action's own parse uses; escaped text is read unescaped; the last of
    /// a repeated attribute counts, as a JSON object keeps it.
    #[test]
    fn a2_inputs_read_as_the_actions_read_them() {
        let json = |text: &str| Input::Json(bytes::Bytes::copy_from_slice(text.as_bytes()));
        let refused = |text: &str| parse_borrowed::<Named>(&json(text)).unwrap_err();
        let e = refused("[1]");
        assert_eq!(e.code, sluice_core::ErrorCode::SerializationException);
        assert!(e.message.contains("expected struct Named"), "{}", e.message);
        assert!(
            refused("{\"QueueUrl\": 1e400}")
                .message
                .contains("number out of range")
        );
        assert!(
            refused("{\"QueueUrl\": \"a\", \"QueueUrl\": \"b\"}")
                .message
                .contains("duplicate field")
        );
        assert!(
            refused("{\"QueueUrl\": \"a\"")
                .message
                .starts_with("The request body is not valid JSON")
        );
        let escaped = json(r#"{"QueueUrl": "http:\/\/h\/000000000000\/q"}"#);
        let named: Named = parse_borrowed(&escaped).unwrap();
        assert_eq!(named.queue_url.text(), Some("http://h/000000000000/q"));
        let twice = json(
            r#"{"Attributes": {"RedrivePolicy": "{\"deadLetterTargetArn\":\"x\"}", "RedrivePolicy": 1}}"#,
        );
        assert_eq!(redrive_target(&parse_borrowed(&twice).unwrap()), None);
        let value = Input::Value(serde_json::json!({"Attributes": "none", "Name": "c"}));
        let named: Named = parse_borrowed(&value).unwrap();
        assert_eq!(
            (named.name.text(), redrive_target(&named)),
            (Some("c"), None)
        );
    }

    /// The members as a `serde_json::Value` reads them: the reference the
    /// borrowed view must agree with (the same name, for the same words).
    mod reference {
        use serde::Deserialize;
        use serde_json::Value;

        #[derive(Debug, Deserialize)]
        #[serde(rename_all = "PascalCase")]
        #[allow(dead_code)]
        pub struct Named {
            queue_url: Option<Value>,
            queue_name: Option<Value>,
            #[serde(rename = "QueueOwnerAWSAccountId")]
            queue_owner_aws_account_id: Option<Value>,
            source_arn: Option<Value>,
            destination_arn: Option<Value>,
            task_handle: Option<Value>,
            attributes: Option<Value>,
            name: Option<Value>,
            alarm_names: Option<Value>,
            actions: Option<Value>,
        }
    }

    /// A2: every input the check reads is accepted or refused exactly as
    /// reading its members into `Value`s accepts or refuses it.
    #[test]
    fn a2_the_view_refuses_what_values_refuse() {
        let inputs = [
            "{}",
            "[]",
            "5",
            "null",
            "\"text\"",
            "{\"QueueUrl\": 1e400}",
            "{\"Attributes\": {\"A\": 1e400}}",
            "{\"Other\": 1e400}",
            "{\"QueueUrl\": \"a\", \"QueueUrl\": \"b\"}",
            "{\"Attributes\": {\"RedrivePolicy\": \"a\", \"RedrivePolicy\": \"b\"}}",
            "{\"QueueUrl\": \"a\"",
            "{\"QueueUrl\": \"a\"} x",
            "{\"QueueUrl\": \"\\ud800\"}",
            "{\"Name\": [[[[1]]]], \"TaskHandle\": {\"a\": {\"b\": null}}}",
            "{\"QueueName\": -0.0, \"SourceArn\": 18446744073709551616}",
            "{\"AlarmNames\": [\"a\", 1e400]}",
            "{\"Actions\": [[\"a\"], {\"b\": null}], \"AlarmNames\": \"x\"}",
        ];
        for text in inputs {
            let input = Input::Json(bytes::Bytes::copy_from_slice(text.as_bytes()));
            let view = parse_borrowed::<Named>(&input).map(|_| ());
            let values =
                sluice_protocol::requests::parse::<reference::Named>(input.clone()).map(|_| ());
            assert_eq!(view, values, "{text}");
        }
        let deep = format!("{{\"Name\": {}1{}}}", "[".repeat(200), "]".repeat(200));
        let input = Input::Json(deep.into_bytes().into());
        assert_eq!(
            parse_borrowed::<Named>(&input).map(|_| ()),
            sluice_protocol::requests::parse::<reference::Named>(input.clone()).map(|_| ())
        );
    }
}

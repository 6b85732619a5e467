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
//! to, as `sqs:SendMessage`, and the topics they publish to, as
//! `sns:Publish` on the key's own account's topics (rule A9).

mod named;

use sluice_broker::{Broker, EngineError};
use sluice_core::SqsError;
use sluice_core::queue_name::{Account, key_parts, name_of_key, parse_queue_url};
use sluice_core::topic_name::sns_arn_parts;

use crate::auth::Principal;
use crate::auth::access::{access_denied, explicit_deny};
use crate::auth::rate::throttled;
use crate::policy::{Decision, RequestFacts, resource_tags};
use crate::service::{RequestContext, Service};

pub use named::Named;

/// What the access check needs of a request: the IAM action it is
/// authorized as, its operation's name (for the log), and what it names.
pub struct Asked<'a> {
    /// `sqs:SendMessage`, `sluice:PeekMessages`, …
    pub iam: &'static str,
    /// The operation's name.
    pub action: &'static str,
    /// The queues, ARNs, consumers and alarms it names.
    pub named: Named<'a>,
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
    asked: Asked<'_>,
) -> Result<(), SqsError> {
    let Asked { iam, action, named } = asked;
    // Every request of the key counts against its rate (rule A8), first:
    // a throttled request costs no more than this.
    if let Some(bucket) = &principal.bucket
        && !bucket.try_take()
    {
        let queue = named.queue_url.or(named.queue_name.map(|(name, _)| name));
        tracing::warn!(
            access_key = principal.access_key_id.as_str(),
            action,
            queue = queue.unwrap_or("-"),
            reason = "over the key's rate limit",
            "request refused: throttled"
        );
        return Err(throttled());
    }
    let access = &principal.access;
    let own = principal.account_id.as_str();
    if !named.alarm_names.is_empty() {
        // The alarms named are looked up by name: on shared storage, as
        // the node evaluating them last saved them.
        svc.alarms.refresh_shared().await?;
    }
    let keys = named_keys(svc, ctx, own, &named);
    let check = Check {
        svc,
        ctx,
        principal,
        action,
    };
    if !access.allows_action(iam) {
        let first = keys.first().map(String::as_str);
        return Err(check.deny(iam, first, "action not allowed"));
    }
    for key in &keys {
        check.queue(iam, key).await?;
    }
    // An alarm's action that sends to a queue sends for the key that set
    // it: the key must be one that may send there (rule A9).
    let send = sluice_protocol::sqs::Operation::SendMessage.iam_action();
    for key in alarm_targets(&svc.config.account, &named) {
        if !access.allows_action(send) {
            return Err(check.deny(send, Some(&key), "alarm action: sending not allowed"));
        }
        check.queue(send, &key).await?;
    }
    // One that publishes to a topic publishes for it likewise: the key
    // must be one that may publish, to a topic of its own account.
    let publish = sluice_protocol::sns::Operation::Publish.iam_action();
    for arn in named
        .alarm_actions
        .iter()
        .filter(|a| sns_arn_parts(a).is_some())
    {
        let foreign = sns_arn_parts(arn).is_some_and(|(_, account, _)| account != own);
        if !access.allows_action(publish) || foreign {
            tracing::warn!(
                access_key = principal.access_key_id.as_str(),
                action,
                topic = arn.as_str(),
                reason = "alarm action: publishing not allowed",
                "request refused: access denied"
            );
            return Err(access_denied(own, &principal.access_key_id, publish, arn));
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
        // Named only where a policy is read or a statement denies: most
        // queues have no policy, and their requests need no ARN.
        let resource = || svc.queue_arn(key);
        let decision = match policy.as_deref() {
            None => Decision::NotNamed,
            Some(document) => match &*svc.policies.parsed(key, document) {
                Ok(policy) => {
                    // Only a policy with `aws:ResourceTag/…` reads the tags.
                    let tags = match resource_tags(&svc.broker, policy, key).await {
                        Ok(tags) => tags,
                        Err(EngineError::QueueDoesNotExist) => return Ok(()),
                        Err(e) => return Err(e.into()),
                    };
                    policy.evaluate(&RequestFacts {
                        account: own,
                        service: None,
                        action: iam,
                        resource: &resource(),
                        // Clients' own requests carry no source: only a
                        // service acting for a resource would.
                        source_arn: None,
                        source_account: None,
                        secure_transport: self.ctx.secure_transport(),
                        source_ip: self.ctx.source_ip,
                        principal_org_id: svc.config.organization_id.as_deref(),
                        resource_tags: tags.as_ref(),
                    })
                }
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
                Err(explicit_deny(
                    own,
                    &principal.access_key_id,
                    iam,
                    &resource(),
                ))
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
        .alarm_actions
        .iter()
        .filter(|a| a.starts_with("arn:"))
        .filter_map(|arn| account.key_from_any_arn(arn))
        .collect()
}

/// The keys of the queues a request names: the requested name (CreateQueue,
/// GetQueueUrl), the queue its URL names, the queue of the push consumer it
/// names, the queues of its ARNs, the source of a move task's handle, the
/// queues of the alarms it names, the dead-letter queue of a RedrivePolicy
/// it sets (rule A9: a key must reach the queue it sends messages on to).
fn named_keys<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    own: &str,
    named: &Named<'_>,
) -> Vec<String> {
    let account = &svc.config.account;
    let mut keys = Vec::new();
    if let Some((name, owner)) = named.queue_name {
        keys.push(account.key(svc.request_region(ctx), owner.unwrap_or(own), name));
    }
    let urls = named.queue_url.into_iter().chain(named.destination_url);
    keys.extend(urls.filter_map(|u| url_key(account, u)));
    // An alarm is reached through the queue it watches (rule A9).
    let store = svc.alarms.store();
    keys.extend(
        named
            .alarm_names
            .iter()
            .filter_map(|n| store.get(n))
            .map(|e| e.def.queue.clone()),
    );
    // A consumer is reached through the queue it reads: a key may change
    // only the consumers of queues it may reach.
    if let Some(status) = named.consumer.and_then(|n| svc.consumers.get(n)) {
        keys.push(account.key("", &account.id, &status.spec.queue));
    }
    let handle_source = named
        .task_handle
        .and_then(crate::move_tasks::decode_handle)
        .map(|(_, arn)| arn);
    let target = named.redrive_policy.and_then(redrive_target);
    let arns = named
        .arns
        .iter()
        .copied()
        .chain(handle_source.as_deref())
        .chain(target.as_deref());
    keys.extend(arns.filter_map(|arn| account.key_from_any_arn(arn)));
    keys
}

/// The `deadLetterTargetArn` of a RedrivePolicy, when it reads as one; a
/// policy that does not is the action's to refuse.
fn redrive_target(doc: &str) -> Option<String> {
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
}

//! Whether a queue takes a topic's deliveries (rule N8): with
//! authentication on, only when its policy allows `sqs:SendMessage` to
//! the SNS service (or to the topic's account) under its conditions on
//! the topic (`aws:SourceArn`, `aws:SourceAccount`), as AWS requires of
//! every queue a topic delivers to, its subscription's dead-letter queue
//! included. With authentication off every queue takes them.

use sluice_broker::{Broker, EngineError};
use sluice_protocol::sns::SnsError;

use super::errors::engine;
use crate::policy::{Decision, RequestFacts, resource_tags};
use crate::service::Service;

/// The service principal SNS sends to queues as.
pub const SNS_SERVICE: &str = "sns.amazonaws.com";

/// Why the queue stored under `queue` refuses the deliveries of the topic
/// `topic_arn`, or `None` when it takes them (or is gone: sending says
/// so). A policy that cannot be read fails the publish: nothing is let
/// through unchecked.
pub async fn refusal<B: Broker>(
    svc: &Service<B>,
    queue: &str,
    topic_arn: &str,
) -> Result<Option<String>, SnsError> {
    if svc.config.auth.is_none() {
        return Ok(None);
    }
    let policy = match svc.broker.queue_policy(queue).await {
        Ok(policy) => policy,
        Err(EngineError::QueueDoesNotExist) => return Ok(None),
        Err(e) => return Err(engine(e)),
    };
    let Some(document) = policy else {
        return Ok(Some(format!(
            "the queue {} has no policy that lets the topic send (sqs:SendMessage for {SNS_SERVICE})",
            svc.queue_arn(queue)
        )));
    };
    let topic_account = topic_arn.split(':').nth(4).unwrap_or_default();
    let resource = svc.queue_arn(queue);
    let decision = match &*svc.policies.parsed(queue, &document) {
        Ok(policy) => {
            let tags = match resource_tags(&svc.broker, policy, queue).await {
                Ok(tags) => tags,
                Err(EngineError::QueueDoesNotExist) => return Ok(None),
                Err(e) => return Err(engine(e)),
            };
            policy.evaluate(&RequestFacts {
                account: topic_account,
                service: Some(SNS_SERVICE),
                action: "sqs:SendMessage",
                resource: &resource,
                source_arn: Some(topic_arn),
                source_account: Some(topic_account),
                secure_transport: true,
                // A service has no client address nor organisation.
                source_ip: None,
                principal_org_id: None,
                resource_tags: tags.as_ref(),
            })
        }
        Err(_) => Decision::NotNamed,
    };
    Ok(match decision {
        Decision::Allow => None,
        Decision::Deny => Some(format!(
            "the policy of the queue {resource} denies the topic sqs:SendMessage"
        )),
        Decision::NotNamed => Some(format!(
            "the policy of the queue {resource} does not let the topic send (sqs:SendMessage for {SNS_SERVICE} with aws:SourceArn {topic_arn})"
        )),
    })
}

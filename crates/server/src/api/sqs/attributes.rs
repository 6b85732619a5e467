//! GetQueueAttributes and SetQueueAttributes (rule V11), and the checks of
//! dead-letter targets that need other queues (rules R1, R5, X7).

use std::collections::BTreeMap;

use sluice_broker::{Broker, MetaChange};
use sluice_core::attributes::{
    ARCHIVE_EXPIRED, QueueConfig, RedriveAllowPolicy, is_known_attribute,
};
use sluice_core::dead_letter_routes;
use sluice_core::{ErrorCode, SqsError};
use sluice_protocol::decode::required;
use sluice_protocol::sqs::{
    GetQueueAttributesRequest, GetQueueAttributesResult, SetQueueAttributesRequest,
};

use crate::policy::Policy;
use crate::service::Service;

/// With authentication on, a `Policy` must be one sluice enforces whole
/// (rule A7): anything else is refused as SQS refuses an invalid policy.
/// Without authentication no policy is enforced, and any JSON object is
/// kept as given.
pub fn check_access_policy<B>(
    svc: &Service<B>,
    attrs: &BTreeMap<String, String>,
) -> Result<(), SqsError> {
    match attrs.get("Policy") {
        Some(policy) if svc.config.auth.is_some() => Policy::check_attribute(policy),
        _ => Ok(()),
    }
}

/// GetQueueAttributes: the named attributes, or all with `All`.
pub async fn get_queue_attributes<B: Broker>(
    svc: &Service<B>,
    input: GetQueueAttributesRequest,
) -> Result<GetQueueAttributesResult, SqsError> {
    let url = required(input.queue_url, "QueueUrl")?;
    let name = &*svc.queue_name(&url)?;
    let wanted = input.attribute_names.unwrap_or_default();
    for n in &wanted {
        if n != "All" && !is_known_attribute(n) {
            return Err(SqsError::new(
                ErrorCode::InvalidAttributeName,
                format!("Unknown Attribute {n}."),
            ));
        }
    }
    let meta = svc.broker.get_queue(name).await?;
    if wanted.is_empty() {
        return Ok(GetQueueAttributesResult::default());
    }
    let counts = svc.broker.queue_counts(name).await?;
    let mut all: BTreeMap<&str, String> = meta.config.to_attributes();
    all.insert("QueueArn", svc.queue_arn(name));
    all.insert("ApproximateNumberOfMessages", counts.visible.to_string());
    all.insert(
        "ApproximateNumberOfMessagesNotVisible",
        counts.in_flight.to_string(),
    );
    all.insert(
        "ApproximateNumberOfMessagesDelayed",
        counts.delayed.to_string(),
    );
    all.insert("CreatedTimestamp", (meta.created_at / 1000).to_string());
    all.insert(
        "LastModifiedTimestamp",
        (meta.modified_at / 1000).to_string(),
    );
    let every = wanted.iter().any(|n| n == "All");
    // Named attributes that the queue does not have (an unset Policy, say)
    // leave the member out in both protocols, as AWS answers (rule V11; 2024
    // recorded answer, LocalStack snapshot
    // test_sqs.py::test_sqs_permission_lifecycle, "...-after-removal"): an
    // empty map is not written.
    let attributes = all
        .into_iter()
        .filter(|(k, _)| every || wanted.iter().any(|w| w == k))
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    Ok(GetQueueAttributesResult { attributes })
}

/// SetQueueAttributes: all or nothing.
pub async fn set_queue_attributes<B: Broker>(
    svc: &Service<B>,
    input: SetQueueAttributesRequest,
) -> Result<(), SqsError> {
    let url = required(input.queue_url, "QueueUrl")?;
    let name = &*svc.queue_name(&url)?;
    let attrs = required(input.attributes, "Attributes")?;
    let meta = svc.broker.get_queue(name).await?;
    // Check the result before applying it, so a bad policy changes nothing.
    let mut next = meta.config.clone();
    next.apply(&attrs, false)?;
    check_access_policy(svc, &attrs)?;
    check_archive(svc, &next, &attrs)?;
    check_dead_letter_targets(svc, name, &next, &attrs).await?;
    svc.broker
        .update_queue(name, MetaChange::SetAttributes(attrs))
        .await?;
    Ok(())
}

/// A queue may keep what expires (rule X8) only on a server that keeps an
/// archive: without one, its expired messages would wait for ever.
pub(crate) fn check_archive<B: Broker>(
    svc: &Service<B>,
    config: &QueueConfig,
    attrs: &BTreeMap<String, String>,
) -> Result<(), SqsError> {
    match attrs.get(ARCHIVE_EXPIRED) {
        Some(_) if config.archive_expired && svc.config.archive.is_none() => Err(SqsError::new(
            ErrorCode::InvalidAttributeValue,
            format!(
                "Invalid value for the parameter {ARCHIVE_EXPIRED}. Reason: this server keeps no \
                 archive; start it with --archive-dir (archive_dir)."
            ),
        )),
        _ => Ok(()),
    }
}

/// The dead-letter queues the request sets, in `RedrivePolicy` and in
/// `SluiceDeadLetterRoutes`, must each be one this queue may use (rules R1,
/// R5, X7); `config` is the queue's configuration with the request applied.
pub(crate) async fn check_dead_letter_targets<B: Broker>(
    svc: &Service<B>,
    source: &str,
    config: &QueueConfig,
    attrs: &BTreeMap<String, String>,
) -> Result<(), SqsError> {
    if let Some(raw) = attrs.get("RedrivePolicy")
        && let Some(policy) = config.redrive()
    {
        let bad = |why: &str| SqsError::invalid_value("RedrivePolicy", raw, why);
        check_target(svc, source, config, &policy.dead_letter_target_arn, &bad).await?;
    }
    if let Some(raw) = attrs.get(dead_letter_routes::ATTRIBUTE)
        && let Some(routes) = config.routes()
    {
        let bad = |why: &str| SqsError::invalid_value(dead_letter_routes::ATTRIBUTE, raw, why);
        for route in &routes.0 {
            // Unlike RedrivePolicy (rule R12), a route into its own queue
            // would only put a failed message back: refused.
            if svc.key_from_arn(&route.dead_letter_target_arn).as_deref() == Some(source) {
                return Err(bad("A route cannot name the queue itself."));
            }
            check_target(svc, source, config, &route.dead_letter_target_arn, &bad).await?;
        }
    }
    Ok(())
}

/// A dead-letter target must be an existing queue of the same type in this
/// account and region (rule R1) whose RedriveAllowPolicy lets this queue
/// use it (rule R5). A queue may name itself, as on AWS (rule R12). `bad`
/// makes the refusal, echoing the document as the client sent it.
async fn check_target<B: Broker>(
    svc: &Service<B>,
    source: &str,
    config: &QueueConfig,
    target_arn: &str,
    bad: impl Fn(&str) -> SqsError,
) -> Result<(), SqsError> {
    let account = &svc.config.account;
    let Some(dlq) = svc.key_from_arn(target_arn).filter(|dlq| {
        account.region_of(dlq) == account.region_of(source)
            && account.owner_of(dlq) == account.owner_of(source)
    }) else {
        return Err(bad(
            "Dead-letter target owner should be same as the source.",
        ));
    };
    let Ok(target) = svc.broker.get_queue(&dlq).await else {
        return Err(bad("Dead letter target does not exist."));
    };
    if target.config.fifo != config.fifo {
        return Err(bad(
            "Dead-letter queue must be same type of queue as the source.",
        ));
    }
    if let Some(allow) = target
        .config
        .redrive_allow_policy
        .as_deref()
        .and_then(|d| RedriveAllowPolicy::parse(d).ok())
    {
        let source_arn = svc.queue_arn(source);
        let allowed = match allow.permission.as_str() {
            "denyAll" => false,
            "byQueue" => allow.source_queue_arns.contains(&source_arn),
            _ => true,
        };
        if !allowed {
            return Err(bad(
                "Queue is not allowed to use this queue as its dead-letter queue by the dead-letter queue's RedriveAllowPolicy.",
            ));
        }
    }
    Ok(())
}

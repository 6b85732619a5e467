//! CreateQueue, GetQueueUrl, ListQueues, DeleteQueue, PurgeQueue.

use sluice_broker::{Broker, CreateQueue};
use sluice_core::SqsError;
use sluice_core::attributes::QueueConfig;
use sluice_core::queue_name::{name_of_key, validate_queue_name};
use sluice_protocol::decode::required;
use sluice_protocol::sqs::{
    CreateQueueRequest, CreateQueueResult, DeleteQueueRequest, GetQueueUrlRequest,
    GetQueueUrlResult, ListQueuesRequest, ListQueuesResult, PurgeQueueRequest,
};

use super::tags::validate_tags;
use crate::params::paginate;
use crate::service::{RequestContext, Service};

/// CreateQueue (rules L5, V9, V11).
pub async fn create_queue<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    input: CreateQueueRequest,
) -> Result<CreateQueueResult, SqsError> {
    let name = required(input.queue_name, "QueueName")?;
    validate_queue_name(&name)?;
    let requested = input.attributes.unwrap_or_default();
    let mut config = QueueConfig::for_create(&name, &requested)?;
    // SSE-SQS is on by default only for queues created over HTTPS; one
    // created over plain HTTP is not encrypted unless it asks (rule V14),
    // except on a server that seals messages at rest (rule E2).
    if !ctx.secure_transport()
        && !svc.broker.encrypts_at_rest()
        && !requested.contains_key("SqsManagedSseEnabled")
    {
        config.sqs_managed_sse_enabled = false;
    }
    super::attributes::check_access_policy(svc, &requested)?;
    super::attributes::check_archive(svc, &config, &requested)?;

    let tags = input.tags.unwrap_or_default();
    validate_tags(&tags)?;
    let key = svc.request_key(ctx, &name);
    super::attributes::check_dead_letter_targets(svc, &key, &config, &requested).await?;
    svc.broker
        .create_queue(CreateQueue {
            name: key.clone(),
            config,
            requested,
            tags,
        })
        .await?;
    Ok(CreateQueueResult {
        queue_url: Some(svc.queue_url(ctx, &key)),
    })
}

/// GetQueueUrl.
pub async fn get_queue_url<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    input: GetQueueUrlRequest,
) -> Result<GetQueueUrlResult, SqsError> {
    let name = required(input.queue_name, "QueueName")?;
    if input
        .queue_owner_aws_account_id
        .is_some_and(|owner| owner != svc.request_account(ctx))
    {
        return Err(SqsError::no_queue());
    }
    let key = svc.request_key(ctx, &name);
    svc.broker.get_queue(&key).await?;
    Ok(GetQueueUrlResult {
        queue_url: Some(svc.queue_url(ctx, &key)),
    })
}

/// ListQueues: by prefix, paginated with MaxResults/NextToken.
pub async fn list_queues<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    input: ListQueuesRequest,
) -> Result<ListQueuesResult, SqsError> {
    let prefix = input.queue_name_prefix.unwrap_or_default();
    // Only the queues of the region the request was signed for (rule W3),
    // of the account it acts for and that its key may name (rule A2).
    let region = svc.request_region(ctx);
    let account = &svc.config.account;
    let owner = svc.request_account(ctx);
    let access = ctx.principal.as_ref().map(|p| &p.access);
    let names: Vec<String> = svc
        .broker
        .list_queues()
        .await?
        .into_iter()
        .filter(|key| {
            let name = name_of_key(key);
            account.region_of(key) == region
                && account.owner_of(key) == owner
                && name.starts_with(&prefix)
                && access.is_none_or(|a| a.allows_queue(name))
        })
        .collect();
    let (page, token) = paginate(names, input.max_results, input.next_token.as_deref())?;
    Ok(ListQueuesResult {
        queue_urls: page.iter().map(|n| svc.queue_url(ctx, n)).collect(),
        next_token: token,
    })
}

/// DeleteQueue (rule V9).
pub async fn delete_queue<B: Broker>(
    svc: &Service<B>,
    input: DeleteQueueRequest,
) -> Result<(), SqsError> {
    let url = required(input.queue_url, "QueueUrl")?;
    svc.broker.delete_queue(&svc.queue_name(&url)?).await?;
    Ok(())
}

/// PurgeQueue (rule V8).
pub async fn purge_queue<B: Broker>(
    svc: &Service<B>,
    input: PurgeQueueRequest,
) -> Result<(), SqsError> {
    let url = required(input.queue_url, "QueueUrl")?;
    svc.broker.purge_queue(&svc.queue_name(&url)?).await?;
    Ok(())
}

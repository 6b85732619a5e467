//! The push consumers' actions (sluice's own, docs/consumers.md):
//! ListConsumers (rule C8); CreateConsumer, UpdateConsumer, DeleteConsumer
//! (rule C9); PauseConsumer, ResumeConsumer (rule C10).

use std::time::Duration;

use serde_json::{Value, json};
use sluice_broker::Broker;
use sluice_core::{ErrorCode, SqsError};
use sluice_protocol::requests::{ConsumerInput, ConsumerNameInput, ListConsumersInput, required};

use crate::service::{RequestContext, Service};
use sluice_consumers::ConsumerSpec;
use sluice_consumers::runtime::ConsumerChangeError;

/// ListConsumers: every consumer, or those of `QueueUrl`.
pub async fn list_consumers<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    input: ListConsumersInput,
) -> Result<Value, SqsError> {
    let queue = input
        .queue_url
        .map(|url| svc.queue_name(&url).map(|n| n.to_string()))
        .transpose()?;
    if svc.runtime_consumers.is_shared() {
        // Those created or deleted through other nodes are listed too.
        svc.sync_consumers().await?;
    }
    let consumers: Vec<Value> = svc
        .consumers
        .list()
        .into_iter()
        .filter(|c| queue.as_ref().is_none_or(|q| *q == c.spec.queue))
        // With authentication on, only the consumers of queues the key may
        // see: those of the server's own account within its `queues`.
        .filter(|c| {
            ctx.principal.as_ref().is_none_or(|p| {
                p.account_id == svc.config.account.id && p.access.allows_queue(&c.spec.queue)
            })
        })
        .map(|c| {
            let spec = &c.spec;
            json!({
                "Name": spec.name,
                "QueueName": spec.queue,
                "Url": spec.url,
                "BatchSize": spec.batch_size,
                "BatchingWindowSeconds": spec.batching_window.as_secs(),
                "MaxConcurrency": spec.max_concurrency,
                "TimeoutSeconds": spec.timeout.as_secs(),
                "ReportBatchItemFailures": spec.report_batch_item_failures,
                "Filters": spec.filter,
                "State": c.state(),
                "Source": c.source.as_str(),
                "InFlightBatches": c.in_flight,
                "ConcurrencyLimit": c.limit,
            })
        })
        .collect();
    Ok(json!({ "Consumers": consumers }))
}

/// CreateConsumer: a consumer checked as the config file's are, started,
/// and saved so that it starts again after a restart.
pub async fn create_consumer<B: Broker>(
    svc: &Service<B>,
    input: ConsumerInput,
) -> Result<Value, SqsError> {
    let queue_url = required(input.queue_url.clone(), "QueueUrl")?;
    let spec = ConsumerSpec {
        name: required(input.name.clone(), "Name")?,
        queue: svc.queue_name(&queue_url)?.to_string(),
        url: required(input.url.clone(), "Url")?,
        batch_size: 10,
        batching_window: Duration::ZERO,
        max_concurrency: 2,
        timeout: Duration::from_secs(30),
        report_batch_item_failures: false,
        filter: Vec::new(),
    };
    let spec = apply(&input, spec, None);
    svc.runtime_consumers
        .create(svc.consumer_host(), spec)
        .await
        .map_err(change_error)?;
    Ok(json!({}))
}

/// UpdateConsumer: the given settings of a run-time consumer changed; the
/// consumer restarts with them.
pub async fn update_consumer<B: Broker>(
    svc: &Service<B>,
    input: ConsumerInput,
) -> Result<Value, SqsError> {
    let name = required(input.name.clone(), "Name")?;
    let queue = input
        .queue_url
        .as_deref()
        .map(|url| svc.queue_name(url).map(|n| n.to_string()))
        .transpose()?;
    svc.runtime_consumers
        .update(svc.consumer_host(), &name, |spec| {
            *spec = apply(&input, spec.clone(), queue);
        })
        .await
        .map_err(change_error)?;
    Ok(json!({}))
}

/// DeleteConsumer: a run-time consumer stopped and forgotten.
pub async fn delete_consumer<B: Broker>(
    svc: &Service<B>,
    input: ConsumerNameInput,
) -> Result<Value, SqsError> {
    let name = required(input.name, "Name")?;
    svc.runtime_consumers
        .delete(svc.consumer_host(), &name)
        .await
        .map_err(change_error)?;
    Ok(json!({}))
}

/// PauseConsumer (`stopped`) and ResumeConsumer.
pub async fn set_consumer_stopped<B: Broker>(
    svc: &Service<B>,
    input: ConsumerNameInput,
    stopped: bool,
) -> Result<Value, SqsError> {
    let name = required(input.name, "Name")?;
    svc.runtime_consumers
        .set_stopped(svc.consumer_host(), &name, stopped)
        .await
        .map_err(change_error)?;
    Ok(json!({}))
}

/// `spec` with the settings `input` gives.
fn apply(input: &ConsumerInput, mut spec: ConsumerSpec, queue: Option<String>) -> ConsumerSpec {
    if let Some(q) = queue {
        spec.queue = q;
    }
    if let Some(url) = &input.url {
        spec.url = url.clone();
    }
    if let Some(n) = input.batch_size {
        spec.batch_size = n;
    }
    if let Some(s) = input.batching_window_seconds {
        spec.batching_window = Duration::from_secs(s);
    }
    if let Some(n) = input.max_concurrency {
        spec.max_concurrency = n;
    }
    if let Some(s) = input.timeout_seconds {
        spec.timeout = Duration::from_secs(s);
    }
    if let Some(b) = input.report_batch_item_failures {
        spec.report_batch_item_failures = b;
    }
    if let Some(f) = &input.filters {
        spec.filter = f.clone();
    }
    spec
}

fn change_error(e: ConsumerChangeError) -> SqsError {
    let code = match &e {
        ConsumerChangeError::Queue(e) | ConsumerChangeError::Storage(e) => return e.clone(),
        ConsumerChangeError::Invalid(_)
        | ConsumerChangeError::Exists(_)
        | ConsumerChangeError::FromConfig(_) => ErrorCode::InvalidParameterValue,
        ConsumerChangeError::NotFound(_) => ErrorCode::ResourceNotFoundException,
        ConsumerChangeError::Save(_) | ConsumerChangeError::Read(_) => ErrorCode::InternalFailure,
    };
    SqsError::new(code, e.to_string())
}

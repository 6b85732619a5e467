//! The push consumers' actions (sluice's own, docs/consumers.md):
//! ListConsumers (rule C8); CreateConsumer, UpdateConsumer, DeleteConsumer
//! (rule C9); PauseConsumer, ResumeConsumer (rule C10).

use std::time::Duration;

use sluice_broker::Broker;
use sluice_core::{ErrorCode, SqsError};
use sluice_protocol::decode::required;
use sluice_protocol::sluice::{
    Consumer, CreateConsumerRequest as ConsumerInput, ListConsumersRequest, ListConsumersResult,
    UpdateConsumerRequest,
};

use sluice_core::limits::in_range;

use crate::service::{RequestContext, Service};
use sluice_consumers::ConsumerSpec;
use sluice_consumers::runtime::ConsumerChangeError;

/// ListConsumers: every consumer, or those of `QueueUrl`.
pub async fn list_consumers<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    input: ListConsumersRequest,
) -> Result<ListConsumersResult, SqsError> {
    let queue = input
        .queue_url
        .map(|url| svc.queue_name(&url).map(|n| n.to_string()))
        .transpose()?;
    if svc.runtime_consumers.is_shared() {
        // Those created or deleted through other nodes are listed too.
        svc.sync_consumers().await?;
    }
    let consumers = svc
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
            Consumer {
                name: Some(spec.name.clone()),
                queue_name: Some(spec.queue.clone()),
                url: Some(spec.url.clone()),
                batch_size: Some(i64::from(spec.batch_size)),
                batching_window_seconds: Some(spec.batching_window.as_secs() as i64),
                max_concurrency: Some(i64::from(spec.max_concurrency)),
                timeout_seconds: Some(spec.timeout.as_secs() as i64),
                report_batch_item_failures: Some(spec.report_batch_item_failures),
                filters: spec.filter.clone(),
                skip_completed: spec.skip_completed.clone(),
                state: Some(c.state().to_string()),
                in_flight_batches: Some(c.in_flight as i64),
                concurrency_limit: Some(c.limit as i64),
                source: Some(c.source.as_str().to_string()),
            }
        })
        .collect();
    Ok(ListConsumersResult { consumers })
}

/// CreateConsumer: a consumer checked as the config file's are, started,
/// and saved so that it starts again after a restart.
pub async fn create_consumer<B: Broker>(
    svc: &Service<B>,
    input: ConsumerInput,
) -> Result<(), SqsError> {
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
        skip_completed: None,
    };
    let spec = Settings::of(input)?.apply(spec, None);
    svc.runtime_consumers
        .create(svc.consumer_host(), spec)
        .await
        .map_err(change_error)
}

/// UpdateConsumer: the given settings of a run-time consumer changed; the
/// consumer restarts with them.
pub async fn update_consumer<B: Broker>(
    svc: &Service<B>,
    input: UpdateConsumerRequest,
) -> Result<(), SqsError> {
    // The same settings as a creation's, each kept unless given.
    let input = ConsumerInput {
        name: input.name,
        queue_url: input.queue_url,
        url: input.url,
        batch_size: input.batch_size,
        batching_window_seconds: input.batching_window_seconds,
        max_concurrency: input.max_concurrency,
        timeout_seconds: input.timeout_seconds,
        report_batch_item_failures: input.report_batch_item_failures,
        filters: input.filters,
        skip_completed: input.skip_completed,
    };
    let name = required(input.name.clone(), "Name")?;
    let queue = input
        .queue_url
        .as_deref()
        .map(|url| svc.queue_name(url).map(|n| n.to_string()))
        .transpose()?;
    // Checked before the change, so a bad setting changes nothing.
    let settings = Settings::of(input)?;
    svc.runtime_consumers
        .update(svc.consumer_host(), &name, |spec| {
            *spec = settings.clone().apply(spec.clone(), queue);
        })
        .await
        .map_err(change_error)
}

/// DeleteConsumer: a run-time consumer stopped and forgotten.
pub async fn delete_consumer<B: Broker>(
    svc: &Service<B>,
    name: Option<String>,
) -> Result<(), SqsError> {
    let name = required(name, "Name")?;
    svc.runtime_consumers
        .delete(svc.consumer_host(), &name)
        .await
        .map_err(change_error)
}

/// PauseConsumer (`stopped`) and ResumeConsumer.
pub async fn set_consumer_stopped<B: Broker>(
    svc: &Service<B>,
    name: Option<String>,
    stopped: bool,
) -> Result<(), SqsError> {
    let name = required(name, "Name")?;
    svc.runtime_consumers
        .set_stopped(svc.consumer_host(), &name, stopped)
        .await
        .map_err(change_error)
}

/// `spec` with the settings `input` gives.
/// The settings a CreateConsumer or UpdateConsumer gives, checked; those
/// not given keep the consumer's.
#[derive(Clone)]
struct Settings {
    url: Option<String>,
    batch_size: Option<u32>,
    batching_window: Option<Duration>,
    max_concurrency: Option<u32>,
    timeout: Option<Duration>,
    report_batch_item_failures: Option<bool>,
    filters: Option<Vec<String>>,
    /// Given empty: no skipping any more.
    skip_completed: Option<Option<String>>,
}

impl Settings {
    fn of(input: ConsumerInput) -> Result<Self, SqsError> {
        let count = |name, n: Option<i64>| {
            n.map(|n| in_range(name, n, 0, i64::from(u32::MAX)))
                .transpose()
        };
        let seconds =
            |name, n| Ok::<_, SqsError>(count(name, n)?.map(|s| Duration::from_secs(s.into())));
        Ok(Settings {
            url: input.url,
            batch_size: count("BatchSize", input.batch_size)?,
            batching_window: seconds("BatchingWindowSeconds", input.batching_window_seconds)?,
            max_concurrency: count("MaxConcurrency", input.max_concurrency)?,
            timeout: seconds("TimeoutSeconds", input.timeout_seconds)?,
            report_batch_item_failures: input.report_batch_item_failures,
            filters: input.filters,
            skip_completed: (input.skip_completed).map(|s| (!s.is_empty()).then_some(s)),
        })
    }

    fn apply(self, mut spec: ConsumerSpec, queue: Option<String>) -> ConsumerSpec {
        spec.queue = queue.unwrap_or(spec.queue);
        spec.url = self.url.unwrap_or(spec.url);
        spec.batch_size = self.batch_size.unwrap_or(spec.batch_size);
        spec.batching_window = self.batching_window.unwrap_or(spec.batching_window);
        spec.max_concurrency = self.max_concurrency.unwrap_or(spec.max_concurrency);
        spec.timeout = self.timeout.unwrap_or(spec.timeout);
        spec.report_batch_item_failures = self
            .report_batch_item_failures
            .unwrap_or(spec.report_batch_item_failures);
        spec.filter = self.filters.unwrap_or(spec.filter);
        spec.skip_completed = self.skip_completed.unwrap_or(spec.skip_completed);
        spec
    }
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

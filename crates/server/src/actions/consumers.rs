//! ListConsumers (sluice's own): the push consumers of this node, with
//! their settings and state (docs/consumers.md).

use serde::Deserialize;
use serde_json::{Value, json};
use sluice_broker::Broker;
use sluice_core::SqsError;

use crate::service::Service;

/// ListConsumers' input: optionally only the consumers of one queue.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListConsumersInput {
    /// The queue's URL.
    pub queue_url: Option<String>,
}

/// ListConsumers: every consumer, or those of `QueueUrl`.
pub async fn list_consumers<B: Broker>(
    svc: &Service<B>,
    input: ListConsumersInput,
) -> Result<Value, SqsError> {
    let queue = input
        .queue_url
        .map(|url| svc.queue_name(&url).map(|n| n.to_string()))
        .transpose()?;
    let consumers: Vec<Value> = svc
        .consumers
        .list()
        .into_iter()
        .filter(|c| queue.as_ref().is_none_or(|q| *q == c.spec.queue))
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
                "State": if c.paused { "paused" } else { "running" },
                "InFlightBatches": c.in_flight,
                "ConcurrencyLimit": c.limit,
            })
        })
        .collect();
    Ok(json!({ "Consumers": consumers }))
}

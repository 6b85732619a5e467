//! GetDepthHistory (sluice's own, rule M5): the depths of queues over the
//! last hour, as the background sampler kept them.

use serde_json::{Value, json};
use sluice_broker::Broker;
use sluice_core::SqsError;
use sluice_core::queue_name::name_of_key;
use sluice_protocol::requests::GetDepthHistoryInput;

use crate::depth_history::SAMPLE_INTERVAL;
use crate::service::{RequestContext, Service};

/// GetDepthHistory: each queue's samples, oldest first.
pub async fn get_depth_history<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    input: GetDepthHistoryInput,
) -> Result<Value, SqsError> {
    let keys: Vec<String> = match input.queue_url {
        Some(url) => {
            let key = svc.queue_name(&url)?.to_string();
            // As GetQueueAttributes would: an unknown queue is an error.
            svc.broker.get_queue(&key).await?;
            vec![key]
        }
        None => {
            // What ListQueues would list (rules W3, A2).
            let region = svc.request_region(ctx);
            let account = &svc.config.account;
            let owner = svc.request_account(ctx);
            let access = ctx.principal.as_ref().map(|p| &p.access);
            svc.broker
                .list_queues()
                .await?
                .into_iter()
                .filter(|key| {
                    account.region_of(key) == region
                        && account.owner_of(key) == owner
                        && access.is_none_or(|a| a.allows_queue(name_of_key(key)))
                })
                .collect()
        }
    };
    let queues: Vec<Value> = keys
        .iter()
        .map(|key| {
            let samples: Vec<Value> = svc
                .depth_history
                .samples(key)
                .iter()
                .map(|s| {
                    json!({
                        "Timestamp": s.at,
                        "Visible": s.counts.visible,
                        "InFlight": s.counts.in_flight,
                        "Delayed": s.counts.delayed,
                    })
                })
                .collect();
            let mut q = serde_json::Map::new();
            q.insert("QueueUrl".into(), json!(svc.queue_url(ctx, key)));
            if !samples.is_empty() {
                q.insert("Samples".into(), Value::Array(samples));
            }
            Value::Object(q)
        })
        .collect();
    let mut out = serde_json::Map::new();
    out.insert("IntervalSeconds".into(), json!(SAMPLE_INTERVAL.as_secs()));
    if !queues.is_empty() {
        out.insert("Queues".into(), Value::Array(queues));
    }
    Ok(Value::Object(out))
}

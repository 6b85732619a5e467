//! GetDepthHistory (sluice's own, rule M5): the depths of queues over the
//! last hour, as the background sampler kept them.

use sluice_broker::Broker;
use sluice_core::SqsError;
use sluice_core::queue_name::name_of_key;
use sluice_protocol::sluice::{
    DepthSample, GetDepthHistoryRequest, GetDepthHistoryResult, QueueDepthHistory,
};

use crate::depth_history::SAMPLE_INTERVAL;
use crate::service::{RequestContext, Service};

/// GetDepthHistory: each queue's samples, oldest first.
pub async fn get_depth_history<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    input: GetDepthHistoryRequest,
) -> Result<GetDepthHistoryResult, SqsError> {
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
    let queues = keys
        .iter()
        .map(|key| QueueDepthHistory {
            queue_url: Some(svc.queue_url(ctx, key)),
            samples: (svc.depth_history.samples(key).iter())
                .map(|s| DepthSample {
                    timestamp: Some(s.at as i64),
                    visible: Some(s.counts.visible as i64),
                    in_flight: Some(s.counts.in_flight as i64),
                    delayed: Some(s.counts.delayed as i64),
                })
                .collect(),
        })
        .collect();
    Ok(GetDepthHistoryResult {
        interval_seconds: Some(SAMPLE_INTERVAL.as_secs() as i64),
        queues,
    })
}

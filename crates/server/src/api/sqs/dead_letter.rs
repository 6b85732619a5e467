//! ListDeadLetterSourceQueues (rules R6, A9).

use sluice_broker::Broker;
use sluice_core::SqsError;
use sluice_core::queue_name::name_of_key;
use sluice_protocol::decode::required;
use sluice_protocol::sqs::{ListDeadLetterSourceQueuesRequest, ListDeadLetterSourceQueuesResult};

use crate::params::paginate;
use crate::service::{RequestContext, Service};

/// The queues whose RedrivePolicy targets this queue, paginated.
pub async fn list_dead_letter_source_queues<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    input: ListDeadLetterSourceQueuesRequest,
) -> Result<ListDeadLetterSourceQueuesResult, SqsError> {
    let url = required(input.queue_url, "QueueUrl")?;
    let dlq = &*svc.queue_name(&url)?;
    svc.broker.get_queue(dlq).await?;
    let dlq_arn = svc.queue_arn(dlq);
    // Only the caller's own queues that its key may name (rule A9), as
    // ListQueues lists them: a key granted a dead-letter queue of another
    // account by its policy does not learn that account's queues.
    let mut sources = Vec::new();
    for name in svc.broker.list_queues().await? {
        if let Some(p) = &ctx.principal
            && (svc.config.account.owner_of(&name) != p.account_id
                || !p.access.allows_queue(name_of_key(&name)))
        {
            continue;
        }
        let Ok(meta) = svc.broker.get_queue(&name).await else {
            continue;
        };
        if meta
            .config
            .redrive()
            .is_some_and(|p| p.dead_letter_target_arn == dlq_arn)
        {
            sources.push(name);
        }
    }
    let (page, token) = paginate(sources, input.max_results, input.next_token.as_deref())?;
    Ok(ListDeadLetterSourceQueuesResult {
        queue_urls: page.iter().map(|n| svc.queue_url(ctx, n)).collect(),
        next_token: token,
    })
}

//! What the config file declares, made at start through the same actions
//! a client calls: its queues (created, or brought to the declared
//! attributes and tags) and its alarms.

use sluice_alarms::definition::{AlarmDefinition, AlarmSource};
use sluice_broker::Broker;
use sluice_core::{ErrorCode, SqsError};
use sluice_protocol::sluice::PutAlarmRequest;
use sluice_protocol::sqs::{
    CreateQueueRequest, Request, Response, SetQueueAttributesRequest, TagQueueRequest,
};
use sluice_server::Service;
use sluice_server::api::Api;
use sluice_server::api::sqs::SqsApi;
use sluice_server::service::RequestContext;

use crate::config::FileConfig;

/// Creates the queues of the config file, or brings existing ones to the
/// declared attributes and tags.
pub async fn declare_queues<B: Broker>(
    service: &Service<B>,
    file: &FileConfig,
) -> anyhow::Result<()> {
    let ctx = RequestContext::default();
    for q in &file.queues {
        let attributes = q.attribute_strings();
        let create = CreateQueueRequest {
            queue_name: Some(q.name.clone()),
            attributes: Some(attributes.clone()),
            tags: Some(q.tags.clone()),
        };
        match sqs(service, &ctx, create).await {
            Ok(_) => {}
            Err(e) if e.code == ErrorCode::QueueNameExists => {
                let set = SetQueueAttributesRequest {
                    queue_url: Some(service.queue_url(&ctx, &q.name)),
                    attributes: Some(attributes.clone()),
                };
                sqs(service, &ctx, set)
                    .await
                    .map_err(|e| anyhow::anyhow!("queue {} in the config file: {e}", q.name))?;
            }
            Err(e) => anyhow::bail!("queue {} in the config file: {e}", q.name),
        }
        if !q.tags.is_empty() {
            let tag = TagQueueRequest {
                queue_url: Some(service.queue_url(&ctx, &q.name)),
                tags: Some(q.tags.clone()),
            };
            sqs(service, &ctx, tag)
                .await
                .map_err(|e| anyhow::anyhow!("queue {} in the config file: {e}", q.name))?;
        }
    }
    Ok(())
}

/// Defines the alarms of the config file, and checks the `[dlq_alarms]`
/// table by defining its alarm on a would-be queue.
pub async fn declare_alarms<B: Broker>(
    service: &Service<B>,
    file: &FileConfig,
) -> anyhow::Result<()> {
    let ctx = RequestContext::default();
    if let Some(dlq) = &service.config.alarms.dlq_alarms {
        let def = sluice_alarms::dlq_alarm("example-dlq", dlq);
        let input = PutAlarmRequest {
            alarm_name: Some(def.name),
            metric_name: Some(def.metric.as_str().into()),
            period: Some(i64::from(def.period_secs)),
            evaluation_periods: Some(i64::from(def.evaluation_periods)),
            threshold: Some(def.threshold),
            comparison_operator: Some(def.comparison.as_str().into()),
            actions: Some(def.actions),
            ..Default::default()
        };
        AlarmDefinition::from_input(input, "example-dlq", &service.config.account)
            .map_err(|e| anyhow::anyhow!("[dlq_alarms] in the config file: {}", e.message))?;
    }
    for a in &file.alarms {
        let input = PutAlarmRequest {
            alarm_name: Some(a.name.clone()),
            queue_url: Some(service.queue_url(&ctx, &a.queue)),
            metric_name: Some(a.metric.clone()),
            statistic: a.statistic.clone(),
            period: a.period,
            evaluation_periods: a.evaluation_periods,
            datapoints_to_alarm: a.datapoints_to_alarm,
            threshold: Some(a.threshold),
            comparison_operator: Some(a.comparison.clone()),
            treat_missing_data: a.treat_missing_data.clone(),
            actions: Some(a.actions.clone()),
            alarm_description: a.description.clone(),
        };
        service
            .put_alarm(input, AlarmSource::Config)
            .await
            .map_err(|e| anyhow::anyhow!("alarm {} in the config file: {e}", a.name))?;
    }
    Ok(())
}

/// Runs an SQS request inside the server, through the same action a
/// client's request reaches (no access check: the config file is the
/// operator's).
async fn sqs<B: Broker>(
    service: &Service<B>,
    ctx: &RequestContext,
    input: impl Into<Request>,
) -> Result<Response, SqsError> {
    <SqsApi as Api<B>>::handle(service, ctx, input.into()).await
}

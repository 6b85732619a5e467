//! sluice's alarm actions (rule M2): PutAlarm, DescribeAlarms, DeleteAlarms.
//! Documented with examples in docs/extensions.md and docs/alarms.md.

use sluice_broker::Broker;
use sluice_core::SqsError;
use sluice_core::queue_name::name_of_key;
use sluice_protocol::decode::required;
use sluice_protocol::sluice::{
    Alarm, AlarmHistoryItem, DeleteAlarmsRequest, DescribeAlarmsRequest, DescribeAlarmsResult,
    PutAlarmRequest,
};

use crate::service::{RequestContext, Service};
use sluice_alarms::definition::{AlarmSource, AlarmState};
use sluice_alarms::store::AlarmEntry;

/// PutAlarm: create or replace an alarm on a queue metric.
pub async fn put_alarm<B: Broker>(
    svc: &Service<B>,
    input: PutAlarmRequest,
) -> Result<(), SqsError> {
    svc.put_alarm(input, AlarmSource::Api).await
}

/// DescribeAlarms: alarms with their state and history, by name; with
/// authentication on, only those on queues the key may see (its
/// account's, within its `queues`: rule A9), as ListQueues lists them.
pub async fn describe_alarms<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    input: DescribeAlarmsRequest,
) -> Result<DescribeAlarmsResult, SqsError> {
    let queue = match &input.queue_url {
        Some(url) => Some(svc.queue_name(url)?.to_string()),
        None => None,
    };
    let state = match &input.state_value {
        Some(s) => Some(AlarmState::parse(s).ok_or_else(|| {
            SqsError::invalid_value("StateValue", s, "Must be OK, ALARM or INSUFFICIENT_DATA.")
        })?),
        None => None,
    };
    // On shared storage, what the node evaluating them last saved.
    svc.alarms.refresh_shared().await?;
    let store = svc.alarms.store();
    let alarms = store
        .entries()
        .filter(|e| {
            input
                .alarm_names
                .as_ref()
                .is_none_or(|names| names.contains(&e.def.name))
                && queue.as_ref().is_none_or(|q| *q == e.def.queue)
                && state.is_none_or(|s| s == e.state)
                && ctx.principal.as_ref().is_none_or(|p| {
                    svc.config.account.owner_of(&e.def.queue) == p.account_id
                        && p.access.allows_queue(name_of_key(&e.def.queue))
                })
        })
        .map(describe)
        .collect();
    Ok(DescribeAlarmsResult { alarms })
}

fn describe(e: &AlarmEntry) -> Alarm {
    let d = &e.def;
    let history = (e.history.iter())
        .map(|t| AlarmHistoryItem {
            timestamp: Some(t.at as i64),
            old_state: Some(t.old.as_str().to_string()),
            new_state: Some(t.new.as_str().to_string()),
            reason: Some(t.reason.clone()),
        })
        .collect();
    Alarm {
        alarm_name: Some(d.name.clone()),
        queue_name: Some(d.queue.clone()),
        metric_name: Some(d.metric.as_str().to_string()),
        statistic: Some(d.statistic.as_str().to_string()),
        period: Some(i64::from(d.period_secs)),
        evaluation_periods: Some(i64::from(d.evaluation_periods)),
        datapoints_to_alarm: Some(i64::from(d.datapoints_to_alarm)),
        threshold: Some(d.threshold),
        comparison_operator: Some(d.comparison.as_str().to_string()),
        treat_missing_data: Some(d.treat_missing.as_str().to_string()),
        actions: d.actions.clone(),
        alarm_description: d.description.clone(),
        source: Some(e.source.as_str().to_string()),
        state_value: Some(e.state.as_str().to_string()),
        state_reason: Some(e.reason.clone()),
        state_updated_timestamp: Some(e.updated_at as i64),
        history,
    }
}

/// DeleteAlarms: delete API alarms, all or none; an unknown name is
/// ResourceNotFoundException, a config or DLQ-setting alarm
/// InvalidParameterValue.
pub async fn delete_alarms<B: Broker>(
    svc: &Service<B>,
    input: DeleteAlarmsRequest,
) -> Result<(), SqsError> {
    let names = required(input.alarm_names, "AlarmNames")?;
    if names.is_empty() {
        return Err(SqsError::missing("AlarmNames"));
    }
    svc.alarms.delete(&names).await
}

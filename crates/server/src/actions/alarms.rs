//! sluice's alarm actions (rule M2): PutAlarm, DescribeAlarms, DeleteAlarms.
//! Documented with examples in docs/extensions.md and docs/alarms.md.

use serde_json::{Value, json};
use sluice_broker::Broker;
use sluice_core::SqsError;
use sluice_core::queue_name::name_of_key;
use sluice_protocol::requests::{DeleteAlarmsInput, DescribeAlarmsInput, PutAlarmInput, required};

use crate::service::{RequestContext, Service};
use sluice_alarms::definition::{AlarmSource, AlarmState};
use sluice_alarms::store::AlarmEntry;

/// PutAlarm: create or replace an alarm on a queue metric.
pub async fn put_alarm<B: Broker>(
    svc: &Service<B>,
    input: PutAlarmInput,
) -> Result<Value, SqsError> {
    svc.put_alarm(input, AlarmSource::Api).await?;
    Ok(json!({}))
}

/// DescribeAlarms: alarms with their state and history, by name; with
/// authentication on, only those on queues the key may see (its
/// account's, within its `queues`: rule A9), as ListQueues lists them.
pub async fn describe_alarms<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    input: DescribeAlarmsInput,
) -> Result<Value, SqsError> {
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
    let alarms: Vec<Value> = store
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
    Ok(json!({ "Alarms": alarms }))
}

fn describe(e: &AlarmEntry) -> Value {
    let d = &e.def;
    let history: Vec<Value> = e
        .history
        .iter()
        .map(|t| {
            json!({
                "Timestamp": t.at,
                "OldState": t.old.as_str(),
                "NewState": t.new.as_str(),
                "Reason": t.reason,
            })
        })
        .collect();
    let mut out = json!({
        "AlarmName": d.name,
        "QueueName": d.queue,
        "MetricName": d.metric.as_str(),
        "Statistic": d.statistic.as_str(),
        "Period": d.period_secs,
        "EvaluationPeriods": d.evaluation_periods,
        "DatapointsToAlarm": d.datapoints_to_alarm,
        "Threshold": d.threshold,
        "ComparisonOperator": d.comparison.as_str(),
        "TreatMissingData": d.treat_missing.as_str(),
        "Actions": d.actions,
        "Source": e.source.as_str(),
        "StateValue": e.state.as_str(),
        "StateReason": e.reason,
        "StateUpdatedTimestamp": e.updated_at,
        "History": history,
    });
    if let Some(desc) = &d.description {
        out["AlarmDescription"] = json!(desc);
    }
    out
}

/// DeleteAlarms: delete API alarms, all or none; an unknown name is
/// ResourceNotFoundException, a config or DLQ-setting alarm
/// InvalidParameterValue.
pub async fn delete_alarms<B: Broker>(
    svc: &Service<B>,
    input: DeleteAlarmsInput,
) -> Result<Value, SqsError> {
    let names = required(input.alarm_names, "AlarmNames")?;
    if names.is_empty() {
        return Err(SqsError::missing("AlarmNames"));
    }
    svc.alarms.delete(&names).await?;
    Ok(json!({}))
}

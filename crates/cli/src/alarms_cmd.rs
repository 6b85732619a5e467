//! `sluice alarms`: list a server's alarms with their state, show one with
//! its history, define and delete alarms, through the PutAlarm,
//! DescribeAlarms and DeleteAlarms actions (rule M2).

use anyhow::Context;
use clap::{Args, Subcommand};
use sluice_client::sluice::{Alarm, DeleteAlarmsRequest, DescribeAlarmsRequest, PutAlarmRequest};
use sluice_core::timestamp::rfc3339;

use crate::admin::{Connection, out, outln, print_json};
use crate::table::{Table, or_null};

/// `sluice alarms …`.
#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct AlarmsArgs {
    #[command(flatten)]
    connection: Connection,
    #[command(subcommand)]
    command: Option<AlarmsCommand>,
    /// With no subcommand: list the alarms (as `list`).
    #[command(flatten)]
    list: ListArgs,
}

#[derive(Subcommand, Debug)]
enum AlarmsCommand {
    /// Every alarm with its state, since when, and its condition (the default).
    List(ListArgs),
    /// One alarm: definition, state, reason, and its state history.
    Show(ShowArgs),
    /// Define an alarm, or replace the one of that name (it keeps its state
    /// and history). Alarms of the config file cannot be replaced here.
    Put(PutArgs),
    /// Delete alarms defined through the API (all or none).
    Delete(DeleteArgs),
}

#[derive(Args, Debug)]
struct ListArgs {
    /// Only alarms in this state: OK, ALARM or INSUFFICIENT_DATA.
    #[arg(long, value_name = "STATE")]
    state: Option<String>,
    /// Print the DescribeAlarms answer as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct ShowArgs {
    /// The alarm.
    #[arg(value_name = "ALARM")]
    name: String,
    /// Print the alarm as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct PutArgs {
    /// Name of the alarm (1–255 characters).
    #[arg(value_name = "ALARM")]
    name: String,
    /// The queue watched (name or URL).
    #[arg(long, value_name = "QUEUE")]
    queue: String,
    /// ApproximateNumberOfMessagesVisible, ApproximateAgeOfOldestMessage,
    /// NumberOfMessagesSent, … (docs/alarms.md lists them all).
    #[arg(long, value_name = "METRIC")]
    metric: String,
    /// The value compared with each period's statistic.
    #[arg(long, value_name = "NUMBER", allow_negative_numbers = true)]
    threshold: f64,
    /// GreaterThanOrEqualToThreshold, GreaterThanThreshold,
    /// LessThanThreshold or LessThanOrEqualToThreshold.
    #[arg(
        long,
        value_name = "OPERATOR",
        default_value = "GreaterThanOrEqualToThreshold"
    )]
    comparison: String,
    /// Average, Sum, Minimum, Maximum or SampleCount [server default: Maximum].
    #[arg(long, value_name = "STATISTIC")]
    statistic: Option<String>,
    /// Seconds per period: 10, 30 or a multiple of 60 [server default: 60].
    #[arg(long, value_name = "SECONDS")]
    period: Option<u32>,
    /// Periods evaluated [server default: 1].
    #[arg(long, value_name = "N")]
    evaluation_periods: Option<u32>,
    /// Breaching periods among them that raise the alarm [server default: all].
    #[arg(long, value_name = "N")]
    datapoints_to_alarm: Option<u32>,
    /// missing, notBreaching, breaching or ignore [server default: missing].
    #[arg(long, value_name = "TREATMENT")]
    missing_data: Option<String>,
    /// Notified on every state change: an http:// or https:// webhook URL or the ARN of
    /// a queue of this server; repeat for several (at most 5).
    #[arg(long = "action", value_name = "URL|ARN")]
    actions: Vec<String>,
    /// Sent with the notifications.
    #[arg(long, value_name = "TEXT")]
    description: Option<String>,
}

#[derive(Args, Debug)]
struct DeleteArgs {
    /// The alarms to delete.
    #[arg(value_name = "ALARM", required = true)]
    names: Vec<String>,
}

/// Runs the command: exit 0, or 1 with `error: …` when the server refuses.
pub async fn run(args: AlarmsArgs) -> anyhow::Result<u8> {
    let client = args.connection.client()?;
    match args.command.unwrap_or(AlarmsCommand::List(args.list)) {
        AlarmsCommand::List(list) => {
            let input = DescribeAlarmsRequest {
                state_value: list.state.clone(),
                ..Default::default()
            };
            let answer = client.call(&input).await?;
            if list.json {
                print_json(&answer);
                return Ok(0);
            }
            let alarms = answer.alarms;
            if alarms.is_empty() {
                outln!("no alarms");
            } else {
                out!("{}", table(&alarms));
            }
        }
        AlarmsCommand::Show(show) => {
            let input = DescribeAlarmsRequest {
                alarm_names: Some(vec![show.name.clone()]),
                ..Default::default()
            };
            let answer = client.call(&input).await?;
            let alarm = answer
                .alarms
                .first()
                .with_context(|| format!("no alarm named {:?}", show.name))?;
            if show.json {
                print_json(alarm);
            } else {
                out!("{}", details(alarm));
            }
        }
        AlarmsCommand::Put(put) => {
            let queue_url = client.queue_url(&put.queue).await?;
            let input = PutAlarmRequest {
                alarm_name: Some(put.name.clone()),
                queue_url: Some(queue_url),
                metric_name: Some(put.metric),
                statistic: put.statistic,
                period: put.period.map(i64::from),
                evaluation_periods: put.evaluation_periods.map(i64::from),
                datapoints_to_alarm: put.datapoints_to_alarm.map(i64::from),
                threshold: Some(put.threshold),
                comparison_operator: Some(put.comparison),
                treat_missing_data: put.missing_data,
                actions: Some(put.actions),
                alarm_description: put.description,
            };
            client.call(&input).await?;
            outln!("alarm {} defined", put.name);
        }
        AlarmsCommand::Delete(delete) => {
            let input = DeleteAlarmsRequest {
                alarm_names: Some(delete.names.clone()),
            };
            client.call(&input).await?;
            outln!("deleted {}", delete.names.join(", "));
        }
    }
    Ok(0)
}

/// One line per alarm: name, queue, state, since when, condition.
fn table(alarms: &[Alarm]) -> String {
    let mut t = Table::new(&["ALARM", "QUEUE", "STATE", "SINCE", "CONDITION"]);
    for a in alarms {
        t.row(vec![
            text(&a.alarm_name),
            text(&a.queue_name),
            text(&a.state_value),
            time(a.state_updated_timestamp),
            condition(a),
        ]);
    }
    t.render()
}

/// `Maximum ApproximateNumberOfMessagesVisible >= 1 in 2 of 3 periods of 60 s`.
fn condition(a: &Alarm) -> String {
    let op = match a.comparison_operator.as_deref().unwrap_or("") {
        "GreaterThanOrEqualToThreshold" => ">=",
        "GreaterThanThreshold" => ">",
        "LessThanThreshold" => "<",
        "LessThanOrEqualToThreshold" => "<=",
        other => other,
    };
    format!(
        "{} {} {op} {} in {} of {} periods of {} s",
        text(&a.statistic),
        text(&a.metric_name),
        number(a.threshold),
        or_null(a.datapoints_to_alarm),
        or_null(a.evaluation_periods),
        or_null(a.period),
    )
}

/// An alarm's definition, state and history, newest change first.
fn details(a: &Alarm) -> String {
    let mut out = String::new();
    let mut field = |name: &str, value: String| out.push_str(&format!("{name:<18}{value}\n"));
    field("alarm", text(&a.alarm_name));
    field("queue", text(&a.queue_name));
    field("condition", condition(a));
    field("missing data", text(&a.treat_missing_data));
    field("defined by", text(&a.source));
    field(
        "actions",
        if a.actions.is_empty() {
            "none".into()
        } else {
            a.actions.join(", ")
        },
    );
    if let Some(d) = &a.alarm_description {
        field("description", d.clone());
    }
    field(
        "state",
        format!(
            "{} since {}",
            text(&a.state_value),
            time(a.state_updated_timestamp)
        ),
    );
    field("reason", text(&a.state_reason));
    out.push_str("history (newest first):\n");
    if a.history.is_empty() {
        out.push_str("  no state changes yet\n");
    }
    for h in &a.history {
        out.push_str(&format!(
            "  {}  {} -> {}  {}\n",
            time(h.timestamp),
            text(&h.old_state),
            text(&h.new_state),
            text(&h.reason)
        ));
    }
    out
}

fn text(v: &Option<String>) -> String {
    or_null(v.as_deref())
}

/// A threshold: integral ones without a fraction (`1`, not `1.0`).
fn number(v: Option<f64>) -> String {
    match v {
        Some(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", f as i64),
        other => or_null(other),
    }
}

fn time(v: Option<i64>) -> String {
    match v {
        Some(ms) => u64::try_from(ms).map_or_else(|_| ms.to_string(), rfc3339),
        None => or_null(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_client::sluice::AlarmHistoryItem;

    fn alarm() -> Alarm {
        let change = |at: i64, old: &str, new: &str, reason: &str| AlarmHistoryItem {
            timestamp: Some(at),
            old_state: Some(old.into()),
            new_state: Some(new.into()),
            reason: Some(reason.into()),
        };
        Alarm {
            alarm_name: Some("dlq-depth:orders-dlq".into()),
            queue_name: Some("orders-dlq".into()),
            metric_name: Some("ApproximateNumberOfMessagesVisible".into()),
            statistic: Some("Maximum".into()),
            period: Some(60),
            evaluation_periods: Some(1),
            datapoints_to_alarm: Some(1),
            threshold: Some(1.0),
            comparison_operator: Some("GreaterThanOrEqualToThreshold".into()),
            treat_missing_data: Some("notBreaching".into()),
            actions: vec!["http://h/".into()],
            alarm_description: None,
            source: Some("dlq_alarms".into()),
            state_value: Some("ALARM".into()),
            state_reason: Some("r2".into()),
            state_updated_timestamp: Some(1_767_225_840_000),
            history: vec![
                change(1_767_225_840_000, "OK", "ALARM", "r2"),
                change(1_767_225_660_000, "INSUFFICIENT_DATA", "OK", "r1"),
            ],
        }
    }

    /// M2: the list shows each alarm's state and condition in columns.
    #[test]
    fn m2_table_lists_state_and_condition() {
        let t = table(&[alarm()]);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].starts_with("ALARM                 QUEUE       STATE  SINCE"));
        assert!(lines[1].starts_with("dlq-depth:orders-dlq  orders-dlq  ALARM  2026-01-01T00:04:00.000Z  Maximum ApproximateNumberOfMessagesVisible >= 1 in 1 of 1 periods of 60 s"), "{t}");
    }

    /// M2: one alarm's history, newest first, with times and reasons.
    #[test]
    fn m2_details_show_history() {
        let d = details(&alarm());
        assert!(
            d.contains("state             ALARM since 2026-01-01T00:04:00.000Z\n"),
            "{d}"
        );
        assert!(d.ends_with(
            "history (newest first):\n  2026-01-01T00:04:00.000Z  OK -> ALARM  r2\n  2026-01-01T00:01:00.000Z  INSUFFICIENT_DATA -> OK  r1\n"
        ), "{d}");
    }
}

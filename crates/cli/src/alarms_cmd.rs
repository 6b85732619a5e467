//! `sluice alarms`: list a server's alarms with their state, or show one
//! alarm with its history, through the DescribeAlarms action (rule M2).

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Args;
use serde_json::{Value, json};
use sluice_server::alarms::notify::rfc3339;

/// Flags of `sluice alarms`.
#[derive(Args, Debug)]
pub struct AlarmsArgs {
    /// Show this alarm with its definition and state history.
    #[arg(value_name = "ALARM")]
    name: Option<String>,
    /// The server [default: http://127.0.0.1:9324].
    #[arg(long, value_name = "URL", default_value = "http://127.0.0.1:9324")]
    endpoint: String,
    /// Only alarms in this state: OK, ALARM or INSUFFICIENT_DATA.
    #[arg(long, value_name = "STATE")]
    state: Option<String>,
    /// Print the DescribeAlarms answer as JSON.
    #[arg(long)]
    json: bool,
}

/// Runs the command; exits non-zero when the server cannot be asked.
pub fn run(args: AlarmsArgs) -> anyhow::Result<()> {
    let mut request = json!({});
    if let Some(name) = &args.name {
        request["AlarmNames"] = json!([name]);
    }
    if let Some(state) = &args.state {
        request["StateValue"] = json!(state);
    }
    let answer = describe_alarms(&args.endpoint, &request)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&answer)?);
        return Ok(());
    }
    let alarms = answer["Alarms"].as_array().cloned().unwrap_or_default();
    match &args.name {
        Some(name) => {
            let alarm = alarms
                .first()
                .with_context(|| format!("no alarm named {name:?}"))?;
            print!("{}", details(alarm));
        }
        None if alarms.is_empty() => println!("no alarms"),
        None => print!("{}", table(&alarms)),
    }
    Ok(())
}

/// One line per alarm: name, queue, state, since when, condition.
fn table(alarms: &[Value]) -> String {
    let rows: Vec<[String; 5]> = alarms
        .iter()
        .map(|a| {
            [
                text(&a["AlarmName"]),
                text(&a["QueueName"]),
                text(&a["StateValue"]),
                time(&a["StateUpdatedTimestamp"]),
                condition(a),
            ]
        })
        .collect();
    let header = ["ALARM", "QUEUE", "STATE", "SINCE", "CONDITION"].map(String::from);
    let mut widths = header.clone().map(|h| h.len());
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in std::iter::once(&header).chain(&rows) {
        let mut line = String::new();
        for (i, (cell, w)) in row.iter().zip(widths).enumerate() {
            if i + 1 == row.len() {
                line.push_str(cell);
            } else {
                line.push_str(&format!("{cell:<w$}  "));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// `Maximum ApproximateNumberOfMessagesVisible >= 1 in 2 of 3 periods of 60 s`.
fn condition(a: &Value) -> String {
    let op = match a["ComparisonOperator"].as_str().unwrap_or("") {
        "GreaterThanOrEqualToThreshold" => ">=",
        "GreaterThanThreshold" => ">",
        "LessThanThreshold" => "<",
        "LessThanOrEqualToThreshold" => "<=",
        other => other,
    };
    format!(
        "{} {} {op} {} in {} of {} periods of {} s",
        text(&a["Statistic"]),
        text(&a["MetricName"]),
        number(&a["Threshold"]),
        a["DatapointsToAlarm"],
        a["EvaluationPeriods"],
        a["Period"],
    )
}

/// An alarm's definition, state and history, newest change first.
fn details(a: &Value) -> String {
    let mut out = String::new();
    let mut field = |name: &str, value: String| out.push_str(&format!("{name:<18}{value}\n"));
    field("alarm", text(&a["AlarmName"]));
    field("queue", text(&a["QueueName"]));
    field("condition", condition(a));
    field("missing data", text(&a["TreatMissingData"]));
    field("defined by", text(&a["Source"]));
    let actions: Vec<String> = a["Actions"]
        .as_array()
        .map(|v| v.iter().map(text).collect())
        .unwrap_or_default();
    field(
        "actions",
        if actions.is_empty() {
            "none".into()
        } else {
            actions.join(", ")
        },
    );
    if let Some(d) = a["AlarmDescription"].as_str() {
        field("description", d.to_string());
    }
    field(
        "state",
        format!(
            "{} since {}",
            text(&a["StateValue"]),
            time(&a["StateUpdatedTimestamp"])
        ),
    );
    field("reason", text(&a["StateReason"]));
    out.push_str("history (newest first):\n");
    let history = a["History"].as_array().cloned().unwrap_or_default();
    if history.is_empty() {
        out.push_str("  no state changes yet\n");
    }
    for h in history {
        out.push_str(&format!(
            "  {}  {} -> {}  {}\n",
            time(&h["Timestamp"]),
            text(&h["OldState"]),
            text(&h["NewState"]),
            text(&h["Reason"])
        ));
    }
    out
}

fn text(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_string)
}

fn number(v: &Value) -> String {
    match v.as_f64() {
        Some(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", f as i64),
        Some(f) => f.to_string(),
        None => text(v),
    }
}

fn time(v: &Value) -> String {
    v.as_u64().map_or_else(|| text(v), rfc3339)
}

/// POSTs DescribeAlarms to `endpoint` (a plain `http://HOST:PORT` URL).
fn describe_alarms(endpoint: &str, request: &Value) -> anyhow::Result<Value> {
    let authority = endpoint
        .strip_prefix("http://")
        .with_context(|| format!("--endpoint {endpoint:?} must be an http:// URL"))?
        .trim_end_matches('/');
    let addr = authority
        .to_socket_addrs()
        .with_context(|| format!("cannot resolve {authority}"))?
        .next()
        .with_context(|| format!("cannot resolve {authority}"))?;
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5))
        .with_context(|| format!("cannot connect to {endpoint}"))?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let body = request.to_string();
    write!(
        stream,
        "POST / HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\
         Content-Type: application/x-amz-json-1.0\r\nX-Amz-Target: Sluice.DescribeAlarms\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .context("the server's answer is not HTTP")?;
    let status: u16 = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .context("the server's answer has no status")?;
    let answer: Value = serde_json::from_str(body)
        .with_context(|| format!("the server answered HTTP {status} without JSON: {body}"))?;
    if status != 200 {
        bail!(
            "DescribeAlarms failed (HTTP {status}): {} {}",
            text_of(&answer["__type"]),
            text_of(&answer["message"])
        );
    }
    Ok(answer)
}

fn text_of(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alarm() -> Value {
        json!({"AlarmName": "dlq-depth:orders-dlq", "QueueName": "orders-dlq",
        "MetricName": "ApproximateNumberOfMessagesVisible", "Statistic": "Maximum",
        "Period": 60, "EvaluationPeriods": 1, "DatapointsToAlarm": 1, "Threshold": 1.0,
        "ComparisonOperator": "GreaterThanOrEqualToThreshold", "TreatMissingData": "notBreaching",
        "Actions": ["http://h/"], "Source": "dlq_alarms", "StateValue": "ALARM",
        "StateReason": "r2", "StateUpdatedTimestamp": 1_767_225_840_000u64,
        "History": [
            {"Timestamp": 1_767_225_840_000u64, "OldState": "OK", "NewState": "ALARM", "Reason": "r2"},
            {"Timestamp": 1_767_225_660_000u64, "OldState": "INSUFFICIENT_DATA", "NewState": "OK", "Reason": "r1"}
        ]})
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

//! `dlq list`: the dead-letter queues of a server, with depth and sources.

use serde_json::{Value, json};

use super::args::ListArgs;
use crate::admin::{out, outln, print_json};
use crate::exposition;
use crate::inventory::{self, QueueInfo};
use crate::table::{Table, duration};
use sluice_client::Client;

/// Lists every DLQ.
pub async fn run(client: &Client, args: ListArgs) -> anyhow::Result<u8> {
    let queues = inventory::all_queues(client, false).await?;
    // The age of the oldest message is a metric, not a queue attribute;
    // without /metrics (a proxy that hides it) the column stays empty.
    let samples = client
        .metrics()
        .await
        .map(|t| exposition::queue_samples(&t))
        .unwrap_or_default();
    let dlqs: Vec<Value> = inventory::dead_letter_queues(&queues)
        .into_iter()
        .map(|(d, sources)| {
            let q = &queues[d];
            let sources: Vec<&QueueInfo> = sources.iter().map(|&i| &queues[i]).collect();
            describe(q, &sources, samples.get(&q.name).map(|s| s.oldest_age_secs))
        })
        .collect();
    if args.json {
        print_json(&json!({ "DeadLetterQueues": dlqs }));
        return Ok(0);
    }
    if dlqs.is_empty() {
        outln!("no dead-letter queues (no queue has a RedrivePolicy)");
        return Ok(0);
    }
    let mut table = Table::new(&[
        "DLQ",
        "VISIBLE>",
        "IN FLIGHT>",
        "OLDEST>",
        "RETENTION>",
        "SOURCES (maxReceiveCount)",
    ]);
    for d in &dlqs {
        let sources: Vec<String> = d["Sources"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|s| {
                format!(
                    "{} ({})",
                    s["Name"].as_str().unwrap_or(""),
                    s["MaxReceiveCount"]
                )
            })
            .collect();
        table.row(vec![
            d["Name"].as_str().unwrap_or("").to_string(),
            d["Visible"].to_string(),
            d["InFlight"].to_string(),
            d["OldestMessageAgeSeconds"]
                .as_f64()
                .map(|s| duration(s as u64))
                .unwrap_or_else(|| "-".into()),
            duration(d["RetentionSeconds"].as_u64().unwrap_or(0)),
            sources.join(", "),
        ]);
    }
    out!("{}", table.render());
    Ok(0)
}

fn describe(q: &QueueInfo, sources: &[&QueueInfo], oldest: Option<f64>) -> Value {
    json!({
        "Name": q.name,
        "Url": q.url,
        "Arn": q.arn,
        "Fifo": q.fifo(),
        "Visible": q.number("ApproximateNumberOfMessages"),
        "InFlight": q.number("ApproximateNumberOfMessagesNotVisible"),
        "Delayed": q.number("ApproximateNumberOfMessagesDelayed"),
        "OldestMessageAgeSeconds": oldest,
        "RetentionSeconds": q.number("MessageRetentionPeriod"),
        "Sources": sources.iter().map(|s| json!({
            "Name": s.name,
            "Arn": s.arn,
            "MaxReceiveCount": s.redrive().map(|r| r.max_receive_count),
            "RetentionSeconds": s.number("MessageRetentionPeriod"),
        })).collect::<Vec<_>>(),
    })
}

//! `dlq list`: the dead-letter queues of a server, with depth and sources.

use serde::Serialize;

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
    let dlqs: Vec<DeadLetterQueue> = inventory::dead_letter_queues(&queues)
        .into_iter()
        .map(|(d, sources)| {
            let q = &queues[d];
            let sources: Vec<&QueueInfo> = sources.iter().map(|&i| &queues[i]).collect();
            describe(q, &sources, samples.get(&q.name).map(|s| s.oldest_age_secs))
        })
        .collect();
    if args.json {
        print_json(&Listed {
            dead_letter_queues: &dlqs,
        });
        return Ok(0);
    }
    if dlqs.is_empty() {
        outln!("no dead-letter queues (no queue has a RedrivePolicy or SluiceDeadLetterRoutes)");
        return Ok(0);
    }
    let mut table = Table::new(&[
        "DLQ",
        "VISIBLE>",
        "IN FLIGHT>",
        "OLDEST>",
        "RETENTION>",
        "SOURCES (maxReceiveCount, [class:count])",
    ]);
    for d in &dlqs {
        let sources: Vec<String> = d.sources.iter().map(source_text).collect();
        table.row(vec![
            d.name.to_string(),
            d.visible.to_string(),
            d.in_flight.to_string(),
            d.oldest_message_age_seconds
                .map(|s| duration(s as u64))
                .unwrap_or_else(|| "-".into()),
            duration(d.retention_seconds),
            sources.join(", "),
        ]);
    }
    out!("{}", table.render());
    Ok(0)
}

/// `dlq list --json`.
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Listed<'a> {
    dead_letter_queues: &'a [DeadLetterQueue<'a>],
}

/// A dead-letter queue with its depth and sources.
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct DeadLetterQueue<'a> {
    name: &'a str,
    url: &'a str,
    arn: &'a str,
    fifo: bool,
    visible: u64,
    in_flight: u64,
    delayed: u64,
    /// None without `/metrics`.
    oldest_message_age_seconds: Option<f64>,
    retention_seconds: u64,
    sources: Vec<Source<'a>>,
}

/// A queue whose RedrivePolicy or failure-class routes target the
/// dead-letter queue.
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Source<'a> {
    name: &'a str,
    arn: &'a str,
    /// Its RedrivePolicy's count, when that policy targets this DLQ.
    max_receive_count: Option<u32>,
    /// The failure classes it routes here (rule X7), with their counts.
    classes: Vec<ClassRoute>,
    retention_seconds: u64,
}

/// A failure class routed to the dead-letter queue.
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct ClassRoute {
    class: String,
    max_receive_count: u32,
}

/// `orders (5)`, `orders [validation:1]` or both: `orders (5) [validation:1]`.
fn source_text(s: &Source) -> String {
    let mut text = s.name.to_string();
    if let Some(n) = s.max_receive_count {
        text.push_str(&format!(" ({n})"));
    }
    if !s.classes.is_empty() {
        let classes: Vec<String> = (s.classes.iter())
            .map(|c| format!("{}:{}", c.class, c.max_receive_count))
            .collect();
        text.push_str(&format!(" [{}]", classes.join(", ")));
    }
    text
}

fn describe<'a>(
    q: &'a QueueInfo,
    sources: &[&'a QueueInfo],
    oldest: Option<f64>,
) -> DeadLetterQueue<'a> {
    DeadLetterQueue {
        name: &q.name,
        url: &q.url,
        arn: &q.arn,
        fifo: q.fifo(),
        visible: q.number("ApproximateNumberOfMessages"),
        in_flight: q.number("ApproximateNumberOfMessagesNotVisible"),
        delayed: q.number("ApproximateNumberOfMessagesDelayed"),
        oldest_message_age_seconds: oldest,
        retention_seconds: q.number("MessageRetentionPeriod"),
        sources: sources
            .iter()
            .map(|s| Source {
                name: &s.name,
                arn: &s.arn,
                max_receive_count: s
                    .redrive()
                    .filter(|r| r.dead_letter_target_arn == q.arn)
                    .map(|r| r.max_receive_count),
                classes: (s.routes().into_iter())
                    .filter(|r| r.dead_letter_target_arn == q.arn)
                    .map(|r| ClassRoute {
                        class: r.class,
                        max_receive_count: r.max_receive_count,
                    })
                    .collect(),
                retention_seconds: s.number("MessageRetentionPeriod"),
            })
            .collect(),
    }
}

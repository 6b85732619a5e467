//! `dlq redrive` (selective redrive, rule X3, or a message move task, rule
//! R7), `dlq tasks` and `dlq cancel`.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::args::{CancelArgs, RedriveArgs, TasksArgs};
use super::browse::{peek_page, replay_count};
use super::filter::MessageFilter;
use crate::admin::{out, outln, print_json};
use crate::inventory::{self, name_of};
use crate::table::{Table, or_null, unsigned};
use crate::timefmt::rfc3339;
use sluice_client::sluice::{RedriveMessagesRequest, RedriveMessagesResult};
use sluice_client::sqs::{
    CancelMessageMoveTaskRequest, ListMessageMoveTasksRequest, ListMessageMoveTasksResultEntry,
    StartMessageMoveTaskRequest,
};
use sluice_client::{Client, ClientError};

/// The most messages one RedriveMessages call moves.
const MAX_STEP: u64 = 1000;

/// Messages looked at when listing the refused ones.
const REFUSED_SCAN: usize = 1000;

/// What a (possibly multi-step) selective redrive did.
#[derive(Debug, Default)]
struct Totals {
    moved: u64,
    message_ids: Vec<String>,
    refused: u64,
    unmovable: u64,
    reason: Option<String>,
    steps: u32,
}

impl Totals {
    /// Adds one RedriveMessages answer. Refused and unmovable messages stay
    /// in the DLQ and are seen again by the next step: they are not summed.
    fn add(&mut self, out: RedriveMessagesResult) -> u64 {
        let moved = unsigned(out.moved).unwrap_or(0);
        self.moved += moved;
        self.message_ids.extend(out.message_ids);
        self.refused = self.refused.max(unsigned(out.refused).unwrap_or(0));
        self.unmovable = self.unmovable.max(unsigned(out.unmovable).unwrap_or(0));
        if out.reason.is_some() {
            self.reason = out.reason;
        }
        self.steps += 1;
        moved
    }
}

/// `dlq redrive`.
pub async fn run(client: &Client, args: RedriveArgs) -> anyhow::Result<u8> {
    let url = client.queue_url(&args.queue).await?;
    let destination = match &args.to {
        Some(q) => Some(
            client
                .queue_arn(q)
                .await
                .map_err(|e| anyhow::anyhow!("--to {q}: {e}"))?,
        ),
        None => None,
    };
    if args.task {
        return start_task(client, &url, destination, &args).await;
    }
    let filter = args.filter.to_input(client).await?;
    let max = args
        .max
        .unwrap_or(if args.rate.is_some() { u64::MAX } else { 100 });
    let base = RedriveMessagesRequest {
        destination_arn: destination.clone(),
        max_replays: Some(i64::from(args.max_replays)),
        ..filter.redrive(&url)
    };
    let mut totals = Totals::default();
    if args.dry_run {
        let input = RedriveMessagesRequest {
            max_messages: Some(max.min(MAX_STEP) as i64),
            dry_run: Some(true),
            ..base
        };
        let out = client.call(&input).await?;
        totals.add(out);
    } else {
        redrive_in_steps(client, &url, &base, max, args.rate, &mut totals).await?;
    }
    let refused = refused_messages(client, &url, &filter, args.max_replays).await?;
    report(&url, &args, destination.as_deref(), max, &totals, &refused);
    Ok(0)
}

/// Moves up to `max` messages, at most `rate` a second, one
/// RedriveMessages call a step, until nothing more matches.
async fn redrive_in_steps(
    client: &Client,
    url: &str,
    base: &RedriveMessagesRequest,
    max: u64,
    rate: Option<u32>,
    totals: &mut Totals,
) -> anyhow::Result<()> {
    let progress = Progress::new(name_of(url), (max != u64::MAX).then_some(max));
    let started = Instant::now();
    while totals.moved < max {
        let step_started = Instant::now();
        let step = (max - totals.moved)
            .min(MAX_STEP)
            .min(rate.map_or(MAX_STEP, u64::from));
        let input = RedriveMessagesRequest {
            max_messages: Some(step as i64),
            ..base.clone()
        };
        let out = client.call(&input).await?;
        let unmovable = unsigned(out.unmovable).unwrap_or(0);
        let moved = totals.add(out);
        progress.show(totals, started.elapsed());
        // Fewer than asked and none put back: nothing more matches.
        let exhausted = moved < step && unmovable == 0;
        if moved == 0 || exhausted {
            break;
        }
        if rate.is_some() && totals.moved < max {
            let wait = Duration::from_secs(1).saturating_sub(step_started.elapsed());
            tokio::time::sleep(wait).await;
        }
    }
    progress.finish();
    Ok(())
}

/// The matching messages a redrive refuses (replayed `max_replays` times
/// or more), with their replay counts; looks at the first messages only.
async fn refused_messages(
    client: &Client,
    url: &str,
    filter: &MessageFilter,
    max_replays: u32,
) -> anyhow::Result<Vec<(String, u64)>> {
    let mut out = Vec::new();
    let mut token: Option<String> = None;
    let mut seen = 0;
    while seen < REFUSED_SCAN {
        let (page, next) = peek_page(client, url, filter, 100, token.as_deref()).await?;
        seen += page.len();
        for m in &page {
            let replays = replay_count(m);
            if replays >= u64::from(max_replays) {
                out.push((m.message_id.clone().unwrap_or_default(), replays));
            }
        }
        match next {
            Some(t) => token = Some(t),
            None => break,
        }
    }
    Ok(out)
}

fn report(
    url: &str,
    args: &RedriveArgs,
    destination: Option<&str>,
    max: u64,
    t: &Totals,
    refused: &[(String, u64)],
) {
    let queue = name_of(url);
    if args.json {
        print_json(&RedriveReport {
            queue_url: url,
            dry_run: args.dry_run,
            destination_arn: destination,
            moved: t.moved,
            message_ids: &t.message_ids,
            refused: t.refused.max(refused.len() as u64),
            refused_messages: refused
                .iter()
                .map(|(id, n)| RefusedMessage {
                    message_id: id,
                    replay_count: *n,
                    reason: format!("already replayed {n} times (limit {})", args.max_replays),
                })
                .collect(),
            unmovable: t.unmovable,
            reason: t.reason.as_deref(),
            steps: t.steps,
        });
        return;
    }
    let to = destination.map_or("their source queues".to_string(), |d| {
        name_of(d).to_string()
    });
    if args.dry_run {
        outln!(
            "dry run: would move {} message(s) from {queue} to {to}",
            t.moved
        );
        if max > MAX_STEP {
            outln!("(a dry run looks at the first {MAX_STEP} matches only)");
        }
    } else if t.moved == 0 {
        outln!("moved nothing from {queue}");
    } else {
        outln!(
            "moved {} message(s) from {queue} to {to} in {} step(s) (ids as they were in {queue}; \
             the redriven messages keep them and get a replay count):",
            t.moved,
            t.steps
        );
    }
    for id in &t.message_ids {
        outln!("  {id}");
    }
    let refused_count = t.refused.max(refused.len() as u64);
    if refused_count > 0 {
        outln!(
            "refused {refused_count} message(s) already replayed {} time(s) or more: they stay in {queue}; \
             fix the consumer, or raise --max-replays:",
            args.max_replays
        );
        for (id, n) in refused {
            outln!("  {id} (replayed {n} times)");
        }
    }
    if t.unmovable > 0 {
        outln!(
            "unmovable {} message(s), they stay in {queue}: {}",
            t.unmovable,
            t.reason.as_deref().unwrap_or("nowhere to go (give --to)")
        );
    }
}

/// StartMessageMoveTask: moves every message of the DLQ (rule R7).
async fn start_task(
    client: &Client,
    url: &str,
    destination: Option<String>,
    args: &RedriveArgs,
) -> anyhow::Result<u8> {
    if !args.filter.is_empty() {
        anyhow::bail!(
            "--task moves every message of the queue and takes no filters; \
             leave out --task for a selective redrive"
        );
    }
    let attrs = client.queue_attributes(url, &["QueueArn"]).await?;
    let source = attrs.get("QueueArn").cloned().unwrap_or_default();
    let input = StartMessageMoveTaskRequest {
        source_arn: Some(source),
        destination_arn: destination,
        max_number_of_messages_per_second: args.rate.map(i64::from),
    };
    let out = client.call(&input).await?;
    let handle = out.task_handle.ok_or_else(|| ClientError::Decode {
        action: "AmazonSQS.StartMessageMoveTask".into(),
        detail: "no TaskHandle".into(),
    })?;
    if args.json {
        print_json(&StartedTask {
            queue_url: url,
            task_handle: &handle,
        });
    } else {
        outln!("started a message move task on {}", name_of(url));
        outln!("task handle: {handle}");
        outln!("follow it with `sluice dlq tasks {}`", name_of(url));
    }
    Ok(0)
}

/// `dlq tasks`.
pub async fn tasks(client: &Client, args: TasksArgs) -> anyhow::Result<u8> {
    let arns: Vec<String> = match &args.queue {
        Some(q) => vec![client.queue_arn(q).await?],
        None => {
            let queues = inventory::all_queues(client, false).await?;
            inventory::dead_letter_queues(&queues)
                .into_iter()
                .map(|(d, _)| queues[d].arn.clone())
                .collect()
        }
    };
    let mut all = Vec::new();
    for arn in &arns {
        let input = ListMessageMoveTasksRequest {
            source_arn: Some(arn.clone()),
            max_results: Some(10),
        };
        all.extend(client.call(&input).await?.results);
    }
    if args.json {
        print_json(&Tasks { tasks: &all });
        return Ok(0);
    }
    if all.is_empty() {
        outln!("no message move tasks");
        return Ok(0);
    }
    let mut table = Table::new(&[
        "DLQ",
        "STATUS",
        "MOVED>",
        "TO MOVE>",
        "RATE>",
        "DESTINATION",
        "STARTED",
        "TASK HANDLE / FAILURE",
    ]);
    for t in &all {
        table.row(task_row(t));
    }
    out!("{}", table.render());
    Ok(0)
}

/// `dlq cancel`.
pub async fn cancel(client: &Client, args: CancelArgs) -> anyhow::Result<u8> {
    let input = CancelMessageMoveTaskRequest {
        task_handle: Some(args.task_handle),
    };
    let out = client.call(&input).await?;
    if args.json {
        print_json(&out);
    } else {
        outln!(
            "cancelled; {} message(s) had been moved (they stay moved)",
            out.approximate_number_of_messages_moved.unwrap_or(0)
        );
    }
    Ok(0)
}

/// One task's line of `dlq tasks`.
fn task_row(t: &ListMessageMoveTasksResultEntry) -> Vec<String> {
    vec![
        name_of(t.source_arn.as_deref().unwrap_or("")).to_string(),
        t.status.clone().unwrap_or_default(),
        or_null(t.approximate_number_of_messages_moved),
        or_null(t.approximate_number_of_messages_to_move),
        unsigned(t.max_number_of_messages_per_second).map_or("-".into(), |r| format!("{r}/s")),
        t.destination_arn
            .as_deref()
            .map_or("(sources)".into(), |d| name_of(d).to_string()),
        unsigned(t.started_timestamp).map_or("-".into(), rfc3339),
        (t.task_handle.as_deref())
            .or(t.failure_reason.as_deref())
            .unwrap_or("")
            .to_string(),
    ]
}

/// `dlq redrive --json` of a selective redrive.
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct RedriveReport<'a> {
    queue_url: &'a str,
    dry_run: bool,
    destination_arn: Option<&'a str>,
    moved: u64,
    message_ids: &'a [String],
    refused: u64,
    refused_messages: Vec<RefusedMessage<'a>>,
    unmovable: u64,
    reason: Option<&'a str>,
    steps: u32,
}

/// A matching message a redrive refuses for its replays.
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct RefusedMessage<'a> {
    message_id: &'a str,
    replay_count: u64,
    reason: String,
}

/// `dlq redrive --task --json`.
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct StartedTask<'a> {
    queue_url: &'a str,
    task_handle: &'a str,
}

/// `dlq tasks --json`.
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Tasks<'a> {
    tasks: &'a [ListMessageMoveTasksResultEntry],
}

/// A one-line progress report on stderr, redrawn in place, only when
/// stderr is a terminal.
struct Progress {
    queue: String,
    max: Option<u64>,
    on: bool,
}

impl Progress {
    fn new(queue: &str, max: Option<u64>) -> Self {
        Self {
            queue: queue.to_string(),
            max,
            on: std::io::stderr().is_terminal(),
        }
    }

    fn show(&self, t: &Totals, elapsed: Duration) {
        if !self.on {
            return;
        }
        let of = self
            .max
            .map_or(String::new(), |m| format!(" of at most {m}"));
        let rate = t.moved as f64 / elapsed.as_secs_f64().max(0.001);
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\rredriving {}: {} moved{of}, {} refused, {rate:.0}/s   ",
            self.queue, t.moved, t.refused
        );
        let _ = err.flush();
    }

    fn finish(&self) {
        if self.on {
            eprintln!();
        }
    }
}

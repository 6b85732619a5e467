//! `dlq redrive` (selective redrive, rule X3, or a message move task, rule
//! R7), `dlq tasks` and `dlq cancel`.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use serde_json::json;

use super::args::{CancelArgs, RedriveArgs, TasksArgs};
use super::browse::{peek_page, replay_count};
use crate::admin::{out, outln, print_json};
use crate::inventory::{self, name_of};
use crate::table::Table;
use crate::timefmt::rfc3339;
use sluice_client::Client;
use sluice_client::requests::{
    CancelMessageMoveTaskInput, FilterInput, ListMessageMoveTasksInput, RedriveMessagesInput,
    StartMessageMoveTaskInput,
};
use sluice_client::responses::RedriveMessagesOutput;

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
    fn add(&mut self, out: RedriveMessagesOutput) -> u64 {
        let moved = out.moved;
        self.moved += moved;
        self.message_ids.extend(out.message_ids);
        self.refused = self.refused.max(out.refused);
        self.unmovable = self.unmovable.max(out.unmovable);
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
    let base = RedriveMessagesInput {
        queue_url: Some(url.clone()),
        destination_arn: destination.clone(),
        max_replays: Some(i64::from(args.max_replays)),
        filter: filter.clone(),
        ..Default::default()
    };
    let mut totals = Totals::default();
    if args.dry_run {
        let input = RedriveMessagesInput {
            max_messages: Some(max.min(MAX_STEP) as i64),
            dry_run: Some(true),
            ..base
        };
        let out = client.redrive_messages(&input).await?;
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
    base: &RedriveMessagesInput,
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
        let input = RedriveMessagesInput {
            max_messages: Some(step as i64),
            ..base.clone()
        };
        let out = client.redrive_messages(&input).await?;
        let unmovable = out.unmovable;
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
    filter: &FilterInput,
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
                out.push((m["MessageId"].as_str().unwrap_or("").to_string(), replays));
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
        print_json(&json!({
            "QueueUrl": url,
            "DryRun": args.dry_run,
            "DestinationArn": destination,
            "Moved": t.moved,
            "MessageIds": t.message_ids,
            "Refused": t.refused.max(refused.len() as u64),
            "RefusedMessages": refused.iter().map(|(id, n)| json!({
                "MessageId": id,
                "ReplayCount": n,
                "Reason": format!("already replayed {n} times (limit {})", args.max_replays),
            })).collect::<Vec<_>>(),
            "Unmovable": t.unmovable,
            "Reason": t.reason,
            "Steps": t.steps,
        }));
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
             the redriven copies get new ids and a replay count):",
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
    let input = StartMessageMoveTaskInput {
        source_arn: Some(source),
        destination_arn: destination,
        max_number_of_messages_per_second: args.rate.map(i64::from),
    };
    let out = client.start_message_move_task(&input).await?;
    let handle = out.task_handle;
    if args.json {
        print_json(&json!({ "QueueUrl": url, "TaskHandle": handle }));
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
        let input = ListMessageMoveTasksInput {
            source_arn: Some(arn.clone()),
            max_results: Some(10),
        };
        all.extend(client.list_message_move_tasks(&input).await?.results);
    }
    if args.json {
        print_json(&json!({ "Tasks": all }));
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
        table.row(vec![
            name_of(t["SourceArn"].as_str().unwrap_or("")).to_string(),
            t["Status"].as_str().unwrap_or("").to_string(),
            t["ApproximateNumberOfMessagesMoved"].to_string(),
            t["ApproximateNumberOfMessagesToMove"].to_string(),
            t["MaxNumberOfMessagesPerSecond"]
                .as_u64()
                .map_or("-".into(), |r| format!("{r}/s")),
            t["DestinationArn"]
                .as_str()
                .map_or("(sources)".into(), |d| name_of(d).to_string()),
            t["StartedTimestamp"].as_u64().map_or("-".into(), rfc3339),
            t["TaskHandle"]
                .as_str()
                .or(t["FailureReason"].as_str())
                .unwrap_or("")
                .to_string(),
        ]);
    }
    out!("{}", table.render());
    Ok(0)
}

/// `dlq cancel`.
pub async fn cancel(client: &Client, args: CancelArgs) -> anyhow::Result<u8> {
    let input = CancelMessageMoveTaskInput {
        task_handle: Some(args.task_handle),
    };
    let out = client.cancel_message_move_task(&input).await?;
    if args.json {
        print_json(&out);
    } else {
        outln!(
            "cancelled; {} message(s) had been moved (they stay moved)",
            out.approximate_number_of_messages_moved
        );
    }
    Ok(0)
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

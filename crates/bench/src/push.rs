//! `sluice bench --push`: how fast a push consumer delivers to a trivial
//! handler. The run fills a queue with a backlog, starts the handler of
//! [`crate::push_handler`] in this process, creates a consumer of the queue
//! posting to it (the sluice action CreateConsumer), and times the
//! deliveries until every message of the backlog reached the handler and
//! was deleted. It reports the delivery rate and the CPU time the server
//! (with `--server-pid`) and the handler took for it, per second and per
//! 1,000 messages: the latter is what to compare on a busy machine.
//!
//! While the consumer drains, this process does nothing but the handler's
//! work (the backlog is sent before), so its CPU time is the handler's.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde::Serialize;
use sluice_client::sluice::{CreateConsumerRequest, DeleteConsumerRequest};
use sluice_client::sqs::{
    PurgeQueueRequest, SendMessageBatchRequest, SendMessageBatchRequestEntry,
};
use sluice_client::{Client, ENTRY_IDS};

use crate::cpu::cpu_time;
use crate::error::BenchError;
use crate::push_handler::{self, Counts};

/// How often the run looks at the handler's counts.
const WATCH: Duration = Duration::from_millis(2);

/// What a push run needs from the flags.
#[derive(Debug, Clone)]
pub struct PushPlan {
    /// The queue, created if missing.
    pub queue: String,
    /// Messages in the backlog.
    pub messages: u64,
    /// Body size in bytes.
    pub message_size: usize,
    /// The consumer's `BatchSize`.
    pub batch_size: u32,
    /// The consumer's `MaxConcurrency`.
    pub max_concurrency: u32,
    /// Concurrent SendMessageBatch loops filling the backlog.
    pub producers: u32,
    /// The server's process id, to read its CPU time.
    pub server_pid: Option<u32>,
    /// PurgeQueue the queue first.
    pub purge: bool,
    /// The run stops when the handler gets nothing for this long.
    pub stall: Duration,
}

/// The figures of a push run.
#[derive(Debug, Serialize)]
pub struct PushReport {
    /// The endpoint.
    pub endpoint: String,
    /// Messages in the backlog.
    pub messages: u64,
    /// Body size in bytes.
    pub message_size: usize,
    /// The consumer's batch size.
    pub batch_size: u32,
    /// The consumer's MaxConcurrency.
    pub max_concurrency: u32,
    /// Messages per second while filling the backlog (SendMessageBatch).
    pub fill_per_sec: f64,
    /// Seconds from CreateConsumer until the handler had every message
    /// and the queue was empty (every message deleted).
    pub deliver_seconds: f64,
    /// Records the handler got (duplicates included).
    pub delivered: u64,
    /// Events (batches) the handler got.
    pub batches: u64,
    /// `delivered / batches`.
    pub mean_batch: f64,
    /// `min(delivered, messages) / deliver_seconds`.
    pub delivered_per_sec: f64,
    /// Messages still in the queue (visible or in flight) after the run.
    pub left_in_queue: u64,
    /// Cores of this machine.
    pub cores: usize,
    /// The server's CPU seconds while delivering (with `--server-pid`).
    pub server_cpu_seconds: Option<f64>,
    /// The handler's (this process's) CPU seconds while delivering.
    pub handler_cpu_seconds: Option<f64>,
    /// The server's CPU time in % of the whole machine (all cores).
    pub server_machine_percent: Option<f64>,
    /// The handler's CPU time in % of the whole machine.
    pub handler_machine_percent: Option<f64>,
    /// The server's CPU milliseconds per 1,000 delivered messages.
    pub server_cpu_ms_per_1000: Option<f64>,
    /// The handler's CPU milliseconds per 1,000 delivered messages.
    pub handler_cpu_ms_per_1000: Option<f64>,
}

impl PushReport {
    /// The report as a table for people.
    pub fn table(&self) -> String {
        let cpu = |secs: Option<f64>, pct: Option<f64>, per: Option<f64>| match (secs, pct, per) {
            (Some(s), Some(p), Some(k)) => {
                format!("{s:.2} CPU-s, {p:.1} % of the machine, {k:.1} CPU-ms per 1,000 messages")
            }
            _ => "not measured (give --server-pid)".to_string(),
        };
        format!(
            "push consumer: {} messages of {} B, batch {}, max concurrency {}\n  \
             backlog filled at {:.0} msg/s\n  \
             delivered {} in {:.2} s: {:.0} msg/s ({} batches, {:.2} a batch), {} left in the queue\n  \
             server  {}\n  \
             handler {}\n  \
             ({} cores)\n",
            self.messages,
            self.message_size,
            self.batch_size,
            self.max_concurrency,
            self.fill_per_sec,
            self.delivered,
            self.deliver_seconds,
            self.delivered_per_sec,
            self.batches,
            self.mean_batch,
            self.left_in_queue,
            cpu(
                self.server_cpu_seconds,
                self.server_machine_percent,
                self.server_cpu_ms_per_1000
            ),
            cpu(
                self.handler_cpu_seconds,
                self.handler_machine_percent,
                self.handler_cpu_ms_per_1000
            ),
            self.cores,
        )
    }
}

/// Runs a push measurement against the server `client` talks to.
pub async fn run(client: &Client, plan: &PushPlan) -> Result<PushReport, BenchError> {
    let setup = |source| BenchError::Setup {
        queue: plan.queue.clone(),
        source,
    };
    let url = client
        .create_queue(&plan.queue, &[])
        .await
        .map_err(setup)?
        .url;
    if plan.purge {
        let purge = PurgeQueueRequest {
            queue_url: Some(url.clone()),
        };
        client.call(&purge).await.map_err(setup)?;
    }
    let already = waiting(client, &url).await.map_err(setup)?;
    if already > 0 {
        return Err(BenchError::Usage(format!(
            "queue {} already holds {already} message(s): use a new --queue, or --purge",
            plan.queue
        )));
    }
    let handler = push_handler::start().await?;

    let filled = Instant::now();
    fill(client, &url, plan).await?;
    let fill_per_sec = plan.messages as f64 / filled.elapsed().as_secs_f64();

    let server_pid = plan.server_pid.map(|p| p.to_string());
    let server_before = server_pid.as_deref().and_then(cpu_time);
    let handler_before = cpu_time("self");
    let started = Instant::now();
    let name = format!(
        "sluice-bench-push-{}",
        &uuid::Uuid::new_v4().simple().to_string()[..8]
    );
    let consumer = CreateConsumerRequest {
        name: Some(name.clone()),
        queue_url: Some(url.clone()),
        url: Some(handler.url.clone()),
        batch_size: Some(i64::from(plan.batch_size)),
        max_concurrency: Some(i64::from(plan.max_concurrency)),
        report_batch_item_failures: Some(true),
        ..Default::default()
    };
    client.call(&consumer).await.map_err(setup)?;
    watch(&handler.counts, plan.messages, plan.stall).await;
    // Delivered is handled and deleted: the last batches' deletes follow
    // their answers by a moment, and DeleteConsumer would cut them off.
    let left = waiting_after_deletes(client, &url).await.map_err(setup)?;
    let deliver_seconds = started.elapsed().as_secs_f64();
    let server_cpu = server_pid.as_deref().and_then(cpu_time);
    let handler_cpu = cpu_time("self");
    let delete = DeleteConsumerRequest { name: Some(name) };
    client.call(&delete).await.map_err(setup)?;

    let counts: &Counts = &handler.counts;
    let delivered = counts.records.load(Ordering::Relaxed);
    let batches = counts.batches.load(Ordering::Relaxed);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let used = |before: Option<Duration>, after: Option<Duration>| {
        Some(after?.saturating_sub(before?).as_secs_f64())
    };
    let server_cpu_seconds = used(server_before, server_cpu);
    let handler_cpu_seconds = used(handler_before, handler_cpu);
    let counted = delivered.min(plan.messages);
    let percent = |s: Option<f64>| s.map(|s| 100.0 * s / (deliver_seconds * cores as f64));
    let per_1000 = |s: Option<f64>| s.filter(|_| counted > 0).map(|s| s * 1e6 / counted as f64);
    Ok(PushReport {
        endpoint: client.endpoint().to_string(),
        messages: plan.messages,
        message_size: plan.message_size,
        batch_size: plan.batch_size,
        max_concurrency: plan.max_concurrency,
        fill_per_sec,
        deliver_seconds,
        delivered,
        batches,
        mean_batch: if batches == 0 {
            0.0
        } else {
            delivered as f64 / batches as f64
        },
        delivered_per_sec: counted as f64 / deliver_seconds,
        left_in_queue: left,
        cores,
        server_machine_percent: percent(server_cpu_seconds),
        handler_machine_percent: percent(handler_cpu_seconds),
        server_cpu_ms_per_1000: per_1000(server_cpu_seconds),
        handler_cpu_ms_per_1000: per_1000(handler_cpu_seconds),
        server_cpu_seconds,
        handler_cpu_seconds,
    })
}

/// Sends the backlog: `plan.producers` loops of SendMessageBatch.
async fn fill(client: &Client, url: &str, plan: &PushPlan) -> Result<(), BenchError> {
    let batches = plan.messages.div_ceil(u64::from(plan.batch_size.min(10)));
    let next = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let body: Arc<str> = "x".repeat(plan.message_size).into();
    let per_batch = u64::from(plan.batch_size.min(10));
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..plan.producers {
        let (client, url, next, body) =
            (client.clone(), url.to_string(), next.clone(), body.clone());
        let total = plan.messages;
        tasks.spawn(async move {
            loop {
                let batch = next.fetch_add(1, Ordering::Relaxed);
                if batch >= batches {
                    return Ok(());
                }
                let count = per_batch.min(total - batch * per_batch) as usize;
                let entries = (0..count)
                    .map(|i| SendMessageBatchRequestEntry {
                        id: Some(ENTRY_IDS[i].to_string()),
                        message_body: Some(body.to_string()),
                        ..Default::default()
                    })
                    .collect();
                let input = SendMessageBatchRequest {
                    queue_url: Some(url.clone()),
                    entries: Some(entries),
                };
                let sent = client.send_message_batch(&input).await?;
                if !sent.failed.is_empty() {
                    return Err(sluice_client::ClientError::Decode {
                        action: "SendMessageBatch".into(),
                        detail: format!("{} entries failed", sent.failed.len()),
                    });
                }
            }
        });
    }
    while let Some(joined) = tasks.join_next().await {
        let sent = joined.map_err(|e| BenchError::Usage(format!("a producer failed: {e}")))?;
        sent.map_err(|source| BenchError::Setup {
            queue: plan.queue.clone(),
            source,
        })?;
    }
    Ok(())
}

/// Waits until the handler got `messages` records, or got nothing for
/// `stall`.
async fn watch(counts: &Counts, messages: u64, stall: Duration) {
    let mut last = (0, Instant::now());
    loop {
        let now = Instant::now();
        let seen = counts.records.load(Ordering::Relaxed);
        if seen >= messages {
            return;
        }
        if seen != last.0 {
            last = (seen, now);
        } else if now.duration_since(last.1) >= stall {
            return;
        }
        tokio::time::sleep(WATCH).await;
    }
}

/// Messages in the queue, visible or in flight.
async fn waiting(client: &Client, url: &str) -> Result<u64, sluice_client::ClientError> {
    let attrs = client
        .queue_attributes(
            url,
            &[
                "ApproximateNumberOfMessages",
                "ApproximateNumberOfMessagesNotVisible",
            ],
        )
        .await?;
    Ok(attrs.values().filter_map(|v| v.parse::<u64>().ok()).sum())
}

/// [`waiting`] once it is 0, or after [`DELETES_GRACE`].
async fn waiting_after_deletes(
    client: &Client,
    url: &str,
) -> Result<u64, sluice_client::ClientError> {
    let deadline = Instant::now() + DELETES_GRACE;
    loop {
        let left = waiting(client, url).await?;
        if left == 0 || Instant::now() >= deadline {
            return Ok(left);
        }
        tokio::time::sleep(WATCH).await;
    }
}

/// How long the last answered batches may take to be deleted.
const DELETES_GRACE: Duration = Duration::from_secs(5);

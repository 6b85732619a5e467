//! `--fair`: what a fair queue promises (rule V10), measured as the dwell
//! time (from the send's answer to the receive's) of quiet tenants'
//! messages. Ten quiet tenants send a trickle throughout; consumers take
//! up to `--batch-size` messages at a time and spend about `--fair-work-ms` on each
//! (from half to one and a half times it, as real handlers vary: consumers
//! that all took the same time would poll in lockstep). The loads below
//! are shares of the consumers' capacity: measured first (how many
//! messages a second they take from a backlog, receives and deletes
//! included: with one message per receive the round trips cost as much as
//! the work), or, with `--fair-capacity work`, what their work time alone
//! allows. Then four phases, each on a fresh queue:
//!
//! - `idle`: the quiet tenants alone;
//! - `busy`: plus load at 80 % of what the consumers can take, spread over
//!   100 tenants, none noisy: the baseline with the consumers as busy as a
//!   healthy queue keeps them;
//! - `flood`: instead, one tenant sending 150 % of it, a growing backlog;
//! - `flood-ungrouped`: the same flood without a group id, which a fair
//!   queue serves oldest first (each ungrouped message is a tenant of its
//!   own): what the quiet tenants would suffer without fairness.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::Serialize;
use sluice_client::sqs::{
    DeleteMessageBatchRequest, DeleteMessageBatchRequestEntry, DeleteQueueRequest,
    ReceiveMessageRequest, SendMessageBatchRequest, SendMessageBatchRequestEntry,
};
use sluice_client::{Client, ENTRY_IDS};

use crate::error::BenchError;
use crate::latency::Samples;

/// Quiet tenants, and the messages per second they send together.
const QUIET_TENANTS: u32 = 10;
const QUIET_RATE: f64 = 20.0;
/// Tenants the `busy` phase's load is spread over.
const BUSY_TENANTS: u32 = 100;
/// How long the consumers may take to drain a phase's backlog.
const DRAIN_LIMIT: Duration = Duration::from_secs(120);
/// How long the consumers' capacity is measured for.
const CALIBRATION: Duration = Duration::from_secs(5);

/// What `--fair` runs.
#[derive(Debug, Clone)]
pub struct FairPlan {
    /// Base name of the queues (one per phase, deleted after it).
    pub queue: String,
    /// Consumers, each with one receive or one batch of work at a time.
    pub consumers: u32,
    /// Time a consumer spends on each message.
    pub work: Duration,
    /// The consumers' MaxNumberOfMessages.
    pub receive_batch: u32,
    /// How long each phase sends.
    pub phase: Duration,
    /// Measure the consumers' capacity first (otherwise: from work time).
    pub measure_capacity: bool,
}

impl FairPlan {
    /// Messages per second the consumers could take if receiving and
    /// deleting cost nothing: their work alone.
    pub fn capacity(&self) -> f64 {
        f64::from(self.consumers) / self.work.as_secs_f64().max(1e-6)
    }
}

/// The load besides the quiet tenants in one phase.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Load {
    None,
    Spread { share: f64 },
    OneTenant { share: f64, grouped: bool },
}

impl Load {
    /// Its share of the consumers' capacity and the groups its messages
    /// take in turn (`None`: no group), or nothing for no load.
    fn senders(self) -> Option<(f64, Vec<Option<String>>)> {
        match self {
            Load::None => None,
            Load::Spread { share } => Some((
                share,
                (0..BUSY_TENANTS)
                    .map(|i| Some(format!("tenant-{i}")))
                    .collect(),
            )),
            Load::OneTenant { share, grouped } => {
                Some((share, vec![grouped.then(|| "noisy".to_string())]))
            }
        }
    }
}

const PHASES: [(&str, Load); 4] = [
    ("idle", Load::None),
    ("busy", Load::Spread { share: 0.8 }),
    (
        "flood",
        Load::OneTenant {
            share: 1.5,
            grouped: true,
        },
    ),
    (
        "flood-ungrouped",
        Load::OneTenant {
            share: 1.5,
            grouped: false,
        },
    ),
];

/// Dwell-time percentiles of one class of messages, ms.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Dwell {
    /// Messages received.
    pub count: u64,
    /// Median.
    pub p50_ms: f64,
    /// 99th percentile.
    pub p99_ms: f64,
    /// Longest.
    pub max_ms: f64,
}

impl From<Samples> for Dwell {
    fn from(samples: Samples) -> Self {
        let s = samples.summary();
        Self {
            count: s.count,
            p50_ms: s.p50_ms,
            p99_ms: s.p99_ms,
            max_ms: s.max_ms,
        }
    }
}

/// One phase's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct PhaseReport {
    /// `idle`, `busy`, `flood` or `flood-ungrouped`.
    pub phase: &'static str,
    /// The quiet tenants' messages.
    pub quiet: Dwell,
    /// The other load's messages.
    pub load: Dwell,
}

/// What `--fair` reports.
#[derive(Debug, Clone, Serialize)]
pub struct FairReport {
    /// Messages per second the consumers took from a backlog: the
    /// capacity the loads are shares of.
    pub capacity_per_sec: f64,
    /// Messages per second their work alone would allow.
    pub work_capacity_per_sec: f64,
    /// Consumers and the time each spends per message.
    pub consumers: u32,
    /// Per-message work, ms.
    pub work_ms: f64,
    /// Messages a consumer takes per receive, at most.
    pub receive_batch: u32,
    /// Each phase.
    pub phases: Vec<PhaseReport>,
    /// The quiet tenants' p99 dwell under the flood over their p99 on the
    /// busy queue without a noisy tenant.
    pub flood_over_busy_p99: f64,
}

impl FairReport {
    /// The human-readable table.
    pub fn table(&self) -> String {
        let mut out = format!(
            "fair queue dwell time: {} consumers, up to {} per receive, {:.1} ms per message, capacity {:.0} msg/s measured ({:.0} by work alone)\n",
            self.consumers,
            self.receive_batch,
            self.work_ms,
            self.capacity_per_sec,
            self.work_capacity_per_sec
        );
        out.push_str(&format!(
            "{:<16} {:>8} {:>10} {:>10} {:>8} {:>10} {:>10}\n",
            "PHASE", "QUIET", "QUIET P50", "QUIET P99", "LOAD", "LOAD P50", "LOAD P99"
        ));
        for p in &self.phases {
            out.push_str(&format!(
                "{:<16} {:>8} {:>8.1}ms {:>8.1}ms {:>8} {:>8.1}ms {:>8.1}ms\n",
                p.phase,
                p.quiet.count,
                p.quiet.p50_ms,
                p.quiet.p99_ms,
                p.load.count,
                p.load.p50_ms,
                p.load.p99_ms
            ));
        }
        out.push_str(&format!(
            "quiet p99 under the flood / on the busy queue: {:.2}x\n",
            self.flood_over_busy_p99
        ));
        out
    }
}

/// Measures the consumers' capacity, then runs the four phases.
pub async fn run(client: &Client, plan: &FairPlan) -> Result<FairReport, BenchError> {
    let run_id = uuid::Uuid::new_v4().simple().to_string()[..8].to_string();
    let capacity = if plan.measure_capacity {
        let url = fresh_queue(client, &format!("{}-fair-calibrate-{run_id}", plan.queue)).await?;
        let measured = measure_capacity(client, plan, &url).await;
        delete_queue(client, &url).await;
        measured?
    } else {
        plan.capacity()
    };
    let mut phases = Vec::new();
    for (name, load) in PHASES {
        let url = fresh_queue(client, &format!("{}-fair-{name}-{run_id}", plan.queue)).await?;
        let report = phase(client, plan, capacity, name, load, &url).await;
        delete_queue(client, &url).await;
        phases.push(report?);
    }
    let p99 = |name: &str| {
        phases
            .iter()
            .find(|p| p.phase == name)
            .map_or(0.0, |p| p.quiet.p99_ms)
    };
    Ok(FairReport {
        capacity_per_sec: capacity,
        work_capacity_per_sec: plan.capacity(),
        consumers: plan.consumers,
        work_ms: plan.work.as_secs_f64() * 1000.0,
        receive_batch: plan.receive_batch,
        flood_over_busy_p99: p99("flood") / p99("busy").max(1e-3),
        phases,
    })
}

async fn fresh_queue(client: &Client, name: &str) -> Result<String, BenchError> {
    client
        .create_queue(name, &[])
        .await
        .map(|created| created.url)
        .map_err(|source| BenchError::Setup {
            queue: name.to_string(),
            source,
        })
}

async fn delete_queue(client: &Client, url: &str) {
    let _ = client
        .call(&DeleteQueueRequest {
            queue_url: Some(url.to_string()),
        })
        .await;
}

/// Messages a second the consumers take from a backlog larger than they
/// can finish in [`CALIBRATION`], spread over the busy phase's tenants.
async fn measure_capacity(client: &Client, plan: &FairPlan, url: &str) -> Result<f64, BenchError> {
    let backlog = (plan.capacity() * CALIBRATION.as_secs_f64() * 1.5).ceil() as usize;
    let mut senders = Vec::new();
    for part in 0..8usize {
        let (client, url) = (client.clone(), url.to_string());
        senders.push(tokio::spawn(async move {
            let mine = (part..backlog.div_ceil(10)).step_by(8);
            for batch in mine {
                let entries = (0..10)
                    .map(|i| SendMessageBatchRequestEntry {
                        id: Some(ENTRY_IDS[i].to_string()),
                        message_body: Some(format!("l|{}", now_micros())),
                        message_group_id: Some(format!(
                            "tenant-{}",
                            (batch * 10 + i) % BUSY_TENANTS as usize
                        )),
                        ..Default::default()
                    })
                    .collect();
                let input = SendMessageBatchRequest {
                    queue_url: Some(url.clone()),
                    entries: Some(entries),
                };
                let _ = client.send_message_batch(&input).await;
            }
        }));
    }
    futures_join(senders).await;
    let taken = Arc::new(AtomicU64::new(0));
    let until = Instant::now() + CALIBRATION;
    let consumers: Vec<_> = (0..plan.consumers)
        .map(|consumer| {
            tokio::spawn(consume(
                client.clone(),
                url.to_string(),
                Work::new(plan.work, consumer),
                plan.receive_batch,
                Stop::At(until, taken.clone()),
                Arc::default(),
            ))
        })
        .collect();
    futures_join(consumers).await;
    // Receives answered within the window count; the work they started
    // runs past it, as the first receives' backlog preceded it.
    let taken = taken.load(Ordering::Relaxed);
    let capacity = taken as f64 / CALIBRATION.as_secs_f64();
    if capacity < 1.0 {
        return Err(BenchError::Usage(format!(
            "the consumers took {taken} messages in {} s: is the server answering?",
            CALIBRATION.as_secs()
        )));
    }
    Ok(capacity)
}

/// Dwell samples by class (`true`: quiet).
type Dwells = Arc<Mutex<HashMap<bool, Samples>>>;

async fn phase(
    client: &Client,
    plan: &FairPlan,
    capacity: f64,
    name: &'static str,
    load: Load,
    url: &str,
) -> Result<PhaseReport, BenchError> {
    let sending = Arc::new(AtomicBool::new(true));
    let dwells: Dwells = Arc::default();
    let mut producers = Vec::new();
    let quiet_groups = (0..QUIET_TENANTS)
        .map(|i| Some(format!("quiet-{i}")))
        .collect();
    producers.push(tokio::spawn(produce(
        client.clone(),
        url.to_string(),
        QUIET_RATE,
        1,
        quiet_groups,
        true,
        sending.clone(),
    )));
    if let Some((share, groups)) = load.senders() {
        producers.push(tokio::spawn(produce(
            client.clone(),
            url.to_string(),
            share * capacity,
            10,
            groups,
            false,
            sending.clone(),
        )));
    }
    let consumers: Vec<_> = (0..plan.consumers)
        .map(|consumer| {
            tokio::spawn(consume(
                client.clone(),
                url.to_string(),
                Work::new(plan.work, consumer),
                plan.receive_batch,
                Stop::WhenDrained(sending.clone()),
                dwells.clone(),
            ))
        })
        .collect();
    tokio::time::sleep(plan.phase).await;
    sending.store(false, Ordering::Release);
    for producer in producers {
        let _ = producer.await;
    }
    let _ = tokio::time::timeout(DRAIN_LIMIT, futures_join(consumers)).await;
    let mut dwells = std::mem::take(&mut *dwells.lock().unwrap_or_else(PoisonError::into_inner));
    Ok(PhaseReport {
        phase: name,
        quiet: dwells.remove(&true).unwrap_or_default().into(),
        load: dwells.remove(&false).unwrap_or_default().into(),
    })
}

async fn futures_join(tasks: Vec<tokio::task::JoinHandle<()>>) {
    for task in tasks {
        let _ = task.await;
    }
}

fn now_micros() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

/// Sends `rate` messages a second in batches of `batch`, the groups in
/// turn, while `sending`; each body is its class and the time it was
/// sent.
async fn produce(
    client: Client,
    url: String,
    rate: f64,
    batch: usize,
    groups: Vec<Option<String>>,
    quiet: bool,
    sending: Arc<AtomicBool>,
) {
    let every = Duration::from_secs_f64(batch as f64 / rate.max(0.001));
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let mut turn = 0usize;
    while sending.load(Ordering::Acquire) {
        tick.tick().await;
        let sent_at = now_micros();
        let entries = (0..batch)
            .map(|i| {
                let group = groups[turn % groups.len()].clone();
                turn += 1;
                SendMessageBatchRequestEntry {
                    id: Some(ENTRY_IDS[i].to_string()),
                    message_body: Some(format!("{}|{sent_at}", if quiet { 'q' } else { 'l' })),
                    message_group_id: group,
                    ..Default::default()
                }
            })
            .collect();
        let input = SendMessageBatchRequest {
            queue_url: Some(url.clone()),
            entries: Some(entries),
        };
        let _ = client.send_message_batch(&input).await;
    }
}

/// A consumer's time per message: from half to one and a half times the
/// plan's, drawn from a generator of its own (xorshift, seeded by the
/// consumer's number) so runs repeat.
struct Work {
    mean: Duration,
    state: u64,
}

impl Work {
    fn new(mean: Duration, consumer: u32) -> Self {
        Self {
            mean,
            state: 0x9E37_79B9_7F4A_7C15
                ^ (u64::from(consumer) + 1).wrapping_mul(0xBF58_476D_1CE4_E5B9),
        }
    }

    /// The time `n` messages take.
    fn for_messages(&mut self, n: usize) -> Duration {
        (0..n)
            .map(|_| {
                self.state ^= self.state << 13;
                self.state ^= self.state >> 7;
                self.state ^= self.state << 17;
                let factor = 0.5 + (self.state % 1_000) as f64 / 1_000.0;
                self.mean.mul_f64(factor)
            })
            .sum()
    }
}

/// When a consumer stops.
enum Stop {
    /// Once sending is over (the flag cleared) and a receive finds nothing.
    WhenDrained(Arc<AtomicBool>),
    /// At this time, counting the messages it received until then.
    At(Instant, Arc<AtomicU64>),
}

/// Receives, records each message's dwell, works on them, deletes them,
/// until `stop` says so.
async fn consume(
    client: Client,
    url: String,
    mut work: Work,
    receive_batch: u32,
    stop: Stop,
    dwells: Dwells,
) {
    let mut local: HashMap<bool, Samples> = HashMap::new();
    loop {
        if let Stop::At(until, _) = &stop
            && Instant::now() >= *until
        {
            break;
        }
        let input = ReceiveMessageRequest {
            queue_url: Some(url.clone()),
            max_number_of_messages: Some(i64::from(receive_batch)),
            wait_time_seconds: Some(1),
            ..Default::default()
        };
        let Ok(answer) = client.receive_message(&input).await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let received_at = now_micros();
        if answer.messages.is_empty() {
            match &stop {
                Stop::WhenDrained(sending) if !sending.load(Ordering::Acquire) => break,
                _ => continue,
            }
        }
        if let Stop::At(until, taken) = &stop
            && Instant::now() < *until
        {
            taken.fetch_add(answer.messages.len() as u64, Ordering::Relaxed);
        }
        let mut entries = Vec::with_capacity(answer.messages.len());
        for (i, m) in answer.messages.iter().enumerate() {
            let body = m.body.as_deref().unwrap_or("");
            if let Some((class, sent)) = body.split_once('|')
                && let Ok(sent) = sent.parse::<u64>()
            {
                local
                    .entry(class == "q")
                    .or_default()
                    .record(Duration::from_micros(received_at.saturating_sub(sent)));
            }
            entries.push(DeleteMessageBatchRequestEntry {
                id: Some(ENTRY_IDS[i].to_string()),
                receipt_handle: m.receipt_handle.clone(),
            });
        }
        tokio::time::sleep(work.for_messages(entries.len())).await;
        let _ = client
            .call(&DeleteMessageBatchRequest {
                queue_url: Some(url.clone()),
                entries: Some(entries),
            })
            .await;
    }
    let mut shared = dwells.lock().unwrap_or_else(PoisonError::into_inner);
    for (class, samples) in local {
        shared.entry(class).or_default().merge(samples);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_varies_around_its_mean() {
        let mut work = Work::new(Duration::from_millis(2), 0);
        let total = work.for_messages(10_000).as_secs_f64();
        assert!((19.0..21.0).contains(&total), "{total}");
        let one: Vec<Duration> = (0..100).map(|_| work.for_messages(1)).collect();
        assert!(one.iter().all(|d| (1_000..=3_000).contains(&d.as_micros())));
        assert!(one.iter().any(|d| *d != one[0]), "not all the same");
    }

    #[test]
    fn capacity_is_consumers_over_work() {
        let plan = FairPlan {
            queue: "q".into(),
            consumers: 4,
            work: Duration::from_millis(2),
            receive_batch: 10,
            phase: Duration::from_secs(1),
            measure_capacity: false,
        };
        assert_eq!(plan.capacity().round(), 2000.0);
    }
}

//! The load: producers sending batches, consumers receiving and deleting
//! them, then a bounded drain until every acknowledged message is deleted.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::{Semaphore, watch};
use tokio::task::JoinHandle;

use crate::args::StopRule;
use crate::body::{BodyCodec, MessageKey};
use crate::latency::{Samples, Summary};
use crate::receive_view::ReceiveAnswer;
use crate::tracker::{Tracker, Verdict};
use sluice_client::sqs::{
    DeleteMessageBatchRequest, DeleteMessageBatchRequestEntry, ReceiveMessageRequest,
    SendMessageBatchRequest, SendMessageBatchRequestEntry,
};
use sluice_client::{Client, ENTRY_IDS, entry_index};

/// Pause after a failed request, so a dead endpoint is not hammered.
const ERROR_BACKOFF: Duration = Duration::from_millis(20);
/// How often the drain checks whether everything has been deleted.
const DRAIN_POLL: Duration = Duration::from_millis(5);
/// The drain ends at this many times the drain bound even while consumers
/// still make progress.
const DRAIN_CAP: u32 = 10;
/// How long consumers get to finish their last request after the stop.
const CONSUMER_GRACE: Duration = Duration::from_secs(15);
/// How many distinct error messages a run keeps for its report.
const KEPT_ERRORS: usize = 5;

/// What to run.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The queues, walked in turn by every worker.
    pub queue_urls: Vec<String>,
    /// Body size in bytes.
    pub message_size: usize,
    /// Messages per send batch and per receive (1 to 10).
    pub batch_size: u32,
    /// Concurrent producers.
    pub producers: u32,
    /// Concurrent consumers.
    pub consumers: u32,
    /// When producers stop.
    pub stop: StopRule,
    /// Total messages per second the producers may send, if capped.
    pub rate: Option<f64>,
    /// WaitTimeSeconds of the receives.
    pub wait_time_seconds: u32,
    /// How long after the producers stop consumers may take to catch up.
    pub drain: Duration,
    /// FIFO: the number of message groups.
    pub fifo_groups: Option<u32>,
    /// Whether to track ids for lost and duplicate messages.
    pub verify: bool,
    /// Consumers ask only for as many messages as producers have had
    /// acknowledged. Used against the null server, whose receives never run
    /// dry: without it consumers would spin and take the CPU that producers
    /// need, and the request mix would not be the one a real queue sees
    /// (one send, one receive and one delete per batch).
    pub paced_consumers: bool,
}

/// What a run measured.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// From the start until the last delete (or until the producers stopped,
    /// if that was later).
    pub wall: Duration,
    /// From the start until the last producer stopped.
    pub send_phase: Duration,
    /// Messages whose send was acknowledged.
    pub sent: u64,
    /// Messages whose send failed (request error or failed entry).
    pub send_failed: u64,
    /// Messages received, duplicates and foreign messages included.
    pub received: u64,
    /// Messages deleted.
    pub deleted: u64,
    /// Messages sent, received and deleted.
    pub end_to_end: u64,
    /// Received messages not sent by this run (left in the queue earlier).
    pub foreign: u64,
    /// Receives that returned no message.
    pub empty_receives: u64,
    /// SendMessageBatch latencies.
    pub send: Summary,
    /// ReceiveMessage latencies (long-poll waits included).
    pub receive: Summary,
    /// DeleteMessageBatch latencies.
    pub delete: Summary,
    /// Failed requests and failed batch entries.
    pub errors: u64,
    /// The first few distinct error messages.
    pub first_errors: Vec<String>,
    /// Lost and duplicate counts, when verifying.
    pub verdict: Option<Verdict>,
    /// Whether every acknowledged message was deleted before the drain ended.
    pub drained: bool,
}

/// Counts failures and keeps the first few messages.
#[derive(Default)]
struct ErrorLog {
    count: AtomicU64,
    first: Mutex<Vec<String>>,
}

impl ErrorLog {
    fn record(&self, what: &str, error: impl std::fmt::Display) {
        self.count.fetch_add(1, Ordering::Relaxed);
        let text = format!("{what}: {error}");
        let mut first = self.first.lock().unwrap_or_else(|p| p.into_inner());
        if first.len() < KEPT_ERRORS && !first.contains(&text) {
            first.push(text);
        }
    }
}

/// State shared by the workers of one run.
struct Shared {
    client: Client,
    plan: Plan,
    run_id: String,
    codec: BodyCodec,
    tracker: Option<Tracker>,
    start: Instant,
    /// Duration mode: when producers stop.
    deadline: Option<Instant>,
    /// Messages mode: messages not yet claimed by a producer.
    remaining: AtomicU64,
    sent: AtomicU64,
    send_failed: AtomicU64,
    received: AtomicU64,
    deleted: AtomicU64,
    foreign: AtomicU64,
    empty_receives: AtomicU64,
    /// Microseconds from the start to the end of the latest successful delete.
    last_delete_us: AtomicU64,
    /// Paced consumers: acknowledged messages not yet asked for.
    credits: Semaphore,
    /// Set once every producer has stopped.
    producers_done: watch::Sender<bool>,
    consumers_running: AtomicUsize,
    stop: watch::Sender<bool>,
    errors: ErrorLog,
}

impl Shared {
    /// How many messages the next batch of a producer has; 0 when it is done.
    fn claim(&self) -> u64 {
        let batch = u64::from(self.plan.batch_size);
        match self.plan.stop {
            StopRule::Duration(_) => match self.deadline {
                Some(deadline) if Instant::now() >= deadline => 0,
                _ => batch,
            },
            StopRule::Messages(_) => self
                .remaining
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |left| {
                    (left > 0).then(|| left - left.min(batch))
                })
                .map_or(0, |left| left.min(batch)),
        }
    }

    /// Whether the drain can end: everything acknowledged is deleted.
    fn drained(&self) -> bool {
        if self.plan.paced_consumers {
            // Paced consumers end once the producers are done and the
            // credits are used up.
            return self.consumers_running.load(Ordering::Acquire) == 0;
        }
        match &self.tracker {
            Some(tracker) => tracker.all_complete(),
            None => self.deleted.load(Ordering::Acquire) >= self.sent.load(Ordering::Acquire),
        }
    }

    /// From the start to the end of the latest successful delete (zero if none).
    fn last_delete(&self) -> Duration {
        Duration::from_micros(self.last_delete_us.load(Ordering::Acquire))
    }

    fn mark_delete(&self) {
        let us = u64::try_from(self.start.elapsed().as_micros()).unwrap_or(u64::MAX);
        self.last_delete_us.fetch_max(us, Ordering::AcqRel);
    }
}

/// Runs the load and the drain.
pub async fn run(client: Client, plan: Plan, run_id: String) -> Outcome {
    let start = Instant::now();
    let deadline = match plan.stop {
        StopRule::Duration(d) => Some(start + d),
        StopRule::Messages(_) => None,
    };
    let remaining = match plan.stop {
        StopRule::Messages(n) => n,
        StopRule::Duration(_) => 0,
    };
    let (stop, _) = watch::channel(false);
    let shared = Arc::new(Shared {
        client,
        codec: BodyCodec::new(run_id.clone(), plan.message_size),
        tracker: plan.verify.then(|| Tracker::new(plan.producers as usize)),
        run_id,
        start,
        deadline,
        remaining: AtomicU64::new(remaining),
        sent: AtomicU64::new(0),
        send_failed: AtomicU64::new(0),
        received: AtomicU64::new(0),
        deleted: AtomicU64::new(0),
        foreign: AtomicU64::new(0),
        empty_receives: AtomicU64::new(0),
        last_delete_us: AtomicU64::new(0),
        credits: Semaphore::new(0),
        producers_done: watch::channel(false).0,
        consumers_running: AtomicUsize::new(plan.consumers as usize),
        stop,
        errors: ErrorLog::default(),
        plan,
    });

    let consumers: Vec<JoinHandle<(Samples, Samples)>> = (0..shared.plan.consumers)
        .map(|c| tokio::spawn(consume(shared.clone(), c)))
        .collect();
    let producers: Vec<JoinHandle<Samples>> = (0..shared.plan.producers)
        .map(|p| tokio::spawn(produce(shared.clone(), p)))
        .collect();

    let mut send = Samples::default();
    for producer in producers {
        match producer.await {
            Ok(samples) => send.merge(samples),
            Err(e) => shared.errors.record("producer task", e),
        }
    }
    let send_phase = start.elapsed();
    shared.producers_done.send_replace(true);

    // The drain goes on while consumers make progress (a backlog built
    // while producers outran them can take longer than the drain bound to
    // clear), and gives up after `drain` without a successful delete, or
    // at DRAIN_CAP times `drain` in any case.
    let drain = shared.plan.drain;
    let give_up = Instant::now() + drain * DRAIN_CAP;
    let drained = loop {
        if shared.drained() {
            break true;
        }
        let progress = shared.last_delete().max(send_phase);
        if start.elapsed().saturating_sub(progress) >= drain || Instant::now() >= give_up {
            break false;
        }
        tokio::time::sleep(DRAIN_POLL).await;
    };
    let stopped_at = start.elapsed();
    shared.stop.send_replace(true);

    let mut receive = Samples::default();
    let mut delete = Samples::default();
    for mut consumer in consumers {
        match tokio::time::timeout(CONSUMER_GRACE, &mut consumer).await {
            Ok(Ok((r, d))) => {
                receive.merge(r);
                delete.merge(d);
            }
            Ok(Err(e)) => shared.errors.record("consumer task", e),
            Err(_) => {
                consumer.abort();
                shared
                    .errors
                    .record("consumer task", "did not stop in time; aborted");
            }
        }
    }

    let last_delete = shared.last_delete();
    let wall = if last_delete.is_zero() {
        stopped_at
    } else {
        last_delete
    }
    .max(send_phase);
    let verdict = shared.tracker.as_ref().map(Tracker::verdict);
    let sent = shared.sent.load(Ordering::Acquire);
    let deleted = shared.deleted.load(Ordering::Acquire);
    let first_errors = shared
        .errors
        .first
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    Outcome {
        wall,
        send_phase,
        sent,
        send_failed: shared.send_failed.load(Ordering::Acquire),
        received: shared.received.load(Ordering::Acquire),
        deleted,
        end_to_end: verdict.map_or(sent.min(deleted), |v| v.complete),
        foreign: shared.foreign.load(Ordering::Acquire),
        empty_receives: shared.empty_receives.load(Ordering::Acquire),
        send: send.summary(),
        receive: receive.summary(),
        delete: delete.summary(),
        errors: shared.errors.count.load(Ordering::Acquire),
        first_errors,
        verdict,
        drained,
    }
}

/// One producer: sends batches until the stop rule says so.
async fn produce(shared: Arc<Shared>, producer: u32) -> Samples {
    let plan = &shared.plan;
    let mut samples = Samples::default();
    // Each producer paces itself to its share of the rate, from the start
    // (not from the previous send), so a slow answer is caught up on.
    let interval = plan.rate.map(|rate| {
        Duration::from_secs_f64(f64::from(plan.batch_size) * f64::from(plan.producers) / rate)
    });
    let mut counter: u64 = 0;
    let mut batches: u64 = 0;
    loop {
        let n = shared.claim();
        if n == 0 {
            break;
        }
        if let Some(interval) = interval {
            let at = shared.start + interval.mul_f64(batches as f64);
            if shared.deadline.is_some_and(|deadline| at >= deadline) {
                break;
            }
            tokio::time::sleep_until(at.into()).await;
        }
        if let Some(tracker) = &shared.tracker {
            tracker.issue(producer, counter + n);
        }
        let key = |i: usize| MessageKey {
            producer,
            counter: counter + i as u64,
        };
        let bodies: Vec<String> = (0..n as usize)
            .map(|i| shared.codec.encode(key(i)))
            .collect();
        let fifo: Vec<(String, String)> = match plan.fifo_groups {
            Some(groups) => (0..n as usize)
                .map(|i| {
                    let k = key(i);
                    (
                        format!("g{}", k.counter % u64::from(groups)),
                        format!("{}-{}-{}", shared.run_id, k.producer, k.counter),
                    )
                })
                .collect(),
            None => Vec::new(),
        };
        let mut fifo = fifo.into_iter();
        let entries = bodies
            .into_iter()
            .enumerate()
            .map(|(i, body)| {
                let (group, dedup) = fifo.next().unzip();
                SendMessageBatchRequestEntry {
                    id: Some(ENTRY_IDS[i].to_string()),
                    message_body: Some(body),
                    message_group_id: group,
                    message_deduplication_id: dedup,
                    ..Default::default()
                }
            })
            .collect();
        let url = &plan.queue_urls[(producer as usize + batches as usize) % plan.queue_urls.len()];
        let input = SendMessageBatchRequest {
            queue_url: Some(url.clone()),
            entries: Some(entries),
        };
        let began = Instant::now();
        let result = shared.client.send_message_batch(&input).await;
        samples.record(began.elapsed());
        match result {
            Ok(output) => {
                let acked: Vec<MessageKey> = output
                    .successful
                    .iter()
                    .filter_map(|entry| entry_index(&entry.id))
                    .filter(|&i| i < n as usize)
                    .map(key)
                    .collect();
                let ok = acked.len() as u64;
                if let Some(tracker) = &shared.tracker {
                    tracker.acked(acked);
                }
                shared.sent.fetch_add(ok, Ordering::AcqRel);
                if plan.paced_consumers {
                    shared.credits.add_permits(ok as usize);
                }
                shared.send_failed.fetch_add(n - ok, Ordering::AcqRel);
                for failed in &output.failed {
                    let message = failed.message.as_deref().unwrap_or("");
                    shared.errors.record(
                        "SendMessageBatch entry",
                        format!("{}: {message}", failed.code),
                    );
                }
            }
            Err(e) => {
                shared.send_failed.fetch_add(n, Ordering::AcqRel);
                shared.errors.record("SendMessageBatch", e);
                tokio::time::sleep(ERROR_BACKOFF).await;
            }
        }
        counter += n;
        batches += 1;
    }
    samples
}

/// Paced consumers: waits for a batch worth of acknowledged messages, or
/// takes the rest once the producers are done; `None` when nothing is left.
async fn take_credits(shared: &Shared, producers_done: &mut watch::Receiver<bool>) -> Option<u32> {
    let batch = shared.plan.batch_size;
    loop {
        if *producers_done.borrow_and_update() {
            let left = shared.credits.available_permits().min(batch as usize);
            if left == 0 {
                return None;
            }
            // Another consumer may take them first: then look again.
            if let Ok(permit) = shared.credits.try_acquire_many(left as u32) {
                permit.forget();
                return Some(left as u32);
            }
            continue;
        }
        tokio::select! {
            permit = shared.credits.acquire_many(batch) => {
                let permit = permit.ok()?;
                permit.forget();
                return Some(batch);
            }
            changed = producers_done.changed() => changed.ok()?,
        }
    }
}

/// One consumer: receives, records, deletes, until told to stop. Returns
/// its receive and delete latencies.
async fn consume(shared: Arc<Shared>, consumer: u32) -> (Samples, Samples) {
    let plan = &shared.plan;
    let mut receive_samples = Samples::default();
    let mut delete_samples = Samples::default();
    let mut stop = shared.stop.subscribe();
    let mut producers_done = shared.producers_done.subscribe();
    let mut turn = consumer as usize;
    loop {
        if *stop.borrow_and_update() {
            break;
        }
        let max = if plan.paced_consumers {
            match take_credits(&shared, &mut producers_done).await {
                Some(n) => n,
                None => break,
            }
        } else {
            plan.batch_size
        };
        let url = &plan.queue_urls[turn % plan.queue_urls.len()];
        turn += 1;
        let input = ReceiveMessageRequest {
            queue_url: Some(url.clone()),
            max_number_of_messages: Some(i64::from(max)),
            wait_time_seconds: Some(i64::from(plan.wait_time_seconds)),
            ..Default::default()
        };
        let began = Instant::now();
        let result = tokio::select! {
            result = shared.client.receive_message_bytes(&input) => result,
            // A long poll on an empty queue is cut at the stop rather than
            // waited out.
            _ = stop.changed() => break,
        };
        receive_samples.record(began.elapsed());
        let answer = match result {
            Ok(bytes) => ReceiveAnswer::new(bytes),
            Err(e) => {
                shared.errors.record("ReceiveMessage", e);
                tokio::time::sleep(ERROR_BACKOFF).await;
                continue;
            }
        };
        let mut messages = match answer.messages() {
            Ok(messages) => messages,
            Err(e) => {
                shared.errors.record("ReceiveMessage", e);
                tokio::time::sleep(ERROR_BACKOFF).await;
                continue;
            }
        };
        if messages.is_empty() {
            shared.empty_receives.fetch_add(1, Ordering::Relaxed);
            continue;
        }
        // A batch delete takes at most ten entries.
        messages.truncate(ENTRY_IDS.len());
        shared
            .received
            .fetch_add(messages.len() as u64, Ordering::AcqRel);
        let keys: Vec<Option<MessageKey>> = match &shared.tracker {
            Some(tracker) => {
                let keys: Vec<Option<MessageKey>> = messages
                    .iter()
                    .map(|m| {
                        shared
                            .codec
                            .decode(&m.body)
                            .filter(|k| tracker.is_issued(*k))
                    })
                    .collect();
                let foreign = keys.iter().filter(|k| k.is_none()).count() as u64;
                shared.foreign.fetch_add(foreign, Ordering::Relaxed);
                tracker.received(keys.iter().flatten().copied());
                keys
            }
            None => vec![None; messages.len()],
        };
        let entries = messages
            .into_iter()
            .enumerate()
            .map(|(i, m)| DeleteMessageBatchRequestEntry {
                id: Some(ENTRY_IDS[i].to_string()),
                receipt_handle: Some(m.receipt_handle.into_owned()),
            })
            .collect();
        let input = DeleteMessageBatchRequest {
            queue_url: Some(url.clone()),
            entries: Some(entries),
        };
        let began = Instant::now();
        let result = shared.client.call(&input).await;
        delete_samples.record(began.elapsed());
        match result {
            Ok(output) => {
                let done: Vec<usize> = output
                    .successful
                    .iter()
                    .filter_map(|entry| entry_index(&entry.id))
                    .filter(|&i| i < keys.len())
                    .collect();
                if let Some(tracker) = &shared.tracker {
                    tracker.deleted(done.iter().filter_map(|&i| keys[i]));
                }
                shared
                    .deleted
                    .fetch_add(done.len() as u64, Ordering::AcqRel);
                shared.mark_delete();
                for failed in &output.failed {
                    let message = failed.message.as_deref().unwrap_or("");
                    shared.errors.record(
                        "DeleteMessageBatch entry",
                        format!("{}: {message}", failed.code),
                    );
                }
            }
            Err(e) => {
                shared.errors.record("DeleteMessageBatch", e);
                tokio::time::sleep(ERROR_BACKOFF).await;
            }
        }
    }
    shared.consumers_running.fetch_sub(1, Ordering::AcqRel);
    (receive_samples, delete_samples)
}

//! `sluice bench --fanout`: how many publishes a topic takes when each one
//! is fanned out to every queue of the run. The run creates a topic and
//! its queues, subscribes every queue (raw or in SNS's envelope), and has
//! its producers loop PublishBatch for the duration or message count. A
//! publish is answered once it is in every queue, so when the producers
//! stop each queue must have grown by exactly the publishes acknowledged:
//! the run checks that instead of draining the queues, which keeps the
//! machine's two cores for the publishes.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;
use sluice_client::{Client, ClientError};

use crate::args::StopRule;
use crate::cpu::cpu_time;
use crate::error::BenchError;
use crate::latency::Samples;

/// SNS's API version, which tells sluice the form is an SNS call.
const SNS_VERSION: &str = "2010-03-31";
/// How long a failed PublishBatch waits before the next.
const ERROR_BACKOFF: Duration = Duration::from_millis(100);

/// What a fan-out run needs from the flags.
#[derive(Debug, Clone)]
pub struct FanoutPlan {
    /// The topic's name.
    pub topic: String,
    /// The subscribed queues' URLs and ARNs.
    pub queues: Vec<(String, String)>,
    /// Message size in bytes.
    pub message_size: usize,
    /// Entries per PublishBatch (1 to 10).
    pub batch_size: u32,
    /// Concurrent PublishBatch loops.
    pub producers: u32,
    /// When the producers stop.
    pub stop: StopRule,
    /// `RawMessageDelivery` on every subscription.
    pub raw: bool,
    /// The server's process id, to read its CPU time.
    pub server_pid: Option<u32>,
}

/// The figures of a fan-out run.
#[derive(Debug, Serialize)]
pub struct FanoutReport {
    /// The endpoint.
    pub endpoint: String,
    /// Queues subscribed to the topic.
    pub subscriptions: usize,
    /// `raw` or `envelope`.
    pub delivery: &'static str,
    /// Message size in bytes.
    pub message_size: usize,
    /// Publishes acknowledged.
    pub published: u64,
    /// Publishes (entries) refused or failed.
    pub failed: u64,
    /// From the first publish to the last answer.
    pub seconds: f64,
    /// Acknowledged publishes per second.
    pub publishes_per_sec: f64,
    /// Messages put into queues per second (publishes × subscriptions).
    pub deliveries_per_sec: f64,
    /// PublishBatch latency, median, in milliseconds.
    pub publish_batch_p50_ms: f64,
    /// PublishBatch latency, 99th percentile, in milliseconds.
    pub publish_batch_p99_ms: f64,
    /// The server's CPU time over the run, with `--server-pid`.
    pub server_cpu_seconds: Option<f64>,
    /// The server's CPU time per 1,000 publishes, with `--server-pid`.
    pub server_cpu_ms_per_1000_publishes: Option<f64>,
    /// What the run checked.
    pub verification: String,
}

impl FanoutReport {
    /// The human-readable report.
    pub fn table(&self) -> String {
        let cpu = match (
            self.server_cpu_seconds,
            self.server_cpu_ms_per_1000_publishes,
        ) {
            (Some(s), Some(k)) => format!("{s:.2} CPU-s, {k:.1} CPU-ms per 1,000 publishes"),
            _ => "not measured (give --server-pid)".to_string(),
        };
        format!(
            "topic fan-out: {} queues, {} delivery, {} B messages\n  \
             published {} ({} failed) in {:.2} s: {:.0} publishes/s, {:.0} deliveries/s\n  \
             PublishBatch latency p50 {:.2} ms, p99 {:.2} ms\n  \
             server {cpu}\n  \
             verification: {}\n",
            self.subscriptions,
            self.delivery,
            self.message_size,
            self.published,
            self.failed,
            self.seconds,
            self.publishes_per_sec,
            self.deliveries_per_sec,
            self.publish_batch_p50_ms,
            self.publish_batch_p99_ms,
            self.verification,
        )
    }
}

/// Runs a fan-out: sets the topic up, publishes, checks every queue.
pub async fn run(client: &Client, plan: FanoutPlan) -> Result<FanoutReport, BenchError> {
    let topic_arn = set_up(client, &plan).await?;
    let before = depths(client, &plan).await?;
    let pid = plan.server_pid.map(|p| p.to_string());
    let cpu_before = pid.as_deref().and_then(cpu_time);

    let shared = Arc::new(Shared {
        client: client.clone(),
        topic_arn,
        body: "x".repeat(plan.message_size),
        batch_size: u64::from(plan.batch_size),
        left: AtomicU64::new(match plan.stop {
            StopRule::Messages(n) => n,
            StopRule::Duration(_) => u64::MAX,
        }),
        deadline: match plan.stop {
            StopRule::Duration(d) => Some(Instant::now() + d),
            StopRule::Messages(_) => None,
        },
        published: AtomicU64::new(0),
        failed: AtomicU64::new(0),
    });
    let start = Instant::now();
    let producers: Vec<_> = (0..plan.producers)
        .map(|_| tokio::spawn(produce(Arc::clone(&shared))))
        .collect();
    let mut samples = Samples::default();
    for p in producers {
        if let Ok(s) = p.await {
            samples.merge(s);
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    let server_cpu = match (cpu_before, pid.as_deref().and_then(cpu_time)) {
        (Some(a), Some(b)) => Some(b.saturating_sub(a).as_secs_f64()),
        _ => None,
    };
    let published = shared.published.load(Ordering::Acquire);
    if published == 0 {
        return Err(BenchError::NothingSent(String::new()));
    }
    let after = depths(client, &plan).await?;
    let verification = verify(&plan, &before, &after, published)?;
    let latency = samples.summary();
    Ok(FanoutReport {
        endpoint: client.endpoint().to_string(),
        subscriptions: plan.queues.len(),
        delivery: if plan.raw { "raw" } else { "envelope" },
        message_size: plan.message_size,
        published,
        failed: shared.failed.load(Ordering::Acquire),
        seconds,
        publishes_per_sec: published as f64 / seconds,
        deliveries_per_sec: (published * plan.queues.len() as u64) as f64 / seconds,
        publish_batch_p50_ms: latency.p50_ms,
        publish_batch_p99_ms: latency.p99_ms,
        server_cpu_seconds: server_cpu,
        server_cpu_ms_per_1000_publishes: server_cpu.map(|s| s * 1e6 / published as f64),
        verification,
    })
}

/// What the producers share.
struct Shared {
    client: Client,
    topic_arn: String,
    body: String,
    batch_size: u64,
    left: AtomicU64,
    deadline: Option<Instant>,
    published: AtomicU64,
    failed: AtomicU64,
}

impl Shared {
    /// How many entries the next batch takes, 0 when the run is over.
    fn claim(&self) -> u64 {
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return 0;
        }
        let mut left = self.left.load(Ordering::Acquire);
        loop {
            let n = left.min(self.batch_size);
            if n == 0 {
                return 0;
            }
            match self.left.compare_exchange_weak(
                left,
                left - n,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return n,
                Err(now) => left = now,
            }
        }
    }
}

/// One producer: PublishBatch after PublishBatch until the run is over.
async fn produce(shared: Arc<Shared>) -> Samples {
    let mut samples = Samples::default();
    loop {
        let n = shared.claim();
        if n == 0 {
            return samples;
        }
        let form = publish_batch(&shared, n);
        let began = Instant::now();
        let answer = shared.client.post_form(form).await;
        samples.record(began.elapsed());
        match answer {
            Ok(xml) => {
                let ok = count(&xml, b"<MessageId>").min(n);
                shared.published.fetch_add(ok, Ordering::AcqRel);
                shared.failed.fetch_add(n - ok, Ordering::AcqRel);
            }
            Err(_) => {
                shared.failed.fetch_add(n, Ordering::AcqRel);
                tokio::time::sleep(ERROR_BACKOFF).await;
            }
        }
    }
}

/// The PublishBatch form of `n` entries.
fn publish_batch(shared: &Shared, n: u64) -> String {
    let mut form = form_urlencoded::Serializer::new(String::new());
    form.append_pair("Action", "PublishBatch")
        .append_pair("Version", SNS_VERSION)
        .append_pair("TopicArn", &shared.topic_arn);
    for i in 1..=n {
        let entry = format!("PublishBatchRequestEntries.member.{i}");
        form.append_pair(&format!("{entry}.Id"), &format!("m{i}"))
            .append_pair(&format!("{entry}.Message"), &shared.body);
    }
    form.finish()
}

/// How often `needle` occurs in `hay`: PublishBatch's answer holds one
/// `<MessageId>` per published entry, none per failed one.
fn count(hay: &[u8], needle: &[u8]) -> u64 {
    hay.windows(needle.len()).filter(|w| *w == needle).count() as u64
}

/// Creates the topic and subscribes every queue; the topic's ARN.
async fn set_up(client: &Client, plan: &FanoutPlan) -> Result<String, BenchError> {
    let setup = |source: ClientError| BenchError::Setup {
        queue: plan.topic.clone(),
        source,
    };
    let form = form_urlencoded::Serializer::new(String::new())
        .append_pair("Action", "CreateTopic")
        .append_pair("Version", SNS_VERSION)
        .append_pair("Name", &plan.topic)
        .finish();
    let created = client.post_form(form).await.map_err(setup)?;
    let topic_arn = between(&created, "<TopicArn>", "</TopicArn>").ok_or_else(|| {
        BenchError::Usage(format!(
            "{} answered CreateTopic without a TopicArn: is it an SNS endpoint?",
            client.endpoint()
        ))
    })?;
    for (_, queue_arn) in &plan.queues {
        let mut form = form_urlencoded::Serializer::new(String::new());
        form.append_pair("Action", "Subscribe")
            .append_pair("Version", SNS_VERSION)
            .append_pair("TopicArn", &topic_arn)
            .append_pair("Protocol", "sqs")
            .append_pair("Endpoint", queue_arn);
        if plan.raw {
            form.append_pair("Attributes.entry.1.key", "RawMessageDelivery")
                .append_pair("Attributes.entry.1.value", "true");
        }
        client.post_form(form.finish()).await.map_err(setup)?;
    }
    Ok(topic_arn)
}

/// The text between `open` and `close` in an XML answer.
fn between(xml: &[u8], open: &str, close: &str) -> Option<String> {
    let text = std::str::from_utf8(xml).ok()?;
    let (_, rest) = text.split_once(open)?;
    let (value, _) = rest.split_once(close)?;
    Some(value.to_string())
}

/// Every queue's ApproximateNumberOfMessages.
async fn depths(client: &Client, plan: &FanoutPlan) -> Result<Vec<u64>, BenchError> {
    let mut depths = Vec::with_capacity(plan.queues.len());
    for (url, _) in &plan.queues {
        let attributes = client
            .queue_attributes(url, &["ApproximateNumberOfMessages"])
            .await?;
        let depth = attributes
            .get("ApproximateNumberOfMessages")
            .and_then(|d| d.parse().ok())
            .unwrap_or(0);
        depths.push(depth);
    }
    Ok(depths)
}

/// Every queue must have grown by exactly the publishes acknowledged.
fn verify(
    plan: &FanoutPlan,
    before: &[u64],
    after: &[u64],
    published: u64,
) -> Result<String, BenchError> {
    for (((url, _), b), a) in plan.queues.iter().zip(before).zip(after) {
        let grown = a.saturating_sub(*b);
        if grown != published {
            return Err(BenchError::Unfanned {
                queue: url.clone(),
                got: grown,
                published,
            });
        }
    }
    Ok(format!(
        "each of the {} queues grew by the {published} acknowledged publishes",
        plan.queues.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// PublishBatch's answer counts one `<MessageId>` per published entry.
    #[test]
    fn counts_published_entries() {
        let xml = b"<PublishBatchResult><Successful><member><Id>m1</Id>\
            <MessageId>a</MessageId></member><member><Id>m2</Id><MessageId>b</MessageId>\
            </member></Successful><Failed><member><Id>m3</Id><Code>X</Code></member>\
            </Failed></PublishBatchResult>";
        assert_eq!(count(xml, b"<MessageId>"), 2);
        assert_eq!(
            between(
                b"<TopicArn>arn:aws:sns:r:1:t</TopicArn>",
                "<TopicArn>",
                "</TopicArn>"
            ),
            Some("arn:aws:sns:r:1:t".to_string())
        );
    }
}

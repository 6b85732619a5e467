//! `--wake-probes N`: how soon a waiting long poll returns a message sent
//! while it waits (the aim: under 5 ms).
//!
//! Each probe parks one ReceiveMessage (WaitTimeSeconds 20) on an empty
//! queue, lets it reach the server, then sends one message (through the
//! same endpoint, or with `--wake-send-endpoint` through another node of
//! the same database, to time a wake-up across nodes) and times the
//! receive's answer from the moment the send was issued: the figure is an
//! upper bound that also holds the send's own round trip. The message is
//! deleted before the next probe, so each probe starts on an empty queue.

use std::time::{Duration, Instant};

use serde::Serialize;

use crate::latency::{Samples, Summary};
use sluice_client::sqs::{
    DeleteMessageBatchRequest, DeleteMessageBatchRequestEntry, ReceiveMessageRequest,
    SendMessageBatchRequest, SendMessageBatchRequestEntry,
};
use sluice_client::{Client, ClientError};

/// How long a probe lets its long poll reach the server and park before
/// sending: far more than a loopback round trip.
const PARK: Duration = Duration::from_millis(50);

/// What the probes measured.
#[derive(Debug, Serialize)]
pub struct WakeReport {
    /// Probes run.
    pub wake_probes: u64,
    /// Median time from issuing the send to the waiting receive's answer.
    pub wake_p50_ms: f64,
    /// 99th percentile of the same.
    pub wake_p99_ms: f64,
    /// Slowest probe.
    pub wake_max_ms: f64,
    /// Median round trip of the sends themselves, for comparison.
    pub send_p50_ms: f64,
    /// Probes whose receive came back empty or with another message.
    pub missed: u64,
}

impl WakeReport {
    /// The report as a short table.
    pub fn table(&self) -> String {
        format!(
            "long-poll wake-up, {} probes (send issued -> waiting receive answered)\n  \
             p50 {:.3} ms   p99 {:.3} ms   max {:.3} ms   (send alone p50 {:.3} ms)   missed {}\n",
            self.wake_probes,
            self.wake_p50_ms,
            self.wake_p99_ms,
            self.wake_max_ms,
            self.send_p50_ms,
            self.missed
        )
    }
}

/// Runs `probes` probes against the queue at `url`, which must be empty.
/// On a FIFO queue each probe message has its own group and dedup id.
/// `sender` sends the probes (another node, or `client` itself).
pub async fn probe(
    client: &Client,
    sender: &Client,
    url: &str,
    fifo: bool,
    probes: u64,
) -> Result<WakeReport, ClientError> {
    let mut wake = Samples::default();
    let mut send = Samples::default();
    let mut missed = 0;
    for i in 0..probes {
        let poller = client.clone();
        let receive = ReceiveMessageRequest {
            queue_url: Some(url.to_string()),
            max_number_of_messages: Some(1),
            wait_time_seconds: Some(20),
            ..Default::default()
        };
        let poll = tokio::spawn(async move {
            let output = poller.receive_message(&receive).await;
            (output, Instant::now())
        });
        tokio::time::sleep(PARK).await;
        let body = format!("wake-probe-{i}");
        let input = SendMessageBatchRequest {
            queue_url: Some(url.to_string()),
            entries: Some(vec![SendMessageBatchRequestEntry {
                id: Some("0".into()),
                message_body: Some(body.clone()),
                message_group_id: fifo.then(|| body.clone()),
                message_deduplication_id: fifo.then(|| body.clone()),
                ..Default::default()
            }]),
        };
        let issued = Instant::now();
        sender.send_message_batch(&input).await?;
        send.record(issued.elapsed());
        let (output, answered) = poll
            .await
            .map_err(|e| sender.transport(format!("the probe's receive task failed: {e}")))?;
        let mut messages = output?.messages.into_iter();
        match messages.next() {
            Some(m) if m.body.as_deref() == Some(body.as_str()) => {
                wake.record(answered.saturating_duration_since(issued));
                let input = DeleteMessageBatchRequest {
                    queue_url: Some(url.to_string()),
                    entries: Some(vec![DeleteMessageBatchRequestEntry {
                        id: Some("0".into()),
                        receipt_handle: m.receipt_handle,
                    }]),
                };
                client.call(&input).await?;
            }
            _ => missed += 1,
        }
    }
    let Summary {
        count,
        p50_ms,
        p99_ms,
        max_ms,
        ..
    } = wake.summary();
    Ok(WakeReport {
        wake_probes: count + missed,
        wake_p50_ms: p50_ms,
        wake_p99_ms: p99_ms,
        wake_max_ms: max_ms,
        send_p50_ms: send.summary().p50_ms,
        missed,
    })
}

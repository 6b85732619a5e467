//! The result of a run: one JSON object (`--json`) or a table for people.

use std::fmt::Write as _;

use serde::Serialize;

use crate::args::{BenchArgs, StopRule};
use crate::latency::Summary;
use crate::load::Outcome;

/// Everything a run reports: its parameters, then its figures.
///
/// Rates: `sent_per_sec` divides acknowledged sends by the send phase (until
/// the last producer stopped); the others divide by the wall time, from the
/// start to the last delete. `end_to_end` counts messages that were sent,
/// received and deleted.
#[derive(Debug, Serialize)]
pub struct Report {
    /// The endpoint loaded.
    pub endpoint: String,
    /// The queue name (or prefix with several queues).
    pub queue: String,
    /// Number of queues.
    pub queues: u32,
    /// Whether the queues are FIFO.
    pub fifo: bool,
    /// FIFO message groups.
    pub groups: Option<u32>,
    /// Body size in bytes.
    pub message_size: u32,
    /// Messages per batch.
    pub batch_size: u32,
    /// Producers.
    pub producers: u32,
    /// Consumers.
    pub consumers: u32,
    /// `--duration`, when the run was timed.
    pub duration_seconds: Option<u64>,
    /// `--messages`, when the run was counted.
    pub messages: Option<u64>,
    /// `--rate`, when capped.
    pub rate: Option<f64>,
    /// Consumers' long-poll wait.
    pub wait_time_seconds: u32,
    /// Drain bound after the producers stop.
    pub drain_seconds: u64,
    /// Whether the endpoint is sluice's null server.
    pub null_server: bool,
    /// Whether lost and duplicate messages were checked.
    pub verified: bool,
    /// Why verification is off, or how it was done.
    pub verification: String,

    /// Seconds from the start to the last delete.
    pub wall_seconds: f64,
    /// Seconds from the start until the last producer stopped.
    pub send_seconds: f64,
    /// Acknowledged sends.
    pub sent: u64,
    /// Sends not acknowledged.
    pub send_failed: u64,
    /// Messages received (duplicates and foreign included).
    pub received: u64,
    /// Messages deleted.
    pub deleted: u64,
    /// Messages sent, received and deleted.
    pub end_to_end: u64,
    /// Received messages of no producer of this run.
    pub foreign: u64,
    /// Receives that returned nothing.
    pub empty_receives: u64,

    /// `end_to_end / wall_seconds`.
    pub end_to_end_per_sec: f64,
    /// `sent / send_seconds`.
    pub sent_per_sec: f64,
    /// `received / wall_seconds`.
    pub received_per_sec: f64,
    /// `deleted / wall_seconds`.
    pub deleted_per_sec: f64,

    /// SendMessageBatch requests.
    pub send_requests: u64,
    /// SendMessageBatch latency, median, in ms.
    pub send_p50_ms: f64,
    /// SendMessageBatch latency, 90th percentile.
    pub send_p90_ms: f64,
    /// SendMessageBatch latency, 99th percentile.
    pub send_p99_ms: f64,
    /// SendMessageBatch latency, slowest.
    pub send_max_ms: f64,
    /// ReceiveMessage requests.
    pub receive_requests: u64,
    /// ReceiveMessage latency (long-poll waits included), median.
    pub receive_p50_ms: f64,
    /// ReceiveMessage latency, 90th percentile.
    pub receive_p90_ms: f64,
    /// ReceiveMessage latency, 99th percentile.
    pub receive_p99_ms: f64,
    /// ReceiveMessage latency, slowest.
    pub receive_max_ms: f64,
    /// DeleteMessageBatch requests.
    pub delete_requests: u64,
    /// DeleteMessageBatch latency, median.
    pub delete_p50_ms: f64,
    /// DeleteMessageBatch latency, 90th percentile.
    pub delete_p90_ms: f64,
    /// DeleteMessageBatch latency, 99th percentile.
    pub delete_p99_ms: f64,
    /// DeleteMessageBatch latency, slowest.
    pub delete_max_ms: f64,

    /// Acknowledged sends never received (`null` when not verified).
    pub lost: Option<u64>,
    /// Ids received more than once (`null` when not verified).
    pub duplicates: Option<u64>,
    /// Ids received whose send was not acknowledged (`null` when not verified).
    pub received_unacked: Option<u64>,
    /// Whether everything acknowledged was deleted within the drain bound.
    pub drained: bool,
    /// Failed requests and batch entries.
    pub errors: u64,
    /// The first distinct errors.
    pub first_errors: Vec<String>,
}

impl Report {
    /// The report of `outcome`, a run of `args`.
    pub fn new(args: &BenchArgs, null_server: bool, verification: String, o: &Outcome) -> Self {
        let wall = o.wall.as_secs_f64();
        let send_secs = o.send_phase.as_secs_f64();
        let rate = |n: u64, secs: f64| {
            if secs > 0.0 {
                round(n as f64 / secs, 1)
            } else {
                0.0
            }
        };
        let (duration_seconds, messages) = match args.stop_rule() {
            StopRule::Duration(d) => (Some(d.as_secs()), None),
            StopRule::Messages(n) => (None, Some(n)),
        };
        let ms = |s: &Summary| {
            (
                s.count,
                round(s.p50_ms, 3),
                round(s.p90_ms, 3),
                round(s.p99_ms, 3),
                round(s.max_ms, 3),
            )
        };
        let (send_requests, send_p50_ms, send_p90_ms, send_p99_ms, send_max_ms) = ms(&o.send);
        let (receive_requests, receive_p50_ms, receive_p90_ms, receive_p99_ms, receive_max_ms) =
            ms(&o.receive);
        let (delete_requests, delete_p50_ms, delete_p90_ms, delete_p99_ms, delete_max_ms) =
            ms(&o.delete);
        Self {
            endpoint: args.endpoint.clone(),
            queue: args.queue.clone(),
            queues: args.queues,
            fifo: args.fifo,
            groups: args.fifo.then_some(args.groups),
            message_size: args.message_size,
            batch_size: args.batch_size,
            producers: args.producers,
            consumers: args.consumers,
            duration_seconds,
            messages,
            rate: args.rate,
            wait_time_seconds: args.wait_time_seconds,
            drain_seconds: args.drain_seconds,
            null_server,
            verified: o.verdict.is_some(),
            verification,
            wall_seconds: round(wall, 3),
            send_seconds: round(send_secs, 3),
            sent: o.sent,
            send_failed: o.send_failed,
            received: o.received,
            deleted: o.deleted,
            end_to_end: o.end_to_end,
            foreign: o.foreign,
            empty_receives: o.empty_receives,
            end_to_end_per_sec: rate(o.end_to_end, wall),
            sent_per_sec: rate(o.sent, send_secs),
            received_per_sec: rate(o.received, wall),
            deleted_per_sec: rate(o.deleted, wall),
            send_requests,
            send_p50_ms,
            send_p90_ms,
            send_p99_ms,
            send_max_ms,
            receive_requests,
            receive_p50_ms,
            receive_p90_ms,
            receive_p99_ms,
            receive_max_ms,
            delete_requests,
            delete_p50_ms,
            delete_p90_ms,
            delete_p99_ms,
            delete_max_ms,
            lost: o.verdict.map(|v| v.lost),
            duplicates: o.verdict.map(|v| v.duplicates),
            received_unacked: o.verdict.map(|v| v.received_unacked),
            drained: o.drained,
            errors: o.errors,
            first_errors: o.first_errors.clone(),
        }
    }

    /// The table printed without `--json`.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let run = match (self.duration_seconds, self.messages) {
            (_, Some(n)) => format!("{n} messages"),
            (Some(d), None) => format!("{d} s"),
            (None, None) => String::new(),
        };
        let _ = writeln!(
            out,
            "sluice bench  {}  {} queue(s) {}{}  {} B bodies, batches of {}, {} producers, {} consumers, {run}{}",
            self.endpoint,
            self.queues,
            self.queue,
            if self.fifo { " (FIFO)" } else { "" },
            self.message_size,
            self.batch_size,
            self.producers,
            self.consumers,
            self.rate
                .map(|r| format!(", rate cap {r} msg/s"))
                .unwrap_or_default(),
        );
        let _ = writeln!(
            out,
            "{:<12} {:>12} {:>12} {:>10} {:>9} {:>9} {:>9} {:>9}",
            "", "messages", "msg/s", "requests", "p50 ms", "p90 ms", "p99 ms", "max ms"
        );
        let rows = [
            (
                "sent",
                self.sent,
                self.sent_per_sec,
                self.send_requests,
                [
                    self.send_p50_ms,
                    self.send_p90_ms,
                    self.send_p99_ms,
                    self.send_max_ms,
                ],
            ),
            (
                "received",
                self.received,
                self.received_per_sec,
                self.receive_requests,
                [
                    self.receive_p50_ms,
                    self.receive_p90_ms,
                    self.receive_p99_ms,
                    self.receive_max_ms,
                ],
            ),
            (
                "deleted",
                self.deleted,
                self.deleted_per_sec,
                self.delete_requests,
                [
                    self.delete_p50_ms,
                    self.delete_p90_ms,
                    self.delete_p99_ms,
                    self.delete_max_ms,
                ],
            ),
        ];
        for (name, count, per_sec, requests, [p50, p90, p99, max]) in rows {
            let _ = writeln!(
                out,
                "{name:<12} {count:>12} {per_sec:>12.1} {requests:>10} {p50:>9.3} {p90:>9.3} {p99:>9.3} {max:>9.3}"
            );
        }
        let _ = writeln!(
            out,
            "{:<12} {:>12} {:>12.1}   (sent, received and deleted, over {:.3} s of wall time)",
            "end to end", self.end_to_end, self.end_to_end_per_sec, self.wall_seconds
        );
        match (self.lost, self.duplicates) {
            (Some(lost), Some(duplicates)) => {
                let _ = writeln!(
                    out,
                    "verification: lost {lost}, duplicates {duplicates}, received but unacknowledged {}, foreign {}{}",
                    self.received_unacked.unwrap_or(0),
                    self.foreign,
                    if self.drained {
                        ""
                    } else {
                        " (drain bound reached)"
                    },
                );
            }
            _ => {
                let _ = writeln!(out, "verification: {}", self.verification);
            }
        }
        let _ = writeln!(
            out,
            "errors: {} (send failures {}, empty receives {})",
            self.errors, self.send_failed, self.empty_receives
        );
        for e in &self.first_errors {
            let _ = writeln!(out, "  {e}");
        }
        out
    }
}

/// `x` rounded to `places` decimals, so the JSON stays readable.
fn round(x: f64, places: i32) -> f64 {
    let scale = 10f64.powi(places);
    (x * scale).round() / scale
}

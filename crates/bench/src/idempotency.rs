//! `sluice bench --idempotency`: how many idempotency keys the server
//! takes a second (rule I1). Each producer loops, for the duration or the
//! count, over what a consumer does for one message: it claims a key of
//! its own (`ClaimIdempotencyKey`, which must answer `CLAIMED`), then
//! completes it with a small result (`CompleteIdempotencyKey`); every
//! tenth of its cycles also claims a key it completed before, which must answer
//! `COMPLETED` with that key's result, as a redelivered message finds it.
//! A claim answered otherwise fails the run.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;
use sluice_client::Client;
use sluice_client::sluice::{ClaimIdempotencyKeyRequest, CompleteIdempotencyKeyRequest};

use crate::args::StopRule;
use crate::cpu::cpu_time;
use crate::error::BenchError;
use crate::latency::Samples;

/// How long a failed call waits before the next.
const ERROR_BACKOFF: Duration = Duration::from_millis(100);

/// What an idempotency run needs from the flags.
#[derive(Debug, Clone)]
pub struct IdempotencyPlan {
    /// Concurrent claim loops.
    pub producers: u32,
    /// When they stop.
    pub stop: StopRule,
    /// The server's process id, to read its CPU time.
    pub server_pid: Option<u32>,
}

/// The figures of an idempotency run.
#[derive(Debug, Serialize)]
pub struct IdempotencyReport {
    /// The endpoint.
    pub endpoint: String,
    /// Keys claimed (`CLAIMED`) and then completed.
    pub claimed: u64,
    /// Claims of completed keys, answered `COMPLETED` with their result.
    pub replayed: u64,
    /// Calls refused or failed.
    pub failed: u64,
    /// From the first claim to the last answer.
    pub seconds: f64,
    /// Claims answered per second (`CLAIMED` and `COMPLETED`).
    pub claims_per_sec: f64,
    /// Requests answered per second (claims and completions).
    pub requests_per_sec: f64,
    /// ClaimIdempotencyKey latency, median, in milliseconds.
    pub claim_p50_ms: f64,
    /// ClaimIdempotencyKey latency, 99th percentile, in milliseconds.
    pub claim_p99_ms: f64,
    /// The server's CPU time per 1,000 claims, with `--server-pid`.
    pub server_cpu_ms_per_1000_claims: Option<f64>,
}

impl IdempotencyReport {
    /// The human-readable report.
    pub fn table(&self) -> String {
        let cpu = match self.server_cpu_ms_per_1000_claims {
            Some(k) => format!("{k:.1} CPU-ms per 1,000 claims"),
            None => "not measured (give --server-pid)".to_string(),
        };
        format!(
            "idempotency keys: {} claimed and completed, {} completed ones claimed again, {} failed, in {:.2} s\n  \
             {:.0} claims/s, {:.0} requests/s\n  \
             ClaimIdempotencyKey latency p50 {:.2} ms, p99 {:.2} ms\n  \
             server {cpu}\n",
            self.claimed,
            self.replayed,
            self.failed,
            self.seconds,
            self.claims_per_sec,
            self.requests_per_sec,
            self.claim_p50_ms,
            self.claim_p99_ms,
        )
    }
}

/// What the producers share.
struct Shared {
    client: Client,
    /// Keys of this run start with it, so runs never meet.
    run: String,
    left: AtomicU64,
    deadline: Option<Instant>,
    claimed: AtomicU64,
    replayed: AtomicU64,
    failed: AtomicU64,
    wrong: AtomicU64,
}

impl Shared {
    /// Takes one cycle's turn; false when the run is over.
    fn next(&self) -> bool {
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return false;
        }
        self.left
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
            .is_ok()
    }
}

/// Runs the claims and reports.
pub async fn run(client: &Client, plan: IdempotencyPlan) -> Result<IdempotencyReport, BenchError> {
    let pid = plan.server_pid.map(|p| p.to_string());
    let cpu_before = pid.as_deref().and_then(cpu_time);
    let shared = Arc::new(Shared {
        client: client.clone(),
        run: format!("bench-{}", uuid::Uuid::new_v4().simple()),
        left: AtomicU64::new(match plan.stop {
            StopRule::Messages(n) => n,
            StopRule::Duration(_) => u64::MAX,
        }),
        deadline: match plan.stop {
            StopRule::Duration(d) => Some(Instant::now() + d),
            StopRule::Messages(_) => None,
        },
        claimed: AtomicU64::new(0),
        replayed: AtomicU64::new(0),
        failed: AtomicU64::new(0),
        wrong: AtomicU64::new(0),
    });
    let start = Instant::now();
    let producers: Vec<_> = (0..plan.producers)
        .map(|p| tokio::spawn(produce(Arc::clone(&shared), p)))
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
    let wrong = shared.wrong.load(Ordering::Acquire);
    if wrong > 0 {
        return Err(BenchError::Verification(format!(
            "{wrong} claims were answered other than CLAIMED for a new key, or COMPLETED with \
             its result for a completed one"
        )));
    }
    let claimed = shared.claimed.load(Ordering::Acquire);
    let replayed = shared.replayed.load(Ordering::Acquire);
    if claimed == 0 {
        return Err(BenchError::NothingSent(String::new()));
    }
    let claims = claimed + replayed;
    let latency = samples.summary();
    Ok(IdempotencyReport {
        endpoint: client.endpoint().to_string(),
        claimed,
        replayed,
        failed: shared.failed.load(Ordering::Acquire),
        seconds,
        claims_per_sec: claims as f64 / seconds,
        requests_per_sec: (claims + claimed) as f64 / seconds,
        claim_p50_ms: latency.p50_ms,
        claim_p99_ms: latency.p99_ms,
        server_cpu_ms_per_1000_claims: server_cpu.map(|s| s * 1e6 / claims as f64),
    })
}

fn claim(key: String) -> ClaimIdempotencyKeyRequest {
    ClaimIdempotencyKeyRequest {
        key: Some(key),
        ttl_seconds: Some(3600),
        in_progress_seconds: Some(60),
    }
}

/// One producer: claim, complete, and every tenth cycle claim a key it
/// completed before.
async fn produce(shared: Arc<Shared>, producer: u32) -> Samples {
    let mut samples = Samples::default();
    let mut cycle = 0u64;
    while shared.next() {
        cycle += 1;
        let key = format!("{}/{producer}/{cycle}", shared.run);
        let began = Instant::now();
        let answer = shared.client.call(&claim(key.clone())).await;
        samples.record(began.elapsed());
        match answer {
            Ok(a) if a.status.as_deref() == Some("CLAIMED") => {}
            Ok(_) => {
                shared.wrong.fetch_add(1, Ordering::AcqRel);
                continue;
            }
            Err(_) => {
                shared.failed.fetch_add(1, Ordering::AcqRel);
                tokio::time::sleep(ERROR_BACKOFF).await;
                continue;
            }
        }
        let complete = CompleteIdempotencyKeyRequest {
            key: Some(key),
            result: Some(format!("done {cycle}")),
        };
        if shared.client.call(&complete).await.is_err() {
            shared.failed.fetch_add(1, Ordering::AcqRel);
            continue;
        }
        shared.claimed.fetch_add(1, Ordering::AcqRel);
        if cycle.is_multiple_of(10) {
            let earlier = cycle - 5;
            let key = format!("{}/{producer}/{earlier}", shared.run);
            let began = Instant::now();
            let answer = shared.client.call(&claim(key)).await;
            samples.record(began.elapsed());
            match answer {
                Ok(a)
                    if a.status.as_deref() == Some("COMPLETED")
                        && a.result.as_deref() == Some(&format!("done {earlier}")) =>
                {
                    shared.replayed.fetch_add(1, Ordering::AcqRel);
                }
                // A cycle that failed leaves its key unclaimed.
                Ok(a) if a.status.as_deref() == Some("CLAIMED") => {}
                Ok(_) => {
                    shared.wrong.fetch_add(1, Ordering::AcqRel);
                }
                Err(_) => {
                    shared.failed.fetch_add(1, Ordering::AcqRel);
                }
            }
        }
    }
    samples
}

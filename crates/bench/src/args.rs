//! The flags of `sluice bench`.

use std::net::SocketAddr;
use std::time::Duration;

use clap::Args;

/// Duration of a run when neither `--duration` nor `--messages` is given.
const DEFAULT_DURATION_SECS: u64 = 10;

/// Flags of `sluice bench`.
///
/// Without `--null-server` it loads an SQS endpoint; with it, it is the null
/// server and every load flag is ignored.
#[derive(Args, Debug, Clone)]
#[command(
    group(clap::ArgGroup::new("server_measured").args(["push", "fanout", "idempotency"])),
    after_help = "Measure sluice's efficiency: run `sluice bench --null-server` and the same \
                  load against it and against `sluice serve`; efficiency = sluice's \
                  end_to_end_per_sec / the null server's."
)]
pub struct BenchArgs {
    /// Base URL of the SQS endpoint to load (http:// or https://; any SQS JSON-protocol server). Requests are signed (SigV4) when credentials are found (--access-key-id, the environment, --profile); else they carry SQS's credential scope with a dummy signature, which servers that do not check signatures accept.
    #[arg(long, value_name = "URL", default_value = "http://127.0.0.1:9324")]
    pub endpoint: String,

    /// Credentials, region and CA file.
    #[command(flatten)]
    pub connection: sluice_client::ConnectionFlags,

    /// Queue to use, created if missing (with --queues N: NAME-0 .. NAME-{N-1}).
    #[arg(long, value_name = "NAME", default_value = "sluice-bench")]
    pub queue: String,

    /// Spread the load over this many queues: each producer and consumer walks them in turn.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub queues: u32,

    /// Use FIFO queues (names get the `.fifo` suffix). A server without FIFO support makes the run stop with its error.
    #[arg(long)]
    pub fifo: bool,

    /// FIFO only: number of message groups; each producer spreads its messages round-robin over them.
    #[arg(long, value_name = "N", default_value_t = 10, requires = "fifo",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub groups: u32,

    /// Size of each message body in bytes (an id, padded); at least 64.
    #[arg(long, value_name = "BYTES", default_value_t = 1024,
          value_parser = clap::value_parser!(u32).range(64..=1_048_576))]
    pub message_size: u32,

    /// Messages per SendMessageBatch, and the MaxNumberOfMessages of each receive (1 to 10; with --fair, the consumers' only).
    #[arg(long, value_name = "N", default_value_t = 10,
          value_parser = clap::value_parser!(u32).range(1..=10))]
    pub batch_size: u32,

    /// Number of concurrent producers, each with one SendMessageBatch in flight at a time.
    #[arg(long, value_name = "N", default_value_t = 2,
          value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub producers: u32,

    /// Number of concurrent consumers, each looping ReceiveMessage then DeleteMessageBatch.
    #[arg(long, value_name = "N", default_value_t = 2,
          value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub consumers: u32,

    /// Produce for this many seconds [default: 10 unless --messages is given].
    #[arg(long, value_name = "SECONDS", conflicts_with = "messages",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub duration: Option<u64>,

    /// Produce exactly this many messages in total, instead of for a duration.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub messages: Option<u64>,

    /// Cap the producers at this many messages per second in total (for latency at a given load); unlimited by default.
    #[arg(long, value_name = "MSGS_PER_SEC")]
    pub rate: Option<f64>,

    /// WaitTimeSeconds of the consumers' receives (long polling), 0 to 20.
    #[arg(long, value_name = "SECONDS", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(0..=20))]
    pub wait_time_seconds: u32,

    /// After the producers stop, consumers go on until every acknowledged message is deleted; they give up after this many seconds without a successful delete (or 10 times this long in all), and what is still missing is reported as lost.
    #[arg(long, value_name = "SECONDS", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub drain_seconds: u64,

    /// PurgeQueue each queue before the run (SQS allows one purge per queue per 60 s).
    #[arg(long)]
    pub purge: bool,

    /// Do not check for lost and duplicate messages (automatic against the null server).
    #[arg(long)]
    pub no_verify: bool,

    /// Instead of a load, measure how soon a waiting long poll returns a message sent meanwhile: N probes, one at a time, each timed from issuing the send to the receive's answer (p50/p99/max).
    #[arg(long, value_name = "N", conflicts_with_all = ["null_server", "messages", "duration", "rate"],
          value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub wake_probes: Option<u64>,

    /// With --wake-probes: send each probe's message through this other endpoint (another node on the same database) while the receive waits on --endpoint, to time a wake-up across nodes.
    #[arg(long, value_name = "URL", requires = "wake_probes")]
    pub wake_send_endpoint: Option<String>,

    /// Instead of a load, time what a durable commit costs on the disk holding DIR (no server needed): 16 KiB written then fdatasync, 1,000 times back to back and 1,000 times 2 ms apart into a zero-filled file, then 1,000 times appending. A durable answer under load waits about 1.5 such syncs more than an in-memory one.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["null_server", "wake_probes", "messages", "duration", "rate"])]
    pub sync_probe: Option<std::path::PathBuf>,

    /// Instead of a load, measure a push consumer (docs/consumers.md): fill the queue with a backlog of --messages (default 100,000) with --producers senders, start a trivial handler in this process (it answers `{"batchItemFailures":[]}`), create a consumer posting to it (CreateConsumer, --batch-size, --push-concurrency) and time the deliveries until the handler had every message. Reports msg/s delivered and the CPU time of the server (with --server-pid) and of the handler, per second and per 1,000 messages.
    #[arg(long, conflicts_with_all = ["null_server", "wake_probes", "sync_probe", "duration", "rate", "fifo", "queues"])]
    pub push: bool,

    /// With --push: the consumer's MaxConcurrency, batches in flight at most (2 to 1,000).
    #[arg(long, value_name = "N", default_value_t = 10, requires = "push",
          value_parser = clap::value_parser!(u32).range(2..=1000))]
    pub push_concurrency: u32,

    /// Instead of a queue load, publish to a topic fanned out to the run's queues (--queues N, each subscribed): producers loop PublishBatch (--batch-size entries of --message-size bytes) for --duration or --messages; a publish is answered once it is in every queue, and the run checks that each queue grew by exactly the publishes acknowledged. Reports publishes/s and deliveries/s (and, with --server-pid, the server's CPU per 1,000 publishes).
    #[arg(long, conflicts_with_all = ["null_server", "wake_probes", "sync_probe", "push", "fifo", "rate"])]
    pub fanout: bool,

    /// Instead of a load, measure a fair queue (rule V10): the dwell time of ten quiet tenants' messages (20 msg/s in all) while --consumers consumers, taking up to --batch-size per receive, spend about --fair-work-ms on each message (half to one and a half times it, as handlers vary), in four phases of --duration seconds (default 10) on fresh queues: quiet tenants alone; plus 80% of the consumers' capacity spread over 100 tenants (a busy queue, nobody noisy); plus one tenant sending 150% of it (a flood); the same flood without a group id (served oldest first, as without fairness). Reports p50/p99 dwell per phase and the quiet tenants' p99 under the flood over their p99 on the busy queue.
    #[arg(long, conflicts_with_all = ["null_server", "wake_probes", "sync_probe", "push", "fanout", "fifo", "messages", "rate", "queues"])]
    pub fair: bool,

    /// With --fair: milliseconds a consumer spends on each message it receives, on average.
    #[arg(long, value_name = "MS", default_value_t = 2.0, requires = "fair")]
    pub fair_work_ms: f64,

    /// With --fair: the loads are shares of the consumers' capacity as first measured for 5 s on a backlog, receives and deletes included (`measured`), or as their work time alone allows, --consumers / --fair-work-ms (`work`).
    #[arg(long, value_enum, value_name = "FROM", default_value_t = FairCapacity::Measured, requires = "fair")]
    pub fair_capacity: FairCapacity,

    /// Instead of a queue load, measure idempotency keys (docs/extensions.md): --producers loops, for --duration or --messages cycles, each claiming a new key (ClaimIdempotencyKey, which must answer CLAIMED) and completing it (CompleteIdempotencyKey), and every tenth cycle claiming a completed key again (which must answer COMPLETED with its result). Reports claims/s, requests/s, the claim latency and, with --server-pid, the server's CPU per 1,000 claims.
    #[arg(long, conflicts_with_all = ["null_server", "wake_probes", "sync_probe", "push", "fanout", "fair", "fifo", "rate", "queues"])]
    pub idempotency: bool,

    /// With --fanout: subscriptions deliver raw (RawMessageDelivery) instead of in SNS's signed envelope.
    #[arg(long, requires = "fanout")]
    pub raw_delivery: bool,

    /// With --push, --fanout or --idempotency: the server's process id, whose CPU time (from /proc/PID/stat) is reported.
    #[arg(long, value_name = "PID", requires = "server_measured")]
    pub server_pid: Option<u32>,

    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,

    /// Run the null SQS server instead of a load: it parses each request and answers canned, valid responses, to measure the HTTP/JSON ceiling of the machine.
    #[arg(long)]
    pub null_server: bool,

    /// Null server only: address and port to listen on (port 0 picks a free one, printed on stdout).
    #[arg(
        long,
        value_name = "ADDR:PORT",
        default_value = "127.0.0.1:9325",
        requires = "null_server"
    )]
    pub bind: SocketAddr,
}

/// When the producers stop.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StopRule {
    /// After this long.
    Duration(Duration),
    /// After this many messages in total.
    Messages(u64),
}

impl BenchArgs {
    /// When the producers stop, from `--duration` / `--messages`.
    pub fn stop_rule(&self) -> StopRule {
        match (self.messages, self.duration) {
            (Some(n), _) => StopRule::Messages(n),
            (None, secs) => {
                StopRule::Duration(Duration::from_secs(secs.unwrap_or(DEFAULT_DURATION_SECS)))
            }
        }
    }
}

/// What `--fair`'s loads are shares of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FairCapacity {
    /// The consumers' throughput on a backlog, measured first.
    Measured,
    /// Their work time alone: consumers over the time per message.
    Work,
}

//! `sluice bench`: a load generator for any SQS endpoint (JSON 1.0 protocol),
//! and a null SQS server that measures the machine's HTTP/JSON ceiling.
//!
//! A run creates its queues, starts producers (SendMessageBatch) and
//! consumers (ReceiveMessage, then DeleteMessageBatch), stops the producers
//! after a duration or a message count, lets consumers drain what was
//! acknowledged (bounded), and reports throughput, latency percentiles and,
//! unless the endpoint is the null server, lost and duplicate messages.
//! `--wake-probes` and `--sync-probe` measure a long poll's wake-up and the
//! disk's sync instead of a load; `--push` a push consumer's deliveries.

pub mod args;
pub mod body;
pub mod cpu;
pub mod error;
pub mod fair;
pub mod fanout;
pub mod idempotency;
pub mod latency;
pub mod load;
pub mod null_server;
pub mod push;
pub mod push_handler;
mod receive_view;
pub mod report;
pub mod sync_probe;
pub mod tracker;
pub mod wake;

use std::time::Duration;

pub use args::BenchArgs;
pub use error::BenchError;

use load::Plan;
use report::Report;
use sluice_client::sqs::PurgeQueueRequest;
use sluice_client::{Client, ClientOptions};

/// Runs `sluice bench` with `args`: the null server, or a load and its report.
///
/// Fails (so the process exits non-zero) when the queues cannot be prepared
/// (a server without FIFO support, for one), when no send was acknowledged,
/// or when acknowledged messages were lost.
pub fn run(args: BenchArgs) -> Result<(), BenchError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|source| BenchError::Io {
            context: "cannot start the async runtime".into(),
            source,
        })?;
    if args.null_server {
        return runtime.block_on(null_server::serve(args.bind));
    }
    if let Some(dir) = &args.sync_probe {
        let report =
            sync_probe::probe(dir, sync_probe::SYNCS).map_err(|source| BenchError::Io {
                context: format!("cannot probe the disk's syncs in {}", dir.display()),
                source,
            })?;
        return print_report(args.json, &report, report.table());
    }
    runtime.block_on(bench(args))
}

async fn bench(args: BenchArgs) -> Result<(), BenchError> {
    if let Some(rate) = args.rate
        && !(rate.is_finite() && rate > 0.0)
    {
        return Err(BenchError::Usage(format!(
            "--rate must be a positive number of messages per second, got {rate}"
        )));
    }
    if args.push {
        return push(&args).await;
    }
    if args.idempotency {
        let client = client_for(&args, &args.endpoint, args.producers as usize)?;
        let plan = idempotency::IdempotencyPlan {
            producers: args.producers,
            stop: args.stop_rule(),
            server_pid: args.server_pid,
        };
        let report = idempotency::run(&client, plan).await?;
        return print_report(args.json, &report, report.table());
    }
    let workers = (args.producers + args.consumers) as usize;
    let client = client_for(&args, &args.endpoint, workers)?;

    let fifo_attributes: &[(&str, &str)] = if args.fifo {
        &[("FifoQueue", "true")]
    } else {
        &[]
    };
    let mut queue_urls = Vec::new();
    let mut null_server = false;
    for name in queue_names(&args) {
        let created = client
            .create_queue(&name, fifo_attributes)
            .await
            .map_err(|source| BenchError::Setup {
                queue: name.clone(),
                source,
            })?;
        null_server |= created.null_server;
        if args.purge {
            let purge = PurgeQueueRequest {
                queue_url: Some(created.url.clone()),
            };
            client
                .call(&purge)
                .await
                .map_err(|source| BenchError::Setup {
                    queue: name.clone(),
                    source,
                })?;
        }
        queue_urls.push(created.url);
    }

    if args.fanout {
        return fanout(&args, &client, queue_urls).await;
    }
    if args.fair {
        if !(args.fair_work_ms.is_finite() && args.fair_work_ms >= 0.1) {
            return Err(BenchError::Usage(format!(
                "--fair-work-ms must be at least 0.1, got {}",
                args.fair_work_ms
            )));
        }
        let plan = fair::FairPlan {
            queue: args.queue.clone(),
            consumers: args.consumers,
            work: Duration::from_secs_f64(args.fair_work_ms / 1000.0),
            receive_batch: args.batch_size,
            phase: Duration::from_secs(args.duration.unwrap_or(DEFAULT_FAIR_PHASE_SECS)),
            measure_capacity: args.fair_capacity == args::FairCapacity::Measured,
        };
        if !args.json {
            eprintln!(
                "sluice bench: fair queue dwell time, four phases of {} s on {} ...",
                plan.phase.as_secs(),
                args.endpoint
            );
        }
        let report = fair::run(&client, &plan).await?;
        return print_report(args.json, &report, report.table());
    }
    if let Some(probes) = args.wake_probes {
        return wake_probes(&args, &client, &queue_urls[0], null_server, probes).await;
    }

    let verify = !args.no_verify && !null_server;
    let verification = if null_server {
        "disabled: the endpoint is sluice's null server, whose receives return canned messages"
            .to_string()
    } else if args.no_verify {
        "disabled by --no-verify".to_string()
    } else {
        "every acknowledged message must be received and deleted (ids in the bodies)".to_string()
    };
    let plan = Plan {
        queue_urls,
        message_size: args.message_size as usize,
        batch_size: args.batch_size,
        producers: args.producers,
        consumers: args.consumers,
        stop: args.stop_rule(),
        rate: args.rate,
        wait_time_seconds: args.wait_time_seconds,
        drain: Duration::from_secs(args.drain_seconds),
        fifo_groups: args.fifo.then_some(args.groups),
        verify,
        paced_consumers: null_server,
    };
    if !args.json {
        eprintln!(
            "sluice bench: loading {}{} ...",
            args.endpoint,
            if null_server { " (null server)" } else { "" }
        );
    }
    let run_id = uuid::Uuid::new_v4().simple().to_string()[..8].to_string();
    let outcome = load::run(client, plan, run_id).await;
    let report = Report::new(&args, null_server, verification, &outcome);
    print_report(args.json, &report, report.table())?;

    if outcome.sent == 0 {
        let why = outcome
            .first_errors
            .first()
            .map(|e| format!(" (first error: {e})"))
            .unwrap_or_default();
        return Err(BenchError::NothingSent(why));
    }
    match outcome.verdict {
        Some(v) if v.lost > 0 => Err(BenchError::Lost { lost: v.lost }),
        _ => Ok(()),
    }
}

/// `--push`: a push consumer's delivery rate and CPU time.
async fn push(args: &BenchArgs) -> Result<(), BenchError> {
    let client = client_for(args, &args.endpoint, args.producers as usize)?;
    let plan = push::PushPlan {
        queue: args.queue.clone(),
        messages: args.messages.unwrap_or(PUSH_MESSAGES),
        message_size: args.message_size as usize,
        batch_size: args.batch_size,
        max_concurrency: args.push_concurrency,
        producers: args.producers,
        server_pid: args.server_pid,
        purge: args.purge,
        stall: Duration::from_secs(args.drain_seconds),
    };
    if !args.json {
        eprintln!(
            "sluice bench: filling {} with {} messages, then delivering them to a handler ...",
            args.queue, plan.messages
        );
    }
    let report = push::run(&client, &plan).await?;
    print_report(args.json, &report, report.table())?;
    if report.delivered < plan.messages || report.left_in_queue > 0 {
        return Err(BenchError::Undelivered {
            delivered: report.delivered,
            messages: plan.messages,
            left: report.left_in_queue,
        });
    }
    Ok(())
}

/// Each `--fair` phase's length without `--duration`.
const DEFAULT_FAIR_PHASE_SECS: u64 = 10;

/// The backlog of `--push` without `--messages`.
const PUSH_MESSAGES: u64 = 100_000;

/// A client of `endpoint` keeping `connections` idle connections, signing
/// with the credentials the flags and environment give.
fn client_for(args: &BenchArgs, endpoint: &str, connections: usize) -> Result<Client, BenchError> {
    let options = ClientOptions {
        connections,
        signing: args.connection.signing()?,
        ca_file: args.connection.ca_file.clone(),
        // Emulators route on the credential scope (see the constant).
        placeholder_authorization: true,
        request_timeout: REQUEST_TIMEOUT,
    };
    Ok(Client::new(endpoint, &options)?)
}

/// How long any request may take beyond its long-poll wait.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// `--wake-probes`: the long-poll wake-up measurement instead of a load.
/// `--fanout`: the topic over the run's queues, its publishes, the report.
async fn fanout(args: &BenchArgs, client: &Client, urls: Vec<String>) -> Result<(), BenchError> {
    let mut queues = Vec::with_capacity(urls.len());
    for url in urls {
        let arn = client.queue_arn(&url).await?;
        queues.push((url, arn));
    }
    let plan = fanout::FanoutPlan {
        topic: format!("{}-topic", args.queue),
        queues,
        message_size: args.message_size as usize,
        batch_size: args.batch_size,
        producers: args.producers,
        stop: args.stop_rule(),
        raw: args.raw_delivery,
        server_pid: args.server_pid,
    };
    let report = fanout::run(client, plan).await?;
    print_report(args.json, &report, report.table())
}

async fn wake_probes(
    args: &BenchArgs,
    client: &Client,
    url: &str,
    null_server: bool,
    probes: u64,
) -> Result<(), BenchError> {
    if null_server {
        return Err(BenchError::Usage(
            "--wake-probes needs a real queue: the null server answers receives at once".into(),
        ));
    }
    let other_node = match &args.wake_send_endpoint {
        Some(endpoint) => Some(client_for(args, endpoint, 1)?),
        None => None,
    };
    let sender = other_node.as_ref().unwrap_or(client);
    let report = wake::probe(client, sender, url, args.fifo, probes)
        .await
        .map_err(|source| BenchError::Setup {
            queue: url.to_string(),
            source,
        })?;
    print_report(args.json, &report, report.table())?;
    if report.missed > 0 {
        return Err(BenchError::Usage(format!(
            "{} probe(s) did not get their own message back: is another consumer on {url}?",
            report.missed
        )));
    }
    Ok(())
}

/// Prints a report: one JSON object with `--json`, else its table.
fn print_report(
    json: bool,
    report: &impl serde::Serialize,
    table: String,
) -> Result<(), BenchError> {
    if json {
        let json = serde_json::to_string(report).map_err(|e| BenchError::Io {
            context: "cannot write the report".into(),
            source: std::io::Error::other(e),
        })?;
        println!("{json}");
    } else {
        print!("{table}");
    }
    Ok(())
}

/// The queue names of a run: the name alone, or NAME-0 .. NAME-{N-1}; FIFO
/// names end in `.fifo`.
fn queue_names(args: &BenchArgs) -> Vec<String> {
    let base = if args.fifo {
        args.queue.strip_suffix(".fifo").unwrap_or(&args.queue)
    } else {
        &args.queue
    };
    let suffix = if args.fifo { ".fifo" } else { "" };
    if args.queues == 1 {
        vec![format!("{base}{suffix}")]
    } else {
        (0..args.queues)
            .map(|i| format!("{base}-{i}{suffix}"))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        bench: BenchArgs,
    }

    fn parse(flags: &[&str]) -> BenchArgs {
        Cli::try_parse_from(std::iter::once("bench").chain(flags.iter().copied()))
            .map(|c| c.bench)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn queue_names_spread_and_fifo() {
        assert_eq!(queue_names(&parse(&[])), ["sluice-bench"]);
        assert_eq!(
            queue_names(&parse(&["--queue", "q", "--queues", "2"])),
            ["q-0", "q-1"]
        );
        assert_eq!(
            queue_names(&parse(&["--queue", "q.fifo", "--fifo"])),
            ["q.fifo"]
        );
        assert_eq!(
            queue_names(&parse(&["--queue", "q", "--fifo", "--queues", "2"])),
            ["q-0.fifo", "q-1.fifo"]
        );
    }

    #[test]
    fn flags_are_bounded() {
        let bad = |flags: &[&str]| {
            Cli::try_parse_from(std::iter::once("bench").chain(flags.iter().copied())).is_err()
        };
        assert!(bad(&["--batch-size", "11"]));
        assert!(bad(&["--batch-size", "0"]));
        assert!(bad(&["--duration", "5", "--messages", "10"]));
        assert!(bad(&["--groups", "3"]), "--groups needs --fifo");
        assert!(
            bad(&["--bind", "127.0.0.1:0"]),
            "--bind needs --null-server"
        );
        assert!(bad(&["--wait-time-seconds", "21"]));
        assert!(bad(&["--push-concurrency", "4"]), "needs --push");
        assert!(bad(&["--server-pid", "1"]), "needs --push or --fanout");
        assert!(!bad(&["--fanout", "--server-pid", "1"]));
        assert!(!bad(&["--push", "--server-pid", "1"]));
        assert!(bad(&["--raw-delivery"]), "needs --fanout");
        assert!(bad(&["--fanout", "--push"]));
        assert!(!bad(&["--idempotency", "--server-pid", "1"]));
        assert!(bad(&["--idempotency", "--fanout"]));
        assert!(bad(&["--fanout", "--fifo"]));
        assert!(bad(&["--push", "--push-concurrency", "1"]));
        assert!(bad(&["--push", "--fifo"]));
        assert!(bad(&["--push", "--duration", "5"]));
        assert_eq!(parse(&["--push"]).push_concurrency, 10);
        assert_eq!(
            parse(&["--messages", "100"]).stop_rule(),
            args::StopRule::Messages(100)
        );
        assert_eq!(
            parse(&[]).stop_rule(),
            args::StopRule::Duration(Duration::from_secs(10))
        );
    }
}

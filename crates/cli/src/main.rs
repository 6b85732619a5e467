//! `sluice`: a self-hosted message queue server that speaks the Amazon SQS API.

mod admin;
mod alarms_cmd;
mod archive_dir;
mod auth_config;
mod backup_cmd;
mod backup_dir;
mod config;
mod consumers_cmd;
mod declare;
mod dlq;
mod doctor;
mod encryption_config;
mod exposition;
mod inventory;
mod keys_cmd;
mod listeners;
mod memory;
mod serve;
mod signals;
mod stats;
mod stats_consumers;
mod table;
mod timefmt;
mod tls_config;

use clap::{Parser, Subcommand};

/// A self-hosted message queue server that speaks the Amazon SQS API.
///
/// Point any SQS client at it (AWS CLI, boto3, aws-sdk-*) with an endpoint
/// URL and any credentials.
#[derive(Parser)]
#[command(
    name = "sluice",
    version = concat!(env!("CARGO_PKG_VERSION"), " (", env!("SLUICE_COMMIT"), ")"),
    about,
    long_about
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the server (durable storage in ./sluice-data by default, or
    /// PostgreSQL shared by several nodes with --postgres).
    Serve(serve::ServeArgs),
    /// Load-test an SQS endpoint (throughput, latency, lost and duplicate
    /// messages), or run the null SQS server that measures the HTTP/JSON
    /// ceiling of the machine (--null-server).
    Bench(sluice_bench::BenchArgs),
    /// Inspect and operate the dead-letter queues of a running server:
    /// list, peek, show, redrive, move tasks, export and import.
    Dlq(dlq::DlqArgs),
    /// Check every queue of a running server (or of a config file) against
    /// the known DLQ pitfalls; findings with severity and the fix.
    /// Exit 0: nothing at or above --fail-on; 1: findings; 2: error.
    Doctor(doctor::DoctorArgs),
    /// Queue depths, messages in flight and delayed, oldest message age,
    /// and send/receive/delete rates of a running server, then each push
    /// consumer's state, batches in flight, throughput, failures and
    /// handler time; --watch redraws.
    Stats(stats::StatsArgs),
    /// A server's alarms: list them with their state, show one with its
    /// state history, define (put) and delete them (see docs/alarms.md).
    Alarms(alarms_cmd::AlarmsArgs),
    /// A server's push consumers: list them with their state, create,
    /// update, pause, resume and delete them (see docs/consumers.md).
    Consumers(consumers_cmd::ConsumersArgs),
    /// Back up a running embedded server's data directory, online, into a
    /// new directory under the server's --backup-dir that a server can
    /// start on (see docs/reliability.md).
    Backup(backup_cmd::BackupArgs),
    /// The keyring file of encryption at rest: create one, rotate its
    /// active key, retire old keys, list them. Works on the file alone;
    /// servers read it when they start (--encryption-key-file) and again
    /// at SIGHUP.
    Keys(keys_cmd::KeysArgs),
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        // Colours only on a terminal: a log file or journald gets text.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    match cli.command {
        Command::Serve(args) => serve::run(args),
        Command::Bench(args) => Ok(sluice_bench::run(args)?),
        Command::Dlq(args) => admin::finish(dlq::run(args), admin::EXIT_ERROR),
        Command::Doctor(args) => admin::finish(doctor::run(args), doctor::EXIT_ERROR),
        Command::Stats(args) => admin::finish(stats::run(args), admin::EXIT_ERROR),
        Command::Alarms(args) => admin::finish(alarms_cmd::run(args), admin::EXIT_ERROR),
        Command::Consumers(args) => admin::finish(consumers_cmd::run(args), admin::EXIT_ERROR),
        Command::Backup(args) => admin::finish(backup_cmd::run(args), admin::EXIT_ERROR),
        Command::Keys(args) => admin::finish(async { keys_cmd::run(args) }, admin::EXIT_ERROR),
    }
}

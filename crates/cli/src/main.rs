//! `sluice`: a self-hosted message queue server that speaks the Amazon SQS API.

mod config;
mod serve;

use clap::{Parser, Subcommand};

/// A self-hosted message queue server that speaks the Amazon SQS API.
///
/// Point any SQS client at it (AWS CLI, boto3, aws-sdk-*) with an endpoint
/// URL and any credentials.
#[derive(Parser)]
#[command(name = "sluice", version, about, long_about)]
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
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    match cli.command {
        Command::Serve(args) => serve::run(args),
        Command::Bench(args) => Ok(sluice_bench::run(args)?),
    }
}

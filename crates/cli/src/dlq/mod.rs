//! `sluice dlq`: inspect and operate dead-letter queues of a running
//! server: list, peek, show, redrive, move tasks, export and import.

pub mod browse;
mod filter;
mod list;
mod redrive;
mod transfer;

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::admin::Connection;
pub use filter::FilterArgs;

/// `sluice dlq …`.
#[derive(Args, Debug)]
pub struct DlqArgs {
    #[command(flatten)]
    connection: Connection,
    #[command(subcommand)]
    command: DlqCommand,
}

#[derive(Subcommand, Debug)]
enum DlqCommand {
    /// Every dead-letter queue (a queue some RedrivePolicy targets) with its
    /// depth, messages in flight, oldest message age, retention and sources.
    List(ListArgs),
    /// Show a queue's messages without receiving them (no receive count or
    /// visibility change), in queue order, with filters.
    Peek(PeekArgs),
    /// One message whole: body, attributes and where it came from
    /// (source queue, moved-at, receive count and times, last failure
    /// reason, replay count).
    Show(ShowArgs),
    /// Move messages out of a DLQ: back to their source queues or to --to,
    /// only those matching the filters, at most --max, at --rate per
    /// second; --dry-run shows what would move. With --task (and no
    /// filters) starts a message move task instead.
    Redrive(RedriveArgs),
    /// Message move tasks of one DLQ, or of every DLQ.
    Tasks(TasksArgs),
    /// Cancel a running message move task.
    Cancel(CancelArgs),
    /// Write a queue's messages as JSON Lines, one message per line,
    /// without receiving or changing them (for archive and audit).
    Export(ExportArgs),
    /// Send the messages of a JSON Lines export to a queue (batches of 10,
    /// attributes and FIFO group ids kept).
    Import(ImportArgs),
}

/// `dlq list`.
#[derive(Args, Debug)]
pub struct ListArgs {
    /// Print one JSON document instead of a table.
    #[arg(long)]
    json: bool,
}

/// `dlq peek`.
#[derive(Args, Debug)]
pub struct PeekArgs {
    /// The queue: name, URL or ARN.
    queue: String,
    #[command(flatten)]
    filter: FilterArgs,
    /// Show at most this many messages.
    #[arg(long, default_value_t = 10, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    limit: u32,
    /// Show every matching message, page after page (ignores --limit).
    #[arg(long)]
    all: bool,
    /// Print one JSON document instead of a table.
    #[arg(long)]
    json: bool,
}

/// `dlq show`.
#[derive(Args, Debug)]
pub struct ShowArgs {
    /// The queue: name, URL or ARN.
    queue: String,
    /// The message id (as `dlq peek` shows it).
    message_id: String,
    /// Print one JSON document instead of text.
    #[arg(long)]
    json: bool,
}

/// `dlq redrive`.
#[derive(Args, Debug)]
pub struct RedriveArgs {
    /// The dead-letter queue: name, URL or ARN.
    queue: String,
    /// Destination queue (name, URL or ARN) instead of each message's own
    /// source queue.
    #[arg(long, value_name = "QUEUE")]
    to: Option<String>,
    #[command(flatten)]
    filter: FilterArgs,
    /// Move at most this many messages [default: 100; with --rate: all].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    max: Option<u64>,
    /// Move at most this many messages per second (in steps of one second).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    rate: Option<u32>,
    /// Show what would move and what would be refused; move nothing.
    #[arg(long)]
    dry_run: bool,
    /// Refuse messages already replayed this many times (rule X3).
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=1000))]
    max_replays: u32,
    /// Start a message move task (StartMessageMoveTask: every message, at
    /// --rate) instead of a selective redrive; no filters, --max or --dry-run.
    #[arg(long, conflicts_with_all = ["max", "dry_run", "max_replays"])]
    task: bool,
    /// Print one JSON document instead of text.
    #[arg(long)]
    json: bool,
}

/// `dlq tasks`.
#[derive(Args, Debug)]
pub struct TasksArgs {
    /// Only this dead-letter queue (name, URL or ARN).
    queue: Option<String>,
    /// Print one JSON document instead of a table.
    #[arg(long)]
    json: bool,
}

/// `dlq cancel`.
#[derive(Args, Debug)]
pub struct CancelArgs {
    /// The task handle, as `dlq tasks` shows it.
    task_handle: String,
    /// Print one JSON document instead of text.
    #[arg(long)]
    json: bool,
}

/// `dlq export`.
#[derive(Args, Debug)]
#[command(after_help = "\
Each line is one message as PeekMessages shows it: MessageId, Body, MD5OfBody,
State, ReceiveCount, SentTimestamp, FirstReceiveTimestamp, LastReceiveTimestamp,
MessageGroupId (FIFO), FailureReason, Attributes (system attributes, provenance
included) and MessageAttributes (DataType with StringValue, or BinaryValue in
base64). `sluice dlq import` reads the same format.")]
pub struct ExportArgs {
    /// The queue: name, URL or ARN.
    queue: String,
    /// Write here instead of to standard output.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    #[command(flatten)]
    filter: FilterArgs,
}

/// `dlq import`.
#[derive(Args, Debug)]
#[command(after_help = "\
Sends Body, MessageAttributes, the AWSTraceHeader system attribute and
MessageGroupId. Into a FIFO queue, MessageDeduplicationId is the exported one
or else the original MessageId, so importing the same file twice within five
minutes adds nothing. Every line is checked before the first send. Exit status
1 when any message was refused (each listed with its line).")]
pub struct ImportArgs {
    /// The queue to send to: name, URL or ARN.
    queue: String,
    /// Read this JSON Lines file instead of standard input.
    #[arg(long = "in", value_name = "FILE")]
    input: Option<PathBuf>,
    /// Print one JSON document instead of text.
    #[arg(long)]
    json: bool,
}

/// Runs a `dlq` command; returns the exit code.
pub async fn run(args: DlqArgs) -> anyhow::Result<u8> {
    let client = args.connection.client()?;
    match args.command {
        DlqCommand::List(a) => list::run(&client, a).await,
        DlqCommand::Peek(a) => browse::peek(&client, a).await,
        DlqCommand::Show(a) => browse::show(&client, a).await,
        DlqCommand::Redrive(a) => redrive::run(&client, a).await,
        DlqCommand::Tasks(a) => redrive::tasks(&client, a).await,
        DlqCommand::Cancel(a) => redrive::cancel(&client, a).await,
        DlqCommand::Export(a) => transfer::export(&client, a).await,
        DlqCommand::Import(a) => transfer::import(&client, a).await,
    }
}

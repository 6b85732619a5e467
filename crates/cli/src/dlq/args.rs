//! The arguments of each `sluice dlq` subcommand, kept out of `mod.rs` so
//! that the subcommands' modules read them without importing the module
//! that dispatches to them.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::filter::FilterArgs;

/// `dlq list`.
#[derive(Args, Debug)]
pub struct ListArgs {
    /// Print one JSON document instead of a table.
    #[arg(long)]
    pub(super) json: bool,
}

/// `dlq peek`.
#[derive(Args, Debug)]
pub struct PeekArgs {
    /// The queue: name, URL or ARN.
    pub(super) queue: String,
    #[command(flatten)]
    pub(super) filter: FilterArgs,
    /// Show at most this many messages.
    #[arg(long, default_value_t = 10, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub(super) limit: u32,
    /// Show every matching message, page after page (ignores --limit).
    #[arg(long)]
    pub(super) all: bool,
    /// Print one JSON document instead of a table.
    #[arg(long)]
    pub(super) json: bool,
}

/// `dlq show`.
#[derive(Args, Debug)]
pub struct ShowArgs {
    /// The queue: name, URL or ARN.
    pub(super) queue: String,
    /// The message id (as `dlq peek` shows it).
    pub(super) message_id: String,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub(super) json: bool,
}

/// `dlq redrive`.
#[derive(Args, Debug)]
pub struct RedriveArgs {
    /// The dead-letter queue: name, URL or ARN.
    pub(super) queue: String,
    /// Destination queue (name, URL or ARN) instead of each message's own
    /// source queue.
    #[arg(long, value_name = "QUEUE")]
    pub(super) to: Option<String>,
    #[command(flatten)]
    pub(super) filter: FilterArgs,
    /// Move at most this many messages [default: 100; with --rate: all].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub(super) max: Option<u64>,
    /// Move at most this many messages per second (in steps of one second).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub(super) rate: Option<u32>,
    /// Show what would move and what would be refused; move nothing.
    #[arg(long)]
    pub(super) dry_run: bool,
    /// Refuse messages already replayed this many times (rule X3).
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub(super) max_replays: u32,
    /// Start a message move task (StartMessageMoveTask: every message, at
    /// --rate) instead of a selective redrive; no filters, --max or --dry-run.
    #[arg(long, conflicts_with_all = ["max", "dry_run", "max_replays"])]
    pub(super) task: bool,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub(super) json: bool,
}

/// `dlq tasks`.
#[derive(Args, Debug)]
pub struct TasksArgs {
    /// Only this dead-letter queue (name, URL or ARN).
    pub(super) queue: Option<String>,
    /// Print one JSON document instead of a table.
    #[arg(long)]
    pub(super) json: bool,
}

/// `dlq cancel`.
#[derive(Args, Debug)]
pub struct CancelArgs {
    /// The task handle, as `dlq tasks` shows it.
    pub(super) task_handle: String,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub(super) json: bool,
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
    pub(super) queue: String,
    /// Write here instead of to standard output.
    #[arg(long, value_name = "FILE")]
    pub(super) out: Option<PathBuf>,
    #[command(flatten)]
    pub(super) filter: FilterArgs,
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
    pub(super) queue: String,
    /// Read this JSON Lines file instead of standard input.
    #[arg(long = "in", value_name = "FILE")]
    pub(super) input: Option<PathBuf>,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub(super) json: bool,
}

/// What every `dlq archive` command's help ends with (a macro, so that
/// `concat!` can add to it).
macro_rules! archive_help {
    () => {
        "\
The archive holds the messages that reached their queue's retention on a queue
with SluiceArchiveExpired=true; `sluice serve --archive-dir DIR` keeps it. It
outlives the queue: a deleted queue's archive can still be listed, and restored
with --to. See docs/failure-handling.md."
    };
}

/// `dlq archive`.
#[derive(Args, Debug)]
#[command(after_help = archive_help!())]
pub struct ArchiveArgs {
    #[command(subcommand)]
    pub(super) command: ArchiveCommand,
}

/// `dlq archive …`.
#[derive(Subcommand, Debug)]
pub(super) enum ArchiveCommand {
    /// A queue's archived messages, oldest first, with filters: sent,
    /// archived and restored times, receive count, failure class, body.
    List(ArchiveListArgs),
    /// One archived message whole: body, attributes, where it came from,
    /// its last failure and when it was archived and restored.
    Show(ArchiveShowArgs),
    /// Send archived messages back to their queue (or to --to) with their
    /// message ids, counted as one more replay; the archive keeps them and
    /// notes the restore.
    Restore(ArchiveRestoreArgs),
}

/// `dlq archive list`.
#[derive(Args, Debug)]
#[command(after_help = archive_help!())]
pub struct ArchiveListArgs {
    /// The queue (name, URL or ARN); it may have been deleted since.
    pub(super) queue: String,
    #[command(flatten)]
    pub(super) filter: FilterArgs,
    /// Show at most this many messages.
    #[arg(long, default_value_t = 100, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub(super) max: u32,
    /// Print one JSON document instead of a table: {"Messages": [...]} as
    /// ListArchivedMessages answers them.
    #[arg(long)]
    pub(super) json: bool,
}

/// `dlq archive show`.
#[derive(Args, Debug)]
#[command(after_help = archive_help!())]
pub struct ArchiveShowArgs {
    /// The queue (name, URL or ARN); it may have been deleted since.
    pub(super) queue: String,
    /// The message id (as `dlq archive list` shows it).
    pub(super) message_id: String,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub(super) json: bool,
}

/// `dlq archive restore`.
#[derive(Args, Debug)]
#[command(after_help = concat!("\
Without --id, every archived message not restored before is restored; with
--id, the named ones are, even when restored before. Exit status 1 when an --id
is not in the archive (each one listed).

", archive_help!()))]
pub struct ArchiveRestoreArgs {
    /// The queue whose archive to restore from (name, URL or ARN); it may
    /// have been deleted since, then give --to.
    pub(super) queue: String,
    /// Restore only this message (repeat for more).
    #[arg(long = "id", value_name = "ID")]
    pub(super) ids: Vec<String>,
    /// Send to this queue (name, URL or ARN) instead of the archived
    /// messages' own queue.
    #[arg(long, value_name = "QUEUE")]
    pub(super) to: Option<String>,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub(super) json: bool,
}

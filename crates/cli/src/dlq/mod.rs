//! `sluice dlq`: inspect and operate dead-letter queues of a running
//! server: list, peek, show, redrive, move tasks, export and import, and
//! the archive of expired messages.

mod archive;
mod args;
pub mod browse;
mod filter;
mod list;
mod redrive;
mod transfer;

use clap::{Args, Subcommand};

use crate::admin::Connection;
use args::{
    ArchiveArgs, CancelArgs, ExportArgs, ImportArgs, ListArgs, PeekArgs, RedriveArgs, ShowArgs,
    TasksArgs,
};
pub use filter::MessageFilter;

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
    /// The archive of a queue's expired messages (kept by `sluice serve
    /// --archive-dir` for queues with SluiceArchiveExpired=true): list,
    /// show and restore them. See docs/failure-handling.md.
    Archive(ArchiveArgs),
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
        DlqCommand::Archive(a) => archive::run(&client, a).await,
    }
}

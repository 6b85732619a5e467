//! `sluice backup`: an online backup of a running embedded server's data
//! directory, through the CreateBackup action (rules D7, D8).

use std::time::Duration;

use clap::Args;
use sluice_client::sluice::CreateBackupRequest;

use crate::admin::{Connection, outln, print_json};

/// `sluice backup NAME`.
#[derive(Args, Debug)]
#[command(after_help = "\
The server writes the backup itself, and only under the backup directory it \
was started with (`sluice serve --backup-dir DIR`, or backup_dir in its config \
file); a server without one refuses. NAME is a new directory inside it, \
relative to it (`nightly/2026-05-01`: its parent must exist) or absolute inside \
it; `..` and paths leading out of it are refused. The backup appears under \
NAME only once complete and synced; while it runs it is written as a hidden \
.NAME.partial beside it, which a server refuses to start on. To restore: stop \
the server, move its data directory aside, and start `sluice serve --data-dir` \
on the backup.

Only the embedded engine backs up this way: with --postgres, back up the \
database with pg_dump; an --in-memory server has nothing to back up.")]
pub struct BackupArgs {
    #[command(flatten)]
    connection: Connection,
    /// The new directory to write the backup into, inside the server's
    /// backup directory.
    #[arg(value_name = "NAME")]
    name: String,
    /// How long to wait for the backup to finish, in seconds.
    #[arg(long, default_value_t = 3600, value_name = "SECONDS")]
    timeout: u64,
    /// Print the CreateBackup answer as JSON.
    #[arg(long)]
    json: bool,
}

/// Runs `sluice backup`.
pub async fn run(args: BackupArgs) -> anyhow::Result<u8> {
    let client = args
        .connection
        .client_with_timeout(Duration::from_secs(args.timeout))?;
    let input = CreateBackupRequest {
        directory: Some(args.name),
    };
    let answer = client.call(&input).await?;
    if args.json {
        print_json(&answer);
    } else {
        outln!(
            "backup complete: {} ({} files, {} bytes)",
            answer.directory.as_deref().unwrap_or_default(),
            answer.files.unwrap_or(0),
            answer.bytes.unwrap_or(0)
        );
    }
    Ok(0)
}

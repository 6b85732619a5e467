//! `sluice backup`: an online backup of a running embedded server's data
//! directory, through the CreateBackup action (rule D3).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use serde_json::json;

use crate::admin::{Connection, outln, print_json};

/// `sluice backup DIR`.
#[derive(Args, Debug)]
#[command(after_help = "\
The server writes the backup itself, so DIR is a path on the server's host \
(a relative DIR is taken from this command's working directory). DIR must not \
exist; it appears only once the backup is complete and synced, and while the \
backup runs it is written as a hidden .DIR.partial beside it, which a server \
refuses to start on. To restore: stop the server, move its data directory \
aside, and start `sluice serve --data-dir DIR`.

Only the embedded engine backs up this way: with --postgres, back up the \
database with pg_dump; an --in-memory server has nothing to back up.")]
pub struct BackupArgs {
    #[command(flatten)]
    connection: Connection,
    /// The new directory to write the backup into, on the server's host.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// How long to wait for the backup to finish, in seconds.
    #[arg(long, default_value_t = 3600, value_name = "SECONDS")]
    timeout: u64,
    /// Print the CreateBackup answer as JSON.
    #[arg(long)]
    json: bool,
}

/// Runs `sluice backup`.
pub async fn run(args: BackupArgs) -> anyhow::Result<u8> {
    let dir = if args.dir.is_absolute() {
        args.dir
    } else {
        std::env::current_dir()
            .context("the working directory")?
            .join(args.dir)
    };
    let client = args
        .connection
        .client_with_timeout(Duration::from_secs(args.timeout))?;
    let answer = client
        .sluice(
            "CreateBackup",
            json!({ "Directory": dir.display().to_string() }),
        )
        .await?;
    if args.json {
        print_json(&answer);
    } else {
        let field = |name: &str| answer.get(name).and_then(|v| v.as_u64()).unwrap_or(0);
        outln!(
            "backup complete: {} ({} files, {} bytes)",
            answer
                .get("Directory")
                .and_then(|v| v.as_str())
                .unwrap_or(""),
            field("Files"),
            field("Bytes")
        );
    }
    Ok(0)
}

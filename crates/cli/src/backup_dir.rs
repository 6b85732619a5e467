//! `--backup-dir` / `backup_dir`: the one directory online backups may be
//! written under (rule D8).

use std::path::Path;

use anyhow::Context;
use sluice_server::backup_root::BackupRoot;

/// The backup directory given, created if missing and canonical; `None`
/// when none is given (backups refused). `data_dir` is the durable
/// engine's data directory, `None` for an engine without online backups
/// (in memory, PostgreSQL), whose refusal CreateBackup then answers.
pub fn backup_root(
    given: Option<&Path>,
    data_dir: Option<&Path>,
) -> anyhow::Result<Option<BackupRoot>> {
    let Some(dir) = given else {
        return Ok(None);
    };
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the backup directory {}", dir.display()))?;
    let root =
        BackupRoot::new(dir).with_context(|| format!("the backup directory {}", dir.display()))?;
    match data_dir {
        Some(data) => {
            let data = std::fs::canonicalize(data)
                .with_context(|| format!("the data directory {}", data.display()))?;
            // A backup kept inside what it copies would be lost with it,
            // and would be copied by the next backup.
            anyhow::ensure!(
                !root.path().starts_with(&data),
                "the backup directory {} must be outside the data directory {}",
                root.path().display(),
                data.display()
            );
            tracing::info!(backup_dir = %root.path().display(), "online backups allowed");
        }
        None => tracing::warn!(
            backup_dir = %root.path().display(),
            "backup_dir is set, but this server has no online backup (in memory, or \
             PostgreSQL: back its database up with pg_dump); CreateBackup refuses"
        ),
    }
    Ok(Some(root))
}

//! CreateBackup (sluice's own, rules D7 and D8): an online copy of the
//! embedded engine's data directory into a new directory under the
//! server's backup directory.

use serde_json::{Value, json};
use sluice_broker::Broker;
use sluice_core::{ErrorCode, SqsError};
use sluice_protocol::requests::{CreateBackupInput, required};

use crate::service::Service;

/// CreateBackup: answers once the backup is complete, synced and renamed
/// into place.
pub async fn create_backup<B: Broker>(
    svc: &Service<B>,
    input: CreateBackupInput,
) -> Result<Value, SqsError> {
    let Some(root) = &svc.config.backup_root else {
        return Err(SqsError::new(
            ErrorCode::UnsupportedOperation,
            "Backups are off on this server: start it with --backup-dir DIR (or backup_dir = \
             \"DIR\" in its config file) to allow backups into new directories under DIR.",
        ));
    };
    let directory = required(input.directory, "Directory")?;
    let dest = root.resolve(&directory)?;
    let report = svc.broker.backup(&dest).await?;
    Ok(json!({
        "Directory": report.directory,
        "Files": report.files,
        "Bytes": report.bytes,
        "AppliedLsn": report.applied_lsn,
    }))
}

//! CreateBackup (sluice's own, rules D7 and D8): an online copy of the
//! embedded engine's data directory into a new directory under the
//! server's backup directory.

use sluice_broker::Broker;
use sluice_core::{ErrorCode, SqsError};
use sluice_protocol::decode::required;
use sluice_protocol::sluice::{CreateBackupRequest, CreateBackupResult};

use crate::service::Service;

/// CreateBackup: answers once the backup is complete, synced and renamed
/// into place.
pub async fn create_backup<B: Broker>(
    svc: &Service<B>,
    input: CreateBackupRequest,
) -> Result<CreateBackupResult, SqsError> {
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
    Ok(CreateBackupResult {
        directory: Some(report.directory),
        files: Some(report.files as i64),
        bytes: Some(report.bytes as i64),
        applied_lsn: Some(report.applied_lsn as i64),
    })
}

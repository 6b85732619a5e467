//! CreateBackup (sluice's own, rule D3): an online copy of the embedded
//! engine's data directory into a new directory on the server's host.

use std::path::Path;

use serde::Deserialize;
use serde_json::{Value, json};
use sluice_broker::Broker;
use sluice_core::SqsError;
use sluice_protocol::requests::required;

use crate::service::Service;

/// CreateBackup's input.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct CreateBackupInput {
    /// Required: the new directory, an absolute path on the server's host.
    pub directory: Option<String>,
}

/// CreateBackup: answers once the backup is complete, synced and renamed
/// into place.
pub async fn create_backup<B: Broker>(
    svc: &Service<B>,
    input: CreateBackupInput,
) -> Result<Value, SqsError> {
    let directory = required(input.directory, "Directory")?;
    let report = svc.broker.backup(Path::new(&directory)).await?;
    Ok(json!({
        "Directory": report.directory,
        "Files": report.files,
        "Bytes": report.bytes,
        "AppliedLsn": report.applied_lsn,
    }))
}

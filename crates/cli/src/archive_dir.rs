//! `--archive-dir` / `archive_dir`: where messages that reach their
//! queue's retention are archived before they leave it (rule X8).

use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use sluice_archive::{Archive, ArchiveOptions};
use sluice_broker::Broker;

/// The archive in `dir`, created if missing and recovered from an
/// interrupted write; `None` when no directory is given. Segments older
/// than `retention_days` are deleted (kept for ever without it).
pub fn open_archive(
    dir: Option<&Path>,
    retention_days: Option<u32>,
) -> anyhow::Result<Option<Arc<Archive>>> {
    let Some(dir) = dir else {
        anyhow::ensure!(
            retention_days.is_none(),
            "archive_retention_days needs archive_dir"
        );
        return Ok(None);
    };
    let options = ArchiveOptions {
        node: node_name(),
        retention_ms: retention_days.map(|d| u64::from(d) * 24 * 3600 * 1000),
        ..ArchiveOptions::default()
    };
    let archive = Archive::open(dir, options)
        .with_context(|| format!("cannot open the archive directory {}", dir.display()))?;
    tracing::info!(archive_dir = %dir.display(), "expired messages of queues that keep them are archived");
    Ok(Some(Arc::new(archive)))
}

/// This node's name in segment file names, so that nodes sharing the
/// directory never write the same file: the host's name, stable across
/// restarts, so a node's next run recovers (and rotates) the segments the
/// last one left open.
fn node_name() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "node".to_string())
}

/// Warns of queues that keep what expires (rule X8) on a server started
/// without an archive: their expired messages wait, held, until a server
/// with `--archive-dir` archives them.
pub async fn warn_of_unarchived_queues<B: Broker>(broker: &B) {
    for name in broker.list_queues().await.unwrap_or_default() {
        if let Ok(meta) = broker.get_queue(&name).await
            && meta.config.archive_expired
        {
            tracing::warn!(
                queue = %name,
                "the queue keeps what expires (SluiceArchiveExpired) but this server has no \
                 --archive-dir: its expired messages are held until one archives them"
            );
        }
    }
}

//! `--archive-dir` / `archive_dir`: where messages that reach their
//! queue's retention are archived before they leave it (rule X8).

use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use sluice_archive::{Archive, ArchiveOptions};
use sluice_broker::Broker;
use sluice_config::ArchiveS3Decl;
use sluice_server::archive_upload::{ArchiveBucket, BucketSettings};

/// The archive in `dir`, created if missing and recovered from an
/// interrupted write; `None` when no directory is given. Segments older
/// than `retention_days` are deleted (kept for ever without it); segments
/// are rotated once `rotate_secs` old (an hour without it).
pub fn open_archive(
    dir: Option<&Path>,
    retention_days: Option<u32>,
    rotate_secs: Option<u64>,
) -> anyhow::Result<Option<Arc<Archive>>> {
    let Some(dir) = dir else {
        anyhow::ensure!(
            retention_days.is_none() && rotate_secs.is_none(),
            "archive_retention_days and archive_rotate_secs need archive_dir"
        );
        return Ok(None);
    };
    if let Some(secs) = rotate_secs {
        anyhow::ensure!(
            (1..=86_400).contains(&secs),
            "archive_rotate_secs must be between 1 and 86400, not {secs}"
        );
    }
    let defaults = ArchiveOptions::default();
    let options = ArchiveOptions {
        node: node_name(),
        retention_ms: retention_days.map(|d| u64::from(d) * 24 * 3600 * 1000),
        segment_max_age_ms: rotate_secs.map_or(defaults.segment_max_age_ms, |s| s * 1000),
        ..defaults
    };
    let archive = Archive::open(dir, options)
        .with_context(|| format!("cannot open the archive directory {}", dir.display()))?;
    tracing::info!(archive_dir = %dir.display(), "expired messages of queues that keep them are archived");
    Ok(Some(Arc::new(archive)))
}

/// The `--archive-s3-*` flags, which override `[archive_s3]`.
#[derive(Debug, Default)]
pub struct BucketFlags {
    /// `--archive-s3-bucket`.
    pub bucket: Option<String>,
    /// `--archive-s3-endpoint`.
    pub endpoint: Option<String>,
    /// `--archive-s3-region`.
    pub region: Option<String>,
    /// `--archive-s3-prefix`.
    pub prefix: Option<String>,
}

/// The bucket rotated segments are copied to, when a bucket is named (by
/// flag or `[archive_s3]`); it needs an archive directory and credentials.
pub fn archive_bucket(
    flags: &BucketFlags,
    table: Option<&ArchiveS3Decl>,
    has_archive: bool,
) -> anyhow::Result<Option<Arc<ArchiveBucket>>> {
    let empty = ArchiveS3Decl::default();
    let table = table.unwrap_or(&empty);
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let Some(bucket) = flags.bucket.clone().or_else(|| table.bucket.clone()) else {
        let other_setting = flags.endpoint.is_some()
            || flags.region.is_some()
            || flags.prefix.is_some()
            || table.endpoint.is_some()
            || table.region.is_some()
            || table.prefix.is_some();
        anyhow::ensure!(
            !other_setting,
            "the archive's bucket settings need a bucket (--archive-s3-bucket or [archive_s3] bucket)"
        );
        return Ok(None);
    };
    anyhow::ensure!(
        has_archive,
        "an archive bucket (--archive-s3-bucket, [archive_s3]) needs --archive-dir"
    );
    let access_key_id = table
        .access_key_id
        .clone()
        .or_else(|| env("AWS_ACCESS_KEY_ID"));
    let secret_access_key = table
        .secret_access_key
        .clone()
        .or_else(|| env("AWS_SECRET_ACCESS_KEY"));
    let (Some(access_key_id), Some(secret_access_key)) = (access_key_id, secret_access_key) else {
        anyhow::bail!(
            "the archive bucket {bucket:?} needs credentials: [archive_s3] access_key_id and \
             secret_access_key, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
        );
    };
    let session_token = if table.access_key_id.is_some() {
        None
    } else {
        env("AWS_SESSION_TOKEN")
    };
    let settings = BucketSettings {
        bucket,
        endpoint: flags.endpoint.clone().or_else(|| table.endpoint.clone()),
        region: flags
            .region
            .clone()
            .or_else(|| table.region.clone())
            .or_else(|| env("AWS_REGION"))
            .or_else(|| env("AWS_DEFAULT_REGION"))
            .unwrap_or_else(|| "us-east-1".to_string()),
        prefix: flags
            .prefix
            .clone()
            .or_else(|| table.prefix.clone())
            .unwrap_or_default(),
        access_key_id,
        secret_access_key,
        session_token,
    };
    let bucket = ArchiveBucket::new(&settings, &sluice_outbound::OutboundTls::default())?;
    tracing::info!(bucket = %bucket.describe(), "rotated archive segments are copied to the bucket");
    Ok(Some(Arc::new(bucket)))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn table(bucket: Option<&str>, endpoint: Option<&str>) -> ArchiveS3Decl {
        ArchiveS3Decl {
            bucket: bucket.map(str::to_string),
            endpoint: endpoint.map(str::to_string),
            prefix: Some("sluice/".to_string()),
            access_key_id: Some("AKID".to_string()),
            secret_access_key: Some("secret".to_string()),
            ..ArchiveS3Decl::default()
        }
    }

    fn refusal(result: anyhow::Result<Option<Arc<ArchiveBucket>>>) -> String {
        format!("{:#}", result.expect_err("refused"))
    }

    #[test]
    fn no_bucket_no_copy_and_settings_without_a_bucket_are_refused() {
        let none = archive_bucket(&BucketFlags::default(), None, true).expect("no bucket");
        assert!(none.is_none());
        let why = refusal(archive_bucket(
            &BucketFlags::default(),
            Some(&table(None, None)),
            true,
        ));
        assert!(why.contains("need a bucket"), "{why}");
    }

    #[test]
    fn a_bucket_needs_the_archive_directory_and_an_http_endpoint() {
        let why = refusal(archive_bucket(
            &BucketFlags::default(),
            Some(&table(Some("b"), None)),
            false,
        ));
        assert!(why.contains("--archive-dir"), "{why}");
        let why = refusal(archive_bucket(
            &BucketFlags::default(),
            Some(&table(Some("b"), Some("ftp://store"))),
            true,
        ));
        assert!(why.contains("endpoint"), "{why}");
    }

    #[test]
    fn flags_override_the_table_and_endpoints_are_path_style() {
        let flags = BucketFlags {
            bucket: Some("flagged".to_string()),
            endpoint: Some("http://127.0.0.1:9000".to_string()),
            ..BucketFlags::default()
        };
        let bucket = archive_bucket(&flags, Some(&table(Some("b"), None)), true)
            .expect("accepted")
            .expect("a bucket");
        assert_eq!(bucket.describe(), "http://127.0.0.1:9000/flagged/sluice/");
        let aws = archive_bucket(
            &BucketFlags {
                region: Some("eu-west-1".to_string()),
                ..BucketFlags::default()
            },
            Some(&table(Some("acme-archive"), None)),
            true,
        )
        .expect("accepted")
        .expect("a bucket");
        assert_eq!(
            aws.describe(),
            "https://acme-archive.s3.eu-west-1.amazonaws.com/sluice/"
        );
    }
}

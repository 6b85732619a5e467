//! The archive's copy in an S3-compatible bucket (`[archive_s3]`): each
//! rotated segment of this node is PUT to `<prefix><queue-dir>/<stem>.jsonl.gz`
//! and marked once the bucket answered 2xx. The local directory stays the
//! archive sluice reads; the bucket is the copy that outlives the machine,
//! and the one place several nodes' segments meet. Requests are presigned
//! with `rusty-s3` (SigV4, query-string form) and sent by sluice's one
//! outbound client.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use rusty_s3::{Bucket, Credentials, S3Action as _, UrlStyle};
use sluice_archive::{Archive, ArchiveError, PendingUpload};
use sluice_outbound::{ConnectionSettings, OutboundClient, OutboundTls};

use crate::metrics::archive::ArchiveMetrics;

/// How long a presigned PUT stays valid: the upload starts at once.
const PRESIGNED_FOR: Duration = Duration::from_secs(300);

/// Longest time one segment's PUT may take.
const PUT_TIMEOUT: Duration = Duration::from_secs(300);

/// The bucket's settings, as the operator gave them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BucketSettings {
    /// The bucket's name.
    pub bucket: String,
    /// The S3 endpoint, e.g. `http://127.0.0.1:9000` for MinIO; `None`:
    /// AWS's `https://s3.<region>.amazonaws.com`. With an endpoint,
    /// requests are path-style (`endpoint/bucket/key`), as S3-compatible
    /// stores expect; without, virtual-hosted (`bucket.s3…/key`), as AWS
    /// prefers.
    pub endpoint: Option<String>,
    /// The region requests are signed for.
    pub region: String,
    /// Prepended to every object name, e.g. `sluice/archive/`.
    pub prefix: String,
    /// The access key id.
    pub access_key_id: String,
    /// Its secret.
    pub secret_access_key: String,
    /// A session token, for temporary credentials.
    pub session_token: Option<String>,
}

/// Why the bucket's settings are refused.
#[derive(Debug, thiserror::Error)]
pub enum BucketSettingsError {
    /// The endpoint is not an `http://` or `https://` URL.
    #[error("the archive bucket's endpoint {endpoint:?} is not an http:// or https:// URL: {why}")]
    Endpoint {
        /// As given.
        endpoint: String,
        /// What is wrong.
        why: String,
    },
    /// The bucket name cannot be used with that endpoint.
    #[error("the archive bucket {bucket:?} cannot be used: {why}")]
    Bucket {
        /// As given.
        bucket: String,
        /// What is wrong.
        why: String,
    },
}

/// Why one segment was not copied; it is tried again on the next pass.
#[derive(Debug, thiserror::Error)]
pub enum UploadError {
    /// The segment could not be read or marked.
    #[error(transparent)]
    Archive(#[from] ArchiveError),
    /// Reading the segment's file failed.
    #[error("reading {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The failure.
        source: std::io::Error,
    },
    /// The request could not be made or sent.
    #[error("PUT {object}: {why}")]
    Request {
        /// The object name.
        object: String,
        /// What failed.
        why: String,
    },
    /// The bucket answered with an error.
    #[error("PUT {object}: HTTP {status}: {body}")]
    Refused {
        /// The object name.
        object: String,
        /// The status.
        status: u16,
        /// The start of the answer (S3's XML error).
        body: String,
    },
    /// The blocking file work did not finish.
    #[error("archive task: {0}")]
    Task(#[from] tokio::task::JoinError),
}

/// An S3-compatible bucket the archive is copied to.
#[derive(Debug)]
pub struct ArchiveBucket {
    bucket: Bucket,
    credentials: Credentials,
    prefix: String,
    client: OutboundClient,
}

impl ArchiveBucket {
    /// The bucket `settings` name, reached through a client trusting `tls`.
    pub fn new(settings: &BucketSettings, tls: &OutboundTls) -> Result<Self, BucketSettingsError> {
        let (endpoint, style) = match &settings.endpoint {
            Some(e) => (e.clone(), UrlStyle::Path),
            None => (
                format!("https://s3.{}.amazonaws.com", settings.region),
                UrlStyle::VirtualHost,
            ),
        };
        let endpoint_error = |why: String| BucketSettingsError::Endpoint {
            endpoint: endpoint.clone(),
            why,
        };
        let url: url::Url = endpoint
            .parse()
            .map_err(|e: url::ParseError| endpoint_error(e.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(endpoint_error(format!("the scheme is {}", url.scheme())));
        }
        let bucket = Bucket::new(url, style, settings.bucket.clone(), settings.region.clone())
            .map_err(|e| BucketSettingsError::Bucket {
                bucket: settings.bucket.clone(),
                why: e.to_string(),
            })?;
        let credentials = match &settings.session_token {
            Some(token) => Credentials::new_with_token(
                settings.access_key_id.clone(),
                settings.secret_access_key.clone(),
                token.clone(),
            ),
            None => Credentials::new(
                settings.access_key_id.clone(),
                settings.secret_access_key.clone(),
            ),
        };
        let client = sluice_outbound::client(
            tls,
            &ConnectionSettings {
                connect_timeout: Some(Duration::from_secs(10)),
                ..Default::default()
            },
        );
        Ok(ArchiveBucket {
            bucket,
            credentials,
            prefix: settings.prefix.clone(),
            client,
        })
    }

    /// Where segments go, for logs: the bucket's URL and the prefix.
    pub fn describe(&self) -> String {
        format!("{}{}", self.bucket.base_url(), self.prefix)
    }

    /// PUTs `body` as `object` (under the prefix).
    async fn put(&self, object: &str, body: Bytes) -> Result<(), UploadError> {
        let key = format!("{}{object}", self.prefix);
        let request_error = |why: String| UploadError::Request {
            object: key.clone(),
            why,
        };
        let url = self
            .bucket
            .put_object(Some(&self.credentials), &key)
            .sign(PRESIGNED_FOR);
        let request = http::Request::put(url.as_str())
            .header(http::header::CONTENT_LENGTH, body.len())
            .header(http::header::CONTENT_TYPE, "application/gzip")
            .body(Full::new(body))
            .map_err(|e| request_error(e.to_string()))?;
        let response = tokio::time::timeout(PUT_TIMEOUT, self.client.request(request))
            .await
            .map_err(|_| request_error(format!("no answer within {PUT_TIMEOUT:?}")))?
            .map_err(|e| request_error(e.to_string()))?;
        let status = response.status();
        let answer = tokio::time::timeout(PUT_TIMEOUT, response.into_body().collect())
            .await
            .map_err(|_| request_error("the answer did not end".to_string()))?
            .map_err(|e| request_error(e.to_string()))?
            .to_bytes();
        if status.is_success() {
            return Ok(());
        }
        let shown = &answer[..answer.len().min(512)];
        // One log line: S3's XML error, its line breaks as spaces.
        let body = String::from_utf8_lossy(shown)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        Err(UploadError::Refused {
            object: key,
            status: status.as_u16(),
            body,
        })
    }
}

/// Copies every rotated segment of this node the bucket lacks, oldest
/// first, marking each once copied; returns how many. A failure stops the
/// pass (the next one starts over with what is left) and is counted.
pub async fn upload_pending(
    archive: &Arc<Archive>,
    bucket: &ArchiveBucket,
    metrics: &ArchiveMetrics,
) -> Result<usize, UploadError> {
    let lister = archive.clone();
    let pending = tokio::task::spawn_blocking(move || lister.pending_uploads()).await??;
    metrics.set_awaiting_upload(pending.len());
    let mut copied = 0;
    for upload in pending {
        if let Err(e) = upload_one(archive, bucket, &upload).await {
            metrics.upload_failed();
            return Err(e);
        }
        copied += 1;
        metrics.uploaded();
        metrics.set_awaiting_upload(metrics.awaiting_upload().saturating_sub(1));
        tracing::info!(queue = %upload.queue, object = %upload.object, "archive segment copied to the bucket");
    }
    Ok(copied)
}

/// Reads, PUTs and marks one segment.
async fn upload_one(
    archive: &Arc<Archive>,
    bucket: &ArchiveBucket,
    upload: &PendingUpload,
) -> Result<(), UploadError> {
    let path = upload.path.clone();
    let read = tokio::task::spawn_blocking(move || std::fs::read(&path)).await?;
    let body = match read {
        Ok(bytes) => Bytes::from(bytes),
        // Expired since the listing: nothing left to copy.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => {
            return Err(UploadError::Read {
                path: upload.path.display().to_string(),
                source,
            });
        }
    };
    bucket.put(&upload.object, body).await?;
    let marker = archive.clone();
    let done = upload.clone();
    tokio::task::spawn_blocking(move || marker.mark_uploaded(&done)).await??;
    Ok(())
}

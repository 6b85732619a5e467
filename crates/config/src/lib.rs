//! The TOML configuration file of `sluice serve`: every key and table
//! ([`FileConfig`]), parsed from text by [`parse`], and the checks of
//! values that need nothing but the file. Reading the file, and the checks
//! that open files or reach other components, are the binary's.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;

use serde::Deserialize;

/// Everything `sluice serve` can be told in its config file. Command-line
/// flags override the file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    /// Address to listen on, e.g. `127.0.0.1:9324`.
    pub bind: Option<SocketAddr>,
    /// Directory of the durable store.
    pub data_dir: Option<PathBuf>,
    /// Keep everything in memory (not durable).
    pub in_memory: Option<bool>,
    /// Durable mode: MiB of recently sent bodies kept in memory (default 64).
    pub body_cache_mib: Option<usize>,
    /// Durable mode: MiB of redb's page cache (default 1024).
    pub storage_cache_mib: Option<usize>,
    /// Durable mode: most milliseconds between checkpoints (default 1000).
    pub checkpoint_interval_ms: Option<u64>,
    /// PostgreSQL URL: store everything there, shared by several nodes.
    pub postgres: Option<String>,
    /// Most PostgreSQL connections for requests.
    pub postgres_pool_size: Option<usize>,
    /// 12-digit account id in queue URLs and ARNs.
    pub account_id: Option<String>,
    /// The server's own region: requests signed for it (or for none) use it.
    pub region: Option<String>,
    /// Seconds a deleted queue's name stays taken (SQS: 60; 0 frees it at once).
    pub deleted_queue_name_hold_secs: Option<u64>,
    /// Seconds to send a request's headers (default 10).
    pub header_timeout_secs: Option<u64>,
    /// Seconds to send a request's body (default 30).
    pub body_timeout_secs: Option<u64>,
    /// Seconds a connection may wait between requests (default 60).
    pub idle_timeout_secs: Option<u64>,
    /// Most connections served at once (default 900).
    pub max_connections: Option<u64>,
    /// Most ReceiveMessage long polls waiting at once (default: no cap).
    pub max_long_polls: Option<u64>,
    /// Serve `GET /metrics` on this address only (with `/health`), and on
    /// no other listener.
    pub metrics_bind: Option<SocketAddr>,
    /// Directory online backups are written under (rule D8); without it
    /// CreateBackup is refused.
    pub backup_dir: Option<PathBuf>,
    /// Directory of the archive of expired messages (rule X8); without
    /// it no queue can set `SluiceArchiveExpired`.
    pub archive_dir: Option<PathBuf>,
    /// Days an archive segment is kept (default: for ever).
    pub archive_retention_days: Option<u32>,
    /// Seconds an archive segment is appended to before it is rotated
    /// (gzipped, and copied to `[archive_s3]`'s bucket); default 3600.
    pub archive_rotate_secs: Option<u64>,
    /// The archive's copy in an S3-compatible bucket: `[archive_s3]`.
    pub archive_s3: Option<ArchiveS3Decl>,
    /// Public base URL of queue URLs, e.g. `https://sqs.example.com`.
    pub base_url: Option<String>,
    /// Public base URL of the URLs in SNS's messages (`SigningCertURL`,
    /// `SubscribeURL`, `UnsubscribeURL`), e.g.
    /// `https://sns.us-east-1.amazonaws.com` pointed at sluice, for
    /// signature verifiers that check the certificate's host; default
    /// `base_url`.
    pub sns_base_url: Option<String>,
    /// Queues to create at start-up.
    #[serde(default)]
    pub queues: Vec<QueueDecl>,
    /// How often alarms sample queues and are evaluated, seconds (default 10).
    pub alarm_sample_seconds: Option<u64>,
    /// PEM file of CA certificates trusted by `https://` webhooks, besides
    /// Mozilla's roots (for receivers with a private CA).
    pub webhook_ca_file: Option<PathBuf>,
    /// Give every dead-letter queue an alarm on visible depth >= 1.
    pub dlq_alarms: Option<DlqAlarmsDecl>,
    /// Alarms on queue metrics.
    #[serde(default)]
    pub alarms: Vec<AlarmDecl>,
    /// Authentication: `[auth]` and its `[[auth.credentials]]`
    /// (docs/security.md).
    pub auth: Option<AuthDecl>,
    /// HTTPS: `[tls]` (docs/security.md).
    pub tls: Option<TlsDecl>,
    /// Push consumers: `[[consumers]]` (docs/consumers.md).
    #[serde(default)]
    pub consumers: Vec<ConsumerDecl>,
    /// PEM file of CA certificates trusted by `https://` consumer
    /// handlers, besides Mozilla's roots (for handlers with a private CA).
    pub consumer_ca_file: Option<PathBuf>,
    /// Encryption at rest: `[encryption]` (docs/configuration.md).
    pub encryption: Option<EncryptionDecl>,
}

/// One `[[consumers]]`: a queue whose batches are POSTed to an HTTP
/// handler as Lambda's SQS event source mapping invokes a function.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConsumerDecl {
    /// Unique name.
    pub name: String,
    /// The queue read.
    pub queue: String,
    /// The handler's `http://` or `https://` URL.
    pub url: String,
    /// Most messages per batch: 1–10,000, 1–10 on a FIFO queue (default 10).
    pub batch_size: Option<u32>,
    /// Seconds to gather a batch, 0–300 (default 0); at least 1 when
    /// `batch_size` is above 10.
    pub batching_window_seconds: Option<u64>,
    /// Batches in flight at once (default 2).
    pub max_concurrency: Option<u32>,
    /// The handler's time limit, seconds (default 30); at most the queue's
    /// visibility timeout.
    pub timeout_seconds: Option<u64>,
    /// Read `batchItemFailures` from the answer (default false).
    pub report_batch_item_failures: Option<bool>,
    /// Lambda's filter patterns, up to 5 JSON texts (default none): a
    /// message matching none is deleted without delivery.
    #[serde(default)]
    pub filter: Vec<String>,
    /// `"message_id"` or a JSON path into the body (`"$.order.id"`): a
    /// message whose key is a completed idempotency key is deleted without
    /// delivery (default: every message is delivered).
    pub skip_completed: Option<String>,
}

/// Why a config file is refused.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// Not TOML, or not the keys and types of [`FileConfig`].
    #[error(transparent)]
    Parse(#[from] toml::de::Error),
    /// A number outside what the key accepts.
    #[error("{key} must be between {min} and {max}, not {value}")]
    OutOfRange {
        /// The key (as in the file).
        key: &'static str,
        /// Smallest accepted.
        min: u64,
        /// Largest accepted.
        max: u64,
        /// Given.
        value: u64,
    },
}

/// Parses the text of a config file.
pub fn parse(text: &str) -> Result<FileConfig, ConfigError> {
    Ok(toml::from_str(text)?)
}

impl FileConfig {
    /// The keyring file of the `[encryption]` table, if any.
    pub fn encryption_key_file(&self) -> Option<&std::path::Path> {
        self.encryption.as_ref()?.key_file.as_deref()
    }

    /// The cap on waiting long polls of the flag, else of the file
    /// (checked like the flag), else none.
    pub fn max_long_polls(&self, flag: Option<u64>) -> Result<Option<usize>, ConfigError> {
        match flag.or(self.max_long_polls) {
            None => Ok(None),
            Some(n @ 1..=1_000_000) => Ok(Some(n as usize)),
            Some(value) => Err(ConfigError::OutOfRange {
                key: "max_long_polls",
                min: 1,
                max: 1_000_000,
                value,
            }),
        }
    }
}

/// Longest checkpoint interval `--checkpoint-interval-ms` accepts: a
/// minute of log is already a long replay after a crash.
pub const MAX_CHECKPOINT_MS: u64 = 60_000;

/// The checkpoint interval given (flag or config file), checked, or the
/// engine's default.
pub fn checkpoint_interval(
    given_ms: Option<u64>,
    default: std::time::Duration,
) -> Result<std::time::Duration, ConfigError> {
    match given_ms {
        None => Ok(default),
        Some(ms @ 1..=MAX_CHECKPOINT_MS) => Ok(std::time::Duration::from_millis(ms)),
        Some(value) => Err(ConfigError::OutOfRange {
            key: "checkpoint_interval_ms",
            min: 1,
            max: MAX_CHECKPOINT_MS,
            value,
        }),
    }
}

impl ConsumerDecl {
    /// The server's settings of this consumer, defaults filled in.
    pub fn spec(&self) -> sluice_consumers::ConsumerSpec {
        sluice_consumers::ConsumerSpec {
            name: self.name.clone(),
            queue: self.queue.clone(),
            url: self.url.clone(),
            batch_size: self.batch_size.unwrap_or(10),
            batching_window: std::time::Duration::from_secs(
                self.batching_window_seconds.unwrap_or(0),
            ),
            max_concurrency: self.max_concurrency.unwrap_or(2),
            timeout: std::time::Duration::from_secs(self.timeout_seconds.unwrap_or(30)),
            report_batch_item_failures: self.report_batch_item_failures.unwrap_or(false),
            filter: self.filter.clone(),
            skip_completed: self.skip_completed.clone(),
        }
    }
}

/// Whether requests must be signed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum AuthMode {
    /// Requests are not authenticated (the default).
    Off,
    /// Every request must carry a valid SigV4 signature of a configured key.
    Sigv4,
}

/// The `[auth]` table.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthDecl {
    /// `off` (default) or `sigv4`.
    pub mode: Option<AuthMode>,
    /// Serve without authentication on a non-loopback address.
    pub allow_anonymous: Option<bool>,
    /// Requests per second of every key without its own `rate_limit`
    /// (rule A8); default unlimited.
    pub default_rate_limit: Option<u32>,
    /// The burst of those keys (default: one second's worth).
    pub default_burst: Option<u32>,
    /// The AWS Organizations id (`o-…`) the server's accounts belong to:
    /// `aws:PrincipalOrgID` of signed requests in queue policies.
    pub organization_id: Option<String>,
    /// The keys clients may sign with.
    #[serde(default)]
    pub credentials: Vec<CredentialDecl>,
}

/// The `[tls]` table: the main listener speaks HTTPS.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsDecl {
    /// PEM certificate chain, the server's certificate first.
    pub cert_file: Option<PathBuf>,
    /// PEM private key of the certificate.
    pub key_file: Option<PathBuf>,
    /// A second, plain-HTTP listener (health checks, local clients).
    pub plain_bind: Option<SocketAddr>,
}

/// The `[archive_s3]` table: rotated archive segments are copied to this
/// bucket. Credentials not given here come from `AWS_ACCESS_KEY_ID`,
/// `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN`.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArchiveS3Decl {
    /// The bucket's name.
    pub bucket: Option<String>,
    /// An S3-compatible endpoint (`http://` or `https://`), addressed
    /// path-style; default AWS's, virtual-hosted.
    pub endpoint: Option<String>,
    /// The region requests are signed for (default `AWS_REGION`, then
    /// `us-east-1`).
    pub region: Option<String>,
    /// Prepended to object names, e.g. `"sluice/"`.
    pub prefix: Option<String>,
    /// The access key id.
    pub access_key_id: Option<String>,
    /// Its secret.
    pub secret_access_key: Option<String>,
}

impl std::fmt::Debug for ArchiveS3Decl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The secret stays out of logs.
        f.debug_struct("ArchiveS3Decl")
            .field("bucket", &self.bucket)
            .field("endpoint", &self.endpoint)
            .field("region", &self.region)
            .field("prefix", &self.prefix)
            .field("access_key_id", &self.access_key_id)
            .finish_non_exhaustive()
    }
}

/// The `[encryption]` table: encryption at rest of the durable store.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EncryptionDecl {
    /// The keyring file (`sluice keys new`) whose keys wrap the data keys
    /// of stored messages; `--encryption-key-file` overrides it.
    pub key_file: Option<PathBuf>,
}

/// One `[[auth.credentials]]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CredentialDecl {
    /// The access key id.
    pub access_key_id: String,
    /// The secret access key.
    pub secret_access_key: String,
    /// When set, requests must carry it as `X-Amz-Security-Token`.
    pub session_token: Option<String>,
    /// The account the key acts for (default: the server's `account_id`).
    pub account_id: Option<String>,
    /// Action patterns the key may use (`sqs:*`, `sluice:PeekMessages`);
    /// default all (rule A2).
    pub allow: Option<Vec<String>>,
    /// Queue-name patterns the key may name (`orders*`); default all.
    pub queues: Option<Vec<String>>,
    /// Requests per second the key may make (rule A8); default
    /// `[auth] default_rate_limit`, else unlimited.
    pub rate_limit: Option<u32>,
    /// Requests the key may make at once (default: one second's worth).
    pub burst: Option<u32>,
}

impl std::fmt::Debug for CredentialDecl {
    // Secrets stay out of Debug prints (a config error may print the file).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CredentialDecl")
            .field("access_key_id", &self.access_key_id)
            .field("account_id", &self.account_id)
            .field("allow", &self.allow)
            .field("queues", &self.queues)
            .field("rate_limit", &self.rate_limit)
            .field("burst", &self.burst)
            .finish_non_exhaustive()
    }
}

/// The `[dlq_alarms]` table: every queue some RedrivePolicy targets,
/// including queues created later, gets the alarm `dlq-depth:<queue>`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DlqAlarmsDecl {
    /// Off switch (default on when the table is present).
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Webhook URLs and queue ARNs to notify.
    #[serde(default)]
    pub actions: Vec<String>,
    /// Seconds per period (default 60).
    pub period: Option<u32>,
    /// Periods that must breach (default 1).
    pub evaluation_periods: Option<u32>,
}

fn yes() -> bool {
    true
}

/// An alarm declared in the config file (`[[alarms]]`): the fields of
/// PutAlarm, with the queue by name.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AlarmDecl {
    /// Unique name.
    pub name: String,
    /// The queue watched.
    pub queue: String,
    /// A queue metric, e.g. `ApproximateNumberOfMessagesVisible`.
    pub metric: String,
    /// Average, Sum, Minimum, Maximum (default) or SampleCount.
    pub statistic: Option<String>,
    /// Seconds per period (default 60).
    pub period: Option<i64>,
    /// Periods evaluated (default 1).
    pub evaluation_periods: Option<i64>,
    /// Breaching periods needed (default: all evaluated).
    pub datapoints_to_alarm: Option<i64>,
    /// The value compared with.
    pub threshold: f64,
    /// e.g. `GreaterThanOrEqualToThreshold`.
    pub comparison: String,
    /// missing (default), notBreaching, breaching or ignore.
    pub treat_missing_data: Option<String>,
    /// Webhook URLs and queue ARNs to notify.
    #[serde(default)]
    pub actions: Vec<String>,
    /// Free text.
    pub description: Option<String>,
}

/// A queue declared in the config file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueDecl {
    /// Queue name.
    pub name: String,
    /// SQS attributes, e.g. `VisibilityTimeout = "60"`.
    #[serde(default)]
    pub attributes: BTreeMap<String, toml::Value>,
    /// Tags.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
}

impl QueueDecl {
    /// Attributes as SQS strings (TOML numbers and booleans are accepted).
    pub fn attribute_strings(&self) -> BTreeMap<String, String> {
        self.attributes
            .iter()
            .map(|(k, v)| {
                let s = match v {
                    toml::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                (k.clone(), s)
            })
            .collect()
    }
}

#[cfg(feature = "fuzzing")]
pub mod fuzzing;
#[cfg(test)]
mod tests {
    use super::*;

    /// The ```toml blocks of a document.
    fn toml_blocks(doc: &str) -> Vec<String> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(doc);
        let text = std::fs::read_to_string(&path).unwrap();
        text.split("```toml\n")
            .skip(1)
            .map(|b| b.split("```").next().unwrap().to_string())
            .collect()
    }

    /// The consumer example of docs/consumers.md parses, with its values.
    #[test]
    fn documented_consumer_example_parses() {
        let blocks = toml_blocks("docs/consumers.md");
        let c: FileConfig = toml::from_str(&blocks[0]).unwrap();
        let spec = c.consumers[0].spec();
        assert_eq!(
            (
                spec.batch_size,
                spec.max_concurrency,
                spec.timeout.as_secs()
            ),
            (10, 2, 30)
        );
        assert!(spec.report_batch_item_failures);
        assert!(
            toml::from_str::<FileConfig>(
                "[[consumers]]\nname = \"a\"\nqueue = \"q\"\nurl = \"u\"\nbatchsize = 2\n"
            )
            .is_err()
        );
    }

    /// M2: the config examples of the README and docs/alarms.md parse, alarms included.
    #[test]
    fn m2_documented_config_examples_parse() {
        let mut alarms = 0;
        let mut dlq = 0;
        for doc in ["README.md", "docs/alarms.md"] {
            let blocks = toml_blocks(doc);
            assert!(!blocks.is_empty(), "{doc}");
            for b in blocks {
                let c: FileConfig =
                    toml::from_str(&b).unwrap_or_else(|e| panic!("{doc}: {e}\n{b}"));
                alarms += c.alarms.len();
                dlq += usize::from(c.dlq_alarms.is_some_and(|d| d.enabled));
            }
        }
        assert!(alarms >= 2 && dlq >= 2, "{alarms} alarms, {dlq} dlq_alarms");
    }

    /// The checkpoint interval: the default when none is given, the given
    /// one within 1 ms to a minute, refused outside.
    #[test]
    fn checkpoint_interval_is_checked() {
        use std::time::Duration;
        let default = Duration::from_secs(1);
        assert_eq!(checkpoint_interval(None, default).unwrap(), default);
        assert_eq!(
            checkpoint_interval(Some(250), default).unwrap(),
            Duration::from_millis(250)
        );
        assert!(checkpoint_interval(Some(0), default).is_err());
        assert!(checkpoint_interval(Some(MAX_CHECKPOINT_MS + 1), default).is_err());
    }

    /// `[encryption] key_file` names the keyring file; the table is
    /// optional, its key too, and a misspelt key is refused.
    #[test]
    fn encryption_key_file_parses() {
        let c = parse("[encryption]\nkey_file = \"/etc/sluice/keyring.json\"\n").unwrap();
        assert_eq!(
            c.encryption_key_file(),
            Some(std::path::Path::new("/etc/sluice/keyring.json"))
        );
        assert_eq!(parse("").unwrap().encryption_key_file(), None);
        assert_eq!(parse("[encryption]\n").unwrap().encryption_key_file(), None);
        let e = parse("[encryption]\nkeyfile = \"k.json\"\n").unwrap_err();
        assert!(e.to_string().contains("keyfile"), "{e}");
        assert!(parse("encryption = \"k.json\"\n").is_err());
    }

    #[test]
    fn unknown_alarm_keys_are_refused() {
        let bad = "[[alarms]]\nname = \"a\"\nqueue = \"q\"\nmetric = \"m\"\nthreshold = 1\ncomparison = \"c\"\nthreshhold = 2\n";
        assert!(toml::from_str::<FileConfig>(bad).is_err());
        let off: FileConfig = toml::from_str("[dlq_alarms]\nenabled = false\n").unwrap();
        assert!(!off.dlq_alarms.unwrap().enabled);
    }
}

//! What every action needs: the broker, the account, and how queue URLs are
//! written and read.

use std::borrow::Cow;
use std::sync::Arc;

use sluice_broker::Broker;

use crate::auth::{Authenticator, Principal};
use crate::depth_history::DepthHistory;
use crate::metrics::Metrics;
use crate::move_tasks::MoveTasks;
use sluice_alarms::definition::{AlarmDefinition, AlarmSource};
use sluice_alarms::store::Transition;
use sluice_alarms::{AlarmSettings, Alarms};
use sluice_broker::receipts::HandleSealer;
use sluice_core::SqsError;
use sluice_core::clock::{Clock, SystemClock};
use sluice_core::queue_name::{Account, key_parts, parse_queue_url};
use sluice_protocol::sluice::PutAlarmRequest as PutAlarmInput;

/// Server settings that shape responses.
#[derive(Debug, Clone, Default)]
pub struct ServiceConfig {
    /// Account id and region of URLs and ARNs.
    pub account: Account,
    /// Public base URL for queue URLs (e.g. `https://sqs.example.com`);
    /// without it, URLs use the `Host` header of each request.
    pub base_url: Option<String>,
    /// Public base URL of the URLs in SNS's messages (`SigningCertURL`,
    /// `SubscribeURL`, `UnsubscribeURL`); without it, [`Self::base_url`]'s
    /// rule.
    pub sns_base_url: Option<String>,
    /// Alarm sampling, the DLQ alarm setting, webhook delivery, saved alarms.
    pub alarms: AlarmSettings,
    /// SigV4 verification of every request (`auth.mode = "sigv4"`), or
    /// `None`: requests are not authenticated (docs/security.md).
    pub auth: Option<Arc<Authenticator>>,
    /// The AWS Organizations id the server's accounts belong to
    /// (`[auth] organization_id`): `aws:PrincipalOrgID` of every signed
    /// client request in queue policies.
    pub organization_id: Option<String>,
    /// Where consumers created at run time are saved (`consumers.json` in
    /// the data directory), or `None`: they last until the server stops.
    /// Unused on shared storage, which keeps them for every node (rule C9).
    pub consumers_file: Option<std::path::PathBuf>,
    /// The roots `https://` consumer handlers are checked against:
    /// Mozilla's, plus those of the `consumer_ca_file` setting.
    pub consumer_tls: sluice_outbound::OutboundTls,
    /// Most ReceiveMessage long polls waiting at once, server-wide (rule
    /// H5); `None`: no cap.
    pub max_long_polls: Option<usize>,
    /// The directory CreateBackup writes under (rule D8); `None`: backups
    /// are refused.
    pub backup_root: Option<crate::backup_root::BackupRoot>,
    /// The archive of expired messages (rule X8, `--archive-dir`);
    /// `None`: queues cannot keep what expires.
    pub archive: Option<Arc<sluice_archive::Archive>>,
    /// The bucket the archive's rotated segments are copied to
    /// (`[archive_s3]`); `None`: the directory is the only copy.
    pub archive_bucket: Option<Arc<crate::archive_upload::ArchiveBucket>>,
}

/// The SQS service over one broker.
pub struct Service<B> {
    /// The engine.
    pub broker: B,
    /// Settings.
    pub config: ServiceConfig,
    /// The clock alarms and move tasks read.
    clock: Arc<dyn Clock>,
    /// Message move tasks (rule R7): started, listed, cancelled, run.
    pub move_tasks: Arc<MoveTasks<B>>,
    /// Request metrics.
    pub metrics: Metrics,
    /// Alarms on queue metrics (rule M2).
    pub alarms: Arc<Alarms<B>>,
    /// The push consumers running on this node (ListConsumers).
    pub consumers: sluice_consumers::registry::ConsumerRegistry,
    /// The consumers created at run time (CreateConsumer, rule C9).
    pub runtime_consumers: sluice_consumers::runtime::RuntimeConsumers,
    /// Every consumer's client of its handler, trusting `consumer_tls`.
    handler_client: sluice_consumers::deliver::HandlerClient,
    /// Seals receipt handles (rule A3), keyed at the first use with the
    /// engine's secret.
    sealer: tokio::sync::OnceCell<HandleSealer>,
    /// Every queue's depth over the last hour (rule M5).
    pub depth_history: Arc<DepthHistory>,
    /// Queue policies as the access check last parsed them (rule A6).
    pub policies: crate::policy::cache::PolicyCache,
    /// What SNS keeps beside the engine: its signing key, parsed filter
    /// policies, FIFO topics' deduplication (rules N3, N4, N7).
    pub sns: crate::sns_state::SnsState,
}

/// How often a node on shared storage looks for consumers created,
/// changed, paused or deleted through other nodes (rule C9).
pub const CONSUMER_SYNC_INTERVAL: std::time::Duration = std::time::Duration::from_secs(1);

/// With storage shared by several nodes: keeps this node running the
/// run-time consumers the storage keeps, looking every
/// [`CONSUMER_SYNC_INTERVAL`]. Runs until the service is dropped.
pub fn spawn_consumer_sync<B: Broker>(service: &Arc<Service<B>>) -> tokio::task::JoinHandle<()> {
    let weak = Arc::downgrade(service);
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(CONSUMER_SYNC_INTERVAL);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut failing = false;
        loop {
            ticks.tick().await;
            let Some(service) = weak.upgrade() else { break };
            match service.sync_consumers().await {
                Ok(()) => failing = false,
                Err(e) if !failing => {
                    failing = true;
                    tracing::warn!(error = %e, "cannot read the stored consumers; retrying");
                }
                Err(_) => {}
            }
        }
    })
}

/// Per-request facts actions may need.
#[derive(Debug, Clone, Default)]
pub struct RequestContext {
    /// `Host` header, for queue URLs.
    pub host: Option<String>,
    /// `http` or `https` (the request came over TLS): the scheme of the
    /// queue URLs it is answered with.
    pub scheme: &'static str,
    /// The region the request was signed for (its SigV4 credential scope),
    /// when it names one: queues are regional (rule W3).
    pub region: Option<String>,
    /// The `X-Amzn-Trace-Id` header, which a send keeps as the message's
    /// `AWSTraceHeader` system attribute (rule V22).
    pub trace_header: Option<String>,
    /// Who signed the request, when authentication is on (`None` when it
    /// is off, and for the server's own requests).
    pub principal: Option<Arc<Principal>>,
    /// The client's address, `aws:SourceIp` to queue policies (`None` for
    /// the server's own requests).
    pub source_ip: Option<std::net::IpAddr>,
}

impl RequestContext {
    /// `aws:SecureTransport`: whether the request came over TLS (rule
    /// A10); false for the server's own requests.
    pub fn secure_transport(&self) -> bool {
        self.scheme == "https"
    }
}

impl<B: Broker> Service<B> {
    /// A service over `broker`.
    pub fn new(broker: B, config: ServiceConfig) -> Self {
        Self::with_clock(broker, config, Arc::new(SystemClock))
    }

    /// A service over `broker` reading `clock`.
    pub fn with_clock(broker: B, config: ServiceConfig, clock: Arc<dyn Clock>) -> Self {
        let mut alarm_settings = config.alarms.clone();
        if broker.is_shared() {
            // The shared storage keeps the alarms, for every node.
            alarm_settings.file = None;
        }
        let alarms = Arc::new(Alarms::new(
            broker.clone(),
            config.account.clone(),
            clock.clone(),
            alarm_settings,
        ));
        let runtime_consumers = sluice_consumers::runtime::RuntimeConsumers::new(
            config.consumers_file.clone(),
            broker.is_shared(),
        );
        let move_tasks = Arc::new(MoveTasks::new(
            broker.clone(),
            config.account.clone(),
            clock.clone(),
        ));
        let metrics = Metrics::default();
        metrics.long_polls.set_limit(config.max_long_polls);
        let handler_client = sluice_consumers::deliver::handler_client(&config.consumer_tls);
        Self {
            broker,
            config,
            alarms,
            clock,
            move_tasks,
            metrics,
            consumers: Default::default(),
            runtime_consumers,
            handler_client,
            sealer: tokio::sync::OnceCell::new(),
            depth_history: Arc::default(),
            policies: Default::default(),
            sns: Default::default(),
        }
    }

    /// What a consumer's poll loop is started with.
    pub fn consumer_host(&self) -> sluice_consumers::ConsumerHost<'_, B> {
        sluice_consumers::ConsumerHost {
            broker: &self.broker,
            account: &self.config.account,
            metrics: &self.metrics.consumers,
            registry: &self.consumers,
            client: &self.handler_client,
        }
    }

    /// Starts the consumers saved by CreateConsumer (after the config
    /// file's); returns how many started.
    pub async fn restore_consumers(
        &self,
    ) -> Result<usize, sluice_consumers::runtime::ConsumerChangeError> {
        self.runtime_consumers.restore(self.consumer_host()).await
    }

    /// On shared storage, runs the run-time consumers as the storage now
    /// keeps them (rule C9): those created, changed, paused or deleted
    /// through other nodes too.
    pub async fn sync_consumers(&self) -> Result<(), SqsError> {
        self.runtime_consumers
            .sync(self.consumer_host())
            .await
            .map_err(|e| SqsError::new(sluice_core::ErrorCode::InternalFailure, e.to_string()))
    }

    /// The sealer of receipt handles (rule A3), keyed with the engine's
    /// secret (read once).
    pub async fn handle_sealer(&self) -> Result<&HandleSealer, SqsError> {
        self.sealer
            .get_or_try_init(|| async {
                let secret = self.broker.handle_secret().await?;
                Ok(HandleSealer::new(&secret))
            })
            .await
    }

    /// Creates or replaces an alarm (PutAlarm, or the config file) on the
    /// queue its `QueueUrl` names.
    pub async fn put_alarm(
        &self,
        input: PutAlarmInput,
        source: AlarmSource,
    ) -> Result<(), SqsError> {
        let url = sluice_protocol::decode::required(input.queue_url.clone(), "QueueUrl")?;
        let queue = self.queue_name(&url)?.to_string();
        self.alarms.put(queue, input, source).await
    }

    /// Samples the queues, evaluates every alarm at the clock's time and
    /// notifies each state change; returns the changes.
    pub async fn alarm_tick(&self) -> Vec<(AlarmDefinition, Transition)> {
        self.alarms.tick().await
    }

    /// Samples every queue's depth each 30 s in the background (rule M5).
    pub fn spawn_depth_sampler(&self) -> tokio::task::JoinHandle<()> {
        crate::depth_history::spawn_depth_sampler(
            self.depth_history.clone(),
            self.broker.clone(),
            self.clock.clone(),
        )
    }

    /// Samples every queue's depth once, at the clock's time (rule M5);
    /// what the background sampler does every 30 s.
    pub async fn depth_tick(&self) {
        self.depth_history
            .tick(&self.broker, self.clock.as_ref())
            .await;
    }

    /// The current time.
    pub fn now(&self) -> sluice_core::clock::Millis {
        self.clock.now()
    }

    /// The key SNS signs envelopes with, derived from the storage's secret
    /// (rule N3).
    pub async fn sns_signing_key(
        &self,
    ) -> Result<Arc<sluice_sns::signing::SigningKey>, sluice_sns::signing::SigningError> {
        let secret = async {
            (self.broker.handle_secret().await)
                .map(|s| s.0)
                .map_err(|e| e.to_string())
        };
        self.sns.signing_key(secret).await
    }

    /// The server's address as this request should see it: the configured
    /// `base_url`, or the request's scheme and `Host`. Queue URLs and the
    /// URLs in SNS's envelopes start with it.
    pub fn public_base(&self, ctx: &RequestContext) -> String {
        match &self.config.base_url {
            Some(base) => base.trim_end_matches('/').to_string(),
            None => format!(
                "{}://{}",
                if ctx.scheme.is_empty() {
                    "http"
                } else {
                    ctx.scheme
                },
                ctx.host.as_deref().unwrap_or("localhost:9324")
            ),
        }
    }

    /// The base of the URLs in SNS's messages: the configured
    /// `sns_base_url`, or [`Self::public_base`] (rule N3).
    pub fn sns_base(&self, ctx: &RequestContext) -> String {
        match &self.config.sns_base_url {
            Some(base) => base.trim_end_matches('/').to_string(),
            None => self.public_base(ctx),
        }
    }

    /// The queue URL of the queue stored under `key` as this request should
    /// see it (rule W3): `<base>/<account>/<name>` in the server's region,
    /// `<base>/<region>/<account>/<name>` in another.
    pub fn queue_url(&self, ctx: &RequestContext, key: &str) -> String {
        let base = self.public_base(ctx);
        match key_parts(key) {
            (Some(_), Some(_), _) => format!("{base}/{key}"),
            _ => format!("{base}/{}/{key}", self.config.account.id),
        }
    }

    /// The ARN of the queue stored under `key`.
    pub fn queue_arn(&self, key: &str) -> String {
        self.config.account.queue_arn(key)
    }

    /// The key of queue `name` in the region the request was signed for
    /// (CreateQueue, GetQueueUrl: rule W3).
    pub fn request_key(&self, ctx: &RequestContext, name: &str) -> String {
        self.config.account.key(
            ctx.region.as_deref().unwrap_or_default(),
            self.request_account(ctx),
            name,
        )
    }

    /// The account a request acts for (rule A2): its principal's, or the
    /// server's own when authentication is off.
    pub fn request_account<'a>(&'a self, ctx: &'a RequestContext) -> &'a str {
        ctx.principal
            .as_ref()
            .map_or(self.config.account.id.as_str(), |p| p.account_id.as_str())
    }

    /// The key of the queue an ARN names: of the server's account, or of
    /// any account when authentication is on (rule A2: accounts own their
    /// queues; whether the request may touch it is `crate::authorize`'s
    /// to say).
    pub fn key_from_arn(&self, arn: &str) -> Option<String> {
        if self.config.auth.is_some() {
            self.config.account.key_from_any_arn(arn)
        } else {
            self.config.account.key_from_arn(arn)
        }
    }

    /// The region the request was signed for, or the server's own.
    pub fn request_region<'a>(&'a self, ctx: &'a RequestContext) -> &'a str {
        ctx.region
            .as_deref()
            .unwrap_or(self.config.account.region.as_str())
    }

    /// The key of the queue a request's `QueueUrl` names (rule W3: the host
    /// does not matter, the account and the region do); a URL that names no
    /// queue of this account is `NonExistentQueue`, as SQS. With
    /// authentication on, a URL may name another account's queue (rule A2:
    /// `crate::authorize` checked the request may), as
    /// `…/<region>/<account>/<name>`, or `…/<account>/<name>` in the
    /// server's region (the one case that allocates).
    pub fn queue_name<'a>(&self, url: &'a str) -> Result<Cow<'a, str>, SqsError> {
        let account = &self.config.account;
        // The request's span names its queue from here on.
        tracing::Span::current().record("queue", url);
        let Some((owner, key)) = parse_queue_url(url) else {
            return Err(SqsError::no_queue());
        };
        let other_accounts = self.config.auth.is_some();
        match key_parts(key) {
            // A URL that spells out the server's own region and account
            // names the queue stored under its bare name.
            (Some(region), Some(owner), name)
                if region == account.region && owner == account.id =>
            {
                Ok(Cow::Borrowed(name))
            }
            (Some(_), Some(owner), _) if owner == account.id || other_accounts => {
                Ok(Cow::Borrowed(key))
            }
            (None, _, _) => match owner {
                None => Ok(Cow::Borrowed(key)),
                Some(owner) if owner == account.id => Ok(Cow::Borrowed(key)),
                Some(owner) if other_accounts => Ok(Cow::Owned(account.key("", owner, key))),
                Some(_) => Err(SqsError::no_queue()),
            },
            _ => Err(SqsError::no_queue()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A10: a request over TLS is `aws:SecureTransport`; a plain one and
    /// the server's own are not.
    #[test]
    fn a10_secure_transport_follows_the_scheme() {
        let over_tls = RequestContext {
            scheme: "https",
            ..Default::default()
        };
        assert!(over_tls.secure_transport());
        let plain = RequestContext {
            scheme: "http",
            ..Default::default()
        };
        assert!(!plain.secure_transport());
        assert!(!RequestContext::default().secure_transport());
    }
}

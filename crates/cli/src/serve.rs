//! `sluice serve`: start the server.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Args;
use sluice_alarms::{AlarmSettings, DlqAlarmSettings};
use sluice_broker::Broker;
use sluice_core::clock::SystemClock;
use sluice_core::queue_name::Account;
use sluice_embedded::{EmbeddedBroker, EmbeddedOptions};
use sluice_outbound::{OutboundTls, Roots};
use sluice_postgres::{PgError, PostgresBroker, PostgresOptions};
use sluice_server::http::ServerTls;
use sluice_server::{ConnectionLimits, Service, ServiceConfig};

use crate::config::{self, AuthMode, FileConfig};
use crate::declare;

const DEFAULT_BIND: &str = "127.0.0.1:9324";
const DEFAULT_DATA_DIR: &str = "./sluice-data";

/// Flags of `sluice serve`; each overrides the config file.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Address and port to listen on [default: 127.0.0.1:9324].
    #[arg(long, value_name = "ADDR:PORT")]
    bind: Option<SocketAddr>,
    /// Directory of the durable store [default: ./sluice-data].
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Keep everything in memory: NOT durable, everything is lost at exit.
    #[arg(long)]
    in_memory: bool,
    /// Store everything in PostgreSQL instead of the data directory, e.g.
    /// postgres://user:password@host:5432/sluice. Several nodes may share
    /// one database; the schema is created and migrated at start-up.
    #[arg(long, value_name = "URL", conflicts_with_all = ["in_memory", "data_dir"])]
    postgres: Option<String>,
    /// Durable mode: MiB of recently sent message bodies kept in memory, so
    /// a receive soon after the send reads nothing from disk; older bodies,
    /// and those sent behind more waiting messages than the cache holds,
    /// are read from the store [default: 64].
    #[arg(long, value_name = "MIB")]
    body_cache_mib: Option<usize>,
    /// Durable mode: MiB of redb's page cache [default: 1024, redb's own].
    #[arg(long, value_name = "MIB")]
    storage_cache_mib: Option<usize>,
    /// Encrypt at rest (durable store or PostgreSQL; every node of a
    /// database with the same file) the messages of queues with
    /// server-side encryption (SqsManagedSseEnabled, or a KmsMasterKeyId
    /// naming a key of the file), with data keys wrapped by the keys of
    /// this keyring file (`sluice keys new`). Read at start and again at
    /// SIGHUP, which re-wraps the data keys of the server's key [default:
    /// the config file's [encryption] key_file, else the key in
    /// SLUICE_ENCRYPTION_KEY, else none]. See docs/configuration.md.
    #[arg(long, value_name = "PATH")]
    encryption_key_file: Option<PathBuf>,
    /// Durable mode: most milliseconds between checkpoints, which write
    /// redb's pages out and start a new write-ahead log segment. Shorter: smaller
    /// pauses while a checkpoint writes and less log to replay after a
    /// crash; longer: fewer page writes [default: 1000; 1 to 60000].
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..=config::MAX_CHECKPOINT_MS))]
    checkpoint_interval_ms: Option<u64>,
    /// Most PostgreSQL connections this node opens for requests [default: 16].
    #[arg(long, value_name = "N")]
    postgres_pool_size: Option<usize>,
    /// Seconds a deleted queue's name stays taken, during which CreateQueue
    /// of that name is QueueDeletedRecently, as on SQS [default: 60]. 0 frees
    /// it at once, for test suites that delete and recreate the same queues.
    #[arg(long, value_name = "SECS")]
    deleted_queue_name_hold_secs: Option<u64>,
    /// TOML config file: account, region, base URL, queues to create,
    /// alarms, the `[dlq_alarms]` setting and the `webhook_ca_file` of
    /// https:// webhooks (see docs/alarms.md), authentication:
    /// `[auth]` with `[[auth.credentials]]` and HTTPS: `[tls]` (see
    /// docs/security.md; SIGHUP reloads both), and push consumers:
    /// `[[consumers]]` and the `consumer_ca_file` of https:// handlers
    /// (see docs/consumers.md), and encryption at rest: `[encryption]`
    /// (see docs/configuration.md).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Authentication: `sigv4` requires every request to be signed by one
    /// of the config file's [[auth.credentials]]; `off` accepts any
    /// request [default: off, or the config file's auth.mode]. See
    /// docs/security.md.
    #[arg(long, value_name = "MODE")]
    auth: Option<AuthMode>,
    /// Serve without authentication on a non-loopback address, which is
    /// refused otherwise.
    #[arg(long)]
    allow_anonymous: bool,
    /// Seconds a client has to send a request's headers, from their first
    /// byte (or from connecting) [default: 10].
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..=MAX_TIMEOUT_SECS))]
    header_timeout_secs: Option<u64>,
    /// Seconds a client has to send a request's whole body; a slower body
    /// is answered with an error and its connection closed [default: 30].
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..=MAX_TIMEOUT_SECS))]
    body_timeout_secs: Option<u64>,
    /// Seconds a connection may wait between requests before it is closed
    /// (a long poll is a request, not idle) [default: 60].
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..=MAX_TIMEOUT_SECS))]
    idle_timeout_secs: Option<u64>,
    /// Most connections served at once; further clients wait in the listen
    /// backlog until one closes. Keep it under the open-file limit
    /// (`ulimit -n`) [default: 900].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    max_connections: Option<u64>,
    /// Most ReceiveMessage long polls waiting at once, server-wide; a
    /// receive beyond it answers at once with what is visible (possibly
    /// nothing) instead of waiting. See docs/reliability.md [default: no cap].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    max_long_polls: Option<u64>,
    /// Allow online backups (`sluice backup`, CreateBackup), each into a
    /// new directory under DIR, created if missing; without it backups are
    /// refused. See docs/reliability.md.
    #[arg(long, value_name = "DIR")]
    backup_dir: Option<PathBuf>,
    /// Keep an archive of expired messages in DIR (created if missing):
    /// a message of a queue with SluiceArchiveExpired=true that reaches
    /// its retention is written there (JSON Lines, rotated and gzipped)
    /// before it leaves the queue. Nodes sharing PostgreSQL should share
    /// DIR. See docs/failure-handling.md.
    #[arg(long, value_name = "DIR")]
    archive_dir: Option<PathBuf>,
    /// Delete archive segments older than DAYS [default: keep them].
    #[arg(long, value_name = "DAYS", value_parser = clap::value_parser!(u32).range(1..=36_500))]
    archive_retention_days: Option<u32>,
    /// Rotate an archive segment (gzip it, and copy it to the bucket)
    /// once it is SECS old [default: 3600].
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..=86_400))]
    archive_rotate_secs: Option<u64>,
    /// Also copy each rotated archive segment to this S3 bucket, as
    /// `<prefix><queue>/<segment>.jsonl.gz`; credentials from
    /// `[archive_s3]` or AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
    /// AWS_SESSION_TOKEN. Needs --archive-dir.
    #[arg(long, value_name = "BUCKET")]
    archive_s3_bucket: Option<String>,
    /// The bucket's S3-compatible endpoint, e.g. http://127.0.0.1:9000
    /// (addressed path-style) [default: AWS's, virtual-hosted].
    #[arg(long, value_name = "URL")]
    archive_s3_endpoint: Option<String>,
    /// The region bucket requests are signed for [default: AWS_REGION,
    /// then us-east-1].
    #[arg(long, value_name = "REGION")]
    archive_s3_region: Option<String>,
    /// Prepended to the bucket's object names, e.g. sluice/archive/.
    #[arg(long, value_name = "PREFIX")]
    archive_s3_prefix: Option<String>,
    /// Serve HTTPS (HTTP/1.1) on --bind with this PEM certificate chain,
    /// the server's certificate first; needs --tls-key. Reloaded on
    /// SIGHUP. See docs/security.md.
    #[arg(long, value_name = "FILE")]
    tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(long, value_name = "FILE")]
    tls_key: Option<PathBuf>,
    /// With TLS on, also serve plain HTTP on this address (health checks,
    /// local clients).
    #[arg(long, value_name = "ADDR:PORT")]
    plain_bind: Option<SocketAddr>,
    /// Serve GET /metrics (it names every queue) on this address, with
    /// /health, and on no other listener. Default: /metrics on every one.
    #[arg(long, value_name = "ADDR:PORT")]
    metrics_bind: Option<SocketAddr>,
}

/// Longest header, body or idle timeout accepted: an hour.
const MAX_TIMEOUT_SECS: u64 = 3600;

/// The connection limits of the flags, else of the config file, else the
/// defaults; config-file values are checked like the flags'.
fn connection_limits(args: &ServeArgs, file: &FileConfig) -> anyhow::Result<ConnectionLimits> {
    let defaults = ConnectionLimits::default();
    let secs =
        |flag: Option<u64>, key: Option<u64>, name: &str, default: Duration| match flag.or(key) {
            None => Ok(default),
            Some(s @ 1..=MAX_TIMEOUT_SECS) => Ok(Duration::from_secs(s)),
            Some(s) => Err(anyhow::anyhow!(
                "{name} must be between 1 and {MAX_TIMEOUT_SECS}, not {s}"
            )),
        };
    let max_connections = match args.max_connections.or(file.max_connections) {
        None => defaults.max_connections,
        Some(n @ 1..=1_000_000) => n as usize,
        Some(n) => anyhow::bail!("max_connections must be between 1 and 1000000, not {n}"),
    };
    Ok(ConnectionLimits {
        header_timeout: secs(
            args.header_timeout_secs,
            file.header_timeout_secs,
            "header_timeout_secs",
            defaults.header_timeout,
        )?,
        body_timeout: secs(
            args.body_timeout_secs,
            file.body_timeout_secs,
            "body_timeout_secs",
            defaults.body_timeout,
        )?,
        idle_timeout: secs(
            args.idle_timeout_secs,
            file.idle_timeout_secs,
            "idle_timeout_secs",
            defaults.idle_timeout,
        )?,
        max_connections,
    })
}

/// Runs the server until Ctrl-C or SIGTERM.
pub fn run(args: ServeArgs) -> anyhow::Result<()> {
    let file = match &args.config {
        Some(path) => config::load(path)?,
        None => FileConfig::default(),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(serve(args, file))
}

async fn serve(args: ServeArgs, file: FileConfig) -> anyhow::Result<()> {
    let bind = args
        .bind
        .or(file.bind)
        .unwrap_or_else(|| DEFAULT_BIND.parse().expect("default address parses"));
    let limits = connection_limits(&args, &file)?;
    let in_memory = args.in_memory || file.in_memory.unwrap_or(false);
    let data_dir = args
        .data_dir
        .or(file.data_dir.clone())
        .unwrap_or_else(|| PathBuf::from(DEFAULT_DATA_DIR));
    let postgres = args.postgres.clone().or(file.postgres.clone());
    // Read before any storage is opened: a refused start changes nothing.
    let keyring_source = crate::encryption_config::keyring_source(
        args.encryption_key_file.as_deref(),
        &file,
        crate::encryption_config::EnvKey::from_env()?,
    );
    let keyring_reloads = !in_memory && keyring_source.as_ref().is_some_and(|s| s.is_file());
    let keyring = crate::encryption_config::keyring(keyring_source, in_memory)?;
    let mut account = Account::default();
    if let Some(id) = &file.account_id {
        anyhow::ensure!(
            id.len() == 12 && id.bytes().all(|b| b.is_ascii_digit()),
            "account_id must be 12 digits, got {id:?}"
        );
        account.id = id.clone();
    }
    if let Some(region) = &file.region {
        account.region = region.clone();
    }
    // Checked before any storage is opened: a refused start changes nothing.
    let tls = crate::tls_config::tls_settings(
        args.tls_cert.as_deref(),
        args.tls_key.as_deref(),
        args.plain_bind,
        &file,
    )?;
    let plain_bind = tls.as_ref().and_then(|(_, plain)| *plain);
    let server_tls = match &tls {
        Some((files, _)) => Some(Arc::new(crate::tls_config::load(files)?)),
        None => None,
    };
    // The anonymity guard looks at the most exposed of the addresses.
    let exposed = plain_bind.filter(|a| !a.ip().is_loopback()).unwrap_or(bind);
    let auth = crate::auth_config::auth_settings(
        args.auth,
        args.allow_anonymous,
        &file,
        exposed,
        &account.id,
    )?;
    let reloader = crate::signals::Reloader {
        config_path: args.config.clone(),
        flag_tls: (args.tls_cert.clone(), args.tls_key.clone()),
        tls: server_tls.clone(),
        auth: auth.clone(),
        default_account: account.id.clone(),
        flag_keyring: args.encryption_key_file.clone(),
        rekey: None,
    };
    let listening = Listening {
        bind,
        plain_bind,
        metrics_bind: args.metrics_bind.or(file.metrics_bind),
        limits,
        tls: server_tls,
        reloader,
        keyring_reloads,
    };
    let backup_dir = args.backup_dir.clone().or(file.backup_dir.clone());
    let mut config = ServiceConfig {
        alarms: alarm_settings(&file, (!in_memory).then(|| data_dir.join("alarms.json")))?,
        consumers_file: (!in_memory).then(|| data_dir.join("consumers.json")),
        consumer_tls: consumer_tls(&file)?,
        account,
        base_url: file.base_url.clone(),
        sns_base_url: file.sns_base_url.clone(),
        auth,
        organization_id: crate::auth_config::organization_id(&file)?,
        max_long_polls: file.max_long_polls(args.max_long_polls)?,
        backup_root: None,
        archive: crate::archive_dir::open_archive(
            args.archive_dir.as_deref().or(file.archive_dir.as_deref()),
            args.archive_retention_days.or(file.archive_retention_days),
            args.archive_rotate_secs.or(file.archive_rotate_secs),
        )?,
        archive_bucket: None,
    };
    config.archive_bucket = crate::archive_dir::archive_bucket(
        &crate::archive_dir::BucketFlags {
            bucket: args.archive_s3_bucket.clone(),
            endpoint: args.archive_s3_endpoint.clone(),
            region: args.archive_s3_region.clone(),
            prefix: args.archive_s3_prefix.clone(),
        },
        file.archive_s3.as_ref(),
        config.archive.is_some(),
    )?;

    let name_hold = Duration::from_secs(
        args.deleted_queue_name_hold_secs
            .or(file.deleted_queue_name_hold_secs)
            .unwrap_or(sluice_core::limits::RECREATE_AFTER_DELETE_SECS),
    );
    let clock = Arc::new(SystemClock);
    if let Some(url) = postgres {
        anyhow::ensure!(
            !in_memory && file.data_dir.is_none(),
            "postgres cannot be combined with in_memory or data_dir"
        );
        let options = PostgresOptions {
            pool_size: args
                .postgres_pool_size
                .or(file.postgres_pool_size)
                .unwrap_or(PostgresOptions::default().pool_size),
            keyring: keyring.clone(),
            ..Default::default()
        };
        let broker = connect_postgres(&url, clock, options).await?;
        broker.set_deleted_name_hold(name_hold);
        let _sweeper = broker.start_sweeper();
        let _activity = broker.start_activity_sync();
        config.backup_root = crate::backup_dir::backup_root(backup_dir.as_deref(), None)?;
        return run_node(broker, config, &file, listening, "postgres").await;
    }
    let broker = if in_memory {
        tracing::warn!("in-memory mode: nothing is durable, everything is lost at exit");
        EmbeddedBroker::in_memory(clock)
    } else {
        let started = Instant::now();
        let defaults = EmbeddedOptions::default();
        let options = EmbeddedOptions {
            body_cache_bytes: args
                .body_cache_mib
                .or(file.body_cache_mib)
                .map_or(defaults.body_cache_bytes, |mib| mib << 20),
            storage_cache_bytes: args
                .storage_cache_mib
                .or(file.storage_cache_mib)
                .map(|mib| mib << 20),
            checkpoint_interval: config::checkpoint_interval(
                args.checkpoint_interval_ms.or(file.checkpoint_interval_ms),
                defaults.checkpoint_interval,
            )?,
            keyring,
            ..defaults
        };
        let (broker, stats) = EmbeddedBroker::open_with(&data_dir, clock, options)
            .with_context(|| format!("cannot open the data directory {}", data_dir.display()))?;
        tracing::info!(
            queues = stats.queues,
            messages = stats.messages,
            log_records = stats.log_records,
            store_repaired = stats.store_repaired,
            elapsed_ms = started.elapsed().as_millis() as u64,
            data_dir = %data_dir.display(),
            "recovered durable state"
        );
        crate::memory::release_free_memory();
        broker
    };
    broker.set_deleted_name_hold(name_hold);
    let _sweeper = broker.start_sweeper();
    let durable_dir = (!in_memory).then_some(data_dir.as_path());
    config.backup_root = crate::backup_dir::backup_root(backup_dir.as_deref(), durable_dir)?;
    let storage = if in_memory {
        "in-memory (not durable)"
    } else {
        "durable"
    };
    run_node(broker, config, &file, listening, storage).await
}

/// How long start-up keeps trying to reach PostgreSQL.
const CONNECT_PATIENCE: Duration = Duration::from_secs(30);

/// Connects to PostgreSQL, retrying while it is unreachable (it may be
/// starting alongside this node).
async fn connect_postgres(
    url: &str,
    clock: Arc<SystemClock>,
    options: PostgresOptions,
) -> anyhow::Result<PostgresBroker> {
    let started = Instant::now();
    loop {
        match PostgresBroker::connect(url, clock.clone(), options.clone()).await {
            Ok(broker) => {
                tracing::info!(pool_size = options.pool_size, "connected to PostgreSQL");
                return Ok(broker);
            }
            Err(e @ (PgError::Url(_) | PgError::SchemaTooNew { .. })) => {
                return Err(e).context("cannot use the PostgreSQL database");
            }
            Err(e) if started.elapsed() < CONNECT_PATIENCE => {
                tracing::warn!(error = %e, "PostgreSQL not reachable yet; retrying");
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            Err(e) => return Err(e).context("cannot reach PostgreSQL"),
        }
    }
}

/// Where and how the server listens, and what SIGHUP reloads.
struct Listening {
    /// The main listener's address.
    bind: SocketAddr,
    /// With TLS on, the optional plain-HTTP listener's.
    plain_bind: Option<SocketAddr>,
    /// The optional metrics listener's.
    metrics_bind: Option<SocketAddr>,
    limits: ConnectionLimits,
    /// The main listener's certificate (`None`: it speaks plain HTTP).
    tls: Option<Arc<ServerTls>>,
    reloader: crate::signals::Reloader,
    /// Whether the keyring came from a file that SIGHUP reads again.
    keyring_reloads: bool,
}

/// Serves `broker` until Ctrl-C or SIGTERM.
async fn run_node<B: Broker>(
    broker: B,
    config: ServiceConfig,
    file: &FileConfig,
    listening: Listening,
    storage: &str,
) -> anyhow::Result<()> {
    let Listening {
        bind,
        plain_bind,
        metrics_bind,
        limits,
        tls,
        mut reloader,
        keyring_reloads,
    } = listening;
    // Alone on its storage, a task still active was interrupted by the last
    // stop. Shared with other nodes, it may be running on one of them: the
    // adopter resumes it only once its node is gone.
    let shared = broker.is_shared();
    if !shared {
        let interrupted = sluice_server::move_tasks::fail_interrupted_tasks(&broker)
            .await
            .map_err(|e| anyhow::anyhow!("cannot read message move tasks: {e}"))?;
        if interrupted > 0 {
            tracing::warn!(
                tasks = interrupted,
                "message move tasks interrupted by the last stop are marked FAILED"
            );
        }
    }
    let service = Arc::new(Service::new(broker, config));
    if keyring_reloads {
        let service = service.clone();
        reloader.rekey = Some(Box::new(move |ring| {
            let service = service.clone();
            Box::pin(async move { service.broker.rekey(ring).await })
        }));
    }
    let _adopter =
        shared.then(|| sluice_server::move_tasks::spawn_move_task_adopter(&service.move_tasks));
    declare::declare_queues(&service, file).await?;
    declare::declare_alarms(&service, file).await?;
    let _alarm_monitor = sluice_alarms::tick::spawn_alarm_monitor(service.alarms.clone());
    let _depth_sampler = service.spawn_depth_sampler();
    let _consumers = start_consumers(&service, file).await?;
    service
        .restore_consumers()
        .await
        .context("cannot start the saved consumers")?;
    let _consumer_sync = shared.then(|| sluice_server::service::spawn_consumer_sync(&service));
    let _archiver = sluice_server::archiver::spawn_archiver(&service);
    if service.config.archive.is_none() {
        crate::archive_dir::warn_of_unarchived_queues(&service.broker).await;
    }

    let opened = crate::listeners::open(bind, tls, plain_bind, metrics_bind)?;
    let shutdown = crate::signals::shutdown_signal();
    crate::signals::reload_on_hangup(reloader);
    opened.announce(storage, limits.max_connections);
    sluice_server::http::serve_endpoints(opened.endpoints, service, limits, shutdown).await?;
    tracing::info!("sluice stopped");
    Ok(())
}

/// Checks the config file's consumers against their queues (after the
/// queues are declared) and starts them; a bad one stops the start.
async fn start_consumers<B: Broker>(
    service: &Service<B>,
    file: &FileConfig,
) -> anyhow::Result<sluice_consumers::Consumers> {
    let specs: Vec<_> = file.consumers.iter().map(|c| c.spec()).collect();
    sluice_consumers::check_consumers(&service.broker, &specs)
        .await
        .map_err(|e| anyhow::anyhow!("[[consumers]] in the config file: {e}"))?;
    for spec in &specs {
        tracing::info!(consumer = %spec.name, queue = %spec.queue, "push consumer started");
    }
    Ok(sluice_consumers::spawn_consumers(
        service.consumer_host(),
        specs,
    ))
}

/// The roots `https://` consumer handlers are checked against: Mozilla's,
/// plus the config file's `consumer_ca_file`, read now so that a bad file
/// stops the start rather than the first delivery.
fn consumer_tls(file: &FileConfig) -> anyhow::Result<OutboundTls> {
    let Some(path) = &file.consumer_ca_file else {
        return Ok(OutboundTls::default());
    };
    let tls = OutboundTls::with_ca_file(Roots::Mozilla, path, "the consumer CA file")?;
    tracing::info!(
        file = %path.display(),
        certificates = tls.extra_roots(),
        "https:// consumer handlers also trust the CA file"
    );
    Ok(tls)
}

/// The alarm settings of the config file; API alarms are saved in
/// `alarms_file` (none in memory mode).
fn alarm_settings(
    file: &FileConfig,
    alarms_file: Option<PathBuf>,
) -> anyhow::Result<AlarmSettings> {
    let mut settings = AlarmSettings {
        file: alarms_file,
        ..AlarmSettings::default()
    };
    if let Some(secs) = file.alarm_sample_seconds {
        anyhow::ensure!(
            (1..=3600).contains(&secs),
            "alarm_sample_seconds must be 1 to 3600, got {secs}"
        );
        settings.sample_interval = Duration::from_secs(secs);
    }
    if let Some(path) = &file.webhook_ca_file {
        // Read now: a bad file stops the start, not the first alarm.
        settings.webhook_tls =
            OutboundTls::with_ca_file(Roots::Mozilla, path, "the webhook CA file")?;
        tracing::info!(
            file = %path.display(),
            certificates = settings.webhook_tls.extra_roots(),
            "https:// webhooks also trust the CA file"
        );
    }
    if let Some(d) = &file.dlq_alarms
        && d.enabled
    {
        let defaults = DlqAlarmSettings::default();
        settings.dlq_alarms = Some(DlqAlarmSettings {
            actions: d.actions.clone(),
            period_secs: d.period.unwrap_or(defaults.period_secs),
            evaluation_periods: d.evaluation_periods.unwrap_or(defaults.evaluation_periods),
        });
    }
    Ok(settings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        serve: ServeArgs,
    }

    fn limits(flags: &[&str], file: &str) -> anyhow::Result<ConnectionLimits> {
        use clap::Parser;
        let cli = Cli::try_parse_from(std::iter::once("serve").chain(flags.iter().copied()))?;
        connection_limits(&cli.serve, &toml::from_str(file)?)
    }

    /// L9: the connection limits come from the flags, else the config
    /// file, else the defaults; out-of-range values are refused.
    #[test]
    fn l9_connection_limits_are_configured() {
        assert_eq!(limits(&[], "").unwrap(), ConnectionLimits::default());
        let file = "header_timeout_secs = 5\nbody_timeout_secs = 6\nidle_timeout_secs = 7\nmax_connections = 8\n";
        let from_file = limits(&[], file).unwrap();
        assert_eq!(
            from_file,
            ConnectionLimits {
                header_timeout: Duration::from_secs(5),
                body_timeout: Duration::from_secs(6),
                idle_timeout: Duration::from_secs(7),
                max_connections: 8,
            }
        );
        let flags = limits(
            &["--idle-timeout-secs", "9", "--max-connections", "3"],
            file,
        )
        .unwrap();
        assert_eq!(flags.idle_timeout, Duration::from_secs(9));
        assert_eq!(flags.max_connections, 3);
        assert_eq!(flags.header_timeout, Duration::from_secs(5));
        assert!(limits(&["--body-timeout-secs", "0"], "").is_err());
        assert!(limits(&[], "idle_timeout_secs = 0").is_err());
        assert!(limits(&[], "max_connections = 0").is_err());
    }

    #[test]
    fn the_encryption_key_file_is_a_flag() {
        use clap::Parser;
        let cli = Cli::try_parse_from(["serve", "--encryption-key-file", "k.json"]).unwrap();
        assert_eq!(cli.serve.encryption_key_file, Some(PathBuf::from("k.json")));
        assert!(
            Cli::try_parse_from(["serve"])
                .unwrap()
                .serve
                .encryption_key_file
                .is_none()
        );
    }
}

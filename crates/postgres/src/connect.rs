//! Connecting a node: its pool, the schema brought up to date, and the
//! LISTEN connection that wakes its long polls.

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use parking_lot::Mutex;
use sluice_core::clock::Clock;
use sluice_core::limits::RECREATE_AFTER_DELETE_SECS;
use tokio_postgres::NoTls;

use crate::engine::{Inner, PostgresBroker};
use crate::error::PgError;
use crate::{cache, encryption, listener, schema};

/// How a node connects.
#[derive(Debug, Clone)]
pub struct PostgresOptions {
    /// Most connections this node opens for requests (one more listens).
    pub pool_size: usize,
    /// How long a request waits for a free connection before it answers
    /// `ServiceUnavailable`.
    pub wait_timeout: Duration,
    /// The operator's keyring: queues that ask for encryption at rest have
    /// their messages sealed with data keys it wraps (every node of a
    /// database needs the same keyring). `None`: nothing is sealed, and a
    /// start on a database holding sealed data is refused.
    pub keyring: Option<Arc<sluice_keyring::Keyring>>,
}

impl Default for PostgresOptions {
    fn default() -> Self {
        Self {
            pool_size: 16,
            wait_timeout: Duration::from_secs(5),
            keyring: None,
        }
    }
}

impl PostgresBroker {
    /// Connects to the database at `url`, creates or migrates the schema,
    /// and starts listening for other nodes' sends. Must be called inside a
    /// Tokio runtime.
    pub async fn connect(
        url: &str,
        clock: Arc<dyn Clock>,
        options: PostgresOptions,
    ) -> Result<Self, PgError> {
        let mut config =
            tokio_postgres::Config::from_str(url).map_err(|e| PgError::Url(e.to_string()))?;
        // A transaction left open would hold back vacuum for every table:
        // the server ends such sessions, and the pool replaces them.
        let session_options = match config.get_options() {
            Some(given) => format!("{given} -c idle_in_transaction_session_timeout=60000"),
            None => "-c idle_in_transaction_session_timeout=60000".to_string(),
        };
        config.options(&session_options);
        if config.get_application_name().is_none() {
            // Tells sluice's sessions apart in pg_stat_activity.
            config.application_name("sluice");
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(5));
        }
        config.keepalives_idle(Duration::from_secs(30));
        let manager = Manager::from_config(
            config.clone(),
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let data_keys = Arc::new(sluice_keyring::DataKeys::shared(options.keyring.clone()));
        let pool = Pool::builder(manager)
            .max_size(options.pool_size.max(1))
            .wait_timeout(Some(options.wait_timeout))
            .create_timeout(Some(Duration::from_secs(5)))
            .recycle_timeout(Some(Duration::from_secs(5)))
            .runtime(Runtime::Tokio1)
            .build()
            .map_err(|e| PgError::Pool(e.to_string()))?;
        {
            let mut client = pool
                .get()
                .await
                .map_err(|e| PgError::Connect(e.to_string()))?;
            let applied = schema::migrate(&mut client).await?;
            if !applied.is_empty() {
                tracing::info!(versions = ?applied, "database schema migrated");
            }
            // Before anything is served: a key the keyring lacks stops
            // the start.
            encryption::load_data_keys(&client, &data_keys, clock.now()).await?;
        }
        let broker = Self {
            inner: Arc::new(Inner {
                pool,
                clock,
                waiters: Mutex::new(HashMap::new()),
                activity: Mutex::new(HashMap::new()),
                in_flight: Mutex::new(HashMap::new()),
                fair: Default::default(),
                data_keys,
                making_data_key: Default::default(),
                queues: cache::QueueCache::default(),
                sends: Default::default(),
                deletes: Default::default(),
                receives: Default::default(),
                listener: Mutex::new(None),
                flusher: Default::default(),
                deleted_name_hold_ms: std::sync::atomic::AtomicU64::new(
                    RECREATE_AFTER_DELETE_SECS * 1000,
                ),
            }),
        };
        let task = listener::spawn(config, Arc::downgrade(&broker.inner));
        *broker.inner.listener.lock() = Some(task);
        Ok(broker)
    }
}

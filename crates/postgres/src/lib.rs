//! sluice's PostgreSQL engine: stateless nodes over one shared database.
//!
//! The database is the only source of truth; a node keeps nothing that
//! another node needs. Every operation is one short transaction whose times
//! come from the injected [`Clock`] (passed as parameters, never SQL
//! `now()`). Receives lock rows with `FOR UPDATE SKIP LOCKED`, so nodes
//! never hand out the same message; FIFO queues serialise sends and
//! receives per queue with a transaction-scoped advisory lock (rule F1).
//! Long polls wake on a local [`Notify`] for sends through this node and on
//! `LISTEN/NOTIFY` for sends through the others ([`listener`]).

mod activity_sync;
mod alarm_store;
mod broker;
mod cache;
mod combine;
mod consumer_store;
mod coordination;
mod delete;
mod error;
mod listener;
mod locks;
mod moves;
mod pick;
mod receive;
mod rows;
mod schema;
mod secrets;
mod send;
mod sweep;
mod visibility;

#[cfg(feature = "test-support")]
pub mod testing;

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::{
    GenericClient, Manager, ManagerConfig, Pool, RecyclingMethod, Runtime, Transaction,
};
use parking_lot::Mutex;
use sluice_broker::EngineError;
use sluice_broker::{NewMessage, QueueCounts, SentMessage};
use sluice_core::clock::Clock;
use sluice_core::limits::RECREATE_AFTER_DELETE_SECS;
use tokio::sync::Notify;
use tokio_postgres::types::ToSql;
use tokio_postgres::{NoTls, Row};

pub use error::PgError;
use rows::{QUEUE_COLUMNS, QueueRow, col};
pub use schema::SCHEMA_VERSION;
use sluice_broker::activity::{self, Activity};

/// The advisory lock the retention sweep takes (one node sweeps at a time).
pub const SWEEP_LOCK_KEY: i64 = locks::SWEEP;

/// How a node connects.
#[derive(Debug, Clone)]
pub struct PostgresOptions {
    /// Most connections this node opens for requests (one more listens).
    pub pool_size: usize,
    /// How long a request waits for a free connection before it answers
    /// `ServiceUnavailable`.
    pub wait_timeout: Duration,
}

impl Default for PostgresOptions {
    fn default() -> Self {
        Self {
            pool_size: 16,
            wait_timeout: Duration::from_secs(5),
        }
    }
}

/// The PostgreSQL engine. Clones share the same pool.
#[derive(Clone)]
pub struct PostgresBroker {
    inner: Arc<Inner>,
}

struct Inner {
    pool: Pool,
    clock: Arc<dyn Clock>,
    /// Long polls waiting on this node, by queue name.
    waiters: Mutex<HashMap<String, Arc<Notify>>>,
    /// Activity counters by queue id (rule M1).
    activity: Mutex<HashMap<i64, Arc<Activity>>>,
    /// Messages in flight by queue id, as last counted, and when.
    in_flight: Mutex<HashMap<i64, (usize, std::time::Instant)>>,
    /// Queue rows as last read, for the hot actions.
    queues: cache::QueueCache,
    /// Standard-queue sends put together by queue (see combine.rs).
    sends: combine::Combiner<i64, Arc<Vec<NewMessage>>, Vec<SentMessage>>,
    /// Standard-queue deletes put together by queue.
    deletes: combine::Combiner<i64, delete::DeleteRequest, delete::DeleteResults>,
    /// Standard-queue receive attempts put together by queue and
    /// visibility timeout.
    receives: combine::Combiner<(i64, u32), usize, receive::Share>,
    /// The LISTEN connection's task; ends with the engine.
    listener: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// This node's activity not yet added to the shared totals.
    flusher: tokio::sync::Mutex<activity_sync::Flusher>,
    /// How long a deleted name stays taken (ms); 0 frees it at once.
    deleted_name_hold_ms: std::sync::atomic::AtomicU64,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(task) = self.listener.lock().take() {
            task.abort();
        }
    }
}

impl PostgresBroker {
    /// How long a deleted queue's name stays taken (rule V19: a minute, as
    /// on SQS); zero frees it at once, for test suites that recreate the
    /// same queues quickly. Per node: give every node the same setting.
    pub fn set_deleted_name_hold(&self, hold: std::time::Duration) {
        let ms = u64::try_from(hold.as_millis()).unwrap_or(u64::MAX);
        self.inner
            .deleted_name_hold_ms
            .store(ms, std::sync::atomic::Ordering::Relaxed);
    }

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
        }
        let broker = Self {
            inner: Arc::new(Inner {
                pool,
                clock,
                waiters: Mutex::new(HashMap::new()),
                activity: Mutex::new(HashMap::new()),
                in_flight: Mutex::new(HashMap::new()),
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

    /// Starts the background task that applies retention and forgets
    /// expired deduplication ids and receive attempts, on one node at a
    /// time. Stops when the engine is dropped.
    pub fn start_sweeper(&self) -> tokio::task::JoinHandle<()> {
        sweep::spawn(Arc::downgrade(&self.inner))
    }

    /// Applies retention to every queue now, if no other node is doing it.
    pub async fn sweep(&self) -> Result<bool, EngineError> {
        sweep::sweep_once(&self.inner).await
    }

    /// Takes a lock named `name` across every node sharing the database,
    /// held until the returned claim is dropped or this node dies; `None`
    /// when another node holds it.
    pub async fn try_claim(&self, name: &str) -> Result<Option<Claim>, EngineError> {
        let client = self.inner.client().await?;
        let key = locks::claim_key(name);
        let row = client
            .query_one("SELECT pg_try_advisory_lock($1)", &[&key])
            .await
            .map_err(error::db)?;
        let got: bool = col(&row, 0)?;
        Ok(got.then(|| Claim {
            client: Some(client),
            key,
        }))
    }
}

/// A named lock held by this node (see [`PostgresBroker::try_claim`]): its
/// connection stays out of the pool while held, and is closed if the
/// unlock cannot be confirmed, so the lock never outlives the claim.
pub struct Claim {
    client: Option<deadpool_postgres::Object>,
    key: i64,
}

impl sluice_broker::ClaimGuard for Claim {
    fn is_held(&self) -> bool {
        // The lock lives as long as the session that took it.
        self.client.as_ref().is_some_and(|c| !c.is_closed())
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        let Some(client) = self.client.take() else {
            return;
        };
        let key = self.key;
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if client
                    .execute("SELECT pg_advisory_unlock($1)", &[&key])
                    .await
                    .is_err()
                {
                    // Closing the session releases the lock.
                    drop(deadpool_postgres::Object::take(client));
                }
            });
        } else {
            drop(deadpool_postgres::Object::take(client));
        }
    }
}

impl Inner {
    fn now(&self) -> i64 {
        self.clock.now() as i64
    }

    async fn client(&self) -> Result<deadpool_postgres::Object, EngineError> {
        self.pool.get().await.map_err(error::pool)
    }

    /// The queue named `name` as this node last read it (at most
    /// [`cache::QUEUE_TTL`] ago), else read now outside any transaction.
    async fn queue(
        &self,
        client: &deadpool_postgres::Object,
        name: &str,
    ) -> Result<Arc<QueueRow>, EngineError> {
        if let Some(q) = self.queues.get(name) {
            return Ok(q);
        }
        self.fresh_queue(client, name).await
    }

    /// The queue named `name` as this node last read it, taking a
    /// connection only to read it again.
    async fn queue_by_name(&self, name: &str) -> Result<Arc<QueueRow>, EngineError> {
        if let Some(q) = self.queues.get(name) {
            return Ok(q);
        }
        let client = self.client().await?;
        self.fresh_queue(&client, name).await
    }

    /// The queue named `name` read now (and remembered).
    async fn fresh_queue(
        &self,
        client: &deadpool_postgres::Object,
        name: &str,
    ) -> Result<Arc<QueueRow>, EngineError> {
        let q = Arc::new(queue_row(client, name, "").await?);
        self.queues.put(q.clone());
        Ok(q)
    }

    fn activity(&self, queue_id: i64) -> Arc<Activity> {
        self.activity.lock().entry(queue_id).or_default().clone()
    }

    fn waiter(&self, name: &str) -> Arc<Notify> {
        self.waiters
            .lock()
            .entry(name.to_string())
            .or_insert_with(|| Arc::new(Notify::new()))
            .clone()
    }

    /// Wakes this node's long polls on `name`.
    fn wake(&self, name: &str) {
        let waiter = self.waiters.lock().get(name).cloned();
        if let Some(w) = waiter {
            w.notify_waiters();
        }
    }

    /// Wakes every long poll of this node (after a gap in notifications).
    fn wake_all(&self) {
        let all: Vec<Arc<Notify>> = self.waiters.lock().values().cloned().collect();
        for w in all {
            w.notify_waiters();
        }
    }
}

/// Runs a prepared (cached) statement, in a transaction or on its own.
pub(crate) async fn query<C: GenericClient>(
    tx: &C,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<Vec<Row>, EngineError> {
    let statement = tx.prepare_cached(sql).await.map_err(error::db)?;
    tx.query(&statement, params).await.map_err(error::db)
}

/// Runs a prepared (cached) statement, in a transaction or on its own;
/// rows changed.
pub(crate) async fn execute<C: GenericClient>(
    tx: &C,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<u64, EngineError> {
    let statement = tx.prepare_cached(sql).await.map_err(error::db)?;
    tx.execute(&statement, params).await.map_err(error::db)
}

/// The queue named `name`; `lock` is a row lock clause or "".
pub(crate) async fn queue_row<C: GenericClient>(
    tx: &C,
    name: &str,
    lock: &str,
) -> Result<QueueRow, EngineError> {
    let sql = format!("SELECT {QUEUE_COLUMNS} FROM sluice_queues WHERE name = $1 {lock}");
    let rows = query(tx, &sql, &[&name]).await?;
    rows.first()
        .map(QueueRow::from_row)
        .transpose()?
        .ok_or(EngineError::QueueDoesNotExist)
}

/// The queue named `name`, if it exists, locked against deletion until
/// the transaction ends (messages are about to move into it).
pub(crate) async fn target_queue(
    tx: &Transaction<'_>,
    name: &str,
) -> Result<Option<QueueRow>, EngineError> {
    match queue_row(tx, name, "FOR KEY SHARE").await {
        Ok(q) => Ok(Some(q)),
        Err(EngineError::QueueDoesNotExist) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Deletes the queue's messages past retention (rule V7).
pub(crate) async fn expire(
    inner: &Inner,
    tx: &Transaction<'_>,
    q: &QueueRow,
    now: i64,
) -> Result<(), EngineError> {
    let cut = now - q.retention_ms();
    let sql = format!(
        "DELETE FROM sluice_messages WHERE queue_id = $1 AND enqueued_at <= $2
           AND seq = ANY(ARRAY({}))",
        sweep::expired_seqs("$1", "$2", "ALL")
    );
    let n = execute(tx, &sql, &[&q.id, &cut]).await?;
    activity::add(&inner.activity(q.id).expired, n);
    Ok(())
}

/// Tells every node that `name` may have a receivable message (delivered
/// at commit).
pub(crate) async fn announce(tx: &Transaction<'_>, name: &str) -> Result<(), EngineError> {
    query(tx, "SELECT pg_notify('sluice_arrivals', $1)", &[&name]).await?;
    Ok(())
}

impl PostgresBroker {
    /// Counts, oldest message age and the queue's id.
    async fn queue_stats_inner(&self, name: &str) -> Result<(QueueCounts, u64, i64), EngineError> {
        let inner = &self.inner;
        let now = inner.now();
        let mut client = inner.client().await?;
        let tx = client.transaction().await.map_err(error::db)?;
        let q = queue_row(&tx, name, "").await?;
        expire(inner, &tx, &q, now).await?;
        let rows = query(
            &tx,
            "SELECT count(*) FILTER (WHERE visible_at <= $2),
                    count(*) FILTER (WHERE visible_at > $2 AND receive_count > 0),
                    count(*) FILTER (WHERE visible_at > $2 AND receive_count = 0),
                    min(enqueued_at) FILTER (WHERE NOT back)
             FROM sluice_messages WHERE queue_id = $1",
            &[&q.id, &now],
        )
        .await?;
        tx.commit().await.map_err(error::db)?;
        let row = rows
            .first()
            .ok_or_else(|| EngineError::Storage("no counts".into()))?;
        let count = |i| col::<i64>(row, i).map(|n| n.max(0) as u64);
        let counts = QueueCounts {
            visible: count(0)?,
            in_flight: count(1)?,
            delayed: count(2)?,
        };
        let oldest: Option<i64> = col(row, 3)?;
        let age = oldest.map_or(0, |t| (now - t).max(0) as u64);
        Ok((counts, age, q.id))
    }
}

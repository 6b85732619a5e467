//! The engine's state and what every operation shares: the handle
//! (`PostgresBroker`) and its state (`Inner`: the pool, the clock, this
//! node's long polls, counters, queue cache and combiners), cluster-wide
//! claims, and the statement helpers (`query`, `execute`),
//! the queue row read (`queue_row`, `target_queue`), retention on the way
//! (`expire`) and the arrival notice to other nodes (`announce`). The
//! types `Inner` holds for the operations are defined here too (what the
//! combiners carry, the activity flush's state), so that the operations
//! import the engine and the engine none of them.

use std::collections::HashMap;
use std::sync::Arc;

use deadpool_postgres::{GenericClient, Pool, Transaction};
use parking_lot::Mutex;
use sluice_broker::EngineError;
use sluice_broker::{NewMessage, ReceivedMessage, SentMessage};
use sluice_core::clock::Clock;
use sluice_core::receipt::ReceiptHandle;
use tokio::sync::Notify;

use crate::error;
use crate::retention::{expired_seqs, keep_expired};
use crate::rows::{MESSAGE_COLUMNS, QUEUE_COLUMNS, QueueRow, col};
use crate::{cache, combine, locks};
use sluice_broker::activity::{self, Activity};

/// The advisory lock the retention sweep takes (one node sweeps at a time).
pub const SWEEP_LOCK_KEY: i64 = locks::SWEEP;

/// The PostgreSQL engine. Clones share the same pool.
#[derive(Clone)]
pub struct PostgresBroker {
    pub(crate) inner: Arc<Inner>,
}

/// The engine's state, shared by its clones and its background tasks.
pub(crate) struct Inner {
    pub(crate) pool: Pool,
    pub(crate) clock: Arc<dyn Clock>,
    /// Long polls waiting on this node, by queue name.
    pub(crate) waiters: Mutex<HashMap<String, Arc<Notify>>>,
    /// Activity counters by queue id (rule M1).
    pub(crate) activity: Mutex<HashMap<i64, Arc<Activity>>>,
    /// Messages in flight by queue id, as last counted, and when.
    pub(crate) in_flight: Mutex<HashMap<i64, (usize, std::time::Instant)>>,
    /// Queue rows as last read, for the hot actions.
    pub(crate) queues: cache::QueueCache,
    /// Standard-queue sends put together by queue (see combine.rs).
    pub(crate) sends: combine::Combiner<i64, Arc<Vec<NewMessage>>, Vec<SentMessage>>,
    /// Standard-queue deletes put together by queue.
    pub(crate) deletes: combine::Combiner<i64, DeleteRequest, DeleteResults>,
    /// Standard-queue receive attempts put together by queue and
    /// visibility timeout.
    pub(crate) receives: combine::Combiner<(i64, u32), usize, Share>,
    /// The LISTEN connection's task; ends with the engine.
    pub(crate) listener: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// This node's activity not yet added to the shared totals.
    pub(crate) flusher: tokio::sync::Mutex<Flusher>,
    /// How long a deleted name stays taken (ms); 0 frees it at once.
    pub(crate) deleted_name_hold_ms: std::sync::atomic::AtomicU64,
    /// Fair queues' noisy tenants as this node sees them (rule V10).
    pub(crate) fair: crate::fair::FairTenants,
    /// The data keys of encryption at rest (rules E1–E6).
    pub(crate) data_keys: Arc<sluice_keyring::DataKeys>,
    /// Held while this node makes a data key (see `encryption.rs`).
    pub(crate) making_data_key: tokio::sync::Mutex<()>,
}

/// One DeleteMessage or DeleteMessageBatch request on a standard queue,
/// as the delete combiner carries it (see delete.rs).
pub(crate) struct DeleteRequest {
    pub(crate) handles: Vec<String>,
    pub(crate) decoded: Vec<Option<ReceiptHandle>>,
}

/// Each handle's outcome, in the request's order.
pub(crate) type DeleteResults = Vec<Result<(), EngineError>>;

/// What the one-statement receive gave one of the requests it served
/// (see receive.rs).
pub(crate) struct Share {
    pub(crate) delivered: Vec<ReceivedMessage>,
    /// Messages the statement picked but left, over maxReceiveCount, for
    /// the DLQ: told to every request it could not fill.
    pub(crate) dead: i64,
    /// When the next message is due, if the statement found none.
    pub(crate) next_due: Option<i64>,
}

/// The activity counters, in the order of `sluice_activity`'s columns.
pub(crate) type Counts = [u64; 8];

/// What this node has added to the shared activity totals so far: the
/// state its flushes keep (the flushing is activity_sync.rs's).
#[derive(Default)]
pub(crate) struct Flusher {
    /// The counters as last added, by queue id.
    pub(crate) flushed: HashMap<i64, Counts>,
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
    pub(crate) fn now(&self) -> i64 {
        self.clock.now() as i64
    }

    pub(crate) async fn client(&self) -> Result<deadpool_postgres::Object, EngineError> {
        self.pool.get().await.map_err(error::pool)
    }

    /// The queue named `name` as this node last read it (at most
    /// [`cache::QUEUE_TTL`] ago), else read now outside any transaction.
    pub(crate) async fn queue(
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
    pub(crate) async fn queue_by_name(&self, name: &str) -> Result<Arc<QueueRow>, EngineError> {
        if let Some(q) = self.queues.get(name) {
            return Ok(q);
        }
        let client = self.client().await?;
        self.fresh_queue(&client, name).await
    }

    /// The queue named `name` read now (and remembered).
    pub(crate) async fn fresh_queue(
        &self,
        client: &deadpool_postgres::Object,
        name: &str,
    ) -> Result<Arc<QueueRow>, EngineError> {
        let q = Arc::new(queue_row(client, name, "").await?);
        self.queues.put(q.clone());
        Ok(q)
    }

    pub(crate) fn activity(&self, queue_id: i64) -> Arc<Activity> {
        self.activity.lock().entry(queue_id).or_default().clone()
    }

    pub(crate) fn waiter(&self, name: &str) -> Arc<Notify> {
        self.waiters
            .lock()
            .entry(name.to_string())
            .or_insert_with(|| Arc::new(Notify::new()))
            .clone()
    }

    /// Wakes this node's long polls on `name`.
    pub(crate) fn wake(&self, name: &str) {
        let waiter = self.waiters.lock().get(name).cloned();
        if let Some(w) = waiter {
            w.notify_waiters();
        }
    }

    /// Wakes every long poll of this node (after a gap in notifications).
    pub(crate) fn wake_all(&self) {
        let all: Vec<Arc<Notify>> = self.waiters.lock().values().cloned().collect();
        for w in all {
            w.notify_waiters();
        }
    }
}

pub(crate) use crate::statements::{execute, query};

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

/// Deletes the queue's messages past retention (rule V7), or moves them to
/// `sluice_expired` for the archive when the queue keeps what expires
/// (rule X8).
pub(crate) async fn expire(
    inner: &Inner,
    tx: &Transaction<'_>,
    q: &QueueRow,
    now: i64,
) -> Result<(), EngineError> {
    let cut = now - q.retention_ms();
    let doomed = format!(
        "DELETE FROM sluice_messages WHERE queue_id = $1 AND enqueued_at <= $2
           AND seq = ANY(ARRAY({}))",
        expired_seqs("$1", "$2", "ALL")
    );
    let sql = if q.config.archive_expired {
        format!(
            "WITH gone AS ({doomed} RETURNING queue_id, {MESSAGE_COLUMNS}) {}",
            keep_expired("true")
        )
    } else {
        doomed
    };
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

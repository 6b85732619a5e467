//! Push consumers: sluice receives a queue's messages in batches and POSTs
//! each batch to an HTTP handler as Lambda's SQS event source mapping
//! invokes a function (rules C1–C6), deleting what the handler handled.
//!
//! On a FIFO queue one batch per message group is in flight at a time
//! without any bookkeeping here: the engine's receive never hands out a
//! message of a group whose earlier message is in flight (rule F13), and a
//! delivery keeps its whole batch in flight until it is answered.
//!
//! [`config`] holds a consumer's settings and their checks; [`gather`]
//! receives a batch (over a batching window), dropping what [`filter`]
//! does not admit; [`scaling`] decides how many
//! batches may be in flight; [`cluster_slots`] holds that limit across
//! nodes sharing one storage; [`event`] builds the event; [`outcome`] reads the handler's answer; [`deliver`]
//! posts one batch, keeps its messages invisible while it runs and applies
//! the answer; [`registry`] lists every consumer with its state;
//! [`runtime`] creates, changes and deletes consumers at run time, saved
//! by [`store`]; [`metrics`] counts what they do, for the server's
//! `/metrics` to export. This file holds the poll loop, which runs each batch's
//! receive and delivery in a task of its own. Everything goes through the
//! [`Broker`] trait, so every engine serves consumers.

pub mod cluster_slots;
pub mod completed;
pub mod config;
pub mod deliver;
pub mod event;
pub mod filter;
pub mod gather;
pub mod metrics;
pub mod outcome;
pub mod registry;
pub mod runtime;
pub mod scaling;
pub mod store;

use std::sync::Arc;
use std::time::Duration;

use sluice_broker::Broker;
use sluice_core::queue_name::Account;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::Notify;
use tokio::task::{JoinHandle, JoinSet};
use tokio::time::Instant;

use crate::metrics::ConsumerMetrics;
use cluster_slots::ClusterSlots;
pub use config::{ConsumerConfigError, ConsumerSpec};
use deliver::{Delivery, HandlerClient};
use event::EventSource;
use outcome::Outcome;
use registry::ConsumerRegistry;
use scaling::Scaling;

/// Wait before polling again after the queue could not be read.
const RETRY_AFTER_ERROR: Duration = Duration::from_secs(1);

/// How often a stopped consumer looks whether it was resumed.
const STOPPED_POLL: Duration = Duration::from_millis(100);

/// Why consumers cannot start.
#[derive(Debug, thiserror::Error)]
pub enum ConsumerStartError {
    /// A setting is wrong.
    #[error(transparent)]
    Config(#[from] ConsumerConfigError),
    /// The queue cannot be read.
    #[error("consumer {name}: queue {queue}: {reason}")]
    Queue {
        /// The consumer.
        name: String,
        /// Its queue.
        queue: String,
        /// Why.
        reason: String,
    },
}

/// Checks every consumer and its queue: the settings' ranges, unique names,
/// a queue that exists, a batch size within the queue type's limit, and a
/// visibility timeout that covers the handler's time limit.
pub async fn check_consumers<B: Broker>(
    broker: &B,
    specs: &[ConsumerSpec],
) -> Result<(), ConsumerStartError> {
    config::validate_all(specs)?;
    for spec in specs {
        let queue_error = |reason: String| ConsumerStartError::Queue {
            name: spec.name.clone(),
            queue: spec.queue.clone(),
            reason,
        };
        let meta = broker
            .get_queue(&spec.queue)
            .await
            .map_err(|e| queue_error(e.to_string()))?;
        spec.validate_against(&meta)?;
    }
    Ok(())
}

/// The running consumers; dropping it stops them, deliveries in flight
/// included (their messages come back after their visibility timeout).
#[derive(Debug, Default)]
pub struct Consumers {
    tasks: Vec<JoinHandle<()>>,
}

impl Drop for Consumers {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// Starts one poll loop per consumer (checked by [`check_consumers`]) on
/// `host`, each listed in its registry with its state, as a config-file
/// consumer.
pub fn spawn_consumers<B: Broker>(
    host: ConsumerHost<'_, B>,
    specs: Vec<ConsumerSpec>,
) -> Consumers {
    let tasks = specs
        .into_iter()
        .map(|spec| {
            host.registry.register(&spec);
            host.spawn(spec)
        })
        .collect();
    Consumers { tasks }
}

/// What a consumer's poll loop is started with.
pub struct ConsumerHost<'a, B> {
    /// The engine.
    pub broker: &'a B,
    /// The account of the queues' ARNs.
    pub account: &'a Account,
    /// Counters.
    pub metrics: &'a ConsumerMetrics,
    /// Where its state is listed (it must be registered already).
    pub registry: &'a ConsumerRegistry,
    /// The handlers' client (see [`deliver::handler_client`]).
    pub client: &'a HandlerClient,
}

// Copied whatever the engine: it holds only references (a derive would
// ask `B: Copy`).
impl<B> Clone for ConsumerHost<'_, B> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<B> Copy for ConsumerHost<'_, B> {}

impl<B: Broker> ConsumerHost<'_, B> {
    /// Starts the poll loop of `spec`, already registered.
    pub fn spawn(&self, spec: ConsumerSpec) -> JoinHandle<()> {
        // Checked when the consumer was: a pattern that does not compile
        // now cannot happen, and is logged rather than panicked on.
        let filter = filter::Filter::compile(&spec.filter).unwrap_or_else(|e| {
            tracing::error!(consumer = %spec.name, error = %e, "filter refused; running without it");
            filter::Filter::default()
        });
        self.metrics.started(&spec.name);
        // Checked when the consumer was, as the filter.
        let skip_completed = (spec.skip_completed.as_deref())
            .and_then(|key| completed::CompletedKey::parse(key).ok())
            .map(|key| completed::SkipCompleted {
                key,
                account: self.account.owner_of(&spec.queue).to_string(),
            });
        let delivery = Delivery {
            filter,
            skip_completed,
            fifo: sluice_core::queue_name::is_fifo_name(&spec.queue),
            broker: self.broker.clone(),
            source: EventSource::new(self.account, &spec.queue),
            spec,
            client: self.client.clone(),
            metrics: self.metrics.clone(),
            sealer: tokio::sync::OnceCell::new(),
        };
        tokio::spawn(poll(Arc::new(delivery), self.registry.clone()))
    }
}

/// Keeps as many batches in flight as the current limit allows (rule C7),
/// each received and delivered by its own task. The receives of those
/// batches run side by side, as do the deletes after their deliveries, so
/// that a durable engine commits them together (one `fdatasync` for many)
/// rather than one after the other. Errors reading the queue (deleted,
/// say) are logged once per streak and retried.
async fn poll<B: Broker>(delivery: Arc<Delivery<B>>, registry: ConsumerRegistry) {
    let spec = &delivery.spec;
    let slots = ClusterSlots::new(&delivery.broker, spec);
    let slot = Slot {
        delivery: delivery.clone(),
        // Shared with the deliveries, which report their answers as they
        // come, so that a Retry-After holds back even a batch already
        // received.
        scaling: Arc::new(Mutex::new(Scaling::new(spec.max_concurrency))),
        registry: registry.clone(),
        received: Arc::new(Notify::new()),
        failing: Arc::new(AtomicBool::new(false)),
    };
    // Dropped with this task: receives and deliveries in flight stop with it.
    let mut in_flight = JoinSet::new();
    loop {
        while in_flight.try_join_next().is_some() {}
        let (limit, paused_until, throttled, backing_off) = {
            let s = lock(&slot.scaling);
            let now = Instant::now();
            (
                s.limit(),
                s.paused_until(now),
                s.throttled(now),
                s.backing_off(now),
            )
        };
        let batches = delivery.metrics.in_flight(&spec.name);
        registry.update(&spec.name, batches, limit, throttled, backing_off);
        delivery.metrics.set_limit(&spec.name, limit);
        if registry.is_stopped(&spec.name) {
            // PauseConsumer (rule C10): nothing new is received; batches
            // in flight finish.
            tokio::select! {
                _ = in_flight.join_next(), if !in_flight.is_empty() => {}
                _ = tokio::time::sleep(STOPPED_POLL) => {}
            }
            continue;
        }
        if let Some(until) = paused_until {
            tokio::time::sleep_until(until).await;
            continue;
        }
        if in_flight.len() >= limit as usize {
            // A batch finished, or one was received (a full one may have
            // raised the limit).
            tokio::select! {
                _ = in_flight.join_next() => {}
                () = slot.received.notified() => {}
            }
            continue;
        }
        // Held from the receive to the end of the delivery (rule C14).
        let Some(lease) = slots.claim().await else {
            tokio::select! {
                _ = in_flight.join_next(), if !in_flight.is_empty() => {}
                _ = tokio::time::sleep(cluster_slots::RETRY) => {}
            }
            continue;
        };
        in_flight.spawn(slot.clone().run(lease));
    }
}

/// One batch's turn: receive it, then deliver it.
#[derive(Clone)]
struct Slot<B> {
    delivery: Arc<Delivery<B>>,
    scaling: Arc<Mutex<Scaling>>,
    registry: ConsumerRegistry,
    /// Told whenever a batch is received.
    received: Arc<Notify>,
    /// Receives are failing: logged at the first failure of a streak.
    failing: Arc<AtomicBool>,
}

impl<B: Broker> Slot<B> {
    /// Receives a batch and delivers it, holding `lease` (one of the
    /// consumer's slots across the nodes, rule C14) until it is done.
    async fn run(self, lease: cluster_slots::Slot) {
        let (delivery, spec) = (&self.delivery, &self.delivery.spec);
        let received = async {
            let meta = delivery.broker.get_queue(&spec.queue).await?;
            let visibility = meta.config.visibility_timeout;
            Ok::<_, sluice_core::SqsError>((visibility, delivery.gather(visibility).await?))
        };
        let (visibility, messages) = match received.await {
            Err(e) => {
                drop(lease);
                if !self.failing.swap(true, Ordering::Relaxed) {
                    tracing::warn!(consumer = %spec.name, queue = %spec.queue, error = %e, "cannot receive; retrying");
                }
                tokio::time::sleep(RETRY_AFTER_ERROR).await;
                return;
            }
            Ok(received) => received,
        };
        self.failing.store(false, Ordering::Relaxed);
        if messages.is_empty() {
            return;
        }
        let _lease = lease;
        let _counted = delivery.metrics.batch_in_flight(&spec.name);
        lock(&self.scaling).received(messages.len(), spec.batch_size);
        self.received.notify_one();
        loop {
            wait_for_pauses(
                delivery,
                &self.scaling,
                &self.registry,
                &messages,
                visibility,
            )
            .await;
            let outcome = delivery.deliver(&messages, visibility).await;
            let unreached = outcome == Outcome::Unreached;
            lock(&self.scaling).answered(&outcome, Instant::now());
            // The handler was never reached (rule C12): the same batch,
            // still in flight on its one receive, is posted again once the
            // back-off pause ends, unless its messages could not be kept.
            if !unreached || !delivery.keep(&messages, visibility).await {
                break;
            }
        }
    }
}

/// Holds a received batch, invisible, while a pause holds it back: one
/// that began while it was received (a Retry-After, a back-off, or
/// PauseConsumer during the long poll) or after its handler was found down.
async fn wait_for_pauses<B: Broker>(
    delivery: &Delivery<B>,
    scaling: &Mutex<Scaling>,
    registry: &ConsumerRegistry,
    messages: &[sluice_broker::ReceivedMessage],
    visibility: u32,
) {
    loop {
        let paused_until = lock(scaling).paused_until(Instant::now());
        if let Some(until) = paused_until {
            let wait = tokio::time::sleep_until(until);
            delivery.hold(messages, visibility, wait).await;
        } else if registry.is_stopped(&delivery.spec.name) {
            let resumed = async {
                while registry.is_stopped(&delivery.spec.name) {
                    tokio::time::sleep(STOPPED_POLL).await;
                }
            };
            delivery.hold(messages, visibility, resumed).await;
        } else {
            return;
        }
    }
}

/// The scaling state; a panic elsewhere cannot leave it half-changed (its
/// changes are single assignments), so a poisoned lock is used as it is.
fn lock(scaling: &Mutex<Scaling>) -> std::sync::MutexGuard<'_, Scaling> {
    scaling
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

//! Push consumers: sluice receives a queue's messages in batches and POSTs
//! each batch to an HTTP handler as Lambda's SQS event source mapping
//! invokes a function (rules C1, C2, C4), deleting what the handler
//! handled.
//!
//! [`config`] holds a consumer's settings and their checks; [`event`]
//! builds the event; [`outcome`] reads the handler's answer; [`deliver`]
//! posts one batch, keeps its messages invisible while it runs and applies
//! the answer. This file holds the poll loop. Everything goes through the
//! [`Broker`] trait, so every engine serves consumers.

pub mod config;
pub mod deliver;
pub mod event;
pub mod outcome;

use std::sync::Arc;
use std::time::Duration;

use sluice_broker::{Broker, ReceiveOptions};
use sluice_core::queue_name::Account;
use tokio::sync::Semaphore;
use tokio::task::{JoinHandle, JoinSet};

use crate::metrics::ConsumerMetrics;
pub use config::{ConsumerConfigError, ConsumerSpec};
use deliver::{Delivery, handler_client};
use event::EventSource;

/// The longest long poll of a receive (SQS's limit).
const POLL_WAIT: Duration = Duration::from_secs(20);

/// Wait before polling again after the queue could not be read.
const RETRY_AFTER_ERROR: Duration = Duration::from_secs(1);

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
/// a queue that exists, is not FIFO (not in this slice) and whose visibility
/// timeout covers the handler's time limit.
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
        if sluice_core::queue_name::is_fifo_name(&spec.queue) {
            // Lambda's FIFO rules (one batch per group, a failed item sends
            // the rest of its group back: rule C3) are not implemented yet.
            return Err(queue_error(
                "FIFO queues have no push consumers yet".to_string(),
            ));
        }
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

/// Starts one poll loop per consumer (checked by [`check_consumers`]).
pub fn spawn_consumers<B: Broker>(
    broker: &B,
    account: &Account,
    metrics: &ConsumerMetrics,
    specs: Vec<ConsumerSpec>,
) -> Consumers {
    let client = handler_client();
    let tasks = specs
        .into_iter()
        .map(|spec| {
            let delivery = Delivery {
                broker: broker.clone(),
                source: EventSource::new(account, &spec.queue),
                spec,
                client: client.clone(),
                metrics: metrics.clone(),
                sealer: tokio::sync::OnceCell::new(),
            };
            tokio::spawn(poll(Arc::new(delivery)))
        })
        .collect();
    Consumers { tasks }
}

/// Receives batches while fewer than `max_concurrency` are in flight and
/// hands each to its own delivery task. Errors reading the queue (deleted,
/// say) are logged once per streak and retried.
async fn poll<B: Broker>(delivery: Arc<Delivery<B>>) {
    let spec = &delivery.spec;
    let permits = Arc::new(Semaphore::new(spec.max_concurrency as usize));
    // Dropped with this task: deliveries in flight stop with it.
    let mut in_flight = JoinSet::new();
    let mut failing = false;
    loop {
        while in_flight.try_join_next().is_some() {}
        let Ok(permit) = permits.clone().acquire_owned().await else {
            return;
        };
        let received = async {
            let meta = delivery.broker.get_queue(&spec.queue).await?;
            // Given explicitly: the delivery's extensions then use the very
            // timeout its messages got, even if the queue's changes during
            // the long poll.
            let options = ReceiveOptions {
                max_messages: spec.batch_size,
                visibility_timeout: Some(meta.config.visibility_timeout),
                wait: POLL_WAIT,
                attempt_id: None,
            };
            let messages = delivery
                .broker
                .receive_messages(&spec.queue, options)
                .await?;
            Ok::<_, sluice_core::SqsError>((meta.config.visibility_timeout, messages))
        };
        match received.await {
            Err(e) => {
                if !failing {
                    tracing::warn!(consumer = %spec.name, queue = %spec.queue, error = %e, "cannot receive; retrying");
                }
                failing = true;
                tokio::time::sleep(RETRY_AFTER_ERROR).await;
            }
            Ok((_, messages)) if messages.is_empty() => failing = false,
            Ok((visibility, messages)) => {
                failing = false;
                let delivery = delivery.clone();
                in_flight.spawn(async move {
                    delivery.deliver(messages, visibility).await;
                    drop(permit);
                });
            }
        }
    }
}

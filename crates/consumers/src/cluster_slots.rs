//! `max_concurrency` across every node sharing one storage (rule C14).
//!
//! Alone on its storage, a node's own count of batches in flight is the
//! whole count ([`super::scaling`] keeps it), and claiming a slot costs
//! nothing. On shared storage (PostgreSQL) each node's consumer of the
//! same name reads the same queue, so before it receives a batch a poll
//! loop leases one of the consumer's `max_concurrency` slots in the
//! storage, holds it while the batch is gathered and delivered, renews it
//! meanwhile, and frees it when the delivery ends. A node killed with
//! slots leased stops renewing them: they come free after [`LEASE`],
//! while its batches' messages come back after their visibility timeout.

use std::time::Duration;

use sluice_broker::{Broker, SlotLease};
use tokio::sync::oneshot;

use super::config::ConsumerSpec;

/// How long a slot stays leased without a renewal: how long a dead node's
/// slots stay taken.
pub const LEASE: Duration = Duration::from_secs(15);

/// How often a held slot's lease is renewed.
const RENEW_EVERY: Duration = Duration::from_secs(5);

/// How soon a poll loop that found every slot taken looks again.
pub const RETRY: Duration = Duration::from_millis(250);

/// Where a consumer's poll loop claims its slots.
pub enum ClusterSlots<B> {
    /// No other node shares the storage: every claim is granted.
    Local,
    /// The storage leases the slots.
    Shared {
        /// The engine.
        broker: B,
        /// The consumer's name, which its slots are leased under.
        consumer: String,
        /// Its `max_concurrency`.
        slots: u32,
    },
}

/// One leased slot: renewed while held, freed when dropped (a delivery
/// that ends, or is aborted with its consumer).
#[derive(Debug)]
pub struct Slot {
    /// Dropping it tells the lease's task to free the slot.
    _held: Option<oneshot::Sender<()>>,
}

impl<B: Broker> ClusterSlots<B> {
    /// The slots of `spec` on `broker`.
    pub fn new(broker: &B, spec: &ConsumerSpec) -> Self {
        if broker.is_shared() {
            ClusterSlots::Shared {
                broker: broker.clone(),
                consumer: spec.name.clone(),
                slots: spec.max_concurrency,
            }
        } else {
            ClusterSlots::Local
        }
    }

    /// A slot for one more batch, or `None` while the consumer's batches
    /// on every node hold them all (or the storage cannot be reached:
    /// logged, and nothing is received until it can).
    pub async fn claim(&self) -> Option<Slot> {
        let ClusterSlots::Shared {
            broker,
            consumer,
            slots,
        } = self
        else {
            return Some(Slot { _held: None });
        };
        let lease_ms = LEASE.as_millis() as u64;
        match broker
            .claim_consumer_slot(consumer.clone(), *slots, lease_ms)
            .await
        {
            Ok(Some(lease)) => Some(hold(broker.clone(), lease)),
            Ok(None) => None,
            Err(e) => {
                tracing::warn!(consumer = %consumer, error = %e, "cannot lease a delivery slot; retrying");
                None
            }
        }
    }
}

/// Renews `lease` until the returned slot is dropped, then frees it.
fn hold<B: Broker>(broker: B, lease: SlotLease) -> Slot {
    let (held, mut dropped) = oneshot::channel::<()>();
    tokio::spawn(async move {
        let lease_ms = LEASE.as_millis() as u64;
        let mut renewals =
            tokio::time::interval_at(tokio::time::Instant::now() + RENEW_EVERY, RENEW_EVERY);
        loop {
            tokio::select! {
                _ = &mut dropped => break,
                _ = renewals.tick() => match broker.renew_consumer_slot(lease.clone(), lease_ms).await {
                    Ok(true) => {}
                    Ok(false) => tracing::warn!(consumer = %lease.consumer, slot = lease.slot,
                        "a delivery slot's lease ran out: another node may use the slot"),
                    Err(e) => tracing::warn!(consumer = %lease.consumer, error = %e,
                        "cannot renew a delivery slot's lease"),
                },
            }
        }
        if let Err(e) = broker.release_consumer_slot(lease.clone()).await {
            tracing::warn!(consumer = %lease.consumer, error = %e,
                "cannot free a delivery slot: it comes free when its lease ends");
        }
    });
    Slot { _held: Some(held) }
}

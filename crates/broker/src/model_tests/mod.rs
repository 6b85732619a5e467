//! Model-based tests, written once against [`Broker`]: random sequences of
//! operations run against an engine and against a plain reference model of
//! the rules; any divergence is a bug in one of them.
//!
//! [`standard`] covers standard queues (rules V1–V5, V7, V10, V20, D1),
//! [`fifo`] group order (F1, F13), [`crash`] crashes of the storage at a
//! chosen point of a standard-queue sequence (D1, D3, D4). Each engine's test file holds the
//! `proptest!` blocks (so its case counts and its
//! `*.proptest-regressions` file stay next to it) and calls the runners
//! here with an [`EngineUnderTest`]. Compiled only with the `model-tests`
//! feature, which engines enable for their tests alone.

pub mod crash;
pub mod fifo;
pub mod standard;

use std::collections::BTreeMap;
use std::future::Future;

use sluice_core::attributes::QueueConfig;

use crate::conformance::Harness;
use crate::{Broker, CreateQueue};

/// An engine under test: its broker and manual clock (as for the
/// conformance suite), and a way to reopen its storage.
pub trait EngineUnderTest: Harness {
    /// Drops the engine and opens a new one on the same storage with the
    /// same clock, as a process restart would: the embedded durable engine
    /// reopens its directory, PostgreSQL connects a new broker to the same
    /// database. Only called by sequences generated with restarts.
    fn restart(&mut self) -> impl Future<Output = ()> + Send;
}

/// A current-thread runtime with time and I/O, one per case.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a Tokio runtime")
}

/// Creates queue `name` with the given attributes.
async fn create_queue<B: Broker>(broker: &B, name: &str, requested: BTreeMap<String, String>) {
    broker
        .create_queue(CreateQueue {
            name: name.into(),
            config: QueueConfig::for_create(name, &requested).expect("valid attributes"),
            requested,
            tags: Default::default(),
        })
        .await
        .expect("create the queue under test");
}

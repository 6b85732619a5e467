//! The embedded engine as an engine under test of the model-based tests:
//! in memory (no restarts) and durable (a restart reopens the directory).

#![allow(dead_code)] // Each test binary uses one or both.

use std::sync::Arc;

use sluice_broker::conformance::Harness;
use sluice_broker::model_tests::EngineUnderTest;
use sluice_core::ManualClock;
use sluice_embedded::EmbeddedBroker;

/// The engine in memory.
pub struct Memory {
    broker: EmbeddedBroker,
    clock: ManualClock,
}

impl Memory {
    pub fn new() -> Self {
        let clock = ManualClock::default();
        Self {
            broker: EmbeddedBroker::in_memory(Arc::new(clock.clone())),
            clock,
        }
    }
}

impl Harness for Memory {
    type B = EmbeddedBroker;
    fn broker(&self) -> &EmbeddedBroker {
        &self.broker
    }
    fn clock(&self) -> &ManualClock {
        &self.clock
    }
}

impl EngineUnderTest for Memory {
    async fn restart(&mut self) {
        unreachable!("an in-memory engine has no storage to reopen: run it without restarts")
    }
}

/// The engine on a temporary directory.
pub struct Durable {
    /// `None` only between closing and reopening.
    broker: Option<EmbeddedBroker>,
    clock: ManualClock,
    dir: tempfile::TempDir,
}

impl Durable {
    pub fn new() -> Self {
        let clock = ManualClock::default();
        let dir = tempfile::tempdir().expect("temp dir");
        let (broker, _) = EmbeddedBroker::open(dir.path(), Arc::new(clock.clone())).expect("open");
        Self {
            broker: Some(broker),
            clock,
            dir,
        }
    }
}

impl Harness for Durable {
    type B = EmbeddedBroker;
    fn broker(&self) -> &EmbeddedBroker {
        self.broker.as_ref().expect("engine open")
    }
    fn clock(&self) -> &ManualClock {
        &self.clock
    }
}

impl EngineUnderTest for Durable {
    async fn restart(&mut self) {
        // The old engine must be gone (its writer done, the file lock
        // released) before the directory is reopened.
        drop(self.broker.take());
        let (broker, _) =
            EmbeddedBroker::open(self.dir.path(), Arc::new(self.clock.clone())).expect("reopen");
        self.broker = Some(broker);
    }
}

//! The embedded engine as an engine under test of the model-based tests:
//! in memory (no restarts), durable (a restart reopens the directory), and
//! on injected storage that dies at a chosen sync.

#![allow(dead_code)] // Each test binary uses one or both.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use sluice_broker::conformance::Harness;
use sluice_broker::model_tests::EngineUnderTest;
use sluice_broker::model_tests::crash::CrashingEngine;
use sluice_core::ManualClock;
use sluice_embedded::{EmbeddedBroker, EmbeddedOptions, FaultStorage};

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

/// The engine on a [`FaultStorage`] that dies at a chosen sync, with
/// checkpoints every few milliseconds so that crashes land in the store's
/// commits and the log's segment changes too, not only in the log's syncs.
pub struct Crashing {
    broker: Option<EmbeddedBroker>,
    clock: ManualClock,
    storage: FaultStorage,
}

const CRASH_DIR: &str = "/data";

impl Crashing {
    pub fn new() -> Self {
        let clock = ManualClock::default();
        let storage = FaultStorage::new();
        let broker = Some(Self::open(&storage, &clock));
        Self {
            broker,
            clock,
            storage,
        }
    }

    fn open(storage: &FaultStorage, clock: &ManualClock) -> EmbeddedBroker {
        let options = EmbeddedOptions {
            checkpoint_interval: Duration::from_millis(5),
            // After a failed sync, attempts to reopen in place come fast.
            reopen_interval: Duration::from_millis(10),
            ..Default::default()
        };
        let storage = Arc::new(storage.clone());
        let clock = Arc::new(clock.clone());
        EmbeddedBroker::open_on(storage, Path::new(CRASH_DIR), clock, options)
            .expect("open")
            .0
    }

    /// Stops the engine as a crash would, keeping what was synced.
    fn crash(&mut self) {
        // What survives is taken before the engine stops: a clean stop's
        // checkpoint would make more durable than the crash left.
        let survived = self.storage.after_crash();
        self.storage.crash_at_sync(1);
        drop(self.broker.take());
        self.storage = survived;
    }
}

impl Harness for Crashing {
    type B = EmbeddedBroker;
    fn broker(&self) -> &EmbeddedBroker {
        self.broker.as_ref().expect("engine open")
    }
    fn clock(&self) -> &ManualClock {
        &self.clock
    }
}

impl CrashingEngine for Crashing {
    fn crash_at_sync(&self, n: u64) {
        self.storage.crash_at_sync(n);
    }

    fn crashed(&self) -> bool {
        self.storage.crashed()
    }

    fn fail_sync_at(&self, n: u64) {
        self.storage.fail_sync(n);
    }

    async fn reopened_in_place(&mut self) {
        let broker = self.broker();
        for _ in 0..1000 {
            if broker.storage_failure().is_none() {
                return;
            }
            broker.sweep();
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the engine did not reopen its storage within 10 s");
    }

    async fn reopen_after_crash(&mut self) {
        self.crash();
        self.broker = Some(Self::open(&self.storage, &self.clock));
    }

    async fn reopen_after_crash_on_full_disk(&mut self) {
        self.crash();
        self.storage.set_space(Some(0));
        self.broker = Some(Self::open(&self.storage, &self.clock));
    }

    fn space_returns(&self) {
        self.storage.set_space(None);
    }
}

//! The broker conformance suite against the embedded engine, in memory and
//! durable, and durable with no body cache (every body read from disk).

use std::sync::Arc;

use sluice_broker::conformance::Harness;
use sluice_core::ManualClock;
use sluice_embedded::{EmbeddedBroker, EmbeddedOptions};

struct Memory {
    broker: EmbeddedBroker,
    clock: ManualClock,
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

fn memory() -> Memory {
    let clock = ManualClock::default();
    Memory {
        broker: EmbeddedBroker::in_memory(Arc::new(clock.clone())),
        clock,
    }
}

struct Durable {
    broker: EmbeddedBroker,
    clock: ManualClock,
    _dir: tempfile::TempDir,
}

impl Harness for Durable {
    type B = EmbeddedBroker;
    fn broker(&self) -> &EmbeddedBroker {
        &self.broker
    }
    fn clock(&self) -> &ManualClock {
        &self.clock
    }
}

fn durable() -> Durable {
    let clock = ManualClock::default();
    let dir = tempfile::tempdir().expect("temp dir");
    let (broker, _) = EmbeddedBroker::open(dir.path(), Arc::new(clock.clone())).expect("open");
    Durable {
        broker,
        clock,
        _dir: dir,
    }
}

/// Durable with a body cache of zero bytes: every receive, peek, redrive
/// and dead-letter move finds the body on disk only.
fn durable_uncached() -> Durable {
    let clock = ManualClock::default();
    let dir = tempfile::tempdir().expect("temp dir");
    let options = EmbeddedOptions {
        body_cache_bytes: 0,
        ..Default::default()
    };
    let (broker, _) =
        EmbeddedBroker::open_with(dir.path(), Arc::new(clock.clone()), options).expect("open");
    Durable {
        broker,
        clock,
        _dir: dir,
    }
}

mod in_memory {
    use super::*;
    sluice_broker::conformance_tests!(memory());
    sluice_broker::conformance_tests!(heavy memory());
}

mod on_disk {
    use super::*;
    sluice_broker::conformance_tests!(durable());
}

mod on_disk_uncached {
    use super::*;
    sluice_broker::conformance_tests!(durable_uncached());
}

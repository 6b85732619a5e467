//! The broker conformance suite against the PostgreSQL engine, each test
//! on its own fresh database of a throwaway cluster. Without PostgreSQL's
//! binaries every test says SKIPPED and passes.

use std::sync::Arc;

use sluice_broker::conformance::Harness;
use sluice_core::ManualClock;
use sluice_postgres::{PostgresBroker, PostgresOptions, testing};

struct Pg {
    broker: PostgresBroker,
    clock: ManualClock,
}

impl Harness for Pg {
    type B = PostgresBroker;
    fn broker(&self) -> &PostgresBroker {
        &self.broker
    }
    fn clock(&self) -> &ManualClock {
        &self.clock
    }
}

/// A broker on a fresh database, or `None` when PostgreSQL is not installed.
async fn harness() -> Option<Pg> {
    let cluster = testing::cluster()?;
    let url = cluster.fresh_database().await;
    let clock = ManualClock::default();
    let options = PostgresOptions {
        pool_size: 4,
        ..Default::default()
    };
    let broker = PostgresBroker::connect(&url, Arc::new(clock.clone()), options)
        .await
        .expect("connect to the test database");
    Some(Pg { broker, clock })
}

sluice_broker::conformance_tests!(match harness().await {
    Some(h) => h,
    None => return,
});

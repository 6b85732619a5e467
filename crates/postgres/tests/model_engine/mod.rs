//! The PostgreSQL engine as an engine under test of the model-based tests:
//! each case on a fresh database of the throwaway cluster; a restart
//! connects a new broker to the same database.

use std::sync::Arc;

use sluice_broker::conformance::Harness;
use sluice_broker::model_tests::EngineUnderTest;
use sluice_core::ManualClock;
use sluice_postgres::{PostgresBroker, PostgresOptions, testing};

/// A broker on its own database.
pub struct Pg {
    /// `None` only between closing and reconnecting.
    broker: Option<PostgresBroker>,
    clock: ManualClock,
    url: String,
}

impl Pg {
    /// A broker on a fresh database, or `None` when PostgreSQL is not
    /// installed (the cluster has said SKIPPED).
    pub async fn fresh() -> Option<Self> {
        let url = testing::cluster()?.fresh_database().await;
        let clock = ManualClock::default();
        let broker = connect(&url, &clock).await;
        Some(Self {
            broker: Some(broker),
            clock,
            url,
        })
    }
}

async fn connect(url: &str, clock: &ManualClock) -> PostgresBroker {
    let options = PostgresOptions {
        pool_size: 2,
        ..Default::default()
    };
    PostgresBroker::connect(url, Arc::new(clock.clone()), options)
        .await
        .expect("connect to the test database")
}

impl Harness for Pg {
    type B = PostgresBroker;
    fn broker(&self) -> &PostgresBroker {
        self.broker.as_ref().expect("engine connected")
    }
    fn clock(&self) -> &ManualClock {
        &self.clock
    }
}

impl EngineUnderTest for Pg {
    async fn restart(&mut self) {
        // A new node: nothing of the old one's memory (queue cache,
        // in-flight bookkeeping) carries over, only the database.
        drop(self.broker.take());
        self.broker = Some(connect(&self.url, &self.clock).await);
    }
}

//! Property test of FIFO ordering (rules F1, F13) against the PostgreSQL
//! engine, across restarts (a new broker on the same database). The
//! sequences and the checks are `sluice_broker::model_tests::fifo`, shared
//! by every engine. Each case needs a fresh database, so few cases. Without
//! PostgreSQL's binaries every case passes after a SKIPPED line.

mod model_engine;

use proptest::prelude::*;
use sluice_broker::model_tests::{fifo, runtime};

async fn run(ops: Vec<fifo::Op>) -> Result<(), TestCaseError> {
    match model_engine::Pg::fresh().await {
        Some(engine) => fifo::run(engine, ops).await,
        None => Ok(()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// F1, F13 under random interleavings, across restarts.
    #[test]
    fn fifo_groups_stay_ordered_and_exclusive(ops in proptest::collection::vec(fifo::op(), 1..80)) {
        runtime().block_on(run(ops))?;
    }
}

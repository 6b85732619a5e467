//! Model-based tests of standard queues (rules V1–V5, V7, V10, V20, D1)
//! against the PostgreSQL engine, restarts (a new broker on the same
//! database) anywhere in the sequence. The sequences and the reference
//! model are `sluice_broker::model_tests::standard`, shared by every
//! engine. Each case needs a fresh database, so fewer cases than the
//! embedded engine runs. Without PostgreSQL's binaries every case passes
//! after a SKIPPED line.

mod model_engine;

use proptest::prelude::*;
use sluice_broker::model_tests::{runtime, standard};

async fn run(ops: Vec<standard::Op>) -> Result<(), TestCaseError> {
    match model_engine::Pg::fresh().await {
        Some(engine) => standard::run(engine, ops).await,
        None => Ok(()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// V1–V5, V7, V20 and D1 with restarts anywhere in the sequence.
    #[test]
    fn postgres_engine_matches_the_model_across_restarts(ops in proptest::collection::vec(standard::op(true), 1..60)) {
        runtime().block_on(run(ops))?;
    }
}

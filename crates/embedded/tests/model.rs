//! Model-based tests of standard queues (rules V1–V5, V7, V10, V20, D1)
//! against the embedded engine, in memory and durable with restarts
//! anywhere in the sequence. The sequences and the reference model are
//! `sluice_broker::model_tests::standard`, shared by every engine.

mod model_engine;

use proptest::prelude::*;
use sluice_broker::model_tests::{runtime, standard};

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// V1–V5, V7 in memory.
    #[test]
    fn in_memory_engine_matches_the_model(ops in proptest::collection::vec(standard::op(false), 1..80)) {
        runtime().block_on(standard::run(model_engine::Memory::new(), ops))?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// V1–V5, V7 and D1 on disk, with restarts anywhere in the sequence.
    #[test]
    fn durable_engine_matches_the_model_across_restarts(ops in proptest::collection::vec(standard::op(true), 1..60)) {
        runtime().block_on(standard::run(model_engine::Durable::new(), ops))?;
    }
}

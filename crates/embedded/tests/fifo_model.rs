//! Property test of FIFO ordering (rules F1, F13) against the durable
//! embedded engine, across restarts. The sequences and the checks are
//! `sluice_broker::model_tests::fifo`, shared by every engine.

mod model_engine;

use proptest::prelude::*;
use sluice_broker::model_tests::{fifo, runtime};

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// F1 under random interleavings, across restarts.
    #[test]
    fn fifo_groups_stay_ordered_and_exclusive(ops in proptest::collection::vec(fifo::op(), 1..80)) {
        runtime().block_on(fifo::run(model_engine::Durable::new(), ops))?;
    }
}

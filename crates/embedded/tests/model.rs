//! Model-based tests of standard queues (rules V1–V5, V7, V10, V20, D1)
//! against the embedded engine, in memory, durable with restarts
//! anywhere in the sequence, and on injected storage that dies at a
//! random sync (D3, D4). The sequences and the reference model are
//! `sluice_broker::model_tests::standard`, shared by every engine.

mod model_engine;

use proptest::prelude::*;
use sluice_broker::model_tests::{crash, runtime, standard};

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

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// D1, D3, D4: the storage dies at a random sync (of the log, of
    /// redb's checkpoint commits, of a directory, of the thread making
    /// segments ready); reopened from what was synced, the engine holds
    /// everything acknowledged. A sequence syncs about once a write after
    /// the queue's creation, so most cases die within it; syncs from
    /// several threads interleave, so one seed does not always crash at
    /// the same step.
    #[test]
    fn a_crash_at_any_sync_keeps_everything_acknowledged(
        ops in proptest::collection::vec(standard::op(false), 1..40),
        crash_at in 1u64..24,
    ) {
        runtime().block_on(crash::run(model_engine::Crashing::new(), ops, crash_at))?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// D3, D5: a random sync fails (the log's, a checkpoint's, a
    /// directory's, the segment preparer's) without a crash; the engine
    /// refuses writes, reopens its storage in place by itself, and holds
    /// everything acknowledged, the failed change wholly or not at all;
    /// a crash after that keeps the same.
    #[test]
    fn a_failed_sync_anywhere_is_recovered_in_place(
        ops in proptest::collection::vec(standard::op(false), 1..40),
        fail_at in 1u64..24,
    ) {
        runtime().block_on(crash::run_with(
            model_engine::Crashing::new(),
            ops,
            fail_at,
            crash::Fault::FailedSync,
        ))?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// D4, D6: the storage dies at a random sync, and the engine starts
    /// again on a disk with no room left: serving from memory what the
    /// store and the log hold, it holds everything acknowledged; so it
    /// does once space returns and it has reopened its storage, and after
    /// a crash then.
    #[test]
    fn a_start_on_a_full_disk_after_a_crash_holds_everything_acknowledged(
        ops in proptest::collection::vec(standard::op(false), 1..40),
        crash_at in 1u64..24,
    ) {
        runtime().block_on(crash::run_with(
            model_engine::Crashing::new(),
            ops,
            crash_at,
            crash::Fault::CrashThenFullDisk,
        ))?;
    }
}

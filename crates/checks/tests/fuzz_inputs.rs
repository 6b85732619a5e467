//! Every fuzz target of `fuzz/` replayed by plain `cargo test` over its
//! committed inputs: the seeds (`fuzz/seeds/TARGET`) and the inputs that
//! once crashed it (`fuzz/regressions/TARGET`), so that a fixed crash stays
//! fixed without libFuzzer. The targets' own sources are compiled here,
//! their `fuzz_target!` bodies turned into plain functions.

// json_request and query_request each declare the shared typed_inputs
// module, as the fuzz crate builds them as separate binaries.
#![allow(clippy::duplicate_mod)]

use std::path::{Path, PathBuf};

// The targets' `use libfuzzer_sys::fuzz_target;` finds this crate's macro.
extern crate self as libfuzzer_sys;

/// libfuzzer-sys's `fuzz_target!`, as a function `run` of the target.
#[macro_export]
macro_rules! fuzz_target {
    (|$data:ident: &[u8]| $body:block) => {
        pub fn run($data: &[u8]) $body
    };
}

#[allow(unused_attributes, unused_imports)]
#[path = "../../../fuzz/fuzz_targets/config_file.rs"]
mod config_file;
#[allow(unused_attributes, unused_imports)]
#[path = "../../../fuzz/fuzz_targets/json_request.rs"]
mod json_request;
#[allow(unused_attributes, unused_imports)]
#[path = "../../../fuzz/fuzz_targets/message_attributes.rs"]
mod message_attributes;
#[allow(unused_attributes, unused_imports)]
#[path = "../../../fuzz/fuzz_targets/query_request.rs"]
mod query_request;
#[allow(unused_attributes, unused_imports)]
#[path = "../../../fuzz/fuzz_targets/sigv4_request.rs"]
mod sigv4_request;
#[allow(unused_attributes, unused_imports)]
#[path = "../../../fuzz/fuzz_targets/stored_bytes.rs"]
mod stored_bytes;

/// A target's name and entry point.
type Target = (&'static str, fn(&[u8]));

/// Every target with its entry point.
const TARGETS: &[Target] = &[
    ("json_request", json_request::run),
    ("query_request", query_request::run),
    ("message_attributes", message_attributes::run),
    ("stored_bytes", stored_bytes::run),
    ("sigv4_request", sigv4_request::run),
    ("config_file", config_file::run),
];

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// The files of `dir` (none when it does not exist), sorted.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

/// Every target, over every seed and regression: none panics. A target
/// without seeds fails the test (the replay would prove nothing).
#[test]
fn every_fuzz_target_survives_its_seeds_and_regressions() {
    let mut failures = Vec::new();
    for (target, run) in TARGETS {
        let seeds = files(&fuzz_dir().join("seeds").join(target));
        assert!(!seeds.is_empty(), "{target} has no seeds");
        let regressions = files(&fuzz_dir().join("regressions").join(target));
        for input in seeds.iter().chain(&regressions) {
            let data = std::fs::read(input).unwrap();
            if std::panic::catch_unwind(|| run(&data)).is_err() {
                failures.push(input.display().to_string());
            }
        }
    }
    assert!(failures.is_empty(), "inputs that panic: {failures:?}");
}

/// The list above is every `[[bin]]` of fuzz/Cargo.toml, so a new target
/// is replayed too.
#[test]
fn every_fuzz_target_is_replayed() {
    let manifest = std::fs::read_to_string(fuzz_dir().join("Cargo.toml")).unwrap();
    let declared: Vec<&str> = manifest
        .split("[[bin]]")
        .skip(1)
        .filter_map(|bin| bin.lines().find_map(|l| l.strip_prefix("name = ")))
        .map(|name| name.trim_matches('"'))
        .collect();
    let mut replayed: Vec<&str> = TARGETS.iter().map(|(name, _)| *name).collect();
    let mut declared = declared;
    declared.sort();
    replayed.sort();
    assert_eq!(declared, replayed);
}

/// The config file target's seeds are valid config files (the documented
/// examples), so that the fuzzer starts inside the format.
#[test]
fn config_file_seeds_parse() {
    let seeds = files(&fuzz_dir().join("seeds/config_file"));
    assert!(seeds.len() >= 10);
    for seed in seeds {
        let text = std::fs::read_to_string(&seed).unwrap();
        sluice_config::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", seed.display()));
    }
}

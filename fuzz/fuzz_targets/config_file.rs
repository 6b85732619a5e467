//! The config file of `sluice serve`: any bytes as the TOML file, parsed
//! into its keys and tables, and what parsed through the checks that need
//! nothing but the file (seeds: the documented examples). Any refusal is
//! fine; a panic is a bug.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    sluice_config::fuzzing::config_file(data);
});

//! Bytes read back from disk (write-ahead log segments and records, the
//! store's records), which a torn write or a damaged file may make
//! anything: refused, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    sluice_embedded::decode_stored_bytes(data);
});

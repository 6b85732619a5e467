//! The SigV4 verifier on arbitrary requests: bytes read as `METHOD target
//! HTTP/1.1`, header lines, a blank line and a body (the form of AWS's
//! signing test suite, whose signed requests are the seeds), then parsed,
//! canonicalised and checked as the server checks every request. Any
//! refusal is fine; a panic is a bug.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = sluice_server::auth::fuzzing::verify_request_bytes(data);
});

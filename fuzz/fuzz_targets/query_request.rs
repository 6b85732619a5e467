//! AWS Query requests: any form body, split into parameters (strictly:
//! bad escapes refused), decoded through the Query model into the JSON
//! shape, and parsed into the action's typed input, as the server does.
#![no_main]

use libfuzzer_sys::fuzz_target;

mod typed_inputs;

fuzz_target!(|data: &[u8]| {
    let Ok(params) = sluice_protocol::form::parameters(b"", Some(data)) else {
        return;
    };
    if let Ok(request) = sluice_protocol::query::decode(&params) {
        typed_inputs::parse_typed(request);
    }
});

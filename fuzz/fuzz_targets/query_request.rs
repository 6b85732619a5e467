//! AWS Query requests: any form body, split into parameters (strictly:
//! bad escapes refused) and decoded through the Query model into the
//! typed input of the operation its `Action` names, as the server does.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sluice_protocol::sqs::{Operation, Request};
use sluice_protocol::wire::Params;

mod typed_inputs;

fuzz_target!(|data: &[u8]| {
    let Ok(pairs) = sluice_protocol::form::parameters(b"", Some(data)) else {
        return;
    };
    let action = pairs.iter().rev().find(|(k, _)| k == "Action");
    let Some(op) = action.and_then(|(_, a)| Operation::from_name(a)) else {
        return;
    };
    if let Ok(request) = Request::from_query(op, &Params::new(&pairs)) {
        typed_inputs::check_typed(&request);
    }
});

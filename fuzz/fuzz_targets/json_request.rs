//! AWS JSON 1.0 requests: any body under any operation's `X-Amz-Target`,
//! decoded straight into the operation's typed input as the server does.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sluice_protocol::decode::json_body;
use sluice_protocol::sqs::Request;

mod typed_inputs;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, body)) = data.split_first() else {
        return;
    };
    let op = typed_inputs::pick(pick);
    if let Ok(request) = json_body(body)
        .and_then(|body| Request::from_json(op, body).map_err(sluice_protocol::decode::json_error))
    {
        typed_inputs::check_typed(&request);
    }
});

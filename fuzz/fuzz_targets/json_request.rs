//! AWS JSON 1.0 requests: any body under any action's `X-Amz-Target`,
//! decoded and parsed into the action's typed input as the server does.
#![no_main]

use libfuzzer_sys::fuzz_target;

mod typed_inputs;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, body)) = data.split_first() else {
        return;
    };
    let action = typed_inputs::ACTIONS[pick as usize % typed_inputs::ACTIONS.len()];
    let target = format!("AmazonSQS.{action}");
    if let Ok(request) = sluice_protocol::json::decode(&target, bytes::Bytes::copy_from_slice(body))
    {
        typed_inputs::parse_typed(request);
    }
});

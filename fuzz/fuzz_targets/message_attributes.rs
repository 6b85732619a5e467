//! Message attributes: names, data types and values of any bytes through
//! the checks (names, types, numbers, characters), the size count and the
//! MD5 digest SDKs verify. A digest must never panic, and an attribute set
//! the checks accept must digest the same twice.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sluice_core::message::{
    AttributeValue, MessageAttributeValue, MessageAttributes, message_size,
    validate_message_attributes,
};

fuzz_target!(|data: &[u8]| {
    // Fields are separated by 0xFF (never in UTF-8): name, type, value,
    // repeated; a type's first byte picks text or bytes for the value.
    let fields: Vec<&[u8]> = data.split(|&b| b == 0xff).collect();
    let mut attrs = MessageAttributes::new();
    for triple in fields.chunks(3) {
        let [name, data_type, value] = triple else {
            break;
        };
        let (Ok(name), Ok(data_type)) = (std::str::from_utf8(name), std::str::from_utf8(data_type))
        else {
            continue;
        };
        let value = if data_type.starts_with('B') {
            AttributeValue::Binary(value.to_vec())
        } else {
            AttributeValue::String(String::from_utf8_lossy(value).into_owned())
        };
        attrs.insert(
            name.to_owned(),
            MessageAttributeValue {
                data_type: data_type.to_owned(),
                value,
            },
        );
    }
    let _ = message_size("body", &attrs);
    let digest = sluice_core::digest::md5_of_attributes(&attrs);
    if validate_message_attributes(&attrs).is_ok() {
        assert_eq!(digest, sluice_core::digest::md5_of_attributes(&attrs));
    }
});

//! The SNS API: its operations, their typed inputs and outputs, and their
//! Query and XML codecs, generated from `models/sns-service-2.json` at
//! build time.

#[allow(clippy::all)]
mod generated {
    include!(concat!(env!("OUT_DIR"), "/sns.rs"));
}

pub use generated::*;

//! The SNS API: its operations, their typed inputs and outputs, and their
//! Query and XML codecs, generated from `models/sns-service-2.json` at
//! build time, with its error codes (the model's and
//! `models/sns-errors.json`'s); `error.rs`, an SNS error and its answer.

#[allow(clippy::all)]
mod generated {
    include!(concat!(env!("OUT_DIR"), "/sns.rs"));
}

pub use generated::*;

mod codes;
mod error;
mod facts;

pub use codes::ErrorCode;
pub use error::{NAMESPACE, SnsError};

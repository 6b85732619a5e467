//! SNS's error codes (`ErrorCode`), generated from the model's errors and
//! `models/sns-errors.json`: each code's Query name, HTTP status and fault.

#[allow(clippy::all)]
mod generated {
    include!(concat!(env!("OUT_DIR"), "/sns_errors.rs"));
}

pub use generated::ErrorCode;

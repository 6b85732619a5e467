//! The SQS API: its operations, their typed inputs and outputs, and their
//! codecs, generated from the SQS models (`models/sqs-query-service-2.json`,
//! documentation from `models/sqs-service-2.json`) at build time; and
//! `facts.rs`, what is true of each operation beyond its wire.

#[allow(clippy::all)]
mod generated {
    include!(concat!(env!("OUT_DIR"), "/sqs.rs"));
}

pub use generated::*;

mod facts;

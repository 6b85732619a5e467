//! sluice's own actions (`Sluice.<Action>` in the JSON protocol, by name
//! in the Query protocol): operations, typed inputs and outputs and their
//! codecs, generated from `models/sluice-extensions.json`, whose shapes
//! may be SQS's.

#[allow(clippy::all)]
mod generated {
    include!(concat!(env!("OUT_DIR"), "/sluice.rs"));
}

pub use generated::*;

mod facts;

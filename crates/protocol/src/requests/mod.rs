//! Typed inputs of the SQS actions and of sluice's own, in the JSON
//! protocol's member names: the server decodes requests into them (both
//! protocols decode to this shape first) and sluice's client encodes its
//! requests from them, so the wire is described once.
//!
//! Every member is optional here so that a missing required member is
//! reported as SQS does (`MissingParameter`), not as a parse failure; a
//! member left `None` is not written when a request is encoded.

mod bounded;
pub mod consumers;
pub mod messages;
pub mod move_tasks;
mod parse;
pub mod queues;
pub mod sluice;

pub use consumers::*;
pub use messages::*;
pub use move_tasks::*;
pub use parse::{parse, parse_borrowed, required};
pub use queues::*;
pub use sluice::*;

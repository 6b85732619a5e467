//! The SQS semantics that every other part of sluice shares.
//!
//! Nothing here knows about HTTP, wire formats or storage: queue configuration
//! and its validation, message attributes, limits, error codes, digests,
//! receipt handles and the injected clock live here so that the protocol layer
//! and every engine agree on one definition of each rule.

pub mod attributes;
pub mod clock;
pub mod dead_letter_routes;
pub mod digest;
pub mod error;
pub mod fair_tenants;
pub mod fifo_settings;
pub mod limits;
pub mod md5_many;
pub mod message;
pub mod queue_name;
pub mod receipt;
pub mod redrive_policy;
pub mod retry_backoff;
pub mod timestamp;
pub mod topic_name;

pub use clock::{Clock, ManualClock, SystemClock};
pub use error::{ErrorCode, SqsError};

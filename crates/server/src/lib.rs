//! sluice's server: HTTP in, SQS actions, HTTP out.
//!
//! [`http`] accepts connections and tells the two wire protocols apart;
//! [`service`] holds what every action needs; [`actions`] has one function
//! per SQS action, each validating its input and calling the broker.

pub mod actions;
pub mod alarms;
pub mod auth;
mod authorize;
pub mod http;
pub mod metrics;
pub mod service;
mod signing_region;

pub use http::serve;
pub use service::{Service, ServiceConfig};

//! The one client of sluice's API: SQS's actions and sluice's own in AWS
//! JSON 1.0, the `/metrics` page, over pooled keep-alive HTTP/1.1
//! connections, plain or TLS (rustls), signed with AWS Signature V4 when
//! credentials are found (flags, environment, shared profile files).
//! The operator commands (`sluice dlq`, `doctor`, `stats`, `alarms`) and
//! `sluice bench` use it.
//!
//! The request types of the message loop (`wire.rs`) borrow what they
//! send and what they read, and are not the server's decoding types
//! (`sluice-protocol`'s `requests.rs`): those are owned, every member
//! optional so a missing one is reported as SQS does, and tuned for the
//! server's decoding; the client writes requests and reads answers, the
//! other way round.

mod actions;
mod client;
pub mod credentials;
pub mod error;
pub mod profile_files;
pub mod signer;
pub mod tls;
pub mod wire;

pub use actions::{CreatedQueue, NULL_SERVER_HEADER, ReceiveOutput, string_map, strings};
pub use client::{Client, ClientOptions, PLACEHOLDER_AUTHORIZATION};
pub use credentials::{ConnectionFlags, Credentials, DEFAULT_REGION, Signing};
pub use error::{ClientError, service_error};

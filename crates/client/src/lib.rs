//! The one client of sluice's API: SQS's actions and sluice's own in AWS
//! JSON 1.0, the `/metrics` page, over pooled keep-alive HTTP/1.1
//! connections, plain or TLS (`sluice-outbound`'s client, trusting the
//! system's roots plus `--ca-file`), signed with AWS Signature V4 when
//! credentials are found (flags, environment, shared profile files).
//! The operator commands (`sluice dlq`, `doctor`, `stats`, `alarms`,
//! `consumers`) and `sluice bench` use it.
//!
//! One typed method per action. Its input is the request type the server
//! decodes (`sluice-protocol`'s `requests`, re-exported here), so the wire
//! is described once; its output is a type of `responses`.

mod client;
pub mod credentials;
pub mod error;
mod messages;
mod move_tasks;
pub mod profile_files;
mod queues;
pub mod responses;
pub mod signer;
mod sluice_actions;

pub use client::{Client, ClientOptions, PLACEHOLDER_AUTHORIZATION};
pub use credentials::{ConnectionFlags, Credentials, DEFAULT_REGION, Signing};
pub use error::{ClientError, service_error};
pub use messages::{ENTRY_IDS, ReceiveOutput, entry_index};
pub use queues::{CreatedQueue, NULL_SERVER_HEADER};
/// The actions' inputs: the request types the server decodes.
pub use sluice_protocol::requests;

//! The one client of sluice's API: SQS's actions and sluice's own in AWS
//! JSON 1.0, the `/metrics` page, over pooled keep-alive HTTP/1.1
//! connections, plain or TLS (`sluice-outbound`'s client, trusting the
//! system's roots plus `--ca-file`), signed with AWS Signature V4 when
//! credentials are found (flags, environment, shared profile files).
//! The operator commands (`sluice dlq`, `doctor`, `stats`, `alarms`,
//! `consumers`, `backup`) and `sluice bench` use it.
//!
//! Inputs and outputs are the types generated from the APIs' models, the
//! very types the server decodes and answers ([`sqs`] and [`sluice`],
//! re-exported from `sluice-protocol`), so the wire is described once and
//! the compiler ties the client to the server. [`Client::call`] sends any
//! operation's input and returns its output; beside it, the look-ups the
//! commands share (a queue by name, URL or ARN, CreateQueue falling back
//! to GetQueueUrl) and the message loop's faster SendMessageBatch and
//! long-polling ReceiveMessage.

mod client;
pub mod credentials;
pub mod error;
mod messages;
pub mod profile_files;
mod queues;
pub mod signer;

pub use client::{Client, ClientOptions, PLACEHOLDER_AUTHORIZATION};
pub use credentials::{ConnectionFlags, Credentials, DEFAULT_REGION, Signing};
pub use error::{ClientError, service_error};
pub use messages::{ENTRY_IDS, entry_index};
pub use queues::{CreatedQueue, NULL_SERVER_HEADER};
/// The generated types of sluice's own actions (`Sluice.<Action>`).
pub use sluice_protocol::sluice;
/// The generated SQS types: each operation's input and output.
pub use sluice_protocol::sqs;
/// What every generated input implements, and the output of operations
/// that have none.
pub use sluice_protocol::{Call, Empty};

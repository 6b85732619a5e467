//! sluice's server: HTTP in, the APIs' actions, HTTP out.
//!
//! [`http`] accepts connections; `front` takes each request through what
//! every API shares (limits, routing, authentication, encoding, metrics);
//! [`api`] has one handler per API (SQS, sluice's own actions, SNS), each with
//! one function per operation that validates its typed input and calls
//! the broker or a component; [`service`] holds what every action needs.
//!
//! # Layers
//!
//! Modules import only modules of the layers below them (and, among the
//! components, those listed before them), never above, so there is no
//! import circle (the workspace's layering check, in `crates/checks`,
//! checks it):
//!
//! 1. `http`: connections; calls the front.
//! 2. `front`: limits, routing, authentication, encoding, `/metrics`, the
//!    web console's files (`sluice-console`); calls the APIs.
//! 3. [`api`]: each API's requests decoded, checked (`authorize`) and run;
//!    its dispatch from operation to action.
//! 4. [`service`]: the broker, the settings and the components, and how
//!    queue URLs are written and read.
//! 5. Components, each owning one job and its state: [`move_tasks`] (the
//!    task runner and its cancel flags), [`long_polls`] (the cap on
//!    waiting receives), [`metrics`] (reads the alarms, the long polls and
//!    the push consumers' counters), [`auth`] (SigV4, access patterns),
//!    [`policy`] (queue policies; uses `auth`'s wildcards),
//!    [`depth_history`] (every queue's depth over the last hour),
//!    [`sns_state`] (SNS's signing key, parsed filter policies, FIFO
//!    deduplication). They do not import the service or the APIs.
//! 6. Leaves that import nothing of the crate's: `inbound` (what arrived:
//!    a request's parts, protocol and parameters, and how it came),
//!    `params` (pagination), `signing_region`, [`backup_root`] (where
//!    backups may be written).
//!
//! Subsystems the service holds but that know nothing of requests are
//! crates of their own, below this one: `sluice-alarms` (evaluation,
//! notification, storage), `sluice-consumers` (push delivery to HTTP
//! handlers, and their counters) and `sluice-console` (the web console's
//! static files, served at `/console/`), `sluice-sns` (SNS's envelopes and
//! their signatures, filter and delivery policies); the sealed receipt handles that
//! the actions and the consumers both give out are `sluice-broker`'s
//! `receipts`.

pub mod api;
pub mod archive_upload;
pub mod archiver;
pub mod auth;
mod authorize;
pub mod backup_root;
pub mod depth_history;
mod front;
pub mod http;
mod inbound;
pub mod long_polls;
pub mod metrics;
pub mod move_tasks;
mod params;
pub mod policy;
pub mod service;
mod signing_region;
pub mod sns_state;

pub use http::{ConnectionLimits, serve, serve_with};
pub use service::{Service, ServiceConfig};

//! sluice's PostgreSQL engine: stateless nodes over one shared database.
//!
//! The database is the only source of truth; a node keeps nothing that
//! another node needs. Every operation is one short transaction whose times
//! come from the injected [`Clock`] (passed as parameters, never SQL
//! `now()`). Receives lock rows with `FOR UPDATE SKIP LOCKED`, so nodes
//! never hand out the same message; FIFO queues serialise sends and
//! receives per queue with a transaction-scoped advisory lock (rule F1).
//! Long polls wake on a local [`Notify`] for sends through this node and on
//! `LISTEN/NOTIFY` for sends through the others ([`listener`]). SNS's
//! topics and subscriptions are rows too (`topics`), shared by every
//! node like the queues.

mod activity_sync;
mod alarm_store;
mod broker;
mod cache;
mod combine;
mod connect;
mod consumer_store;
mod coordination;
mod dead_letter;
mod delete;
mod encryption;
mod engine;
mod error;
mod expired;
mod fair;
mod idempotency;
mod listener;
mod locks;
mod nack;
mod peek;
mod pick;
mod queues;
mod receive;
mod redrive;
mod retention;
mod rows;
mod schema;
mod sealing;
mod secrets;
mod send;
mod send_fifo;
mod statements;
mod stats;
mod sweep;
mod topics;
mod visibility;

#[cfg(feature = "test-support")]
pub mod testing;

pub use connect::PostgresOptions;
pub use engine::{Claim, PostgresBroker, SWEEP_LOCK_KEY};
pub use error::PgError;
pub use schema::SCHEMA_VERSION;

//! Black-box tests of sluice through real clients: the official Rust SDK
//! (AWS JSON protocol), raw Query-protocol HTTP, and the `sluice` binary
//! itself for restarts and crashes. One test binary, many modules, so the
//! SDK is linked once.

mod alarms;
mod alarms_https;
mod auth;
mod auth_access;
mod auth_alarms;
mod auth_policies;
mod auth_rates;
mod auth_redrive;
mod auth_refusal_log;
mod backup;
mod bad_input;
mod cli_dlq;
mod cli_doctor;
mod cli_run;
mod cli_signed;
mod cli_stats;
mod common;
mod config_file;
mod console;
mod consumers;
mod consumers_backoff;
mod consumers_batching;
mod consumers_doctor;
mod consumers_fifo;
mod consumers_filter;
mod consumers_https;
mod consumers_postgres;
mod consumers_runtime;
mod consumers_scaling;
mod crash;
mod depth_history;
mod extensions;
mod fidelity_messages;
mod hostile_clients;
mod logging;
mod long_polls;
mod metrics;
mod postgres_nodes;
mod postgres_restart;
mod postgres_shared;
mod query_protocol;
mod receipt_handles;
mod sdk_dead_letter;
mod sdk_fifo;
mod sdk_messages;
mod sdk_move_tasks;
mod sdk_queues;
mod seed_story;
mod sns_alarms;
mod sns_http;
mod storage_faults;
mod test_ca;
mod tls;

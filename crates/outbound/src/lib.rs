//! The one outbound HTTP client of sluice: alarm webhooks, push consumers'
//! deliveries to their handlers, and the typed client of the operator
//! commands and the bench all go through it, so that `http://` and
//! `https://` work alike everywhere and TLS is set up in one place.
//!
//! [`tls`] holds the certificates a client trusts (Mozilla's roots or the
//! system's, plus an optional PEM CA file); [`client`] builds the pooled
//! keep-alive HTTP/1.1 client over it, plain TCP or TLS by each URL's
//! scheme.

pub mod client;
pub mod tls;

pub use client::{ConnectionSettings, OutboundClient, client};
pub use tls::{CaFileError, OutboundTls, Roots};

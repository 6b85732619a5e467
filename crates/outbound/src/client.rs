//! The pooled HTTP/1.1 client: hyper-util's legacy client over
//! hyper-rustls, which speaks plain TCP to `http://` URLs and TLS to
//! `https://` ones.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use crate::tls::OutboundTls;

/// The client: requests with a whole body in memory, plain or TLS by the
/// URL's scheme. Cheap to clone: clones share the connection pool.
pub type OutboundClient = Client<HttpsConnector<HttpConnector>, Full<Bytes>>;

/// How a client connects and keeps its connections; `None` keeps
/// hyper-util's default.
#[derive(Debug, Clone, Default)]
pub struct ConnectionSettings {
    /// Longest time a TCP connect may take.
    pub connect_timeout: Option<Duration>,
    /// Sends small requests at once (no Nagle delay).
    pub nodelay: bool,
    /// Idle keep-alive connections kept per host.
    pub max_idle_per_host: Option<usize>,
    /// How long an idle connection is kept.
    pub idle_timeout: Option<Duration>,
}

/// A client trusting `tls`, connecting as `settings` say.
pub fn client(tls: &OutboundTls, settings: &ConnectionSettings) -> OutboundClient {
    let mut tcp = HttpConnector::new();
    tcp.set_connect_timeout(settings.connect_timeout);
    tcp.set_nodelay(settings.nodelay);
    // The TLS layer above sees https:// URLs through this connector.
    tcp.enforce_http(false);
    let connector = HttpsConnectorBuilder::new()
        .with_tls_config(tls.client_config())
        .https_or_http()
        .enable_http1()
        .wrap_connector(tcp);
    let mut builder = Client::builder(TokioExecutor::new());
    if let Some(n) = settings.max_idle_per_host {
        builder.pool_max_idle_per_host(n);
    }
    if let Some(idle) = settings.idle_timeout {
        builder.pool_idle_timeout(idle);
    }
    builder.build(connector)
}

//! The server's listening sockets: the main one (HTTPS with a
//! certificate), the optional plain-HTTP one beside it, and the optional
//! one that alone serves `/metrics`.

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;
use sluice_server::http::{Endpoint, ServerTls, Serves};

/// The listeners, bound, and the addresses they were given.
pub struct Opened {
    pub endpoints: Vec<Endpoint>,
    main: SocketAddr,
    scheme: &'static str,
    plain: Option<SocketAddr>,
    metrics: Option<SocketAddr>,
}

/// Binds the main listener on `bind` (HTTPS with `tls`), plain HTTP on
/// `plain_bind`, and a metrics-only listener on `metrics_bind`; with the
/// last, the others do not serve `/metrics`.
pub fn open(
    bind: SocketAddr,
    tls: Option<Arc<ServerTls>>,
    plain_bind: Option<SocketAddr>,
    metrics_bind: Option<SocketAddr>,
) -> anyhow::Result<Opened> {
    let serves = if metrics_bind.is_some() {
        Serves::Api
    } else {
        Serves::Everything
    };
    let scheme = if tls.is_some() { "https" } else { "http" };
    let listener =
        sluice_server::http::listen(bind).with_context(|| format!("cannot listen on {bind}"))?;
    let main = listener.local_addr()?;
    let mut endpoints = vec![Endpoint {
        listener,
        tls,
        serves,
    }];
    let mut extra = |addr: Option<SocketAddr>, what: &str, serves| -> anyhow::Result<_> {
        let Some(addr) = addr else {
            return Ok(None);
        };
        let listener = sluice_server::http::listen(addr)
            .with_context(|| format!("cannot listen on {addr} ({what})"))?;
        let local = listener.local_addr()?;
        endpoints.push(Endpoint {
            listener,
            tls: None,
            serves,
        });
        Ok(Some(local))
    };
    let plain = extra(plain_bind, "plain HTTP", serves)?;
    let metrics = extra(metrics_bind, "metrics", Serves::Metrics)?;
    Ok(Opened {
        endpoints,
        main,
        scheme,
        plain,
        metrics,
    })
}

impl Opened {
    /// Prints the addresses on stdout (so scripts and tests can find a
    /// port chosen with :0) and logs that the server is ready.
    pub fn announce(&self, storage: &str, max_connections: usize) {
        println!("sluice listening on {}://{}", self.scheme, self.main);
        if let Some(plain) = self.plain {
            println!("sluice listening on http://{plain} (plain HTTP)");
        }
        if let Some(metrics) = self.metrics {
            println!("sluice listening on http://{metrics} (metrics)");
        }
        tracing::info!(
            address = %self.main,
            scheme = self.scheme,
            plain_address = self.plain.map(|a| a.to_string()),
            metrics_address = self.metrics.map(|a| a.to_string()),
            storage,
            max_connections,
            "sluice is ready"
        );
    }
}

//! HTTP: accept connections on each listener (plain or TLS), bounded in
//! number, in the time their headers and idleness may take, and in how
//! long a shutdown waits; each request is handed to the front
//! (`crate::front`).

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use sluice_broker::Broker;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::service::Service;

mod connection;
pub mod tls;

pub use crate::inbound::{Serves, Via};
use connection::{Activity, LimitLog, WatchedIo};
pub use connection::{ConnectionLimits, LISTEN_BACKLOG, listen};
pub use tls::{ServerTls, TlsError};

/// How long a graceful shutdown waits for requests in progress (long polls
/// included) before closing their connections.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(3);

/// Serves `service` on `listener` with the default [`ConnectionLimits`]
/// until `shutdown` resolves.
pub async fn serve<B: Broker>(
    listener: TcpListener,
    service: Arc<Service<B>>,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    serve_with(listener, service, ConnectionLimits::default(), shutdown).await
}

/// Serves `service` on `listener` until `shutdown` resolves, then stops
/// accepting and lets requests in progress finish (bounded). At most
/// `limits.max_connections` are served at once: the others wait in the
/// listen backlog, not accepted.
pub async fn serve_with<B: Broker>(
    listener: TcpListener,
    service: Arc<Service<B>>,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let plain = Endpoint {
        listener,
        tls: None,
        serves: Serves::Everything,
    };
    serve_endpoints(vec![plain], service, limits, shutdown).await
}

/// A listening socket, whether it speaks HTTPS, and what it serves.
pub struct Endpoint {
    /// The socket.
    pub listener: TcpListener,
    /// The certificate its connections are served with; `None`: plain
    /// HTTP.
    pub tls: Option<Arc<ServerTls>>,
    /// What is served on it.
    pub serves: Serves,
}

/// Serves `service` on every endpoint until `shutdown` resolves, as
/// [`serve_with`] does on one. The endpoints share the limits: at most
/// `limits.max_connections` connections are served at once over all of
/// them, a TLS handshake included.
pub async fn serve_endpoints<B: Broker>(
    endpoints: Vec<Endpoint>,
    service: Arc<Service<B>>,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    // A served service's alarms may publish to its topics.
    crate::api::sns::alarm_topics::connect(&service);
    // Its HTTP/S subscriptions' deliveries are made from its outbox.
    crate::api::sns::deliverer::spawn(&service);
    let max = limits
        .max_connections
        .clamp(1, Semaphore::MAX_PERMITS.min(u32::MAX as usize));
    let slots = Arc::new(Semaphore::new(max));
    let (stop, stopping) = tokio::sync::watch::channel(());
    let accepting: Vec<_> = endpoints
        .into_iter()
        .map(|endpoint| {
            tokio::spawn(accept_loop(
                endpoint,
                service.clone(),
                limits,
                (slots.clone(), max),
                stopping.clone(),
            ))
        })
        .collect();
    shutdown.await;
    // Requests in progress finish (bounded); idle connections close now.
    drop(stop);
    for accepter in accepting {
        let _ = accepter.await;
    }
    let all = u32::try_from(max).unwrap_or(u32::MAX);
    tokio::select! {
        _ = slots.acquire_many(all) => {}
        () = tokio::time::sleep(SHUTDOWN_GRACE) => {
            tracing::info!("requests still in progress at shutdown were cut");
        }
    }
    Ok(())
}

/// Accepts connections on one endpoint while a slot is free, until the
/// server stops.
async fn accept_loop<B: Broker>(
    endpoint: Endpoint,
    service: Arc<Service<B>>,
    limits: ConnectionLimits,
    (slots, max): (Arc<Semaphore>, usize),
    mut stopping: tokio::sync::watch::Receiver<()>,
) {
    let mut limit_log = LimitLog::default();
    loop {
        let slot = match slots.clone().try_acquire_owned() {
            Ok(slot) => slot,
            Err(_) => {
                limit_log.reached(max);
                tokio::select! {
                    slot = slots.clone().acquire_owned() => match slot {
                        Ok(slot) => slot,
                        Err(_) => break,
                    },
                    _ = stopping.changed() => break,
                }
            }
        };
        let (stream, peer) = tokio::select! {
            accepted = endpoint.listener.accept() => match accepted {
                Ok(conn) => conn,
                Err(e) => {
                    // Out of file descriptors and the like: back off, keep serving.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = stopping.changed() => break,
        };
        let _ = stream.set_nodelay(true);
        let service = service.clone();
        let stopping = stopping.clone();
        let serves = endpoint.serves;
        match &endpoint.tls {
            None => {
                let via = Via {
                    secure: false,
                    serves,
                    peer: Some(peer.ip()),
                };
                tokio::spawn(serve_connection(
                    stream, via, service, limits, stopping, slot,
                ));
            }
            Some(tls) => {
                let acceptor = tls.acceptor();
                tokio::spawn(async move {
                    // The handshake holds its slot and has the header
                    // timeout to finish: a silent or slow client cannot
                    // hold a connection by never completing it.
                    if let Some(stream) =
                        tls::handshake(stream, acceptor, limits.header_timeout).await
                    {
                        let via = Via {
                            secure: true,
                            serves,
                            peer: Some(peer.ip()),
                        };
                        serve_connection(stream, via, service, limits, stopping, slot).await;
                    }
                });
            }
        }
    }
}

/// Serves one connection until it ends, its headers or idleness outlast
/// their limits (it is then closed), or the server stops.
async fn serve_connection<B: Broker, S>(
    stream: S,
    via: Via,
    service: Arc<Service<B>>,
    limits: ConnectionLimits,
    mut stopping: tokio::sync::watch::Receiver<()>,
    _slot: OwnedSemaphorePermit,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let activity = Arc::new(Activity::new());
    let watched = activity.clone();
    let conn = hyper::server::conn::http1::Builder::new()
        .keep_alive(true)
        .serve_connection(
            TokioIo::new(WatchedIo::new(stream, activity.clone())),
            service_fn(move |req| {
                let svc = service.clone();
                let activity = watched.clone();
                async move {
                    activity.request_started();
                    let resp = crate::front::handle(&svc, req, limits.body_timeout, via).await;
                    activity.request_ended();
                    Ok::<_, Infallible>(resp)
                }
            }),
        );
    let mut conn = std::pin::pin!(conn);
    tokio::select! {
        ended = conn.as_mut() => {
            if let Err(e) = ended {
                tracing::debug!(error = %e, "connection ended with an error");
            }
            return;
        }
        expiry = activity.expired(limits.header_timeout, limits.idle_timeout) => {
            // Dropping the connection closes it: no request is in progress.
            tracing::debug!(?expiry, "connection closed by its time limit");
            return;
        }
        _ = stopping.changed() => conn.as_mut().graceful_shutdown(),
    }
    if let Err(e) = conn.await {
        tracing::debug!(error = %e, "connection ended with an error");
    }
}

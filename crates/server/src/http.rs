//! HTTP: accept connections, tell the two SQS protocols apart, bound request
//! sizes, and write responses with a request id.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use sluice_broker::Broker;
use sluice_core::SqsError;
use sluice_core::limits::MAX_REQUEST_BODY;
use sluice_protocol::{Protocol, encode_error, encode_response, json, query};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tracing::Instrument;

use crate::service::{RequestContext, Service};

mod connection;
mod error_log;
pub mod tls;

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

/// What a listener serves. `GET /health` is served on every listener, for
/// load balancers; `GET /metrics` names every account's queues, so an
/// operator can keep it to a listener of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Serves {
    /// The SQS API, the console, `/health` and `/metrics` (the default).
    Everything,
    /// The SQS API, the console and `/health`; `/metrics` is 404.
    Api,
    /// `/metrics` and `/health` only; anything else is 404.
    Metrics,
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
        let (stream, _peer) = tokio::select! {
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
                        };
                        serve_connection(stream, via, service, limits, stopping, slot).await;
                    }
                });
            }
        }
    }
}

/// How a request arrived: over TLS or not, on a listener serving what.
#[derive(Debug, Clone, Copy)]
pub struct Via {
    /// It came over TLS (its queue URLs are `https://`, and
    /// `aws:SecureTransport` is true for it).
    pub secure: bool,
    /// What its listener serves.
    pub serves: Serves,
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
                    let resp = handle(&svc, req, limits.body_timeout, via).await;
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

/// Handles one HTTP request, inside a `request` span (its id, then its
/// action and queue once known) that every log line it causes inherits.
///
/// The span is built at debug level: building and formatting it costs
/// about a tenth of an in-memory message's instructions, so at the default
/// level it is skipped, and the few warnings and errors of the request path
/// name the request id themselves.
///
/// The body must arrive within `body_timeout`; a body that does not is
/// answered with an error and its connection is closed.
pub async fn handle<B: Broker>(
    svc: &Service<B>,
    req: Request<Incoming>,
    body_timeout: Duration,
    via: Via,
) -> Response<Full<Bytes>> {
    let mut id = [0u8; uuid::fmt::Hyphenated::LENGTH];
    let request_id = uuid::Uuid::new_v4()
        .hyphenated()
        .encode_lower(&mut id)
        .to_owned();
    let span = tracing::debug_span!(
        "request",
        id = %request_id,
        action = tracing::field::Empty,
        queue = tracing::field::Empty,
    );
    handle_in_span(svc, req, request_id, body_timeout, via)
        .instrument(span)
        .await
}

async fn handle_in_span<B: Broker>(
    svc: &Service<B>,
    req: Request<Incoming>,
    request_id: String,
    body_timeout: Duration,
    via: Via,
) -> Response<Full<Bytes>> {
    let secure = via.secure;
    let is_get = req.method() == Method::GET;
    let path = req.uri().path();
    if is_get && path == "/health" {
        return plain(StatusCode::OK, "ok\n");
    }
    // A metrics listener serves nothing else; the others do not serve
    // /metrics when it has its own.
    let metrics = is_get && path == "/metrics";
    if (via.serves == Serves::Metrics && !metrics) || (via.serves == Serves::Api && metrics) {
        return plain(StatusCode::NOT_FOUND, "not found\n");
    }
    if is_get {
        match path {
            path if sluice_console::is_console_path(path) => return sluice_console::serve(path),
            "/metrics" => {
                let body = svc.metrics.render(&svc.broker, &svc.alarms).await;
                let mut resp = Response::new(Full::new(Bytes::from(body)));
                resp.headers_mut().insert(
                    http::header::CONTENT_TYPE,
                    HeaderValue::from_static(crate::metrics::CONTENT_TYPE),
                );
                return resp;
            }
            _ => {}
        }
    }
    let started = std::time::Instant::now();
    if req.method() != Method::POST && req.method() != Method::GET {
        return plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "SQS requests are POST or GET\n",
        );
    }
    let (parts, incoming) = req.into_parts();
    let headers = &parts.headers;
    let target = headers
        .get("x-amz-target")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let is_json = target.is_some()
        || headers
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|ct| ct.starts_with("application/x-amz-json"));
    let protocol = if is_json {
        Protocol::Json
    } else if headers
        .get(http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| accept.contains("application/json"))
    {
        Protocol::QueryJson
    } else {
        Protocol::Query
    };
    let path = parts.uri.path().to_string();
    let url_query = parts.uri.query().unwrap_or("").to_string();
    let mut ctx = RequestContext {
        host: headers
            .get(http::header::HOST)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string),
        scheme: if secure { "https" } else { "http" },
        // Read once the action is known: only the actions that name a
        // queue by its name need it.
        region: None,
        trace_header: headers
            .get("x-amzn-trace-id")
            .and_then(|v| v.to_str().ok())
            .filter(|v| !v.is_empty())
            .map(str::to_string),
        principal: None,
    };
    let is_post = parts.method == Method::POST;
    let collected = tokio::time::timeout(
        body_timeout,
        Limited::new(incoming, MAX_REQUEST_BODY).collect(),
    );
    let body = match collected.await {
        Ok(Ok(b)) => b.to_bytes(),
        Ok(Err(_)) => {
            let e = SqsError::invalid_parameter(format!(
                "The request body is larger than {MAX_REQUEST_BODY} bytes or could not be read."
            ));
            return closing(respond(protocol, Err(e), "", &request_id));
        }
        Err(_) => {
            let e = SqsError::invalid_parameter(format!(
                "The request body did not arrive within the body timeout ({} s).",
                body_timeout.as_secs_f64()
            ));
            return closing(respond(protocol, Err(e), "", &request_id));
        }
    };
    // Authentication, before anything reads the request: with it off
    // (the default), this is the one branch it costs.
    if let Some(auth) = &svc.config.auth {
        let signed = crate::auth::RequestParts {
            method: parts.method.as_str(),
            path: &path,
            query: &url_query,
            headers: &parts.headers,
            body: &body,
        };
        match auth.verify(&signed, svc.now()) {
            Ok(principal) => ctx.principal = Some(principal),
            Err(refusal) => {
                let action = crate::auth::action_hint(target.as_deref(), &url_query, &body);
                let queue = crate::auth::queue_hint(is_json, &path, &url_query, &body);
                let hints = Hints {
                    action: &action,
                    queue: &queue,
                };
                return refuse(svc, protocol, refusal, hints, started, &request_id);
            }
        }
    }
    let decoded = match protocol {
        Protocol::Json => json::decode(target.as_deref().unwrap_or(""), body.clone()),
        Protocol::Query | Protocol::QueryJson => {
            // A Query request sent to a queue's URL names the queue by its
            // path, unless it names one itself.
            let to_queue = path.trim_matches('/').contains('/');
            query::parameters(url_query.as_bytes(), is_post.then_some(&body[..]))
                .and_then(|mut params| {
                    if to_queue && !params.iter().any(|(k, _)| k == "QueueUrl") {
                        params.push(("QueueUrl".into(), path.clone()));
                    }
                    query::decode(&params)
                })
                .and_then(|request| {
                    if to_queue {
                        query::check_queue_endpoint(&request.action)?;
                    }
                    Ok(request)
                })
        }
    };
    match decoded {
        Ok(request) => {
            let action = request.action.clone();
            tracing::Span::current().record("action", action.as_str());
            if matches!(
                action.as_str(),
                "CreateQueue" | "GetQueueUrl" | "ListQueues"
            ) {
                ctx.region = crate::signing_region::signing_region(&parts.headers, &url_query);
            }
            // Access rules (rule A2): with authentication off there is no
            // principal, and this is the one branch it costs.
            let allowed = match &ctx.principal {
                Some(principal) => {
                    crate::authorize::authorize(svc, &ctx, principal, &request).await
                }
                None => Ok(()),
            };
            let result = match allowed {
                Ok(()) => svc.handle(request, &ctx).await,
                Err(e) => Err(e),
            };
            if let Err(e) = &result {
                tracing::debug!(action, code = e.code.query_code(), message = %e.message, "request failed");
            }
            let code = result.as_ref().err().map_or("ok", |e| e.code.query_code());
            svc.metrics
                .record(&action, protocol.as_str(), code, started.elapsed());
            respond(protocol, result, &action, &request_id)
        }
        Err(e) => {
            svc.metrics.record(
                "",
                protocol.as_str(),
                e.code.query_code(),
                started.elapsed(),
            );
            respond(protocol, Err(e), "", &request_id)
        }
    }
}

/// What a refused request said it asked for, read without decoding it
/// (bounded, for the log only).
struct Hints<'a> {
    action: &'a str,
    queue: &'a str,
}

/// Answers a request that failed authentication, and logs it once: the
/// key it named, the action it asked for, the queue it named, why (never
/// a secret or a signature).
fn refuse<B: Broker>(
    svc: &Service<B>,
    protocol: Protocol,
    refusal: crate::auth::Refusal,
    hints: Hints<'_>,
    started: std::time::Instant,
    request_id: &str,
) -> Response<Full<Bytes>> {
    let Hints { action, queue } = hints;
    let code = refusal.error.code.query_code();
    let queue = if queue.is_empty() { "-" } else { queue };
    tracing::Span::current().record("action", action);
    tracing::Span::current().record("queue", queue);
    tracing::warn!(
        request_id,
        access_key = refusal.access_key_id.as_deref().unwrap_or("-"),
        action,
        queue,
        code,
        reason = refusal.reason,
        "request refused: authentication failed"
    );
    // Metrics label only known actions: an unauthenticated client must
    // not be able to mint label values.
    let known = sluice_protocol::is_known_action(action);
    svc.metrics.record(
        if known { action } else { "" },
        protocol.as_str(),
        code,
        started.elapsed(),
    );
    respond(protocol, Err(refusal.error), "", request_id)
}

fn respond(
    protocol: Protocol,
    result: Result<sluice_protocol::Output, SqsError>,
    action: &str,
    request_id: &str,
) -> Response<Full<Bytes>> {
    let encoded = match result {
        Ok(output) => encode_response(protocol, action, output, request_id),
        Err(e) => {
            error_log::log_server_error(&e, request_id);
            encode_error(protocol, &e, request_id)
        }
    };
    let mut resp = Response::new(Full::new(Bytes::from(encoded.body)));
    *resp.status_mut() =
        StatusCode::from_u16(encoded.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let h = resp.headers_mut();
    h.insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static(encoded.content_type),
    );
    if let Ok(v) = HeaderValue::from_str(request_id) {
        h.insert("x-amzn-requestid", v);
    }
    for (name, value) in encoded.headers {
        if let Ok(v) = HeaderValue::from_str(&value) {
            h.insert(name, v);
        }
    }
    resp
}

/// `resp`, with the connection closed after it: the rest of a body that
/// was not read must not be taken for the next request.
fn closing(mut resp: Response<Full<Bytes>>) -> Response<Full<Bytes>> {
    resp.headers_mut()
        .insert(http::header::CONNECTION, HeaderValue::from_static("close"));
    resp
}

fn plain(status: StatusCode, text: &'static str) -> Response<Full<Bytes>> {
    let mut resp = Response::new(Full::new(Bytes::from_static(text.as_bytes())));
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain"),
    );
    resp
}

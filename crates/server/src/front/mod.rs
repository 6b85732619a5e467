//! The generic front: what every request goes through, whatever its API.
//! In order: `/health`, `/metrics` and the console; the method; the body,
//! bounded in size and time; which protocol, API and operation
//! ([`route`]); authentication (SigV4, `crate::auth`); then the API's own
//! stages (`crate::api::Api`: decode, the access check, the action); and
//! the answer encoded in the request's protocol, with metrics and a
//! request id. Each API supplies only its own stages.

mod error_log;
mod respond;
mod route;

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use sluice_broker::Broker;
use sluice_core::SqsError;
use sluice_core::limits::MAX_REQUEST_BODY;
use sluice_protocol::{Protocol, encode_answer, encode_error};
use tracing::Instrument;

use crate::api::{Api, ApiError, sluice::SluiceApi, sns::SnsApi, sqs::SqsApi};
use crate::auth::Principal;
use crate::inbound::{Call, Serves, Via, header, protocol_of};
use crate::service::{RequestContext, Service};

use respond::{closing, plain, respond};
pub use route::Route;

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
    handle_in_span(svc, req, &request_id, body_timeout, via)
        .instrument(span)
        .await
}

async fn handle_in_span<B: Broker>(
    svc: &Service<B>,
    req: Request<Incoming>,
    request_id: &str,
    body_timeout: Duration,
    via: Via,
) -> Response<Full<Bytes>> {
    if let Some(resp) = serve_static(svc, &req, via).await {
        return resp;
    }
    let started = Instant::now();
    if req.method() != Method::POST && req.method() != Method::GET {
        return plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "SQS requests are POST or GET\n",
        );
    }
    let (parts, incoming) = req.into_parts();
    let body = match read_body(incoming, body_timeout).await {
        Ok(body) => body,
        Err(e) => {
            // Answered in the protocol the headers name.
            let protocol = protocol_of(&parts.headers);
            return closing(respond(encode_error(protocol, &e, request_id), request_id));
        }
    };
    let (call, read) = Call::new(&parts, &body, via);
    let request = Inbound {
        call: &call,
        request_id,
        started,
    };
    let routed = read
        .map_err(|error| route::Unrouted { error, sns: false })
        .and_then(|()| route::route(&call));
    match routed {
        Ok(Route::Sqs(op)) => serve::<B, SqsApi>(svc, &request, op).await,
        Ok(Route::Sluice(op)) => serve::<B, SluiceApi>(svc, &request, op).await,
        Ok(Route::Sns(op)) => serve::<B, SnsApi>(svc, &request, op).await,
        Err(e) if e.sns => unrouted::<B, SnsApi>(svc, &request, e.error),
        Err(e) => unrouted::<B, SqsApi>(svc, &request, e.error),
    }
}

/// Answers a request that names no operation this server serves: a
/// refusal of its signature first, as for any request, then why.
fn unrouted<B: Broker, A: Api<B>>(
    svc: &Service<B>,
    request: &Inbound<'_>,
    e: SqsError,
) -> Response<Full<Bytes>> {
    let call = request.call;
    if let Err(refused) = authenticate::<B, A>(svc, request, None) {
        return *refused;
    }
    svc.metrics.record(
        "",
        call.protocol.as_str(),
        e.code.query_code(),
        request.started.elapsed(),
    );
    let e = A::Error::from(e);
    respond(
        e.encode(call.protocol, request.request_id),
        request.request_id,
    )
}

/// The facts of the request the actions may need; the signing region
/// and the principal are set by the stages that read them.
fn context(call: &Call<'_>) -> RequestContext {
    RequestContext {
        host: header(&call.parts.headers, http::header::HOST.as_str()).map(str::to_string),
        scheme: if call.via.secure { "https" } else { "http" },
        region: None,
        trace_header: header(&call.parts.headers, "x-amzn-trace-id")
            .filter(|v| !v.is_empty())
            .map(str::to_string),
        principal: None,
        source_ip: call.via.peer,
    }
}

/// A request on its way: what arrived, its id and when it started.
struct Inbound<'a> {
    call: &'a Call<'a>,
    request_id: &'a str,
    started: Instant,
}

/// `/health` (on every listener, for load balancers), `/metrics` (not on
/// a listener that serves only the API) and the console; anything else on
/// a metrics listener is 404. `None`: an API request.
async fn serve_static<B: Broker>(
    svc: &Service<B>,
    req: &Request<Incoming>,
    via: Via,
) -> Option<Response<Full<Bytes>>> {
    let is_get = req.method() == Method::GET;
    let path = req.uri().path();
    if is_get && path == "/health" {
        return Some(plain(StatusCode::OK, "ok\n"));
    }
    let metrics = is_get && path == "/metrics";
    if (via.serves == Serves::Metrics && !metrics) || (via.serves == Serves::Api && metrics) {
        return Some(plain(StatusCode::NOT_FOUND, "not found\n"));
    }
    if metrics {
        let usage = match svc.config.archive.clone() {
            Some(archive) => tokio::task::spawn_blocking(move || archive.usage().ok())
                .await
                .ok()
                .flatten(),
            None => None,
        };
        let body = svc.metrics.render(&svc.broker, &svc.alarms, usage).await;
        let mut resp = Response::new(Full::new(Bytes::from(body)));
        resp.headers_mut().insert(
            http::header::CONTENT_TYPE,
            HeaderValue::from_static(crate::metrics::CONTENT_TYPE),
        );
        return Some(resp);
    }
    if is_get && sluice_sns::signing::is_certificate_path(path) {
        return Some(sns_certificate(svc, path).await);
    }
    (is_get && sluice_console::is_console_path(path)).then(|| sluice_console::serve(path))
}

/// The certificate that verifies SNS's envelope signatures, at the path
/// their `SigningCertURL` names (rule N3); any other certificate name is
/// 404.
async fn sns_certificate<B: Broker>(svc: &Service<B>, path: &str) -> Response<Full<Bytes>> {
    let key = match svc.sns_signing_key().await {
        Ok(key) => key,
        Err(e) => {
            tracing::error!(error = %e, "the SNS signing key cannot be read or made");
            return plain(StatusCode::SERVICE_UNAVAILABLE, "signing key unavailable\n");
        }
    };
    if path.strip_prefix('/') != Some(key.certificate_name()) {
        return plain(StatusCode::NOT_FOUND, "not found\n");
    }
    let mut resp = Response::new(Full::new(Bytes::from(key.certificate_pem().to_string())));
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/x-pem-file"),
    );
    resp
}

/// The body, refused past [`MAX_REQUEST_BODY`] or `timeout`.
async fn read_body(incoming: Incoming, timeout: Duration) -> Result<Bytes, SqsError> {
    let collected =
        tokio::time::timeout(timeout, Limited::new(incoming, MAX_REQUEST_BODY).collect());
    match collected.await {
        Ok(Ok(b)) => Ok(b.to_bytes()),
        Ok(Err(_)) => Err(SqsError::invalid_parameter(format!(
            "The request body is larger than {MAX_REQUEST_BODY} bytes or could not be read."
        ))),
        Err(_) => Err(SqsError::invalid_parameter(format!(
            "The request body did not arrive within the body timeout ({} s).",
            timeout.as_secs_f64()
        ))),
    }
}

/// With authentication on, the principal who signed the request for the
/// API's service; a request that fails it is answered here, in the API's
/// errors, and logged once. An operation the API lets anyone ask for
/// (`Api::allows_unsigned`) passes unsigned, without a principal.
fn authenticate<B: Broker, A: Api<B>>(
    svc: &Service<B>,
    request: &Inbound<'_>,
    op: Option<A::Operation>,
) -> Result<Option<Arc<Principal>>, Box<Response<Full<Bytes>>>> {
    let Some(auth) = &svc.config.auth else {
        return Ok(None);
    };
    let call = request.call;
    if op.is_some_and(A::allows_unsigned) && !carries_signature(call) {
        return Ok(None);
    }
    let signed = crate::auth::RequestParts {
        method: call.parts.method.as_str(),
        path: call.path(),
        query: call.url_query(),
        headers: &call.parts.headers,
        body: call.body,
    };
    match auth.verify_for(&signed, A::SERVICE, svc.now()) {
        Ok(principal) => Ok(Some(principal)),
        Err(refusal) => Err(Box::new(refuse::<B, A>(svc, request, op, refusal))),
    }
}

/// True when the request carries some part of a SigV4 signature: one that
/// does is verified, whatever its operation.
fn carries_signature(call: &Call<'_>) -> bool {
    call.parts.headers.contains_key(http::header::AUTHORIZATION)
        || call.param("X-Amz-Signature").is_some()
        || call.param("X-Amz-Credential").is_some()
}

/// Answers a request that failed authentication, and logs it once: the
/// key it named, the action it asked for, the queue it named, why (never
/// a secret or a signature).
fn refuse<B: Broker, A: Api<B>>(
    svc: &Service<B>,
    request: &Inbound<'_>,
    op: Option<A::Operation>,
    refusal: crate::auth::Refusal,
) -> Response<Full<Bytes>> {
    let call = request.call;
    let is_json = call.protocol == Protocol::Json;
    // Metrics label only known actions: an unauthenticated client must
    // not be able to mint label values.
    let known = op.map(A::name);
    let action = known.map_or_else(
        || crate::auth::action_hint(call.target, call.url_query(), call.body),
        str::to_string,
    );
    let queue = crate::auth::queue_hint(is_json, call.path(), call.url_query(), call.body);
    let queue = if queue.is_empty() { "-" } else { &queue };
    let code = refusal.error.code.query_code();
    tracing::Span::current().record("action", action.as_str());
    tracing::Span::current().record("queue", queue);
    tracing::warn!(
        request_id = request.request_id,
        access_key = refusal.access_key_id.as_deref().unwrap_or("-"),
        action,
        queue,
        code,
        reason = refusal.reason,
        "request refused: authentication failed"
    );
    svc.metrics.record(
        known.unwrap_or(""),
        call.protocol.as_str(),
        code,
        request.started.elapsed(),
    );
    let error = A::Error::from(refusal.error);
    respond(
        error.encode(call.protocol, request.request_id),
        request.request_id,
    )
}

/// Runs an API's operation and answers it: the API's stages (decode, the
/// access check of an authenticated request, the action), then metrics
/// and the answer in the request's protocol.
async fn serve<B: Broker, A: Api<B>>(
    svc: &Service<B>,
    request: &Inbound<'_>,
    op: A::Operation,
) -> Response<Full<Bytes>> {
    let call = request.call;
    let mut ctx = context(call);
    // Authentication, before anything reads the request: with it off
    // (the default), this is the one branch it costs.
    match authenticate::<B, A>(svc, request, Some(op)) {
        Ok(principal) => ctx.principal = principal,
        Err(refused) => return *refused,
    }
    let name = A::name(op);
    tracing::Span::current().record("action", name);
    if A::needs_signing_region(op) {
        ctx.region = crate::signing_region::signing_region(&call.parts.headers, call.url_query());
    }
    let result = run::<B, A>(svc, &ctx, call, op).await;
    let protocol = call.protocol;
    let code = result.as_ref().err().map_or("ok", ApiError::code);
    svc.metrics
        .record(name, protocol.as_str(), code, request.started.elapsed());
    let request_id = request.request_id;
    let encoded = match result {
        Ok(answer) => {
            let capacity = A::capacity(&answer);
            encode_answer(protocol, A::NAMESPACE, &answer, request_id, capacity)
        }
        Err(e) => {
            tracing::debug!(action = name, code, message = %e.message(), "request failed");
            error_log::log_server_error(&e, request_id);
            e.encode(protocol, request_id)
        }
    };
    respond(encoded, request_id)
}

/// An API's stages for one request.
async fn run<B: Broker, A: Api<B>>(
    svc: &Service<B>,
    ctx: &RequestContext,
    call: &Call<'_>,
    op: A::Operation,
) -> Result<A::Response, A::Error> {
    let request = A::decode(op, call)?;
    // Access rules (rule A2): with authentication off there is no
    // principal, and this is the one branch it costs.
    if let Some(principal) = &ctx.principal {
        A::authorize(svc, ctx, principal, &request).await?;
    }
    A::handle(svc, ctx, request).await
}

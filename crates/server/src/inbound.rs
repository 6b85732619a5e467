//! What arrived: how a request came (over TLS or not, on a listener
//! serving what), its parts, its body, which protocol it speaks, and for
//! the Query protocol its parameters, read once for every stage that needs
//! them (routing, authentication, decoding). A leaf: the listeners, the
//! front and the APIs all read it.

use bytes::Bytes;
use http::HeaderMap;
use http::request::Parts;
use sluice_core::SqsError;
use sluice_protocol::Protocol;
use sluice_protocol::form;

/// How a request arrived: over TLS or not, on a listener serving what.
#[derive(Debug, Clone, Copy)]
pub struct Via {
    /// It came over TLS (its queue URLs are `https://`, and
    /// `aws:SecureTransport` is true for it).
    pub secure: bool,
    /// What its listener serves.
    pub serves: Serves,
    /// The client's address (`aws:SourceIp` in queue policies).
    pub peer: Option<std::net::IpAddr>,
}

/// What a listener serves. `GET /health` is served on every listener, for
/// load balancers; `GET /metrics` names every account's queues, so an
/// operator can keep it to a listener of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Serves {
    /// The APIs, the console, `/health` and `/metrics` (the default).
    Everything,
    /// The APIs, the console and `/health`; `/metrics` is 404.
    Api,
    /// `/metrics` and `/health` only; anything else is 404.
    Metrics,
}

/// A request as the front read it.
pub struct Call<'a> {
    /// The protocol it speaks, and its answer will.
    pub protocol: Protocol,
    /// Its method, path, query string and headers.
    pub parts: &'a Parts,
    /// Its body.
    pub body: &'a Bytes,
    /// The JSON protocol's `X-Amz-Target`.
    pub target: Option<&'a str>,
    /// The Query protocol's parameters (the URL's, then a POST's form
    /// body's); none in the JSON protocol.
    pub params: Vec<(String, String)>,
    /// How it arrived.
    pub via: Via,
}

impl<'a> Call<'a> {
    /// Reads what the stages need of a request: its protocol and, in the
    /// Query protocol, its parameters (refused as SQS refuses a bad form).
    pub fn new(parts: &'a Parts, body: &'a Bytes, via: Via) -> (Self, Result<(), SqsError>) {
        let target = header(&parts.headers, "x-amz-target");
        let protocol = protocol_of(&parts.headers);
        let mut call = Call {
            protocol,
            parts,
            body,
            target,
            params: Vec::new(),
            via,
        };
        let read = match protocol {
            Protocol::Json => Ok(()),
            Protocol::Query | Protocol::QueryJson => {
                let post = (parts.method == http::Method::POST).then_some(&body[..]);
                form::parameters(call.url_query().as_bytes(), post).map(|p| call.params = p)
            }
        };
        (call, read)
    }

    /// The URL's path.
    pub fn path(&self) -> &'a str {
        self.parts.uri.path()
    }

    /// The URL's query string.
    pub fn url_query(&self) -> &'a str {
        self.parts.uri.query().unwrap_or("")
    }

    /// A Query parameter's value.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The queue a Query request names by the path it was sent to
    /// (`/<account>/<name>`), when it was sent to a queue's URL.
    pub fn queue_path(&self) -> Option<&'a str> {
        let path = self.path();
        path.trim_matches('/').contains('/').then_some(path)
    }
}

/// A header's value, when it is text.
pub fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// The JSON protocol (a target, or an `application/x-amz-json` body), the
/// Query protocol answered in JSON (it accepts JSON), or the Query
/// protocol.
pub fn protocol_of(headers: &HeaderMap) -> Protocol {
    let is_json = header(headers, "x-amz-target").is_some()
        || header(headers, http::header::CONTENT_TYPE.as_str())
            .is_some_and(|ct| ct.starts_with("application/x-amz-json"));
    if is_json {
        Protocol::Json
    } else if header(headers, http::header::ACCEPT.as_str())
        .is_some_and(|accept| accept.contains("application/json"))
    {
        Protocol::QueryJson
    } else {
        Protocol::Query
    }
}

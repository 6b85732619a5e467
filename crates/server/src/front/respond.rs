//! Encoded answers made into HTTP responses.

use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode};
use http_body_util::Full;
use sluice_protocol::Encoded;

/// The response of an encoded answer, with the request id SDKs read.
pub fn respond(encoded: Encoded, request_id: &str) -> Response<Full<Bytes>> {
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
pub fn closing(mut resp: Response<Full<Bytes>>) -> Response<Full<Bytes>> {
    resp.headers_mut()
        .insert(http::header::CONNECTION, HeaderValue::from_static("close"));
    resp
}

/// A plain-text response.
pub fn plain(status: StatusCode, text: &'static str) -> Response<Full<Bytes>> {
    let mut resp = Response::new(Full::new(Bytes::from_static(text.as_bytes())));
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain"),
    );
    resp
}

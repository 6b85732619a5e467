//! The trivial handler of `sluice bench --push`: a keep-alive HTTP server
//! that takes each POSTed SQS event, counts its records and answers
//! `{"batchItemFailures":[]}` (every message handled). It does what the
//! smallest real handler does (read the whole event, answer JSON) and
//! nothing more, so that what a run measures is the server's delivery path.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::error::BenchError;

/// The answer to every event: no item failed.
const NO_FAILURES: &str = r#"{"batchItemFailures":[]}"#;

/// What a record of Lambda's SQS event starts with; counted to count the
/// records without parsing the event.
const RECORD_KEY: &str = "\"messageId\"";

/// What the handler has seen so far.
#[derive(Debug, Default)]
pub struct Counts {
    /// Events (batches) answered.
    pub batches: AtomicU64,
    /// Records in them.
    pub records: AtomicU64,
    /// Requests that were not a readable event (answered 400).
    pub bad: AtomicU64,
}

/// A running handler; dropping it stops it.
pub struct Handler {
    /// Its URL, for CreateConsumer.
    pub url: String,
    /// Its counters.
    pub counts: Arc<Counts>,
    task: JoinHandle<()>,
}

impl Drop for Handler {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Starts the handler on a free loopback port.
pub async fn start() -> Result<Handler, BenchError> {
    let bind = SocketAddr::from(([127, 0, 0, 1], 0));
    let listener = TcpListener::bind(bind)
        .await
        .map_err(|source| BenchError::Io {
            context: format!("cannot listen on {bind} for the push handler"),
            source,
        })?;
    let local = listener.local_addr().map_err(|source| BenchError::Io {
        context: "cannot read the push handler's address".into(),
        source,
    })?;
    let counts = Arc::new(Counts::default());
    let task = tokio::spawn(accept(listener, counts.clone()));
    Ok(Handler {
        url: format!("http://{local}/2015-03-31/functions/function/invocations"),
        counts,
        task,
    })
}

async fn accept(listener: TcpListener, counts: Arc<Counts>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            continue;
        };
        let _ = stream.set_nodelay(true);
        let counts = counts.clone();
        tokio::spawn(async move {
            let service = service_fn(move |req| {
                let counts = counts.clone();
                async move { Ok::<_, Infallible>(handle(&counts, req).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .keep_alive(true)
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

async fn handle(counts: &Counts, req: Request<Incoming>) -> Response<Full<Bytes>> {
    let body = match req.into_body().collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => return answer(counts, StatusCode::BAD_REQUEST, ""),
    };
    let Some(records) = count_records(&body) else {
        return answer(counts, StatusCode::BAD_REQUEST, "");
    };
    counts.records.fetch_add(records, Ordering::Relaxed);
    counts.batches.fetch_add(1, Ordering::Relaxed);
    answer(counts, StatusCode::OK, NO_FAILURES)
}

/// The number of records of an event, or `None` when it is not one.
fn count_records(body: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(body).ok()?;
    if !text.starts_with('{') || !text.contains("\"Records\"") {
        return None;
    }
    Some(text.matches(RECORD_KEY).count() as u64)
}

fn answer(counts: &Counts, status: StatusCode, body: &'static str) -> Response<Full<Bytes>> {
    if !status.is_success() {
        counts.bad.fetch_add(1, Ordering::Relaxed);
    }
    let mut response = Response::new(Full::new(Bytes::from_static(body.as_bytes())));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_the_records_of_an_event() {
        let event = br#"{"Records":[{"messageId":"a","body":"\"messageId\" in a body is escaped"},{"messageId":"b"}]}"#;
        assert_eq!(count_records(event), Some(2));
        assert_eq!(count_records(br#"{"Records":[]}"#), Some(0));
        assert_eq!(count_records(b"not json"), None);
    }
}

//! The null server: an HTTP server that does everything an SQS JSON server
//! does per request except keeping messages: it reads the body, dispatches
//! on `X-Amz-Target`, parses the JSON into the operation's generated input
//! type (as sluice does), computes the MD5 of every sent body (a batch's
//! bodies together, as sluice does) and writes valid responses from the
//! generated output types. Its throughput under a load is the ceiling of
//! HTTP and JSON work on the machine, against which a real server's
//! throughput is compared.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE, HOST, HeaderValue};
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde::Serialize;
use sluice_core::digest::{body_digests, digest_hex, md5_of_body};
use tokio::net::TcpListener;

use crate::error::BenchError;
use sluice_client::sqs::{
    self, CreateQueueResult, DeleteMessageBatchResult, DeleteMessageBatchResultEntry,
    GetQueueAttributesResult, GetQueueUrlResult, ListQueuesResult, Message, Operation,
    ReceiveMessageResult, SendMessageBatchResult, SendMessageBatchResultEntry, SendMessageResult,
};
use sluice_client::{Empty, NULL_SERVER_HEADER};

/// Largest request body read, as in sluice.
const MAX_BODY: usize = 4 * 1024 * 1024;
/// Body size of canned messages until a send says otherwise.
const DEFAULT_CANNED_SIZE: usize = 1024;
/// The account in queue URLs, as in sluice's default.
const ACCOUNT: &str = "000000000000";

/// The body that receives return, matching the size of the latest send so a
/// receive moves as many bytes as it would on a real queue.
struct Canned {
    body: String,
    md5: String,
}

impl Canned {
    fn of_size(size: usize) -> Self {
        let body = "x".repeat(size);
        let md5 = md5_of_body(&body);
        Self { body, md5 }
    }
}

/// What the null server keeps: the canned message and a counter for ids.
struct NullState {
    canned: RwLock<Arc<Canned>>,
    deliveries: AtomicU64,
}

impl NullState {
    fn canned(&self) -> Arc<Canned> {
        self.canned
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Follows the body size of the sends.
    fn observe_size(&self, size: usize) {
        if self.canned().body.len() != size {
            *self.canned.write().unwrap_or_else(|p| p.into_inner()) =
                Arc::new(Canned::of_size(size));
        }
    }
}

/// Serves until Ctrl-C or SIGTERM, printing
/// `sluice null server listening on http://ADDR` first.
pub async fn serve(bind: SocketAddr) -> Result<(), BenchError> {
    let listener = TcpListener::bind(bind)
        .await
        .map_err(|source| BenchError::Io {
            context: format!("cannot listen on {bind}"),
            source,
        })?;
    let local = listener.local_addr().map_err(|source| BenchError::Io {
        context: "cannot read the listening address".into(),
        source,
    })?;
    // On stdout, so scripts and tests find a port chosen with :0.
    println!("sluice null server listening on http://{local}");
    let state = Arc::new(NullState {
        canned: RwLock::new(Arc::new(Canned::of_size(DEFAULT_CANNED_SIZE))),
        deliveries: AtomicU64::new(0),
    });
    let mut shutdown = std::pin::pin!(shutdown_signal());
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(_) => {
                    // Out of descriptors and the like: back off, keep serving.
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => return Ok(()),
        };
        // As sluice does: small responses must not wait for Nagle.
        let _ = stream.set_nodelay(true);
        let state = state.clone();
        tokio::spawn(async move {
            let service = service_fn(move |req| {
                let state = state.clone();
                async move { Ok::<_, Infallible>(handle(&state, req).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .keep_alive(true)
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(term) => term,
                Err(_) => {
                    let _ = tokio::signal::ctrl_c().await;
                    return;
                }
            };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// An SQS error: HTTP status, code, message.
type Failure = (StatusCode, &'static str, String);

async fn handle(state: &NullState, req: Request<Incoming>) -> Response<Full<Bytes>> {
    let target = req
        .headers()
        .get("x-amz-target")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let host = req
        .headers()
        .get(HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("localhost")
        .to_string();
    let result = match Limited::new(req.into_body(), MAX_BODY).collect().await {
        Ok(body) => {
            let action = target
                .as_deref()
                .and_then(|t| t.strip_prefix("AmazonSQS."))
                .unwrap_or("");
            answer(state, action, &host, &body.to_bytes())
        }
        Err(_) => Err((
            StatusCode::BAD_REQUEST,
            "InvalidParameterValue",
            "The request body is too large or could not be read.".into(),
        )),
    };
    respond(result)
}

/// The output of one action, as JSON bytes: the request decoded into its
/// generated SQS input type, the answer written from the generated output
/// type, as sluice does.
fn answer(state: &NullState, action: &str, host: &str, body: &[u8]) -> Result<Vec<u8>, Failure> {
    if action.is_empty() {
        return Err((
            StatusCode::BAD_REQUEST,
            "MissingAction",
            "The null server speaks the AWS JSON 1.0 protocol: X-Amz-Target is required.".into(),
        ));
    }
    let Some(op) = Operation::from_name(action) else {
        return Err(not_served(action));
    };
    let request = sqs::Request::from_json(op, body).map_err(|e| {
        (
            StatusCode::BAD_REQUEST,
            "InvalidParameterValue",
            format!("The request body is not valid for the action: {e}"),
        )
    })?;
    match request {
        sqs::Request::CreateQueue(input) => encode(&CreateQueueResult {
            queue_url: Some(queue_url(host, input.queue_name)?),
        }),
        sqs::Request::GetQueueUrl(input) => encode(&GetQueueUrlResult {
            queue_url: Some(queue_url(host, input.queue_name)?),
        }),
        sqs::Request::SendMessageBatch(input) => {
            let entries = required(input.entries, "Entries")?;
            let mut bodies = Vec::with_capacity(entries.len());
            let mut ids = Vec::with_capacity(entries.len());
            for e in entries {
                bodies.push(required(e.message_body, "MessageBody")?);
                ids.push(required(e.id, "Id")?);
            }
            if let Some(first) = bodies.first() {
                state.observe_size(first.len());
            }
            // The bodies hashed together, as sluice hashes a batch's.
            let successful = ids
                .into_iter()
                .zip(body_digests(&bodies))
                .map(|(id, digest)| SendMessageBatchResultEntry {
                    id,
                    message_id: uuid::Uuid::new_v4().to_string(),
                    md5_of_message_body: digest_hex(&digest),
                    ..Default::default()
                })
                .collect();
            encode(&SendMessageBatchResult {
                successful,
                failed: Vec::new(),
            })
        }
        sqs::Request::SendMessage(input) => {
            let body = required(input.message_body, "MessageBody")?;
            encode(&SendMessageResult {
                message_id: Some(uuid::Uuid::new_v4().to_string()),
                md5_of_message_body: Some(md5_of_body(&body)),
                ..Default::default()
            })
        }
        sqs::Request::ReceiveMessage(input) => {
            let count = input.max_number_of_messages.unwrap_or(1).clamp(1, 10) as u64;
            let canned = state.canned();
            let first = state.deliveries.fetch_add(count, Ordering::Relaxed);
            let messages = (0..count)
                .map(|i| Message {
                    message_id: Some(uuid::Uuid::new_v4().to_string()),
                    // As long as sluice's handles (28 characters).
                    receipt_handle: Some(format!("null{:024}", first + i)),
                    md5_of_body: Some(canned.md5.clone()),
                    body: Some(canned.body.clone()),
                    ..Default::default()
                })
                .collect();
            encode(&ReceiveMessageResult { messages })
        }
        sqs::Request::DeleteMessageBatch(input) => {
            let successful = required(input.entries, "Entries")?
                .into_iter()
                .map(|e| required(e.id, "Id").map(|id| DeleteMessageBatchResultEntry { id }))
                .collect::<Result<_, _>>()?;
            encode(&DeleteMessageBatchResult {
                successful,
                failed: Vec::new(),
            })
        }
        sqs::Request::GetQueueAttributes(_) => encode(&GetQueueAttributesResult::default()),
        sqs::Request::ListQueues(_) => encode(&ListQueuesResult::default()),
        sqs::Request::PurgeQueue(_)
        | sqs::Request::DeleteQueue(_)
        | sqs::Request::DeleteMessage(_)
        | sqs::Request::ChangeMessageVisibility(_)
        | sqs::Request::SetQueueAttributes(_) => encode(&Empty {}),
        // The message loop's and the set-up's operations only.
        other => Err(not_served(other.operation().name())),
    }
}

/// The error of an action the null server does not answer.
fn not_served(action: &str) -> Failure {
    (
        StatusCode::BAD_REQUEST,
        "InvalidAction",
        format!("The null server does not implement {action}."),
    )
}

/// The URL of the queue named `name`, on the host the request was sent to.
fn queue_url(host: &str, name: Option<String>) -> Result<String, Failure> {
    let name = required(name, "QueueName")?;
    Ok(format!("http://{host}/{ACCOUNT}/{name}"))
}

fn encode(output: &impl Serialize) -> Result<Vec<u8>, Failure> {
    serde_json::to_vec(output).map_err(|e| {
        (
            StatusCode::INTERNAL_SERVER_ERROR,
            "InternalFailure",
            e.to_string(),
        )
    })
}

fn respond(result: Result<Vec<u8>, Failure>) -> Response<Full<Bytes>> {
    let (status, body, query_error) = match result {
        Ok(body) => (StatusCode::OK, body, None),
        Err((status, code, message)) => {
            let body = ErrorAnswer {
                error_type: format!("com.amazonaws.sqs#{code}"),
                message,
            };
            let fault = if status.is_client_error() {
                "Sender"
            } else {
                "Receiver"
            };
            (
                status,
                serde_json::to_vec(&body).unwrap_or_default(),
                Some(format!("{code};{fault}")),
            )
        }
    };
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("application/x-amz-json-1.0"),
    );
    // A request id per response, as every SQS server sends.
    if let Ok(id) = HeaderValue::from_str(&uuid::Uuid::new_v4().to_string()) {
        headers.insert("x-amzn-requestid", id);
    }
    headers.insert(NULL_SERVER_HEADER, HeaderValue::from_static("1"));
    if let Some(code) = query_error.and_then(|c| HeaderValue::from_str(&c).ok()) {
        headers.insert("x-amzn-query-error", code);
    }
    response
}

/// A required member, or the error SQS gives for its absence.
fn required<T>(value: Option<T>, name: &str) -> Result<T, Failure> {
    value.ok_or_else(|| {
        (
            StatusCode::BAD_REQUEST,
            "MissingParameter",
            format!("The request must contain the parameter {name}."),
        )
    })
}

/// An SQS error as the JSON protocol writes it: the envelope of every
/// API's errors, not a shape of the model.
#[derive(Serialize)]
struct ErrorAnswer {
    /// The error's shape, `com.amazonaws.sqs#<Code>`.
    #[serde(rename = "__type")]
    error_type: String,
    /// What went wrong.
    message: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> NullState {
        NullState {
            canned: RwLock::new(Arc::new(Canned::of_size(DEFAULT_CANNED_SIZE))),
            deliveries: AtomicU64::new(0),
        }
    }

    #[test]
    fn send_batch_answers_every_entry_with_its_md5() {
        let s = state();
        let body = br#"{"QueueUrl":"u","Entries":[{"Id":"0","MessageBody":"hello"},{"Id":"1","MessageBody":"hi"}]}"#;
        let out = answer(&s, "SendMessageBatch", "h", body).unwrap();
        let out: SendMessageBatchResult = serde_json::from_slice(&out).unwrap();
        assert_eq!(out.successful.len(), 2);
        assert_eq!(
            out.successful[0].md5_of_message_body,
            "5d41402abc4b2a76b9719d911017c592"
        );
        assert_eq!(s.canned().body.len(), 5, "canned bodies follow the sends");
    }

    #[test]
    fn receive_returns_the_asked_number_of_canned_messages() {
        let s = state();
        let out = answer(
            &s,
            "ReceiveMessage",
            "h",
            br#"{"QueueUrl":"u","MaxNumberOfMessages":10}"#,
        )
        .unwrap();
        let out: ReceiveMessageResult = serde_json::from_slice(&out).unwrap();
        assert_eq!(out.messages.len(), 10);
        let body = out.messages[0].body.as_deref().unwrap();
        assert_eq!(body.len(), DEFAULT_CANNED_SIZE);
        assert_eq!(out.messages[0].md5_of_body, Some(md5_of_body(body)));
        assert_ne!(
            out.messages[0].receipt_handle,
            out.messages[1].receipt_handle
        );
    }

    #[test]
    fn create_queue_answers_a_url_and_bad_input_an_sqs_error() {
        let s = state();
        let out = answer(&s, "CreateQueue", "127.0.0.1:1", br#"{"QueueName":"q"}"#).unwrap();
        let out: CreateQueueResult = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            out.queue_url.as_deref(),
            Some("http://127.0.0.1:1/000000000000/q")
        );
        assert!(answer(&s, "CreateQueue", "h", b"not json").is_err());
        assert!(answer(&s, "Nope", "h", b"{}").is_err());
        let refused = answer(&s, "ChangeMessageVisibilityBatch", "h", b"{}").unwrap_err();
        assert_eq!(refused.1, "InvalidAction");
        let done = answer(&s, "PurgeQueue", "h", br#"{"QueueUrl":"u"}"#).unwrap();
        assert_eq!(done, b"{}");
    }
}

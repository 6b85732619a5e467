//! A minimal SQS client for the JSON 1.0 protocol over pooled HTTP/1.1
//! keep-alive connections: only the actions the benchmark needs, with as
//! little work per request as possible so the client's cost does not hide
//! the server's.

use sluice_core::error::error_chain;
use std::borrow::Cow;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{AUTHORIZATION as AUTHORIZATION_HEADER, CONTENT_TYPE, HeaderValue};
use hyper::{HeaderMap, Method, Request, Uri};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::error::{BenchError, RequestError};
use crate::wire::{
    DeleteEntry, DeleteMessageBatchRequest, DeleteMessageBatchResponse, ReceiveMessageRequest,
    ReceiveMessageResponse, ReceivedMessage, SendEntry, SendMessageBatchRequest,
    SendMessageBatchResponse,
};

/// The header the null server puts on every response, so a run can tell it
/// is not talking to a real queue.
pub const NULL_SERVER_HEADER: &str = "x-sluice-null-server";

/// How long any request may take beyond its long-poll wait.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// The content type of AWS JSON 1.0 requests.
const JSON_1_0: &str = "application/x-amz-json-1.0";

/// The `Authorization` header of every request: SigV4-shaped, with the
/// credential scope of SQS in us-east-1 and a dummy signature. Every SDK
/// signs its requests and emulators rely on it: moto's server picks the
/// service to answer from the scope (an unsigned request goes to S3), and
/// LocalStack takes the account and region from it. sluice and the
/// emulators do not check signatures, and computing a real one would add
/// client work to every request, so the benchmark does not sign (and cannot
/// load a real AWS endpoint).
pub const AUTHORIZATION: &str = "AWS4-HMAC-SHA256 \
    Credential=test/20000101/us-east-1/sqs/aws4_request, \
    SignedHeaders=content-type;host;x-amz-target, \
    Signature=0000000000000000000000000000000000000000000000000000000000000000";

/// A queue the endpoint created or already had.
#[derive(Debug, Clone)]
pub struct CreatedQueue {
    /// Its URL, as the endpoint gave it.
    pub url: String,
    /// Whether the endpoint is sluice's null server.
    pub null_server: bool,
}

/// An SQS client bound to one endpoint.
#[derive(Clone)]
pub struct SqsClient {
    http: Client<HttpConnector, Full<Bytes>>,
    uri: Uri,
}

impl SqsClient {
    /// A client for `endpoint` (`http://HOST:PORT[/PATH]`) that keeps up to
    /// `connections` idle keep-alive connections: one per concurrent worker,
    /// so no request waits for a connection to be opened.
    pub fn new(endpoint: &str, connections: usize) -> Result<Self, BenchError> {
        let uri: Uri = endpoint
            .parse()
            .map_err(|e| BenchError::Usage(format!("--endpoint {endpoint:?} is not a URL: {e}")))?;
        if uri.scheme_str() != Some("http") || uri.authority().is_none() {
            return Err(BenchError::Usage(format!(
                "--endpoint {endpoint:?} must be a plain http:// URL with a host"
            )));
        }
        let mut connector = HttpConnector::new();
        // Small request/response pairs: Nagle's algorithm would add delay.
        connector.set_nodelay(true);
        let http = Client::builder(TokioExecutor::new())
            .pool_max_idle_per_host(connections)
            .pool_idle_timeout(Duration::from_secs(60))
            .build(connector);
        Ok(Self { http, uri })
    }

    /// CreateQueue, with `attributes`; falls back to GetQueueUrl when the
    /// queue exists with other attributes.
    pub async fn create_queue(
        &self,
        name: &str,
        attributes: &[(&str, &str)],
    ) -> Result<CreatedQueue, RequestError> {
        let attrs: serde_json::Map<String, serde_json::Value> = attributes
            .iter()
            .map(|(k, v)| ((*k).to_string(), serde_json::Value::from(*v)))
            .collect();
        let mut input = serde_json::json!({ "QueueName": name });
        if !attrs.is_empty() {
            input["Attributes"] = serde_json::Value::Object(attrs);
        }
        let created = self
            .call::<serde_json::Value>("AmazonSQS.CreateQueue", &input, REQUEST_TIMEOUT)
            .await;
        let (output, headers) = match created {
            Err(RequestError::Service { code, .. })
                if code == "QueueAlreadyExists" || code == "QueueNameExists" =>
            {
                self.call::<serde_json::Value>(
                    "AmazonSQS.GetQueueUrl",
                    &serde_json::json!({ "QueueName": name }),
                    REQUEST_TIMEOUT,
                )
                .await?
            }
            other => other?,
        };
        let url = output
            .get("QueueUrl")
            .and_then(serde_json::Value::as_str)
            .ok_or_else(|| RequestError::Decode("no QueueUrl in the response".into()))?
            .to_string();
        Ok(CreatedQueue {
            url,
            null_server: headers.contains_key(NULL_SERVER_HEADER),
        })
    }

    /// PurgeQueue.
    pub async fn purge_queue(&self, url: &str) -> Result<(), RequestError> {
        self.call::<serde_json::Value>(
            "AmazonSQS.PurgeQueue",
            &serde_json::json!({ "QueueUrl": url }),
            REQUEST_TIMEOUT,
        )
        .await
        .map(|_| ())
    }

    /// SendMessageBatch.
    pub async fn send_message_batch(
        &self,
        url: &str,
        entries: Vec<SendEntry<'_>>,
    ) -> Result<SendMessageBatchResponse, RequestError> {
        let input = SendMessageBatchRequest {
            queue_url: Cow::Borrowed(url),
            entries,
        };
        let target = "AmazonSQS.SendMessageBatch";
        let (bytes, _) = self
            .exchange_body(target, input.to_json(), REQUEST_TIMEOUT)
            .await?;
        decode(target, &bytes)
    }

    /// ReceiveMessage of up to `max` messages, waiting up to `wait_seconds`.
    /// The answer is parsed by [`ReceiveOutput::messages`], borrowing from it.
    pub async fn receive_message(
        &self,
        url: &str,
        max: u32,
        wait_seconds: u32,
    ) -> Result<ReceiveOutput, RequestError> {
        let input = ReceiveMessageRequest {
            queue_url: Cow::Borrowed(url),
            max_number_of_messages: Some(max),
            wait_time_seconds: Some(wait_seconds),
        };
        let timeout = REQUEST_TIMEOUT + Duration::from_secs(u64::from(wait_seconds));
        self.exchange("AmazonSQS.ReceiveMessage", &input, timeout)
            .await
            .map(|(bytes, _)| ReceiveOutput(bytes))
    }

    /// DeleteMessageBatch.
    pub async fn delete_message_batch(
        &self,
        url: &str,
        entries: Vec<DeleteEntry<'_>>,
    ) -> Result<DeleteMessageBatchResponse, RequestError> {
        let input = DeleteMessageBatchRequest {
            queue_url: Cow::Borrowed(url),
            entries,
        };
        self.call("AmazonSQS.DeleteMessageBatch", &input, REQUEST_TIMEOUT)
            .await
            .map(|(output, _)| output)
    }

    /// POSTs one action and decodes its output, or its SQS error.
    async fn call<T: DeserializeOwned>(
        &self,
        target: &'static str,
        input: &impl Serialize,
        timeout: Duration,
    ) -> Result<(T, HeaderMap), RequestError> {
        let (bytes, headers) = self.exchange(target, input, timeout).await?;
        let output = decode(target, &bytes)?;
        Ok((output, headers))
    }

    /// POSTs one action and returns the body of a 2xx answer, or its SQS error.
    async fn exchange(
        &self,
        target: &'static str,
        input: &impl Serialize,
        timeout: Duration,
    ) -> Result<(Bytes, HeaderMap), RequestError> {
        let body = serde_json::to_vec(input).map_err(|e| RequestError::Decode(e.to_string()))?;
        self.exchange_body(target, body, timeout).await
    }

    /// POSTs one action's encoded input; the body of a 2xx answer, or its
    /// SQS error.
    async fn exchange_body(
        &self,
        target: &'static str,
        body: Vec<u8>,
        timeout: Duration,
    ) -> Result<(Bytes, HeaderMap), RequestError> {
        let request = Request::builder()
            .method(Method::POST)
            .uri(self.uri.clone())
            .header(CONTENT_TYPE, HeaderValue::from_static(JSON_1_0))
            .header("x-amz-target", HeaderValue::from_static(target))
            .header(
                AUTHORIZATION_HEADER,
                HeaderValue::from_static(AUTHORIZATION),
            )
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| RequestError::Transport(e.to_string()))?;
        let exchange = async {
            let response = self
                .http
                .request(request)
                .await
                .map_err(|e| RequestError::Transport(error_chain(&e)))?;
            let (parts, body) = response.into_parts();
            let bytes = body
                .collect()
                .await
                .map_err(|e| RequestError::Transport(error_chain(&e)))?
                .to_bytes();
            Ok::<_, RequestError>((parts, bytes))
        };
        let (parts, bytes) = tokio::time::timeout(timeout, exchange)
            .await
            .map_err(|_| RequestError::Timeout(timeout))??;
        if !parts.status.is_success() {
            return Err(service_error(parts.status.as_u16(), &parts.headers, &bytes));
        }
        Ok((bytes, parts.headers))
    }
}

/// The body of a ReceiveMessage answer, parsed on demand so the messages can
/// borrow from it.
pub struct ReceiveOutput(Bytes);

impl ReceiveOutput {
    /// The messages received (none when the queue had nothing ready).
    pub fn messages(&self) -> Result<Vec<ReceivedMessage<'_>>, RequestError> {
        decode::<ReceiveMessageResponse>("AmazonSQS.ReceiveMessage", &self.0)
            .map(|output| output.messages)
    }
}

/// Parses the JSON output of `target`.
fn decode<'a, T: Deserialize<'a>>(target: &str, bytes: &'a [u8]) -> Result<T, RequestError> {
    serde_json::from_slice(bytes).map_err(|e| {
        let shown: String = String::from_utf8_lossy(bytes).chars().take(300).collect();
        RequestError::Decode(format!("{target}: {e}: {shown}"))
    })
}

/// The SQS error in a non-2xx response: the code from `x-amzn-query-error`
/// (what SDKs read), else from the `__type`.
fn service_error(status: u16, headers: &HeaderMap, body: &[u8]) -> RequestError {
    let json: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
    let from_header = headers
        .get("x-amzn-query-error")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .filter(|c| !c.is_empty())
        .map(str::to_string);
    let from_type = json
        .get("__type")
        .and_then(serde_json::Value::as_str)
        .map(|t| t.rsplit('#').next().unwrap_or(t).to_string());
    let message = json
        .get("message")
        .or_else(|| json.get("Message"))
        .and_then(serde_json::Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| String::from_utf8_lossy(body).chars().take(200).collect());
    RequestError::Service {
        status,
        code: from_header
            .or(from_type)
            .unwrap_or_else(|| "UnknownError".into()),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_error_prefers_the_query_code() {
        let mut headers = HeaderMap::new();
        headers.insert(
            "x-amzn-query-error",
            HeaderValue::from_static("AWS.SimpleQueueService.NonExistentQueue;Sender"),
        );
        let body = br#"{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"gone"}"#;
        match service_error(400, &headers, body) {
            RequestError::Service {
                status,
                code,
                message,
            } => {
                assert_eq!(status, 400);
                assert_eq!(code, "AWS.SimpleQueueService.NonExistentQueue");
                assert_eq!(message, "gone");
            }
            other => panic!("unexpected {other:?}"),
        }
        match service_error(400, &HeaderMap::new(), body) {
            RequestError::Service { code, .. } => assert_eq!(code, "QueueDoesNotExist"),
            other => panic!("unexpected {other:?}"),
        }
    }

    /// The credential scope of an `Authorization` header, parsed the way
    /// moto's server does to pick the service: `(region, service)`.
    fn credential_scope(authorization: &str) -> Option<(String, String)> {
        let credential = authorization.split(',').next()?.split_whitespace().nth(1)?;
        let scope: Vec<&str> = credential.strip_prefix("Credential=")?.split('/').collect();
        match scope.as_slice() {
            [_key, _date, region, service, "aws4_request"] => {
                Some(((*region).to_string(), (*service).to_string()))
            }
            _ => None,
        }
    }

    #[tokio::test]
    async fn requests_carry_the_sqs_credential_scope() {
        // Emulators route on the scope: without it moto's server answers
        // an SQS request as S3.
        use hyper::service::service_fn;
        use hyper_util::rt::TokioIo;
        use std::sync::{Arc, Mutex};

        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let seen: Arc<Mutex<Vec<String>>> = Arc::default();
        let recorder = seen.clone();
        tokio::spawn(async move {
            let (stream, _) = listener.accept().await.unwrap();
            let service = service_fn(move |req: Request<hyper::body::Incoming>| {
                let recorder = recorder.clone();
                async move {
                    let auth = req
                        .headers()
                        .get(AUTHORIZATION_HEADER)
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("")
                        .to_string();
                    recorder.lock().unwrap().push(auth);
                    let body = Full::new(Bytes::from_static(br#"{"QueueUrl":"http://q/1/q"}"#));
                    Ok::<_, std::convert::Infallible>(hyper::Response::new(body))
                }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });

        let client = SqsClient::new(&format!("http://{addr}"), 1).unwrap();
        let created = client.create_queue("q", &[]).await.unwrap();
        assert_eq!(created.url, "http://q/1/q");
        let seen = seen.lock().unwrap().clone();
        assert_eq!(seen.len(), 1);
        assert_eq!(
            credential_scope(&seen[0]),
            Some(("us-east-1".to_string(), "sqs".to_string())),
            "{}",
            seen[0]
        );
    }

    #[test]
    fn endpoints_must_be_plain_http() {
        assert!(SqsClient::new("https://example.com", 1).is_err());
        assert!(SqsClient::new("not a url", 1).is_err());
    }
}

//! The admin client of the operator commands (`dlq`, `doctor`, `stats`): SQS
//! and sluice's own actions in AWS JSON 1.0, and the `/metrics` page, over
//! one pooled HTTP/1.1 connection to a running server.

use sluice_core::error::error_chain;
use std::collections::BTreeMap;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::{HeaderMap, Method, Request, Uri};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::{Value, json};

/// The default endpoint, where `sluice serve` listens by default.
pub const DEFAULT_ENDPOINT: &str = "http://127.0.0.1:9324";

/// How long one request may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The content type of AWS JSON 1.0 requests.
const JSON_1_0: &str = "application/x-amz-json-1.0";

/// Why a request failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The server answered with an SQS error.
    #[error("{code}: {message}")]
    Service {
        /// The error code, e.g. `QueueDoesNotExist`.
        code: String,
        /// The server's message.
        message: String,
    },
    /// The server could not be reached or the exchange broke.
    #[error("cannot reach the server at {endpoint}: {detail}")]
    Transport {
        /// The endpoint.
        endpoint: String,
        /// What went wrong.
        detail: String,
    },
    /// The endpoint is not a usable URL.
    #[error("--endpoint {0}")]
    Endpoint(String),
    /// The answer was not what the action returns.
    #[error("unexpected answer to {action}: {detail}")]
    Decode {
        /// The action.
        action: String,
        /// What was wrong.
        detail: String,
    },
}

impl ClientError {
    /// The SQS error code, for a service error.
    pub fn code(&self) -> Option<&str> {
        match self {
            Self::Service { code, .. } => Some(code),
            _ => None,
        }
    }

    /// Whether the server does not know the action (an older server, or an
    /// extension it does not have yet).
    pub fn is_unknown_action(&self) -> bool {
        matches!(
            self.code(),
            Some(
                "InvalidAction"
                    | "InvalidActionException"
                    | "UnsupportedOperation"
                    | "UnknownOperationException"
            )
        )
    }
}

/// A client bound to one sluice (or SQS-compatible) endpoint.
#[derive(Clone)]
pub struct AdminClient {
    http: Client<HttpConnector, Full<Bytes>>,
    endpoint: String,
    uri: Uri,
    metrics_uri: Uri,
}

impl AdminClient {
    /// A client for `endpoint` (`http://HOST:PORT[/PATH]`).
    pub fn new(endpoint: &str) -> Result<Self, ClientError> {
        let uri: Uri = endpoint
            .parse()
            .map_err(|e| ClientError::Endpoint(format!("{endpoint:?} is not a URL: {e}")))?;
        let Some(authority) = uri.authority().cloned() else {
            return Err(ClientError::Endpoint(format!(
                "{endpoint:?} has no host (expected http://HOST:PORT)"
            )));
        };
        if uri.scheme_str() != Some("http") {
            return Err(ClientError::Endpoint(format!(
                "{endpoint:?} must be a plain http:// URL (put a TLS proxy's plain side here)"
            )));
        }
        let metrics_uri = Uri::builder()
            .scheme("http")
            .authority(authority)
            .path_and_query("/metrics")
            .build()
            .map_err(|e| ClientError::Endpoint(format!("{endpoint:?}: {e}")))?;
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        connector.set_connect_timeout(Some(Duration::from_secs(5)));
        let http = Client::builder(TokioExecutor::new())
            .pool_max_idle_per_host(4)
            .build(connector);
        Ok(Self {
            http,
            endpoint: endpoint.to_string(),
            uri,
            metrics_uri,
        })
    }

    /// Calls an SQS action (`AmazonSQS.<action>`).
    pub async fn sqs(&self, action: &str, input: Value) -> Result<Value, ClientError> {
        self.call(&format!("AmazonSQS.{action}"), action, input)
            .await
    }

    /// Calls one of sluice's own actions (`Sluice.<action>`).
    pub async fn sluice(&self, action: &str, input: Value) -> Result<Value, ClientError> {
        self.call(&format!("Sluice.{action}"), action, input).await
    }

    /// The Prometheus exposition of `GET /metrics`.
    pub async fn metrics(&self) -> Result<String, ClientError> {
        let request = Request::builder()
            .method(Method::GET)
            .uri(self.metrics_uri.clone())
            .body(Full::new(Bytes::new()))
            .map_err(|e| self.transport(e.to_string()))?;
        let (status, _, body) = self.exchange(request).await?;
        if status != 200 {
            return Err(ClientError::Decode {
                action: "GET /metrics".into(),
                detail: format!("HTTP {status}"),
            });
        }
        Ok(String::from_utf8_lossy(&body).into_owned())
    }

    async fn call(&self, target: &str, action: &str, input: Value) -> Result<Value, ClientError> {
        let body = serde_json::to_vec(&input).map_err(|e| ClientError::Decode {
            action: action.into(),
            detail: e.to_string(),
        })?;
        let target = HeaderValue::from_str(target).map_err(|e| ClientError::Decode {
            action: action.into(),
            detail: e.to_string(),
        })?;
        let request = Request::builder()
            .method(Method::POST)
            .uri(self.uri.clone())
            .header(CONTENT_TYPE, HeaderValue::from_static(JSON_1_0))
            .header("x-amz-target", target)
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| self.transport(e.to_string()))?;
        let (status, headers, bytes) = self.exchange(request).await?;
        if !(200..300).contains(&status) {
            return Err(service_error(status, &headers, &bytes));
        }
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(json!({}));
        }
        serde_json::from_slice(&bytes).map_err(|e| ClientError::Decode {
            action: action.into(),
            detail: format!(
                "{e}: {}",
                String::from_utf8_lossy(&bytes)
                    .chars()
                    .take(200)
                    .collect::<String>()
            ),
        })
    }

    async fn exchange(
        &self,
        request: Request<Full<Bytes>>,
    ) -> Result<(u16, HeaderMap, Bytes), ClientError> {
        let exchange = async {
            let response = self
                .http
                .request(request)
                .await
                .map_err(|e| self.transport(error_chain(&e)))?;
            let (parts, body) = response.into_parts();
            let bytes = body
                .collect()
                .await
                .map_err(|e| self.transport(error_chain(&e)))?
                .to_bytes();
            Ok::<_, ClientError>((parts.status.as_u16(), parts.headers, bytes))
        };
        tokio::time::timeout(REQUEST_TIMEOUT, exchange)
            .await
            .map_err(|_| self.transport(format!("no answer within {REQUEST_TIMEOUT:?}")))?
    }

    fn transport(&self, detail: String) -> ClientError {
        ClientError::Transport {
            endpoint: self.endpoint.clone(),
            detail,
        }
    }

    /// Every queue URL (ListQueues, all pages).
    pub async fn list_queue_urls(&self) -> Result<Vec<String>, ClientError> {
        let mut urls = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let mut input = json!({ "MaxResults": 1000 });
            if let Some(t) = &token {
                input["NextToken"] = json!(t);
            }
            let out = self.sqs("ListQueues", input).await?;
            urls.extend(strings(&out["QueueUrls"]));
            match out["NextToken"].as_str() {
                Some(t) if !t.is_empty() => token = Some(t.to_string()),
                _ => return Ok(urls),
            }
        }
    }

    /// The URL of a queue given by name, URL or ARN (a URL is checked to
    /// name an existing queue).
    pub async fn queue_url(&self, queue: &str) -> Result<String, ClientError> {
        let name = if queue.starts_with("http://") || queue.starts_with("https://") {
            self.queue_attributes(queue, &["QueueArn"]).await?;
            return Ok(queue.to_string());
        } else if queue.starts_with("arn:") {
            queue.rsplit(':').next().unwrap_or(queue)
        } else {
            queue
        };
        let out = self
            .sqs("GetQueueUrl", json!({ "QueueName": name }))
            .await?;
        out["QueueUrl"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| ClientError::Decode {
                action: "GetQueueUrl".into(),
                detail: "no QueueUrl".into(),
            })
    }

    /// GetQueueAttributes of the named attributes (`All` for every one).
    pub async fn queue_attributes(
        &self,
        url: &str,
        names: &[&str],
    ) -> Result<BTreeMap<String, String>, ClientError> {
        let out = self
            .sqs(
                "GetQueueAttributes",
                json!({ "QueueUrl": url, "AttributeNames": names }),
            )
            .await?;
        Ok(string_map(&out["Attributes"]))
    }

    /// ListQueueTags.
    pub async fn queue_tags(&self, url: &str) -> Result<BTreeMap<String, String>, ClientError> {
        let out = self
            .sqs("ListQueueTags", json!({ "QueueUrl": url }))
            .await?;
        Ok(string_map(&out["Tags"]))
    }

    /// The ARN of a queue given by name, URL or ARN.
    pub async fn queue_arn(&self, queue: &str) -> Result<String, ClientError> {
        let url = self.queue_url(queue).await?;
        let attrs = self.queue_attributes(&url, &["QueueArn"]).await?;
        attrs
            .get("QueueArn")
            .cloned()
            .ok_or_else(|| ClientError::Decode {
                action: "GetQueueAttributes".into(),
                detail: "no QueueArn".into(),
            })
    }
}

/// The strings of a JSON array (others skipped).
pub fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// A JSON object of strings as a map (non-strings skipped).
pub fn string_map(value: &Value) -> BTreeMap<String, String> {
    value
        .as_object()
        .map(|o| {
            o.iter()
                .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

/// The SQS error of a non-2xx answer: the code from the `__type` shape name
/// (`QueueDoesNotExist`), else from `x-amzn-query-error`.
fn service_error(status: u16, headers: &HeaderMap, body: &[u8]) -> ClientError {
    let json: Value = serde_json::from_slice(body).unwrap_or_default();
    let from_type = json
        .get("__type")
        .and_then(Value::as_str)
        .map(|t| t.rsplit('#').next().unwrap_or(t).to_string());
    let from_header = headers
        .get("x-amzn-query-error")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .filter(|c| !c.is_empty())
        .map(str::to_string);
    let message = json
        .get("message")
        .or_else(|| json.get("Message"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| String::from_utf8_lossy(body).chars().take(200).collect());
    ClientError::Service {
        code: from_type
            .or(from_header)
            .unwrap_or_else(|| format!("HTTP {status}")),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_errors_use_the_shape_name() {
        let mut headers = HeaderMap::new();
        headers.insert(
            "x-amzn-query-error",
            HeaderValue::from_static("AWS.SimpleQueueService.NonExistentQueue;Sender"),
        );
        let body = br#"{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"gone"}"#;
        let e = service_error(400, &headers, body);
        assert_eq!(e.to_string(), "QueueDoesNotExist: gone");
        let e = service_error(400, &headers, b"{}");
        assert_eq!(e.code(), Some("AWS.SimpleQueueService.NonExistentQueue"));
        let e = service_error(
            400,
            &HeaderMap::new(),
            br#"{"__type":"com.amazonaws.sqs#InvalidAction","message":"no"}"#,
        );
        assert!(e.is_unknown_action());
    }

    #[test]
    fn endpoints_must_be_plain_http_with_a_host() {
        assert!(AdminClient::new("https://example.com").is_err());
        assert!(AdminClient::new("not a url").is_err());
        assert!(AdminClient::new("/just/a/path").is_err());
        assert!(AdminClient::new("http://127.0.0.1:9324").is_ok());
    }
}

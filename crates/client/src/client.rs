//! The client: one endpoint, pooled keep-alive HTTP/1.1 connections (plain
//! or TLS), every request signed when credentials are known. This file is
//! the exchange itself and [`Client::call`], which sends any operation's
//! generated input type (`sluice_protocol::sqs`, `sluice_protocol::sluice`)
//! and reads its generated output type; the look-ups built on it are in
//! `queues.rs`, the message loop's faster calls in `messages.rs`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{AUTHORIZATION, CONTENT_TYPE, HOST, HeaderName, HeaderValue};
use hyper::{HeaderMap, Method, Request, Uri};
use serde::Serialize;
use serde::de::DeserializeOwned;
use sluice_core::error::error_chain;
use sluice_outbound::{ConnectionSettings, OutboundClient, OutboundTls, Roots};
use sluice_protocol::Call;

use crate::credentials::Signing;
use crate::error::{ClientError, service_error};
use crate::signer::{SERVICE, Signer};

/// The content type of AWS JSON 1.0 requests.
const JSON_1_0: &str = "application/x-amz-json-1.0";

/// The header naming a JSON 1.0 request's action.
const X_AMZ_TARGET: HeaderName = HeaderName::from_static("x-amz-target");

/// The `Authorization` header of unsigned requests when
/// [`ClientOptions::placeholder_authorization`] is set: SigV4-shaped, with
/// SQS's credential scope in us-east-1 and a dummy signature. Emulators
/// rely on the scope: moto's server picks the service to answer from it
/// (an unsigned request goes to S3), and LocalStack takes the account and
/// region from it.
pub const PLACEHOLDER_AUTHORIZATION: &str = "AWS4-HMAC-SHA256 \
    Credential=test/20000101/us-east-1/sqs/aws4_request, \
    SignedHeaders=content-type;host;x-amz-target, \
    Signature=0000000000000000000000000000000000000000000000000000000000000000";

/// What the server is told when a request without credentials is refused
/// for them.
const NO_CREDENTIALS_HINT: &str = " (no AWS credentials were found to sign with: give \
    --access-key-id and --secret-access-key, or --profile, or set AWS_ACCESS_KEY_ID and \
    AWS_SECRET_ACCESS_KEY)";

/// How a client connects and signs.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// Idle keep-alive connections kept (one per concurrent caller, so no
    /// request waits for a connection to be opened).
    pub connections: usize,
    /// The credentials (none: unsigned) and region.
    pub signing: Signing,
    /// Certificates trusted for `https://`, besides the system's.
    pub ca_file: Option<PathBuf>,
    /// Unsigned requests carry [`PLACEHOLDER_AUTHORIZATION`].
    pub placeholder_authorization: bool,
    /// How long a request may take (a long poll: plus its wait).
    pub request_timeout: Duration,
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            connections: 4,
            signing: Signing {
                credentials: None,
                region: crate::credentials::DEFAULT_REGION.to_string(),
            },
            ca_file: None,
            placeholder_authorization: false,
            request_timeout: Duration::from_secs(30),
        }
    }
}

/// How requests are authenticated.
#[derive(Clone)]
enum Auth {
    Unsigned,
    Placeholder,
    Signed(Arc<Signer>),
}

/// A client of one sluice (or SQS-compatible) endpoint. Cheap to clone:
/// clones share the connection pool.
#[derive(Clone)]
pub struct Client {
    http: OutboundClient,
    endpoint: Arc<str>,
    uri: Uri,
    host: HeaderValue,
    metrics_uri: Uri,
    auth: Auth,
    pub(crate) request_timeout: Duration,
}

/// The certificates an `https://` endpoint is checked against: the
/// system's roots (those it cannot parse skipped) and every certificate of
/// `ca_file`.
fn tls(ca_file: Option<&std::path::Path>) -> Result<OutboundTls, ClientError> {
    let tls = match ca_file {
        Some(path) => OutboundTls::with_ca_file(Roots::System, path, "--ca-file")
            .map_err(|e| ClientError::Config(e.to_string()))?,
        None => OutboundTls::trusting(Roots::System),
    };
    if tls.roots() == 0 {
        return Err(ClientError::Config(
            "no trusted root certificate: the system has none; give --ca-file".into(),
        ));
    }
    Ok(tls)
}

impl Client {
    /// A client for `endpoint` (`http[s]://HOST[:PORT][/PATH]`).
    pub fn new(endpoint: &str, options: &ClientOptions) -> Result<Self, ClientError> {
        let uri: Uri = endpoint
            .parse()
            .map_err(|e| ClientError::Endpoint(format!("{endpoint:?} is not a URL: {e}")))?;
        let scheme = uri.scheme_str();
        if scheme != Some("http") && scheme != Some("https") {
            return Err(ClientError::Endpoint(format!(
                "{endpoint:?} must be an http:// or https:// URL"
            )));
        }
        let Some(authority) = uri.authority().cloned() else {
            return Err(ClientError::Endpoint(format!(
                "{endpoint:?} has no host (expected http://HOST:PORT)"
            )));
        };
        let host = HeaderValue::from_str(authority.as_str())
            .map_err(|e| ClientError::Endpoint(format!("{endpoint:?}: {e}")))?;
        let metrics_uri = Uri::builder()
            .scheme(uri.scheme_str().unwrap_or("http"))
            .authority(authority)
            .path_and_query("/metrics")
            .build()
            .map_err(|e| ClientError::Endpoint(format!("{endpoint:?}: {e}")))?;
        let tls = if scheme == Some("https") {
            tls(options.ca_file.as_deref())?
        } else {
            // Never used for a plain endpoint: no roots to load.
            OutboundTls::trusting(Roots::None)
        };
        let settings = ConnectionSettings {
            // Small request/response pairs: Nagle's algorithm would add delay.
            nodelay: true,
            connect_timeout: Some(Duration::from_secs(5)),
            max_idle_per_host: Some(options.connections),
            idle_timeout: Some(Duration::from_secs(60)),
        };
        let http = sluice_outbound::client(&tls, &settings);
        let auth = match &options.signing.credentials {
            Some(credentials) => Auth::Signed(Arc::new(Signer::new(
                credentials.clone(),
                &options.signing.region,
                SERVICE,
            ))),
            None if options.placeholder_authorization => Auth::Placeholder,
            None => Auth::Unsigned,
        };
        Ok(Self {
            http,
            endpoint: endpoint.into(),
            uri,
            host,
            metrics_uri,
            auth,
            request_timeout: options.request_timeout,
        })
    }

    /// The endpoint, as given.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Whether requests are signed.
    pub fn signs(&self) -> bool {
        matches!(self.auth, Auth::Signed(_))
    }

    /// The Prometheus exposition of `GET /metrics`.
    pub async fn metrics(&self) -> Result<String, ClientError> {
        let (status, _, body) = self
            .send(
                Method::GET,
                self.metrics_uri.clone(),
                HeaderMap::new(),
                Bytes::new(),
                self.request_timeout,
            )
            .await?;
        if status != 200 {
            return Err(ClientError::Decode {
                action: "GET /metrics".into(),
                detail: format!("HTTP {status}"),
            });
        }
        Ok(String::from_utf8_lossy(&body).into_owned())
    }

    /// Calls one operation: POSTs its generated input type to the input's
    /// target and decodes the operation's generated output type, or its
    /// SQS error. An empty answer reads as `{}` (operations without
    /// output answer [`sluice_protocol::Empty`]).
    pub async fn call<C: Call>(&self, input: &C) -> Result<C::Output, ClientError> {
        let body = self.encode(C::TARGET, input)?;
        let (bytes, _) = self.post(C::TARGET, body, self.request_timeout).await?;
        decode_output(C::TARGET, &bytes)
    }

    /// An action's input as JSON.
    pub(crate) fn encode(
        &self,
        target: &'static str,
        input: &impl Serialize,
    ) -> Result<Vec<u8>, ClientError> {
        serde_json::to_vec(input).map_err(|e| ClientError::Decode {
            action: target.into(),
            detail: e.to_string(),
        })
    }

    /// POSTs one action's encoded JSON input; the body and headers of a
    /// 2xx answer, or its SQS error.
    pub async fn post(
        &self,
        target: &'static str,
        body: Vec<u8>,
        timeout: Duration,
    ) -> Result<(Bytes, HeaderMap), ClientError> {
        let mut headers = HeaderMap::with_capacity(6);
        headers.insert(CONTENT_TYPE, HeaderValue::from_static(JSON_1_0));
        headers.insert(X_AMZ_TARGET, HeaderValue::from_static(target));
        let (status, headers, bytes) = self
            .send(
                Method::POST,
                self.uri.clone(),
                headers,
                Bytes::from(body),
                timeout,
            )
            .await?;
        if !(200..300).contains(&status) {
            let mut error = service_error(status, &headers, &bytes);
            if !self.signs()
                && error.is_authentication()
                && let ClientError::Service { message, .. } = &mut error
            {
                message.push_str(NO_CREDENTIALS_HINT);
            }
            return Err(error);
        }
        Ok((bytes, headers))
    }

    /// POSTs a Query-protocol form (SNS's wire: `Action=…&Version=…`)
    /// and returns the XML of a 2xx answer, or the service's error.
    pub async fn post_form(&self, form: String) -> Result<Bytes, ClientError> {
        let mut headers = HeaderMap::with_capacity(6);
        headers.insert(
            CONTENT_TYPE,
            HeaderValue::from_static("application/x-www-form-urlencoded"),
        );
        let (status, headers, bytes) = self
            .send(
                Method::POST,
                self.uri.clone(),
                headers,
                Bytes::from(form),
                self.request_timeout,
            )
            .await?;
        if !(200..300).contains(&status) {
            return Err(service_error(status, &headers, &bytes));
        }
        Ok(bytes)
    }

    /// Sends one request (`Host` and the signature added) and reads the
    /// whole answer.
    async fn send(
        &self,
        method: Method,
        uri: Uri,
        mut headers: HeaderMap,
        body: Bytes,
        timeout: Duration,
    ) -> Result<(u16, HeaderMap, Bytes), ClientError> {
        headers.insert(HOST, self.host.clone());
        match &self.auth {
            Auth::Signed(signer) => signer.sign(
                method.as_str(),
                uri.path(),
                uri.query().unwrap_or(""),
                &mut headers,
                &body,
            ),
            Auth::Placeholder => {
                headers.insert(
                    AUTHORIZATION,
                    HeaderValue::from_static(PLACEHOLDER_AUTHORIZATION),
                );
            }
            Auth::Unsigned => {}
        }
        let mut request = Request::new(Full::new(body));
        *request.method_mut() = method;
        *request.uri_mut() = uri;
        *request.headers_mut() = headers;
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
        tokio::time::timeout(timeout, exchange)
            .await
            .map_err(|_| ClientError::Timeout {
                endpoint: self.endpoint.to_string(),
                after: timeout,
            })?
    }

    /// A transport error of this endpoint.
    pub fn transport(&self, detail: String) -> ClientError {
        ClientError::Transport {
            endpoint: self.endpoint.to_string(),
            detail,
        }
    }
}

/// Parses the JSON output of `target`; an empty answer reads as `{}`.
pub(crate) fn decode_output<T: DeserializeOwned>(
    target: &str,
    bytes: &[u8],
) -> Result<T, ClientError> {
    let json: &[u8] = if bytes.iter().all(u8::is_ascii_whitespace) {
        b"{}"
    } else {
        bytes
    };
    serde_json::from_slice(json).map_err(|e| {
        let shown: String = String::from_utf8_lossy(bytes).chars().take(300).collect();
        ClientError::Decode {
            action: target.into(),
            detail: format!("{e}: {shown}"),
        }
    })
}

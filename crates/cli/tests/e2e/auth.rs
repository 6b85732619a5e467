//! SigV4 authentication end to end (docs/security.md): real SDK requests
//! signed with a configured key pass; a wrong secret, an unknown key, no
//! signature, a skewed date and an expired presigned URL get AWS's answers,
//! in both protocols. Requests signed by hand use AWS's own signer
//! (`aws-sigv4`), not sluice's.
//!
//! Sources of the expected answers (AWS's recorded answers where there are
//! some): SignatureDoesNotMatch 403 (boto/boto#1573, SQS Query), "Signature
//! expired: … is now earlier than … (… - 15 min.)" (aws/aws-sdk-php#642,
//! celery/kombu#1937, SQS Query; async-aws/aws#1634, SQS JSON, typed
//! InvalidSignatureException), InvalidClientTokenId 403 "The security token
//! included in the request is invalid." (ex-aws/ex_aws#220, SQS Query);
//! MissingAuthenticationToken 403 and RequestExpired 400 from AWS's
//! "Common Errors" reference.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aws_sdk_sqs::config::{BehaviorVersion, Credentials, Region};
use aws_sigv4::http_request::{SignableBody, SignableRequest, SignatureLocation, SigningSettings};
use aws_sigv4::sign::v4;
use sluice_core::ManualClock;
use sluice_server::ServiceConfig;
use sluice_server::auth::{Authenticator, Credential};

use crate::common::{RawClient, RawResponse, TestServer, code};

pub(crate) const KEY: &str = "AKIDSLUICEAUTH";
pub(crate) const SECRET: &str = "sluice-auth-secret";
const TOKEN_KEY: &str = "ASIASLUICEAUTH";
const TOKEN_SECRET: &str = "sluice-session-secret";
const TOKEN: &str = "sluice-session-token";
const SIGNATURE_MISMATCH: &str = "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.";

fn real_now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// An in-process server that requires SigV4, whose clock starts
/// `offset_ms` from the real time (SDKs sign with the real time).
struct AuthServer {
    endpoint: String,
    addr: SocketAddr,
    clock: ManualClock,
    _server: TestServer,
}

impl AuthServer {
    async fn start(offset_ms: i64) -> Self {
        let clock = ManualClock::new(real_now_ms().saturating_add_signed(offset_ms));
        let auth = Authenticator::new(vec![
            Credential {
                access_key_id: KEY.into(),
                secret_access_key: SECRET.into(),
                session_token: None,
                account_id: "000000000000".into(),
                access: Default::default(),
                rate_limit: None,
            },
            Credential {
                access_key_id: TOKEN_KEY.into(),
                secret_access_key: TOKEN_SECRET.into(),
                session_token: Some(TOKEN.into()),
                account_id: "123456789012".into(),
                access: Default::default(),
                rate_limit: None,
            },
        ])
        .expect("credentials");
        let config = ServiceConfig {
            auth: Some(Arc::new(auth)),
            ..Default::default()
        };
        let server = TestServer::start_with_clock(config, clock).await;
        Self {
            endpoint: server.endpoint.clone(),
            addr: server.addr,
            clock: server.clock.clone(),
            _server: server,
        }
    }

    fn sdk(&self, key: &str, secret: &str, token: Option<&str>) -> aws_sdk_sqs::Client {
        sdk_signing(&self.endpoint, key, secret, token)
    }

    fn raw(&self) -> RawClient {
        RawClient::at(&self.endpoint)
    }
}

/// The Rust SDK (AWS JSON) signing with these credentials, no retries.
pub(crate) fn sdk_signing(
    endpoint: &str,
    key: &str,
    secret: &str,
    token: Option<&str>,
) -> aws_sdk_sqs::Client {
    let config = aws_sdk_sqs::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .endpoint_url(endpoint)
        .credentials_provider(Credentials::new(
            key,
            secret,
            token.map(str::to_string),
            None,
            "sluice-auth-tests",
        ))
        .http_client(aws_smithy_http_client::Builder::new().build_http())
        .retry_config(aws_sdk_sqs::config::retry::RetryConfig::disabled())
        .build();
    aws_sdk_sqs::Client::from_conf(config)
}

/// The HTTP status of an SDK error's response.
pub(crate) fn status<E>(
    e: &aws_sdk_sqs::error::SdkError<E, aws_sdk_sqs::config::http::HttpResponse>,
) -> u16 {
    e.raw_response().map_or(0, |r| r.status().as_u16())
}

/// Signs a request with AWS's signer: in headers, or as a presigned URL
/// valid `expires` (then the request is a GET and `body` is empty).
/// Returns the path-and-query to send and the headers to add.
pub(crate) fn aws_sign(
    addr: SocketAddr,
    method: &str,
    path_and_query: &str,
    headers: &[(&str, &str)],
    body: &[u8],
    secret: &str,
    expires: Option<Duration>,
) -> (String, Vec<(String, String)>) {
    aws_sign_as(
        KEY,
        addr,
        method,
        path_and_query,
        headers,
        body,
        secret,
        expires,
    )
}

/// [`aws_sign`] with another access key id.
#[allow(clippy::too_many_arguments)]
pub(crate) fn aws_sign_as(
    key: &str,
    addr: SocketAddr,
    method: &str,
    path_and_query: &str,
    headers: &[(&str, &str)],
    body: &[u8],
    secret: &str,
    expires: Option<Duration>,
) -> (String, Vec<(String, String)>) {
    let creds = Credentials::new(key, secret, None, None, "sluice-auth-tests");
    let identity = creds.into();
    let mut settings = SigningSettings::default();
    if let Some(expires) = expires {
        settings.signature_location = SignatureLocation::QueryParams;
        settings.expires_in = Some(expires);
    }
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region("us-east-1")
        .name("sqs")
        .time(SystemTime::now())
        .settings(settings)
        .build()
        .expect("signing params")
        .into();
    let url = format!("http://{addr}{path_and_query}");
    let host = addr.to_string();
    let mut all: Vec<(&str, &str)> = vec![("host", host.as_str())];
    all.extend_from_slice(headers);
    let signable = SignableRequest::new(method, url, all.into_iter(), SignableBody::Bytes(body))
        .expect("signable");
    let (instructions, _signature) = aws_sigv4::http_request::sign(signable, &params)
        .expect("sign")
        .into_parts();
    let (signed_headers, signed_params) = instructions.into_parts();
    let mut target = path_and_query.to_string();
    for (name, value) in signed_params {
        target.push(if target.contains('?') { '&' } else { '?' });
        let pair: String = form_urlencoded::Serializer::new(String::new())
            .append_pair(name, &value)
            .finish();
        // SigV4 encodes a space as %20; form encoding would write '+'.
        target.push_str(&pair.replace('+', "%20"));
    }
    let extra = signed_headers
        .into_iter()
        .map(|h| (h.name().to_string(), h.value().to_string()))
        .collect();
    (target, extra)
}

/// Sends a request built by [`aws_sign`].
fn send_signed(
    raw: RawClient,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    extra: &[(String, String)],
    body: &[u8],
) -> RawResponse {
    let mut all: Vec<(&str, &str)> = headers.to_vec();
    all.extend(extra.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    raw.request(method, target, &all, body)
}

/// A1: the SDK signing with a configured key works, a key with a session
/// token too (it acts for another account, so it sends to a queue of its
/// own: rule A2).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a1_sdk_signed_with_a_configured_key_works() {
    let server = AuthServer::start(0).await;
    let sqs = server.sdk(KEY, SECRET, None);
    let with_token = server.sdk(TOKEN_KEY, TOKEN_SECRET, Some(TOKEN));
    for client in [&sqs, &with_token] {
        let url = client
            .create_queue()
            .queue_name("signed")
            .send()
            .await
            .expect("create")
            .queue_url
            .expect("url");
        client
            .send_message()
            .queue_url(&url)
            .message_body("hello")
            .send()
            .await
            .expect("send");
        let got = client
            .receive_message()
            .queue_url(&url)
            .send()
            .await
            .expect("receive");
        assert_eq!(got.messages().len(), 1);
        assert_eq!(got.messages()[0].body(), Some("hello"));
    }
}

/// A1: a wrong secret is SignatureDoesNotMatch (403) with AWS's message; an
/// unknown key, and a token key without its token, are
/// InvalidClientTokenId (403).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a1_wrong_secret_and_unknown_key_are_refused() {
    let server = AuthServer::start(0).await;
    let e = server
        .sdk(KEY, "not-the-secret", None)
        .list_queues()
        .send()
        .await
        .expect_err("wrong secret");
    assert_eq!(code(&e), "SignatureDoesNotMatch");
    assert_eq!(status(&e), 403);
    let message = aws_sdk_sqs::error::ProvideErrorMetadata::message(&e).unwrap_or_default();
    assert!(message.starts_with(SIGNATURE_MISMATCH), "{message}");
    for client in [
        server.sdk("AKIDUNKNOWN", SECRET, None),
        server.sdk(TOKEN_KEY, TOKEN_SECRET, None),
        server.sdk(TOKEN_KEY, TOKEN_SECRET, Some("another-token")),
    ] {
        let e = client.list_queues().send().await.expect_err("unknown key");
        assert_eq!(code(&e), "InvalidClientTokenId");
        assert_eq!(status(&e), 403);
        assert_eq!(
            aws_sdk_sqs::error::ProvideErrorMetadata::message(&e),
            Some("The security token included in the request is invalid.")
        );
    }
}

/// A1: an unsigned request is MissingAuthenticationToken (403), in JSON
/// (`__type`, `x-amzn-query-error`) and in Query (XML, POST and GET).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a1_unsigned_requests_are_missing_authentication_token() {
    let server = AuthServer::start(0).await;
    let raw = server.raw();
    let json = raw.json("ListQueues", "{}");
    assert_eq!(json.status, 403, "{}", json.body);
    assert_eq!(
        json.header("x-amzn-query-error"),
        Some("MissingAuthenticationToken;Sender")
    );
    let body: serde_json::Value = serde_json::from_str(&json.body).expect("json");
    assert!(
        body["__type"]
            .as_str()
            .is_some_and(|t| t.ends_with("#MissingAuthenticationTokenException")),
        "{body}"
    );
    assert_eq!(body["message"], "Request is missing Authentication Token");
    for query in [
        raw.query("/", &[("Action", "ListQueues")]),
        raw.query_get("/", &[("Action", "ListQueues")]),
    ] {
        assert_eq!(query.status, 403, "{}", query.body);
        assert_eq!(
            query.xml("Code").as_deref(),
            Some("MissingAuthenticationToken")
        );
        assert_eq!(query.xml("Type").as_deref(), Some("Sender"));
        assert_eq!(
            query.xml("Message").as_deref(),
            Some("Request is missing Authentication Token")
        );
    }
    // Health and metrics stay open (docs/security.md says so).
    assert_eq!(raw.request("GET", "/health", &[], b"").status, 200);
}

/// A1: a request dated more than 15 minutes from the server's clock is
/// SignatureDoesNotMatch "Signature expired" / "not yet current" (403).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a1_skewed_dates_are_refused() {
    for (offset_min, words) in [
        (20, "Signature expired: "),
        (-20, "Signature not yet current: "),
    ] {
        let server = AuthServer::start(offset_min * 60_000).await;
        let e = server
            .sdk(KEY, SECRET, None)
            .list_queues()
            .send()
            .await
            .expect_err("skewed");
        assert_eq!(code(&e), "SignatureDoesNotMatch");
        assert_eq!(status(&e), 403);
        let message = aws_sdk_sqs::error::ProvideErrorMetadata::message(&e).unwrap_or_default();
        assert!(message.starts_with(words), "{message}");
        assert!(message.ends_with(" 15 min.)"), "{message}");
    }
    // Within 15 minutes, the same client works.
    let server = AuthServer::start(14 * 60_000).await;
    assert!(
        server
            .sdk(KEY, SECRET, None)
            .list_queues()
            .send()
            .await
            .is_ok()
    );
}

/// A1: a presigned GET (AWS's signer, Query protocol) works within its
/// X-Amz-Expires and is RequestExpired (400) after; signed with a wrong
/// secret, it is SignatureDoesNotMatch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a1_presigned_get_works_until_it_expires() {
    let server = AuthServer::start(0).await;
    let sqs = server.sdk(KEY, SECRET, None);
    sqs.create_queue()
        .queue_name("presigned")
        .send()
        .await
        .expect("create");
    let (target, extra) = aws_sign(
        server.addr,
        "GET",
        "/?Action=GetQueueUrl&QueueName=presigned&Version=2012-11-05",
        &[],
        b"",
        SECRET,
        Some(Duration::from_secs(60)),
    );
    assert!(target.contains("X-Amz-Signature="), "{target}");
    assert!(extra.is_empty(), "{extra:?}");
    let ok = server.raw().request("GET", &target, &[], b"");
    assert_eq!(ok.status, 200, "{}", ok.body);
    assert!(
        ok.xml("QueueUrl")
            .is_some_and(|u| u.ends_with("/presigned")),
        "{}",
        ok.body
    );
    server.clock.advance_secs(61);
    let late = server.raw().request("GET", &target, &[], b"");
    assert_eq!(late.status, 400, "{}", late.body);
    assert_eq!(late.xml("Code").as_deref(), Some("RequestExpired"));
    assert!(
        late.xml("Message")
            .is_some_and(|m| m.starts_with("Request has expired.")),
        "{}",
        late.body
    );
    let (forged, _) = aws_sign(
        server.addr,
        "GET",
        "/?Action=ListQueues",
        &[],
        b"",
        "not-the-secret",
        Some(Duration::from_secs(600)),
    );
    let refused = server.raw().request("GET", &forged, &[], b"");
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert_eq!(
        refused.xml("Code").as_deref(),
        Some("SignatureDoesNotMatch")
    );
}

/// A1: a Query POST to a queue URL signed in its headers by AWS's
/// signer (no x-amz-content-sha256: the body's hash is computed) works;
/// the same signature over another body is SignatureDoesNotMatch (XML).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a1_signed_query_post_covers_the_body() {
    let server = AuthServer::start(0).await;
    let url = server
        .sdk(KEY, SECRET, None)
        .create_queue()
        .queue_name("query-signed")
        .send()
        .await
        .expect("create")
        .queue_url
        .expect("url");
    let path = url.trim_start_matches(&server.endpoint).to_string();
    let body = b"Action=SendMessage&MessageBody=hello%20query&Version=2012-11-05";
    let content_type = (
        "Content-Type",
        "application/x-www-form-urlencoded; charset=utf-8",
    );
    let (target, extra) = aws_sign(
        server.addr,
        "POST",
        &path,
        &[content_type],
        body,
        SECRET,
        None,
    );
    assert!(
        !extra
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("x-amz-content-sha256")),
        "{extra:?}"
    );
    let sent = send_signed(server.raw(), "POST", &target, &[content_type], &extra, body);
    assert_eq!(sent.status, 200, "{}", sent.body);
    assert!(sent.xml("MessageId").is_some(), "{}", sent.body);
    let other = b"Action=SendMessage&MessageBody=tampered&Version=2012-11-05";
    let refused = send_signed(
        server.raw(),
        "POST",
        &target,
        &[content_type],
        &extra,
        other,
    );
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert_eq!(
        refused.xml("Code").as_deref(),
        Some("SignatureDoesNotMatch")
    );
    assert_eq!(refused.xml("Type").as_deref(), Some("Sender"));
}

/// A4, A5: the binary refuses a non-loopback address without authentication
/// and says why; with `--auth sigv4` and a config file of credentials it
/// serves signed requests, refuses others, and logs each refusal once
/// with the key id and never the secret.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a4_a5_the_binary_refuses_anonymous_public_addresses_and_logs_refusals_without_secrets() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sluice"))
        .args(["serve", "--bind", "0.0.0.0:0", "--in-memory"])
        .output()
        .expect("run sluice");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("without authentication") && stderr.contains("--allow-anonymous"),
        "{stderr}"
    );

    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("auth.toml");
    std::fs::write(
        &config,
        format!(
            "[[auth.credentials]]\naccess_key_id = \"{KEY}\"\nsecret_access_key = \"{SECRET}\"\n"
        ),
    )
    .expect("write config");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_sluice"))
        .args([
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--in-memory",
            "--auth",
            "sigv4",
        ])
        .arg("--config")
        .arg(&config)
        .env("RUST_LOG", "info")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start sluice");
    let stdout = child.stdout.take().expect("stdout");
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut line).expect("line");
    let endpoint = line
        .trim()
        .strip_prefix("sluice listening on ")
        .expect("listening line")
        .to_string();
    let ok = sdk_signing(&endpoint, KEY, SECRET, None)
        .list_queues()
        .send()
        .await;
    assert!(ok.is_ok(), "{ok:?}");
    let e = sdk_signing(&endpoint, KEY, "wrong-secret-value", None)
        .create_queue()
        .queue_name("x")
        .send()
        .await
        .expect_err("wrong secret");
    assert_eq!(code(&e), "SignatureDoesNotMatch");
    let _ = child.kill();
    let output = child.wait_with_output().expect("wait");
    let log = String::from_utf8_lossy(&output.stderr);
    let refusals: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("request refused"))
        .collect();
    assert_eq!(refusals.len(), 1, "{log}");
    let refusal = refusals[0];
    assert!(refusal.contains(KEY), "{refusal}");
    assert!(refusal.contains("CreateQueue"), "{refusal}");
    assert!(refusal.contains("SignatureDoesNotMatch"), "{refusal}");
    assert!(
        !log.contains(SECRET) && !log.contains("wrong-secret-value"),
        "{log}"
    );
}

/// A1: in JSON, a bad signature is typed `InvalidSignatureException` (as
/// SQS over JSON answers, async-aws/aws#1948) with the Query code in
/// `x-amzn-query-error`, which the SDKs report.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a1_json_refusals_carry_the_json_shape_and_the_query_code() {
    let server = AuthServer::start(0).await;
    let headers = [
        ("Content-Type", "application/x-amz-json-1.0"),
        ("X-Amz-Target", "AmazonSQS.ListQueues"),
    ];
    let (target, extra) = aws_sign(
        server.addr,
        "POST",
        "/",
        &headers,
        b"{}",
        "not-the-secret",
        None,
    );
    let refused = send_signed(server.raw(), "POST", &target, &headers, &extra, b"{}");
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert_eq!(
        refused.header("x-amzn-query-error"),
        Some("SignatureDoesNotMatch;Sender")
    );
    let body: serde_json::Value = serde_json::from_str(&refused.body).expect("json");
    assert!(
        body["__type"]
            .as_str()
            .is_some_and(|t| t.ends_with("#InvalidSignatureException")),
        "{body}"
    );
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|m| m.starts_with(SIGNATURE_MISMATCH)),
        "{body}"
    );
    let (target, extra) = aws_sign(server.addr, "POST", "/", &headers, b"{}", SECRET, None);
    let ok = send_signed(server.raw(), "POST", &target, &headers, &extra, b"{}");
    assert_eq!(ok.status, 200, "{}", ok.body);
}

//! HTTPS and live reload, through the real binary: the Rust SDK signing
//! over TLS with a test CA, presigned GETs over TLS, the plain listener
//! beside it, clients that speak plain HTTP or stall the handshake, bad
//! certificates at start-up, and SIGHUP reloading the credentials and the
//! certificate while a long poll is in flight (rules A10, A11).

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use aws_sdk_sqs::config::{BehaviorVersion, Credentials, Region};
use aws_smithy_http_client::tls::{self, TlsContext, TrustStore, rustls_provider::CryptoMode};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::{self, pki_types};

use crate::auth::{KEY, SECRET, aws_sign, sdk_signing};
use crate::common::{RawResponse, code, parse_response};

const KEY_B: &str = "AKIDSLUICEROTATED";
const SECRET_B: &str = "sluice-rotated-secret";
const KEY_C: &str = "AKIDSLUICENEVER";

/// The committed test CA and server certificates.
fn testdata(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/e2e/testdata/tls")
        .join(name)
}

/// A config file: SigV4 with one key, TLS with a certificate pair.
fn config_text(key: &str, secret: &str, cert: &str, cert_key: &str) -> String {
    format!(
        "[auth]\nmode = \"sigv4\"\n[[auth.credentials]]\naccess_key_id = \"{key}\"\n\
         secret_access_key = \"{secret}\"\n[tls]\ncert_file = {cert:?}\nkey_file = {key_file:?}\n",
        cert = testdata(cert).display().to_string(),
        key_file = testdata(cert_key).display().to_string(),
    )
}

/// `sluice serve` over HTTPS with a config file, its log in a file.
struct TlsServer {
    child: Child,
    /// The HTTPS listener.
    addr: SocketAddr,
    /// The plain-HTTP listener, when asked for.
    plain: Option<SocketAddr>,
    config: PathBuf,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl TlsServer {
    fn start(config: &str, extra: &[&str]) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("sluice.toml");
        std::fs::write(&path, config).expect("write config");
        let log = dir.path().join("sluice.log");
        let mut child = Command::new(env!("CARGO_BIN_EXE_sluice"))
            .args(["serve", "--bind", "127.0.0.1:0", "--in-memory", "--config"])
            .arg(&path)
            .args(extra)
            .env("RUST_LOG", "info")
            .env("NO_COLOR", "1")
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).expect("log file"))
            .spawn()
            .expect("start sluice");
        let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let mut addr_of = |scheme: &str| -> SocketAddr {
            let line = lines.next().expect("a listening line").expect("stdout");
            line.strip_prefix(&format!("sluice listening on {scheme}://"))
                .and_then(|rest| rest.split(' ').next())
                .unwrap_or_else(|| panic!("unexpected line {line:?}"))
                .parse()
                .expect("address")
        };
        let addr = addr_of("https");
        let plain = extra.contains(&"--plain-bind").then(|| addr_of("http"));
        Self {
            child,
            addr,
            plain,
            config: path,
            log,
            _dir: dir,
        }
    }

    fn endpoint(&self) -> String {
        format!("https://{}", self.addr)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Rewrites the config file and sends SIGHUP; returns once the log
    /// shows the reload's outcome (`expect` in its line).
    fn reload(&self, config: &str, expect: &str) {
        let before = self.log().matches(expect).count();
        std::fs::write(&self.config, config).expect("rewrite config");
        let sent = Command::new("kill")
            .args(["-HUP", &self.child.id().to_string()])
            .status()
            .expect("kill -HUP");
        assert!(sent.success());
        let started = Instant::now();
        while self.log().matches(expect).count() == before {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "no {expect:?} in the log:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A server with an HTTPS and a plain listener, and a client of each.
fn both_listeners() -> (TlsServer, aws_sdk_sqs::Client, aws_sdk_sqs::Client) {
    let config = config_text(KEY, SECRET, "server.pem", "server-key.pem");
    let server = TlsServer::start(&config, &["--plain-bind", "127.0.0.1:0"]);
    let https = https_sdk(&server.endpoint(), KEY, SECRET);
    let plain = sdk_signing(
        &format!("http://{}", server.plain.expect("plain listener")),
        KEY,
        SECRET,
        None,
    );
    (server, https, plain)
}

fn ca_pem() -> Vec<u8> {
    std::fs::read(testdata("ca.pem")).expect("ca.pem")
}

/// The Rust SDK over HTTPS trusting only the test CA, signing with a key.
fn https_sdk(endpoint: &str, key: &str, secret: &str) -> aws_sdk_sqs::Client {
    let tls_context = TlsContext::builder()
        .with_trust_store(
            TrustStore::empty()
                .with_native_roots(false)
                .with_pem_certificate(ca_pem()),
        )
        .build()
        .expect("tls context");
    let http = aws_smithy_http_client::Builder::new()
        .tls_provider(tls::Provider::Rustls(CryptoMode::Ring))
        .tls_context(tls_context)
        .build_https();
    let config = aws_sdk_sqs::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .endpoint_url(endpoint)
        .credentials_provider(Credentials::new(
            key,
            secret,
            None,
            None,
            "sluice-tls-tests",
        ))
        .http_client(http)
        .retry_config(aws_sdk_sqs::config::retry::RetryConfig::disabled())
        .build();
    aws_sdk_sqs::Client::from_conf(config)
}

/// A new TLS connection trusting the test CA.
async fn tls_connect(addr: SocketAddr) -> tokio_rustls::client::TlsStream<TcpStream> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in pki_types::CertificateDer::pem_slice_iter(&ca_pem()) {
        roots.add(cert.expect("ca cert")).expect("add root");
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("versions")
    .with_root_certificates(roots)
    .with_no_client_auth();
    let tcp = TcpStream::connect(addr).await.expect("connect");
    let name = pki_types::ServerName::IpAddress(addr.ip().into());
    TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await
        .expect("TLS handshake")
}

/// A GET over a new TLS connection.
async fn https_get(addr: SocketAddr, target: &str) -> RawResponse {
    let mut tls = tls_connect(addr).await;
    let request = format!("GET {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    tls.write_all(request.as_bytes()).await.expect("write");
    let mut raw = Vec::new();
    // A peer that closes without close_notify is an error to rustls; what
    // arrived is still the answer.
    let _ = tls.read_to_end(&mut raw).await;
    parse_response(&raw)
}

/// The first certificate of a PEM file (the leaf of a chain).
fn leaf(name: &str) -> pki_types::CertificateDer<'static> {
    pki_types::CertificateDer::pem_file_iter(testdata(name))
        .expect("pem")
        .next()
        .expect("a certificate")
        .expect("parse")
}

/// The leaf certificate a new connection is served.
async fn served_leaf(addr: SocketAddr) -> pki_types::CertificateDer<'static> {
    let tls = tls_connect(addr).await;
    tls.get_ref().1.peer_certificates().expect("peer certs")[0].clone()
}

/// A10: the Rust SDK signing with a configured key sends, receives and
/// deletes over HTTPS (AWS JSON), queue URLs are https://, and a presigned
/// GET (Query) works over HTTPS; the plain listener serves HTTP beside it
/// with http:// URLs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a10_sdk_and_presigned_get_work_over_https() {
    let config = config_text(KEY, SECRET, "server.pem", "server-key.pem");
    let server = TlsServer::start(&config, &["--plain-bind", "127.0.0.1:0"]);
    let sqs = https_sdk(&server.endpoint(), KEY, SECRET);
    let url = sqs
        .create_queue()
        .queue_name("over-tls")
        .send()
        .await
        .expect("create over https")
        .queue_url
        .expect("url");
    assert_eq!(
        url,
        format!("https://{}/000000000000/over-tls", server.addr)
    );
    sqs.send_message()
        .queue_url(&url)
        .message_body("sealed")
        .send()
        .await
        .expect("send");
    let received = sqs
        .receive_message()
        .queue_url(&url)
        .wait_time_seconds(1)
        .send()
        .await
        .expect("receive");
    let message = &received.messages()[0];
    assert_eq!(message.body(), Some("sealed"));
    sqs.delete_message()
        .queue_url(&url)
        .receipt_handle(message.receipt_handle().expect("handle"))
        .send()
        .await
        .expect("delete");

    let (target, _) = aws_sign(
        server.addr,
        "GET",
        "/?Action=GetQueueUrl&QueueName=over-tls&Version=2012-11-05",
        &[],
        b"",
        SECRET,
        Some(Duration::from_secs(60)),
    );
    let presigned = https_get(server.addr, &target).await;
    assert_eq!(presigned.status, 200, "{}", presigned.body);
    assert_eq!(presigned.xml("QueueUrl"), Some(url.clone()));

    let plain = server.plain.expect("plain listener");
    let over_http = sdk_signing(&format!("http://{plain}"), KEY, SECRET, None)
        .get_queue_url()
        .queue_name("over-tls")
        .send()
        .await
        .expect("plain listener");
    assert_eq!(
        over_http.queue_url(),
        Some(format!("http://{plain}/000000000000/over-tls").as_str())
    );
}

/// A10: a plain-HTTP request to the HTTPS port is answered 400 "speaks
/// HTTPS" and closed, and the server goes on serving TLS.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a10_plain_http_to_the_https_port_is_refused_cleanly() {
    let config = config_text(KEY, SECRET, "server.pem", "server-key.pem");
    let server = TlsServer::start(&config, &[]);
    let mut tcp = TcpStream::connect(server.addr).await.expect("connect");
    tcp.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .expect("write");
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), tcp.read_to_end(&mut raw))
        .await
        .expect("answered and closed")
        .expect("read");
    let answer = parse_response(&raw);
    assert_eq!(answer.status, 400, "{}", answer.body);
    assert!(answer.body.contains("speaks HTTPS"), "{}", answer.body);
    let health = https_get(server.addr, "/health").await;
    assert_eq!((health.status, health.body.as_str()), (200, "ok\n"));
}

/// A10, L9: a client that opens a connection and never finishes the TLS
/// handshake (silent, or a partial ClientHello) is cut off after the
/// header timeout, and so is one that finishes it and sends nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a10_a_stalled_tls_handshake_is_cut_off() {
    let config = config_text(KEY, SECRET, "server.pem", "server-key.pem");
    let server = TlsServer::start(&config, &["--header-timeout-secs", "1"]);
    for opening in [&b""[..], &[0x16, 0x03, 0x01, 0x00][..]] {
        let started = Instant::now();
        let mut tcp = TcpStream::connect(server.addr).await.expect("connect");
        tcp.write_all(opening).await.expect("write");
        let mut buf = [0u8; 64];
        let read = tokio::time::timeout(Duration::from_secs(6), tcp.read(&mut buf)).await;
        assert!(
            matches!(read, Ok(Ok(0)) | Ok(Err(_))),
            "the stalled handshake ({opening:?}) was not closed: {read:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(4));
    }
    // After the handshake, the header timeout of the first request applies
    // to TLS connections as to plain ones.
    let started = Instant::now();
    let mut silent = tls_connect(server.addr).await;
    let mut buf = [0u8; 64];
    let read = tokio::time::timeout(Duration::from_secs(6), silent.read(&mut buf)).await;
    assert!(
        matches!(read, Ok(Ok(0)) | Ok(Err(_))),
        "a silent TLS connection was not closed: {read:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(4));
    let health = https_get(server.addr, "/health").await;
    assert_eq!(health.status, 200);
}

/// A10: a missing certificate, a key that is not the certificate's, or
/// a certificate without a key stop the start with what is wrong.
#[test]
fn a10_bad_certificates_stop_the_start() {
    let run = |cert: &Path, key: Option<&Path>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_sluice"));
        cmd.args([
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--in-memory",
            "--tls-cert",
        ])
        .arg(cert);
        if let Some(key) = key {
            cmd.arg("--tls-key").arg(key);
        }
        let out = cmd.output().expect("run sluice");
        assert!(!out.status.success());
        assert!(out.stdout.is_empty(), "it must not listen");
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    let missing = run(&testdata("no-such.pem"), Some(&testdata("server-key.pem")));
    assert!(
        missing.contains("cannot read the TLS certificate file") && missing.contains("no-such.pem"),
        "{missing}"
    );
    let mismatched = run(&testdata("server.pem"), Some(&testdata("server2-key.pem")));
    assert!(
        mismatched.contains("does not go with the certificate"),
        "{mismatched}"
    );
    let not_a_key = run(&testdata("server.pem"), Some(&testdata("ca.pem")));
    assert!(
        not_a_key.contains("cannot read the TLS key file"),
        "{not_a_key}"
    );
    let no_key = run(&testdata("server.pem"), None);
    assert!(no_key.contains("--tls-key"), "{no_key}");
}

/// A11: SIGHUP reloads the credentials and the certificate: the old key
/// is refused and the new one works, new connections get the new
/// certificate, and a long poll in flight across the reload completes.
/// A reload of a bad file changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a11_sighup_reloads_credentials_and_certificate() {
    let config = config_text(KEY, SECRET, "server.pem", "server-key.pem");
    let server = TlsServer::start(&config, &[]);
    assert_eq!(served_leaf(server.addr).await, leaf("server.pem"));
    let old = https_sdk(&server.endpoint(), KEY, SECRET);
    let url = old
        .create_queue()
        .queue_name("rotation")
        .send()
        .await
        .expect("create")
        .queue_url
        .expect("url");
    let poll = tokio::spawn({
        let old = old.clone();
        let url = url.clone();
        async move {
            old.receive_message()
                .queue_url(&url)
                .wait_time_seconds(10)
                .send()
                .await
        }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;

    let rotated = config_text(KEY_B, SECRET_B, "server2.pem", "server2-key.pem");
    server.reload(&rotated, "reloaded the TLS certificate");
    assert!(!poll.is_finished(), "the long poll is still waiting");
    let refused = old
        .list_queues()
        .send()
        .await
        .expect_err("the old key is gone");
    assert_eq!(code(&refused), "InvalidClientTokenId");
    let new = https_sdk(&server.endpoint(), KEY_B, SECRET_B);
    new.send_message()
        .queue_url(&url)
        .message_body("after the reload")
        .send()
        .await
        .expect("the new key works");
    let polled = poll
        .await
        .expect("join")
        .expect("the long poll in flight completes");
    assert_eq!(polled.messages()[0].body(), Some("after the reload"));
    assert_eq!(served_leaf(server.addr).await, leaf("server2.pem"));

    // A certificate with another's key: the whole reload is refused.
    let broken = config_text(KEY_C, "c-secret", "server.pem", "server2-key.pem");
    server.reload(&broken, "reload failed");
    assert!(server.log().contains("does not go with the certificate"));
    let never = https_sdk(&server.endpoint(), KEY_C, "c-secret")
        .list_queues()
        .send()
        .await
        .expect_err("the bad file's key is not in use");
    assert_eq!(code(&never), "InvalidClientTokenId");
    new.list_queues()
        .send()
        .await
        .expect("the keys in use stay");
    assert_eq!(served_leaf(server.addr).await, leaf("server2.pem"));
}

/// A10 and the operator side of A1: `sluice dlq list` and a bounded
/// `sluice bench` speak HTTPS to a TLS server, trusting its CA through
/// `--ca-file` and signing with the configured key; without the CA file
/// the certificate is refused, so nothing is sent in the clear.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a10_operator_commands_and_bench_speak_https() {
    let config = config_text(KEY, SECRET, "server.pem", "server-key.pem");
    let server = TlsServer::start(&config, &[]);
    let endpoint = server.endpoint();
    let home = tempfile::tempdir().expect("home");
    let ca = testdata("ca.pem").display().to_string();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_sluice"))
            .args(args)
            .env_clear()
            .env("HOME", home.path())
            .env("AWS_ACCESS_KEY_ID", KEY)
            .env("AWS_SECRET_ACCESS_KEY", SECRET)
            .stdin(Stdio::null())
            .output()
            .expect("run sluice")
    };

    let listed = run(&["dlq", "list", "--endpoint", &endpoint, "--ca-file", &ca]);
    assert!(
        listed.status.success(),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );

    let untrusted = run(&["dlq", "list", "--endpoint", &endpoint]);
    assert!(!untrusted.status.success(), "an unknown CA was trusted");
    let why = String::from_utf8_lossy(&untrusted.stderr).to_lowercase();
    assert!(why.contains("certificate"), "{why}");

    let bench = run(&[
        "bench",
        "--endpoint",
        &endpoint,
        "--ca-file",
        &ca,
        "--queue",
        "bench-over-tls",
        "--messages",
        "40",
        "--producers",
        "1",
        "--consumers",
        "1",
        "--json",
    ]);
    assert!(
        bench.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&bench.stdout),
        String::from_utf8_lossy(&bench.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_slice(&bench.stdout).expect("the bench's JSON report");
    let count = |field: &str| report.pointer(field).and_then(serde_json::Value::as_u64);
    assert_eq!(count("/sent"), Some(40), "{report}");
    assert_eq!(count("/end_to_end"), Some(40), "{report}");
}

/// A6, A10: a queue policy that denies SendMessage when
/// `aws:SecureTransport` is false refuses it on the plain listener, with
/// IAM's explicit-deny words, and lets it through over HTTPS (the queue's
/// owner included: an explicit Deny binds every key). The refusal is
/// logged once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a6_a10_a_secure_transport_deny_refuses_plain_http_only() {
    let (server, https, plain) = both_listeners();
    let url = https
        .create_queue()
        .queue_name("tls-only")
        .send()
        .await
        .expect("create over https")
        .queue_url
        .expect("url");
    let arn = "arn:aws:sqs:us-east-1:000000000000:tls-only";
    let policy = serde_json::json!({
        "Version": "2012-10-17",
        "Statement": [{
            "Effect": "Deny", "Principal": "*", "Action": "sqs:SendMessage", "Resource": arn,
            "Condition": {"Bool": {"aws:SecureTransport": "false"}},
        }],
    });
    https
        .set_queue_attributes()
        .queue_url(&url)
        .attributes(
            aws_sdk_sqs::types::QueueAttributeName::Policy,
            policy.to_string(),
        )
        .send()
        .await
        .expect("set the policy");
    let e = plain
        .send_message()
        .queue_url(&url)
        .message_body("in the clear")
        .send()
        .await
        .expect_err("denied over plain HTTP");
    assert_eq!(code(&e), "AccessDenied", "{e:?}");
    let message = aws_sdk_sqs::error::ProvideErrorMetadata::message(&e).unwrap_or_default();
    assert!(
        message.ends_with("with an explicit deny in a resource-based policy")
            && message.contains(arn),
        "{message}"
    );
    https
        .send_message()
        .queue_url(&url)
        .message_body("sealed")
        .send()
        .await
        .expect("allowed over HTTPS");
    // Actions the policy does not name are not affected on either listener.
    let attrs = plain
        .get_queue_attributes()
        .queue_url(&url)
        .attribute_names(aws_sdk_sqs::types::QueueAttributeName::ApproximateNumberOfMessages)
        .send()
        .await
        .expect("not denied");
    assert_eq!(
        attrs
            .attributes()
            .and_then(
                |a| a.get(&aws_sdk_sqs::types::QueueAttributeName::ApproximateNumberOfMessages)
            )
            .map(String::as_str),
        Some("1")
    );
    let log = server.log();
    let refusals: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("request refused"))
        .collect();
    assert_eq!(refusals.len(), 1, "{log}");
    assert!(
        refusals[0].contains("denied by the queue's policy") && refusals[0].contains("tls-only"),
        "{}",
        refusals[0]
    );
}

/// V14 (AWS Compute Blog, "Announcing server-side encryption with SSE-SQS
/// by default": queues created over HTTPS are encrypted by default, those
/// created over the non-TLS endpoint are not): a queue created over HTTPS
/// says `SqsManagedSseEnabled` true, one created over the plain listener
/// false, unless the request sets it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v14_sse_sqs_is_the_default_over_https_only() {
    use aws_sdk_sqs::types::QueueAttributeName as Attr;
    let (_server, https, plain) = both_listeners();
    let sse_of = |client: aws_sdk_sqs::Client, name: &'static str, asked: Option<&'static str>| async move {
        let mut create = client.create_queue().queue_name(name);
        if let Some(value) = asked {
            create = create.attributes(Attr::SqsManagedSseEnabled, value);
        }
        let url = create.send().await.expect("create").queue_url.expect("url");
        let attrs = client
            .get_queue_attributes()
            .queue_url(url)
            .attribute_names(Attr::SqsManagedSseEnabled)
            .send()
            .await
            .expect("attributes");
        attrs
            .attributes()
            .and_then(|a| a.get(&Attr::SqsManagedSseEnabled))
            .cloned()
    };
    assert_eq!(
        sse_of(https.clone(), "over-tls", None).await.as_deref(),
        Some("true")
    );
    assert_eq!(
        sse_of(plain.clone(), "in-the-clear", None).await.as_deref(),
        Some("false")
    );
    assert_eq!(
        sse_of(plain, "asked-in-the-clear", Some("true"))
            .await
            .as_deref(),
        Some("true")
    );
    assert_eq!(
        sse_of(https, "declined-over-tls", Some("false"))
            .await
            .as_deref(),
        Some("false")
    );
}

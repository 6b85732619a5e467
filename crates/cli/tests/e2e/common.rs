//! Test servers (in-process with a manual clock, or the real binary) and clients.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use aws_sdk_sqs::config::{BehaviorVersion, Credentials, Region};
use sluice_core::ManualClock;
use sluice_embedded::{EmbeddedBroker, EmbeddedOptions, FaultStorage};
use sluice_server::{Service, ServiceConfig};

/// A server running inside the test process on a free loopback port
/// (sluice-testing's, which stops it when dropped), with what the tests
/// reach behind its HTTP door.
pub struct TestServer {
    /// `http://127.0.0.1:PORT`.
    pub endpoint: String,
    /// The address.
    pub addr: SocketAddr,
    /// The clock the engine reads: advance it to move time.
    pub clock: ManualClock,
    /// The service, for what has no HTTP door (ticking alarms by hand).
    pub service: Arc<Service<EmbeddedBroker>>,
    _served: sluice_testing::TestServer,
}

impl TestServer {
    /// An in-memory server with a manual clock.
    pub async fn start() -> Self {
        let clock = ManualClock::default();
        let broker = EmbeddedBroker::in_memory(Arc::new(clock.clone()));
        Self::with_broker(broker, clock).await
    }

    /// A durable server over `dir` with a manual clock.
    pub async fn start_durable(dir: &Path) -> Self {
        let clock = ManualClock::default();
        let (broker, _) = EmbeddedBroker::open(dir, Arc::new(clock.clone())).expect("open store");
        Self::with_broker(broker, clock).await
    }

    /// A durable server whose engine runs on `storage`, a file system in
    /// memory that injects faults (full disk, failed writes and syncs),
    /// with these engine settings and a manual clock.
    pub async fn start_on(storage: &FaultStorage, options: EmbeddedOptions) -> Self {
        let clock = ManualClock::default();
        let (broker, _) = EmbeddedBroker::open_on(
            Arc::new(storage.clone()),
            Path::new("/data"),
            Arc::new(clock.clone()),
            options,
        )
        .expect("open store");
        Self::with_broker(broker, clock).await
    }

    /// An in-memory server with a manual clock and these settings.
    pub async fn start_with(config: ServiceConfig) -> Self {
        let clock = ManualClock::default();
        let broker = EmbeddedBroker::in_memory(Arc::new(clock.clone()));
        Self::with_broker_and_config(broker, clock, config).await
    }

    /// An in-memory server with these settings on `clock` (e.g. one at the
    /// real time, which SDKs sign with).
    pub async fn start_with_clock(config: ServiceConfig, clock: ManualClock) -> Self {
        let broker = EmbeddedBroker::in_memory(Arc::new(clock.clone()));
        Self::with_broker_and_config(broker, clock, config).await
    }

    /// An in-memory server whose engine reads the system clock, so that
    /// visibility timeouts end in real time (push consumers' tests).
    /// `clock` is then not read by the engine.
    pub async fn start_real_time() -> Self {
        Self::start_real_time_with(ServiceConfig::default()).await
    }

    /// [`TestServer::start_real_time`] with these settings.
    pub async fn start_real_time_with(config: ServiceConfig) -> Self {
        let broker = EmbeddedBroker::in_memory(Arc::new(sluice_core::clock::SystemClock));
        let service = Arc::new(Service::with_clock(
            broker,
            config,
            Arc::new(sluice_core::clock::SystemClock),
        ));
        Self::serving(service, ManualClock::default()).await
    }

    async fn with_broker(broker: EmbeddedBroker, clock: ManualClock) -> Self {
        Self::with_broker_and_config(broker, clock, ServiceConfig::default()).await
    }

    async fn with_broker_and_config(
        broker: EmbeddedBroker,
        clock: ManualClock,
        config: ServiceConfig,
    ) -> Self {
        let service = Arc::new(Service::with_clock(broker, config, Arc::new(clock.clone())));
        Self::serving(service, clock).await
    }

    async fn serving(service: Arc<Service<EmbeddedBroker>>, clock: ManualClock) -> Self {
        let served = sluice_testing::TestServer::serve(service.clone())
            .await
            .expect("serve on a loopback port");
        Self {
            endpoint: served.endpoint().to_string(),
            addr: served.addr(),
            clock,
            service,
            _served: served,
        }
    }

    /// The official Rust SDK pointed at this server.
    pub fn sdk(&self) -> aws_sdk_sqs::Client {
        sdk_client(&self.endpoint)
    }

    /// A raw HTTP client for Query and malformed requests.
    pub fn raw(&self) -> RawClient {
        RawClient { addr: self.addr }
    }
}

/// Creates a queue with default attributes and returns its URL.
pub async fn create_queue(sqs: &aws_sdk_sqs::Client, name: &str) -> String {
    sqs.create_queue()
        .queue_name(name)
        .send()
        .await
        .expect("create queue")
        .queue_url
        .expect("queue URL")
}

/// Sends `bodies` to `url` in batches of 10 (SendMessageBatch), every
/// entry acknowledged.
pub async fn send_bodies(sqs: &aws_sdk_sqs::Client, url: &str, bodies: &[String]) {
    for chunk in bodies.chunks(10) {
        let entries = chunk
            .iter()
            .enumerate()
            .map(|(i, body)| {
                aws_sdk_sqs::types::SendMessageBatchRequestEntry::builder()
                    .id(format!("e{i}"))
                    .message_body(body)
                    .build()
                    .expect("a batch entry")
            })
            .collect();
        let sent = sqs
            .send_message_batch()
            .queue_url(url)
            .set_entries(Some(entries))
            .send()
            .await
            .expect("send batch");
        assert!(sent.failed().is_empty(), "{:?}", sent.failed());
    }
}

/// The error code an SDK error carries (the Query code, from
/// `x-amzn-query-error`), or "".
pub fn code<E: aws_sdk_sqs::error::ProvideErrorMetadata>(e: &E) -> String {
    e.code().unwrap_or_default().to_string()
}

/// The Rust SDK for `endpoint`, with dummy credentials and no retries (so a
/// wrong answer is seen as it is).
pub fn sdk_client(endpoint: &str) -> aws_sdk_sqs::Client {
    sdk_client_in(endpoint, "us-east-1")
}

/// The Rust SDK for `endpoint`, signing for `region` (queues are regional:
/// rule W3).
pub fn sdk_client_in(endpoint: &str, region: &'static str) -> aws_sdk_sqs::Client {
    let http = aws_smithy_http_client::Builder::new().build_http();
    let config = aws_sdk_sqs::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new(region))
        .endpoint_url(endpoint)
        .credentials_provider(Credentials::new("test", "test", None, None, "sluice-tests"))
        .http_client(http)
        .retry_config(aws_sdk_sqs::config::retry::RetryConfig::disabled())
        .build();
    aws_sdk_sqs::Client::from_conf(config)
}

/// An HTTP response as raw parts.
#[derive(Debug)]
pub struct RawResponse {
    /// Status code.
    pub status: u16,
    /// Headers, names lower-cased.
    pub headers: Vec<(String, String)>,
    /// Body as text.
    pub body: String,
}

impl RawResponse {
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The text of the first `<tag>…</tag>` in the body.
    pub fn xml(&self, tag: &str) -> Option<String> {
        xml_values(&self.body, tag).into_iter().next()
    }

    /// The text of every `<tag>…</tag>` in the body.
    pub fn xml_all(&self, tag: &str) -> Vec<String> {
        xml_values(&self.body, tag)
    }
}

/// Texts of `<tag>…</tag>` elements, unescaped.
pub fn xml_values(body: &str, tag: &str) -> Vec<String> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let mut out = Vec::new();
    let mut rest = body;
    while let Some(i) = rest.find(&open) {
        let after = &rest[i + open.len()..];
        let Some(j) = after.find(&close) else { break };
        out.push(
            after[..j]
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&quot;", "\"")
                .replace("&apos;", "'")
                .replace("&#xD;", "\r")
                .replace("&amp;", "&"),
        );
        rest = &after[j + close.len()..];
    }
    out
}

/// A minimal blocking HTTP/1.1 client, so tests can send exactly the bytes
/// they mean (malformed ones included).
#[derive(Clone, Copy)]
pub struct RawClient {
    addr: SocketAddr,
}

impl RawClient {
    /// A client for a server at `endpoint` (`http://ADDR:PORT`).
    pub fn at(endpoint: &str) -> Self {
        let addr = endpoint
            .trim_start_matches("http://")
            .parse()
            .expect("endpoint is http://ADDR:PORT");
        Self { addr }
    }

    /// Sends a request and reads the whole response.
    pub fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> RawResponse {
        let mut stream = TcpStream::connect(self.addr).expect("connect");
        stream.set_read_timeout(Some(Duration::from_secs(30))).ok();
        let mut req = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Length: {}\r\n",
            self.addr,
            body.len()
        );
        for (k, v) in headers {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        req.push_str("\r\n");
        stream.write_all(req.as_bytes()).expect("write");
        stream.write_all(body).expect("write body");
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).expect("read");
        parse_response(&raw)
    }

    /// A Query-protocol POST of form parameters to `path`.
    pub fn query(&self, path: &str, params: &[(&str, &str)]) -> RawResponse {
        let body: String = form_urlencoded::Serializer::new(String::new())
            .extend_pairs(params)
            .finish();
        self.request(
            "POST",
            path,
            &[("Content-Type", "application/x-www-form-urlencoded")],
            body.as_bytes(),
        )
    }

    /// A Query-protocol GET with parameters in the URL.
    pub fn query_get(&self, path: &str, params: &[(&str, &str)]) -> RawResponse {
        let qs: String = form_urlencoded::Serializer::new(String::new())
            .extend_pairs(params)
            .finish();
        self.request("GET", &format!("{path}?{qs}"), &[], b"")
    }

    /// A JSON-protocol POST of SQS `action` with a raw body.
    pub fn json(&self, action: &str, body: &str) -> RawResponse {
        self.json_target(&format!("AmazonSQS.{action}"), body)
    }

    /// A JSON-protocol POST with any `X-Amz-Target`.
    pub fn json_target(&self, target: &str, body: &str) -> RawResponse {
        self.request(
            "POST",
            "/",
            &[
                ("Content-Type", "application/x-amz-json-1.0"),
                ("X-Amz-Target", target),
            ],
            body.as_bytes(),
        )
    }
}

/// Parses one whole HTTP response.
pub fn parse_response(raw: &[u8]) -> RawResponse {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("header end");
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let mut body = raw[split + 4..].to_vec();
    let mut lines = head.lines();
    let status: u16 = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .expect("status");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    if headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"))
    {
        body = dechunk(&body);
    }
    RawResponse {
        status,
        headers,
        body: String::from_utf8_lossy(&body).to_string(),
    }
}

fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(end) = data.windows(2).position(|w| w == b"\r\n") {
        let size =
            usize::from_str_radix(String::from_utf8_lossy(&data[..end]).trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        out.extend_from_slice(&data[end + 2..end + 2 + size]);
        data = &data[end + 2 + size + 2..];
    }
    out
}

/// The real `sluice` binary, started on a free port.
pub struct SluiceProcess {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub endpoint: String,
}

impl SluiceProcess {
    /// Starts `sluice serve --bind 127.0.0.1:0` with extra arguments and
    /// waits for it to listen.
    pub fn start(extra: &[&str]) -> Self {
        Self::start_with_env(extra, &[])
    }

    /// [`SluiceProcess::start`] with extra environment variables.
    pub fn start_with_env(extra: &[&str], env: &[(&str, &str)]) -> Self {
        Self::spawn(extra, env, Stdio::inherit())
    }

    /// [`SluiceProcess::start`] logging at `info` to the file `log`, which
    /// a test reads to see what the server did (a reload's outcome).
    pub fn start_logging(extra: &[&str], log: &Path) -> Self {
        let file = std::fs::File::create(log).expect("create the log file");
        Self::spawn(extra, &[("RUST_LOG", "info")], Stdio::from(file))
    }

    fn spawn(extra: &[&str], env: &[(&str, &str)], stderr: Stdio) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_sluice"))
            .args(["serve", "--bind", "127.0.0.1:0"])
            .args(extra)
            .env("RUST_LOG", "warn")
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("start sluice");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read listening line");
        let endpoint = line
            .trim()
            .strip_prefix("sluice listening on ")
            .unwrap_or_else(|| panic!("unexpected first line: {line:?}"))
            .to_string();
        Self { child, endpoint }
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends SIGHUP, then waits (at most 20 s) until the file `log` holds
    /// one more line with `expect` than before.
    pub fn hang_up(&self, log: &Path, expect: &str) {
        let read = || std::fs::read_to_string(log).unwrap_or_default();
        let before = read().matches(expect).count();
        let sent = Command::new("kill")
            .args(["-HUP", &self.child.id().to_string()])
            .status()
            .expect("kill -HUP");
        assert!(sent.success());
        let started = std::time::Instant::now();
        while read().matches(expect).count() == before {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "no {expect:?} in the log after SIGHUP:\n{}",
                read()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Kills the process with SIGKILL (no chance to flush anything).
    pub fn kill_9(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Sends SIGTERM and waits for a clean exit.
    pub fn terminate(mut self) -> std::process::ExitStatus {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        self.child.wait().expect("wait")
    }

    /// The SDK pointed at this process.
    pub fn sdk(&self) -> aws_sdk_sqs::Client {
        sdk_client(&self.endpoint)
    }

    /// A raw HTTP client for this process.
    pub fn raw(&self) -> RawClient {
        let addr = self
            .endpoint
            .trim_start_matches("http://")
            .parse()
            .expect("endpoint is http://ADDR:PORT");
        RawClient { addr }
    }
}

impl Drop for SluiceProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The ARN of the queue named `dlq` that [`dead_lettered`] creates.
pub const DLQ_ARN: &str = "arn:aws:sqs:us-east-1:000000000000:dlq";

/// A DLQ named `dlq`, a source `src` pointing at it with maxReceiveCount 1,
/// and `n` messages dead-lettered into it (each received once without a
/// delete; the next receive moves it). Returns (source URL, DLQ URL).
pub async fn dead_lettered(sqs: &aws_sdk_sqs::Client, n: usize) -> (String, String) {
    let dlq = create_queue(sqs, "dlq").await;
    let src = sqs
        .create_queue()
        .queue_name("src")
        .attributes(
            aws_sdk_sqs::types::QueueAttributeName::RedrivePolicy,
            format!(r#"{{"deadLetterTargetArn":"{DLQ_ARN}","maxReceiveCount":1}}"#),
        )
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    for i in 0..n {
        sqs.send_message()
            .queue_url(&src)
            .message_body(format!("m{i}"))
            .send()
            .await
            .unwrap();
    }
    while !sqs
        .receive_message()
        .queue_url(&src)
        .max_number_of_messages(10)
        .visibility_timeout(0)
        .send()
        .await
        .unwrap()
        .messages()
        .is_empty()
    {}
    (src, dlq)
}

/// Visible, in-flight and delayed messages of a queue, read in one
/// request: read apart, a message moving between two of the counts (in
/// flight, then visible again) would be missed by both and the queue would
/// look empty.
pub async fn messages_in(sqs: &aws_sdk_sqs::Client, url: &str) -> usize {
    use aws_sdk_sqs::types::QueueAttributeName as Name;
    let counts = [
        Name::ApproximateNumberOfMessages,
        Name::ApproximateNumberOfMessagesNotVisible,
        Name::ApproximateNumberOfMessagesDelayed,
    ];
    let out = sqs
        .get_queue_attributes()
        .queue_url(url)
        .set_attribute_names(Some(counts.to_vec()))
        .send()
        .await
        .expect("queue counts");
    let attributes = out.attributes().expect("the counts asked for");
    counts
        .iter()
        .map(|c| attributes[c].parse::<usize>().expect("a count"))
        .sum()
}

/// One of a queue's approximate counts, e.g. `ApproximateNumberOfMessages`.
pub async fn approximate(
    sqs: &aws_sdk_sqs::Client,
    url: &str,
    attr: aws_sdk_sqs::types::QueueAttributeName,
) -> usize {
    let a = sqs
        .get_queue_attributes()
        .queue_url(url)
        .attribute_names(attr.clone())
        .send()
        .await
        .unwrap();
    a.attributes().unwrap()[&attr].parse().unwrap()
}

/// Waits up to `limit` for `done`, polling every 50 ms; whether it came.
pub(crate) async fn until(limit: Duration, mut done: impl AsyncFnMut() -> bool) -> bool {
    let start = std::time::Instant::now();
    while start.elapsed() < limit {
        if done().await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// Runs `body` with the `sluice serve` arguments of a fresh durable data
/// directory, for tests that prove a rule through the real binary on both
/// engines (see [`on_postgres`]).
pub(crate) async fn on_durable(body: impl AsyncFnOnce(&[&str])) {
    let dir = tempfile::tempdir().expect("dir");
    let data = dir.path().join("data");
    body(&["--data-dir", data.to_str().expect("path")]).await;
}

/// Runs `body` with the `sluice serve` arguments of a node on a fresh
/// PostgreSQL database. Without PostgreSQL's binaries it says SKIPPED and
/// returns; with SLUICE_REQUIRE_POSTGRES=1 it fails instead.
pub(crate) async fn on_postgres(body: impl AsyncFnOnce(&[&str])) {
    let Some(cluster) = sluice_postgres::testing::cluster() else {
        return;
    };
    let url = cluster.fresh_database().await;
    body(&["--postgres", &url]).await;
}

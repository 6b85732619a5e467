//! Hostile clients against the real binary (rules L8, L9): slow or silent
//! clients are cut off, too many connections wait in the backlog, and
//! requests built to cost memory are refused with SQS errors.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::common::{RawResponse, SluiceProcess, parse_response};

/// A server whose header, body and idle timeouts are all one second.
fn impatient_server() -> SluiceProcess {
    SluiceProcess::start(&[
        "--in-memory",
        "--header-timeout-secs",
        "1",
        "--body-timeout-secs",
        "1",
        "--idle-timeout-secs",
        "1",
    ])
}

fn connect(server: &SluiceProcess) -> TcpStream {
    let addr = server.endpoint.trim_start_matches("http://");
    let stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("read timeout");
    stream
}

/// Reads until the server closes `stream`; returns what it sent and how
/// long that took. Fails if it is still open after the read timeout.
fn read_until_closed(stream: &mut TcpStream) -> (Vec<u8>, Duration) {
    let started = Instant::now();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return (got, started.elapsed()),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::ConnectionReset | ErrorKind::BrokenPipe) => {
                return (got, started.elapsed());
            }
            Err(e) => panic!(
                "the connection is still open after {:?}: {e}",
                started.elapsed()
            ),
        }
    }
}

/// Reads one response of a keep-alive connection (a Content-Length body).
fn read_response(stream: &mut TcpStream) -> RawResponse {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        if let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&got[..end]).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .expect("content-length");
            if got.len() >= end + 4 + length {
                return parse_response(&got[..end + 4 + length]);
            }
        }
        let n = stream.read(&mut buf).expect("read response");
        assert!(n > 0, "closed before a whole response");
        got.extend_from_slice(&buf[..n]);
    }
}

fn json_request(target: &str, body: &str, close: bool) -> Vec<u8> {
    let connection = if close { "Connection: close\r\n" } else { "" };
    format!(
        "POST / HTTP/1.1\r\nHost: sluice\r\n{connection}Content-Type: application/x-amz-json-1.0\r\nX-Amz-Target: AmazonSQS.{target}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Asserts `resp` is SQS's JSON error `code`.
fn assert_json_error(resp: &RawResponse, code: &str) {
    assert_eq!(resp.status, 400, "{}", resp.body);
    let query_error = resp.header("x-amzn-query-error").unwrap_or_default();
    assert!(query_error.contains(&format!("{code};")), "{query_error}");
    let body: serde_json::Value = serde_json::from_str(&resp.body).expect("JSON error body");
    assert!(
        body["__type"].as_str().unwrap_or("").contains(code),
        "{body}"
    );
    assert!(body["message"].is_string(), "{body}");
}

/// L9: headers sent a line every 200 ms are cut off after the header
/// timeout, and so is a connection that sends nothing.
#[test]
fn l9_slow_headers_are_cut_off() {
    let server = impatient_server();
    let mut slow = connect(&server);
    let mut writer = slow.try_clone().expect("clone");
    let trickle = std::thread::spawn(move || {
        let _ = writer.write_all(b"POST / HTTP/1.1\r\nHost: sluice\r\n");
        for i in 0..50 {
            std::thread::sleep(Duration::from_millis(200));
            if writer
                .write_all(format!("X-Slow-{i}: x\r\n").as_bytes())
                .is_err()
            {
                return;
            }
        }
    });
    let (answer, took) = read_until_closed(&mut slow);
    assert!(answer.is_empty(), "no answer to half a request");
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(5),
        "{took:?}"
    );
    trickle.join().expect("trickle");

    let mut silent = connect(&server);
    let (_, took) = read_until_closed(&mut silent);
    assert!(took < Duration::from_secs(5), "{took:?}");
}

/// L9: a Content-Length with no body is answered with SQS's error after the
/// body timeout, and the connection closes.
#[test]
fn l9_missing_body_is_answered_and_closed() {
    let server = impatient_server();
    let mut client = connect(&server);
    client
        .write_all(b"POST / HTTP/1.1\r\nHost: sluice\r\nContent-Type: application/x-amz-json-1.0\r\nX-Amz-Target: AmazonSQS.ListQueues\r\nContent-Length: 100\r\n\r\n{")
        .expect("write");
    let (answer, took) = read_until_closed(&mut client);
    assert!(took < Duration::from_secs(5), "{took:?}");
    let resp = parse_response(&answer);
    assert_json_error(&resp, "InvalidParameterValue");
    assert_eq!(resp.header("connection"), Some("close"));
}

/// L9: an endless chunked body, one chunk every 200 ms, is answered with
/// SQS's error after the body timeout, and the connection closes.
#[test]
fn l9_endless_chunked_body_is_answered_and_closed() {
    let server = impatient_server();
    let mut client = connect(&server);
    client
        .write_all(b"POST / HTTP/1.1\r\nHost: sluice\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n")
        .expect("write");
    let mut writer = client.try_clone().expect("clone");
    let trickle = std::thread::spawn(move || {
        for _ in 0..50 {
            if writer.write_all(b"2\r\na&\r\n").is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    });
    let (answer, took) = read_until_closed(&mut client);
    assert!(took < Duration::from_secs(5), "{took:?}");
    let resp = parse_response(&answer);
    assert_eq!(resp.status, 400, "{}", resp.body);
    assert_eq!(resp.xml("Code").as_deref(), Some("InvalidParameterValue"));
    assert!(resp.xml("RequestId").is_some(), "{}", resp.body);
    trickle.join().expect("trickle");
}

/// L9: a keep-alive connection idle after its answer is closed after the
/// idle timeout, but a long poll longer than that timeout is answered.
#[test]
fn l9_idle_keep_alive_is_closed_but_long_polls_are_not() {
    let server = impatient_server();
    let mut client = connect(&server);
    client
        .write_all(&json_request(
            "CreateQueue",
            r#"{"QueueName":"idle"}"#,
            false,
        ))
        .expect("write");
    let created = read_response(&mut client);
    assert_eq!(created.status, 200, "{}", created.body);
    let url: serde_json::Value = serde_json::from_str(&created.body).expect("json");
    let poll = format!(
        r#"{{"QueueUrl":"{}","WaitTimeSeconds":2}}"#,
        url["QueueUrl"].as_str().expect("url")
    );
    let started = Instant::now();
    client
        .write_all(&json_request("ReceiveMessage", &poll, false))
        .expect("write");
    let polled = read_response(&mut client);
    assert_eq!(polled.status, 200, "{}", polled.body);
    assert!(started.elapsed() >= Duration::from_secs(2));
    let (rest, idle) = read_until_closed(&mut client);
    assert!(rest.is_empty());
    assert!(
        idle >= Duration::from_millis(900) && idle < Duration::from_secs(5),
        "{idle:?}"
    );
}

/// L9: with a limit of 5 connections a sixth client is not served while
/// five are held, is served once one leaves, and well-behaved clients are
/// answered afterwards.
#[test]
fn l9_connections_over_the_limit_wait() {
    let server = SluiceProcess::start(&["--in-memory", "--max-connections", "5"]);
    let mut held: Vec<TcpStream> = (0..5).map(|_| connect(&server)).collect();
    // Let the server accept the five before the sixth arrives.
    std::thread::sleep(Duration::from_millis(300));
    let mut sixth = connect(&server);
    sixth
        .set_read_timeout(Some(Duration::from_millis(1500)))
        .expect("timeout");
    sixth
        .write_all(&json_request("ListQueues", "{}", true))
        .expect("write");
    let mut buf = [0u8; 1];
    let waited = sixth.read(&mut buf);
    assert!(
        matches!(&waited, Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut)),
        "the sixth connection was served: {waited:?}"
    );
    drop(held.pop());
    sixth
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let (answer, _) = read_until_closed(&mut sixth);
    assert_eq!(parse_response(&answer).status, 200);
    for _ in 0..3 {
        let resp = server.raw().json("ListQueues", "{}");
        assert_eq!(resp.status, 200, "{}", resp.body);
    }
}

/// The process's peak resident memory, KiB (VmHWM).
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM")
}

/// L8: a Query body of a million empty parameters and a JSON batch of half
/// a million `{}` entries are refused with SQS's errors, and the server's
/// peak memory grows by less than 32 MiB (each cost about 100 MiB before;
/// docs/reliability.md).
#[test]
fn l8_requests_built_to_cost_memory_are_refused() {
    let server = SluiceProcess::start(&["--in-memory"]);
    let raw = server.raw();
    // Warm up with requests of the same sizes that cost only their bytes
    // (one long parameter, one long string): the buffers that receive a
    // body that large are then counted in `before`.
    let pad = "x".repeat(2_000_000);
    let padded = raw.request(
        "POST",
        "/",
        &[("Content-Type", "application/x-www-form-urlencoded")],
        format!("Action=ListQueues&QueueNamePrefix={pad}").as_bytes(),
    );
    assert_eq!(padded.status, 200, "{}", padded.body);
    let long = raw.json(
        "ListQueues",
        &format!(r#"{{"QueueNamePrefix":"{}"}}"#, &pad[..1_500_000]),
    );
    assert_eq!(long.status, 200, "{}", long.body);
    let small = raw.json(
        "DeleteMessageBatch",
        &format!(r#"{{"Entries":[{}]}}"#, ["{}"; 11].join(",")),
    );
    assert_json_error(&small, "TooManyEntriesInBatchRequest");
    let before = peak_rss_kib(server.pid());

    let mut params = String::from("Action=ListQueues&");
    params.push_str(&"=&".repeat(1_000_000));
    let refused = raw.request(
        "POST",
        "/",
        &[("Content-Type", "application/x-www-form-urlencoded")],
        params.as_bytes(),
    );
    assert_eq!(refused.status, 400, "{}", refused.body);
    assert_eq!(refused.xml("Code").as_deref(), Some("MalformedQueryString"));
    assert!(refused.xml("RequestId").is_some(), "{}", refused.body);

    let entries = vec!["{}"; 500_000].join(",");
    let batch = raw.json(
        "SendMessageBatch",
        &format!(r#"{{"QueueUrl":"http://x/000000000000/q","Entries":[{entries}]}}"#),
    );
    assert_json_error(&batch, "TooManyEntriesInBatchRequest");
    let grew_kib = peak_rss_kib(server.pid()).saturating_sub(before);
    assert!(grew_kib < 32 * 1024, "peak RSS grew by {grew_kib} KiB");
}

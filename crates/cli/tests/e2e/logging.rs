//! Log lines carry the request that caused them: every request runs in a
//! `request` span with its id, action and queue; a log that is not a
//! terminal's is plain text.

use std::io::Read;
use std::process::{Command, Stdio};

use super::common::RawClient;

/// A failed request's log line names the request's id, action and queue,
/// without colour codes in a log written to a pipe.
#[test]
fn log_lines_inside_a_request_carry_its_id_action_and_queue() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sluice"))
        .args(["serve", "--bind", "127.0.0.1:0", "--in-memory"])
        .env("RUST_LOG", "sluice_server=debug")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start sluice");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while stdout.read(&mut byte).expect("read stdout") == 1 && byte[0] != b'\n' {
        line.push(byte[0]);
    }
    let line = String::from_utf8(line).expect("utf-8");
    let endpoint = line
        .strip_prefix("sluice listening on ")
        .unwrap_or_else(|| panic!("unexpected first line: {line:?}"));
    let r = RawClient::at(endpoint).json(
        "GetQueueAttributes",
        r#"{"QueueUrl":"http://h/000000000000/no-such-queue"}"#,
    );
    assert_eq!(r.status, 400, "{r:?}");
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("read stderr");
    let _ = child.wait();
    // Not a terminal: plain text, no colour codes between the fields.
    assert!(!stderr.contains('\u{1b}'), "colour codes in a piped log");
    let plain = stderr;
    let failed = plain
        .lines()
        .find(|l| l.contains("request failed"))
        .unwrap_or_else(|| panic!("no 'request failed' line in:\n{plain}"));
    assert!(failed.contains("request{id="), "{failed}");
    assert!(
        failed.contains(r#"action="GetQueueAttributes""#),
        "{failed}"
    );
    assert!(
        failed.contains(r#"queue="http://h/000000000000/no-such-queue""#),
        "{failed}"
    );
}

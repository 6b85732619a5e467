//! Runs the real `sluice` binary's operator commands (`dlq`, `doctor`,
//! `stats`) against a server and reads what they print.

use std::process::{Command, Stdio};

use serde_json::Value;

/// What one run of the binary printed, and how it exited.
#[derive(Debug)]
pub struct Run {
    /// Exit code.
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Run {
    /// Standard output as one JSON document (`--json`).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {self:?}"))
    }

    /// Panics unless the run exited with `code`.
    pub fn expect_code(self, code: i32) -> Self {
        assert_eq!(self.code, code, "{self:?}");
        self
    }
}

/// Runs `sluice ARGS` with `SLUICE_ENDPOINT=endpoint`, without blocking
/// the runtime an in-process server may be running on.
pub async fn sluice(endpoint: &str, args: &[&str]) -> Run {
    let endpoint = endpoint.to_string();
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    tokio::task::spawn_blocking(move || sluice_blocking(&endpoint, &args))
        .await
        .expect("join")
}

/// Runs `sluice ARGS` with `SLUICE_ENDPOINT=endpoint`.
pub fn sluice_blocking(endpoint: &str, args: &[String]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_sluice"))
        .args(args)
        .env("SLUICE_ENDPOINT", endpoint)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .output()
        .expect("run sluice");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `sluice --version` names the version and the commit it was built from.
#[test]
fn version_names_the_commit() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sluice"))
        .arg("--version")
        .output()
        .expect("run sluice --version");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let rest = text
        .trim()
        .strip_prefix(concat!("sluice ", env!("CARGO_PKG_VERSION"), " (commit "))
        .unwrap_or_else(|| panic!("unexpected version line: {text}"));
    let commit = rest.strip_suffix(')').unwrap_or_default();
    assert!(
        commit == "unknown"
            || (commit.len() == 12 && commit.bytes().all(|b| b.is_ascii_hexdigit())),
        "{text}"
    );
}

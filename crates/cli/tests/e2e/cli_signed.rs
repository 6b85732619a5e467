//! The operator commands and `sluice bench` against a server that requires
//! SigV4 (`[auth] mode = "sigv4"` in its config file): they sign with the
//! credentials of the environment or of an AWS profile file, and a wrong or
//! unknown key, no key, or a key without access gets the server's refusal
//! in words an operator can act on.

use std::path::Path;
use std::process::{Command, Stdio};

use aws_sdk_sqs::types::QueueAttributeName as Attr;
use serde_json::Value;

use crate::auth::sdk_signing;
use crate::cli_run::Run;
use crate::common::SluiceProcess;

const OPS_KEY: &str = "AKIDSLUICEOPS";
const OPS_SECRET: &str = "sluice-ops-secret";
const READER_KEY: &str = "AKIDSLUICEREADER";
const READER_SECRET: &str = "sluice-reader-secret";
const SESSION_KEY: &str = "ASIASLUICEOPS";
const SESSION_SECRET: &str = "sluice-session-secret";
const SESSION_TOKEN: &str = "sluice-session-token";

/// A sigv4 server with an unlimited key, one limited to `orders*` and one
/// that must come with a session token.
fn start(dir: &Path) -> SluiceProcess {
    let config = dir.join("sluice.toml");
    std::fs::write(
        &config,
        format!(
            "[auth]\nmode = \"sigv4\"\n\n\
             [[auth.credentials]]\naccess_key_id = \"{OPS_KEY}\"\nsecret_access_key = \"{OPS_SECRET}\"\n\n\
             [[auth.credentials]]\naccess_key_id = \"{READER_KEY}\"\nsecret_access_key = \"{READER_SECRET}\"\n\
             queues = [\"orders*\"]\n\n\
             [[auth.credentials]]\naccess_key_id = \"{SESSION_KEY}\"\nsecret_access_key = \"{SESSION_SECRET}\"\n\
             session_token = \"{SESSION_TOKEN}\"\n"
        ),
    )
    .expect("write config");
    SluiceProcess::start(&[
        "--in-memory",
        "--config",
        config.to_str().expect("utf-8 path"),
    ])
}

/// Runs `sluice ARGS` with only `env` (and a HOME without `.aws`) as its
/// environment, so the machine's AWS settings cannot leak in.
fn sluice(home: &Path, env: &[(&str, &str)], args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_sluice"))
        .args(args)
        .env_clear()
        .env("HOME", home)
        .env("RUST_LOG", "warn")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .expect("run sluice");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A queue `orders` whose DLQ `orders-dlq` holds one message, made with
/// the SDK signing as the operator.
async fn orders_with_a_dead_letter(endpoint: &str) {
    let sqs = sdk_signing(endpoint, OPS_KEY, OPS_SECRET, None);
    let dlq = sqs
        .create_queue()
        .queue_name("orders-dlq")
        .send()
        .await
        .expect("create dlq");
    let dlq_arn = sqs
        .get_queue_attributes()
        .queue_url(dlq.queue_url().expect("url"))
        .attribute_names(Attr::QueueArn)
        .send()
        .await
        .expect("arn")
        .attributes()
        .and_then(|a| a.get(&Attr::QueueArn).cloned())
        .expect("QueueArn");
    sqs.create_queue()
        .queue_name("orders")
        .attributes(
            Attr::RedrivePolicy,
            format!(r#"{{"deadLetterTargetArn":"{dlq_arn}","maxReceiveCount":"1"}}"#),
        )
        .send()
        .await
        .expect("create source");
    sqs.send_message()
        .queue_url(dlq.queue_url().expect("url"))
        .message_body("dead")
        .send()
        .await
        .expect("send");
}

/// The DLQ names of `sluice dlq list --json`.
fn dlq_names(run: &Run) -> Vec<String> {
    let doc: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("{e}: {} {}", run.stdout, run.stderr));
    doc["DeadLetterQueues"]
        .as_array()
        .unwrap_or_else(|| panic!("unexpected output {doc}"))
        .iter()
        .filter_map(|q| q["Name"].as_str().map(str::to_string))
        .collect()
}

/// A1: with the environment's credentials, `sluice dlq list`, `sluice
/// doctor` and a bounded `sluice bench` run sign their requests and work,
/// a session token (`AWS_SESSION_TOKEN`) included; without any, the
/// refusal says no credentials were found.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a1_operator_commands_and_bench_sign_with_env_credentials() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = start(dir.path());
    let endpoint = server.endpoint.clone();
    orders_with_a_dead_letter(&endpoint).await;
    let env = [
        ("AWS_ACCESS_KEY_ID", OPS_KEY),
        ("AWS_SECRET_ACCESS_KEY", OPS_SECRET),
        ("AWS_REGION", "us-east-1"),
    ];

    let list = sluice(
        dir.path(),
        &env,
        &["dlq", "list", "--json", "--endpoint", &endpoint],
    );
    assert_eq!(list.code, 0, "{}", list.stderr);
    assert_eq!(dlq_names(&list), ["orders-dlq"]);

    let doctor = sluice(
        dir.path(),
        &env,
        &[
            "doctor",
            "--json",
            "--fail-on",
            "critical",
            "--endpoint",
            &endpoint,
        ],
    );
    assert_eq!(doctor.code, 0, "{}", doctor.stderr);
    assert!(doctor.stdout.contains("orders-dlq"), "{}", doctor.stdout);

    let bench = sluice(
        dir.path(),
        &env,
        &[
            "bench",
            "--endpoint",
            &endpoint,
            "--queue",
            "bench-signed",
            "--messages",
            "40",
            "--producers",
            "1",
            "--consumers",
            "1",
            "--json",
        ],
    );
    assert_eq!(bench.code, 0, "{}\n{}", bench.stdout, bench.stderr);
    let report: Value = serde_json::from_str(&bench.stdout).expect("bench json");
    assert!(report.to_string().contains("40"), "{report}");

    let session = [
        ("AWS_ACCESS_KEY_ID", SESSION_KEY),
        ("AWS_SECRET_ACCESS_KEY", SESSION_SECRET),
        ("AWS_SESSION_TOKEN", SESSION_TOKEN),
    ];
    let with_token = sluice(
        dir.path(),
        &session,
        &["dlq", "list", "--json", "--endpoint", &endpoint],
    );
    assert_eq!(with_token.code, 0, "{}", with_token.stderr);
    assert_eq!(dlq_names(&with_token), ["orders-dlq"]);
    let without_token = sluice(
        dir.path(),
        &session[..2],
        &["dlq", "list", "--endpoint", &endpoint],
    );
    assert_eq!(without_token.code, 1, "{}", without_token.stdout);
    assert!(
        without_token.stderr.contains("InvalidClientTokenId"),
        "{}",
        without_token.stderr
    );

    let unsigned = sluice(dir.path(), &[], &["dlq", "list", "--endpoint", &endpoint]);
    assert_eq!(unsigned.code, 1, "{}", unsigned.stdout);
    assert!(
        unsigned.stderr.contains("MissingAuthenticationToken")
            && unsigned.stderr.contains("no AWS credentials were found"),
        "{}",
        unsigned.stderr
    );
}

/// A1: a profile of the shared files (`--profile`, or `AWS_PROFILE` for the
/// bench) signs the same way, region from the config file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a1_operator_commands_and_bench_sign_with_a_profile() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = start(dir.path());
    let endpoint = server.endpoint.clone();
    orders_with_a_dead_letter(&endpoint).await;
    let credentials = dir.path().join("credentials");
    let config = dir.path().join("config");
    std::fs::write(
        &credentials,
        format!("[ops]\naws_access_key_id = {OPS_KEY}\naws_secret_access_key = {OPS_SECRET}\n"),
    )
    .expect("credentials file");
    std::fs::write(&config, "[profile ops]\nregion = us-east-1\n").expect("config file");
    let files = [
        (
            "AWS_SHARED_CREDENTIALS_FILE",
            credentials.to_str().expect("utf-8"),
        ),
        ("AWS_CONFIG_FILE", config.to_str().expect("utf-8")),
    ];

    let list = sluice(
        dir.path(),
        &files,
        &[
            "dlq",
            "list",
            "--json",
            "--profile",
            "ops",
            "--endpoint",
            &endpoint,
        ],
    );
    assert_eq!(list.code, 0, "{}", list.stderr);
    assert_eq!(dlq_names(&list), ["orders-dlq"]);

    let mut with_profile = files.to_vec();
    with_profile.push(("AWS_PROFILE", "ops"));
    let bench = sluice(
        dir.path(),
        &with_profile,
        &[
            "bench",
            "--endpoint",
            &endpoint,
            "--queue",
            "bench-profile",
            "--messages",
            "20",
            "--producers",
            "1",
            "--consumers",
            "1",
            "--json",
        ],
    );
    assert_eq!(bench.code, 0, "{}\n{}", bench.stdout, bench.stderr);

    let missing = sluice(
        dir.path(),
        &files,
        &["dlq", "list", "--profile", "nope", "--endpoint", &endpoint],
    );
    assert_eq!(missing.code, 1);
    assert!(
        missing.stderr.contains("no such profile"),
        "{}",
        missing.stderr
    );
}

/// A1, A2: an unknown key is `InvalidClientTokenId`, a wrong secret
/// `SignatureDoesNotMatch`, and a key limited to `orders*` gets
/// `AccessDenied` for the bench's queue; each named on stderr.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a1_a2_wrong_keys_get_the_servers_refusal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = start(dir.path());
    let endpoint = server.endpoint.clone();
    let refused = |key: &str, secret: &str, args: &[&str]| {
        let env = [
            ("AWS_ACCESS_KEY_ID", key),
            ("AWS_SECRET_ACCESS_KEY", secret),
        ];
        let mut all = args.to_vec();
        all.extend(["--endpoint", &endpoint]);
        let run = sluice(dir.path(), &env, &all);
        assert_ne!(run.code, 0, "{}", run.stdout);
        run.stderr
    };
    let unknown = refused("AKIDNOSUCHKEY", OPS_SECRET, &["dlq", "list"]);
    assert!(
        unknown.contains(
            "InvalidClientTokenId: The security token included in the request is invalid."
        ),
        "{unknown}"
    );
    let wrong = refused(OPS_KEY, "not-the-secret", &["doctor", "--json"]);
    assert!(wrong.contains("SignatureDoesNotMatch"), "{wrong}");
    let bench = [
        "bench",
        "--queue",
        "payments",
        "--messages",
        "10",
        "--producers",
        "1",
        "--consumers",
        "1",
    ];
    let denied = refused(READER_KEY, READER_SECRET, &bench);
    assert!(
        denied.contains("AccessDenied") && denied.contains("payments"),
        "{denied}"
    );
    let bad_bench = refused("AKIDNOSUCHKEY", "x", &bench);
    assert!(bad_bench.contains("InvalidClientTokenId"), "{bad_bench}");
}

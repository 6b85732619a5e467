//! Idempotency records through the real binary (rule I1), in both wire
//! protocols, on both engines: a key claimed, seen in progress, completed
//! with a result, and read back after a kill -9 and a start; bad input
//! answered with the error a client expects.

use serde_json::{Value, json};

use crate::common::{RawClient, SluiceProcess, on_durable, on_postgres, xml_values};

fn claim(raw: &RawClient, key: &str) -> Value {
    let body = json!({"Key": key, "TtlSeconds": 3600, "InProgressSeconds": 120}).to_string();
    let r = raw.json_target("Sluice.ClaimIdempotencyKey", &body);
    assert_eq!(r.status, 200, "{}", r.body);
    serde_json::from_str(&r.body).expect("JSON answer")
}

/// The code of an error answer in the JSON protocol, with its status.
fn json_error(raw: &RawClient, action: &str, body: Value) -> String {
    let r = raw.json_target(&format!("Sluice.{action}"), &body.to_string());
    let code: String = r
        .header("x-amzn-query-error")
        .unwrap_or_default()
        .split(';')
        .next()
        .unwrap_or_default()
        .to_string();
    format!("{} {code}", r.status)
}

/// I1 on the durable engine: what a completion stored is what a claim
/// after a kill -9 and a start reads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i1_a_completed_key_outlives_a_kill_9() {
    on_durable(claimed_completed_and_kept).await;
}

/// I1 on a PostgreSQL node. Without PostgreSQL's binaries it says SKIPPED,
/// and fails instead with SLUICE_REQUIRE_POSTGRES=1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i1_a_completed_key_outlives_a_kill_9_on_postgres() {
    on_postgres(claimed_completed_and_kept).await;
}

async fn claimed_completed_and_kept(args: &[&str]) {
    let server = SluiceProcess::start(args);
    let raw = server.raw();
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        let first = claim(&raw, "order-7/charge");
        assert_eq!(first["Status"], "CLAIMED");
        assert!(first["InProgressExpiryTimestamp"].as_i64().unwrap_or(0) > 1_700_000_000_000);
        assert!(first.get("Result").is_none());

        // The Query protocol sees the same key in progress.
        let r = raw.query(
            "/",
            &[
                ("Action", "ClaimIdempotencyKey"),
                ("Key", "order-7/charge"),
                ("TtlSeconds", "3600"),
            ],
        );
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(xml_values(&r.body, "Status"), ["IN_PROGRESS"]);
        let r = raw.query(
            "/",
            &[
                ("Action", "CompleteIdempotencyKey"),
                ("Key", "order-7/charge"),
                ("Result", r#"{"charge":"ch_42"}"#),
            ],
        );
        assert_eq!(r.status, 200, "{}", r.body);

        // A second key, released: free again.
        assert_eq!(claim(&raw, "order-8/charge")["Status"], "CLAIMED");
        let r = raw.json_target(
            "Sluice.ReleaseIdempotencyKey",
            &json!({"Key": "order-8/charge"}).to_string(),
        );
        assert_eq!(r.status, 200, "{}", r.body);

        // Bad input: the errors SQS clients know (ResourceNotFoundException
        // with SQS's status for it, 404).
        let missing = json!({"TtlSeconds": 60});
        assert_eq!(
            json_error(&raw, "ClaimIdempotencyKey", missing),
            "400 MissingParameter"
        );
        let zero = json!({"Key": "k", "TtlSeconds": 0});
        assert_eq!(
            json_error(&raw, "ClaimIdempotencyKey", zero),
            "400 InvalidParameterValue"
        );
        let long = json!({"Key": "k", "TtlSeconds": 60, "InProgressSeconds": 43_201});
        assert_eq!(
            json_error(&raw, "ClaimIdempotencyKey", long),
            "400 InvalidParameterValue"
        );
        let control = json!({"Key": "a\u{7}b", "TtlSeconds": 60});
        assert_eq!(
            json_error(&raw, "ClaimIdempotencyKey", control),
            "400 InvalidParameterValue"
        );
        let nobody = json!({"Key": "never-claimed"});
        assert_eq!(
            json_error(&raw, "CompleteIdempotencyKey", nobody.clone()),
            "404 ResourceNotFoundException"
        );
        assert_eq!(
            json_error(&raw, "ReleaseIdempotencyKey", nobody),
            "404 ResourceNotFoundException"
        );
        let done = json!({"Key": "order-7/charge"});
        assert_eq!(
            json_error(&raw, "ReleaseIdempotencyKey", done),
            "404 ResourceNotFoundException",
            "a completed key keeps its result"
        );
    })
    .await
    .expect("requests");
    server.kill_9();

    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let server = SluiceProcess::start(&args);
    let raw = server.raw();
    tokio::task::spawn_blocking(move || {
        let again = claim(&raw, "order-7/charge");
        assert_eq!(again["Status"], "COMPLETED");
        assert_eq!(again["Result"], r#"{"charge":"ch_42"}"#);
        assert_eq!(claim(&raw, "order-8/charge")["Status"], "CLAIMED");
    })
    .await
    .expect("requests");
}

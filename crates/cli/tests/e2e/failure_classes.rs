//! Failure classes through the real binary (rule X7), on both engines:
//! routes set and refused through aws-sdk-sqs, a validation failure and a
//! timeout from one consumer landing in two DLQs after their own counts,
//! classes nacked and filtered in both wire protocols, a fix replaying only
//! its class with `sluice dlq redrive --class`, all of it kept across a
//! kill -9. The expected answers are sluice's own rule (no AWS recording
//! covers an extension); the errors are SQS's for a bad RedrivePolicy.

use aws_sdk_sqs::types::QueueAttributeName as Attr;
use serde_json::{Value, json};

use crate::cli_run::sluice;
use crate::common::{
    RawClient, SluiceProcess, code, on_durable, on_postgres, sdk_client, xml_values,
};

const ROUTES: &str = "SluiceDeadLetterRoutes";
const ARN: &str = "arn:aws:sqs:us-east-1:000000000000";

/// X7 on the durable engine.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x7_failure_classes_reach_their_dlqs_and_replay_alone() {
    on_durable(classes_end_to_end).await;
}

/// X7 on a PostgreSQL node. Without PostgreSQL's binaries it says SKIPPED,
/// and fails instead with SLUICE_REQUIRE_POSTGRES=1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x7_failure_classes_reach_their_dlqs_and_replay_alone_on_postgres() {
    on_postgres(classes_end_to_end).await;
}

async fn classes_end_to_end(args: &[&str]) {
    let server = SluiceProcess::start(args);
    let sqs = sdk_client(&server.endpoint);
    let mut urls = Vec::new();
    for name in ["main-dlq", "invalid-dlq", "src"] {
        let url = sqs
            .create_queue()
            .queue_name(name)
            .send()
            .await
            .expect("create");
        urls.push(url.queue_url.expect("url"));
    }
    let src = urls[2].clone();
    sqs.create_queue()
        .queue_name("fifo-dlq.fifo")
        .attributes(Attr::FifoQueue, "true")
        .send()
        .await
        .expect("create fifo");

    // Bad routes change nothing and get the errors a RedrivePolicy would.
    let set = |doc: String| {
        sqs.set_queue_attributes()
            .queue_url(&src)
            .attributes(
                Attr::RedrivePolicy,
                format!(r#"{{"deadLetterTargetArn":"{ARN}:main-dlq","maxReceiveCount":2}}"#),
            )
            .attributes(Attr::from(ROUTES), doc)
            .send()
    };
    let route = |dlq: &str, count: u32| {
        format!(
            r#"[{{"class":"validation","deadLetterTargetArn":"{ARN}:{dlq}","maxReceiveCount":{count}}}]"#
        )
    };
    for (doc, want) in [
        (route("nowhere", 1), "InvalidParameterValue"),
        (route("fifo-dlq.fifo", 1), "InvalidParameterValue"),
        (route("src", 1), "InvalidParameterValue"),
        (route("invalid-dlq", 0), "InvalidAttributeValue"),
        ("{}".to_string(), "InvalidAttributeValue"),
    ] {
        let e = set(doc.clone()).await.expect_err("refused");
        assert_eq!(code(&e), want, "{doc}");
    }
    let attrs = sqs
        .get_queue_attributes()
        .queue_url(&src)
        .attribute_names(Attr::All)
        .send()
        .await
        .expect("attributes");
    let attrs = attrs.attributes().expect("map");
    assert!(
        !attrs.contains_key(&Attr::RedrivePolicy) && !attrs.contains_key(&Attr::from(ROUTES)),
        "a refused set changes nothing: {attrs:?}"
    );
    set(route("invalid-dlq", 1)).await.expect("set routes");
    let shown = sqs
        .get_queue_attributes()
        .queue_url(&src)
        .attribute_names(Attr::from(ROUTES))
        .send()
        .await
        .expect("attributes");
    assert_eq!(
        shown.attributes().expect("map")[&Attr::from(ROUTES)],
        route("invalid-dlq", 1)
    );

    for body in ["bad-1", "bad-2", "slow", "odd"] {
        sqs.send_message()
            .queue_url(&src)
            .message_body(body)
            .send()
            .await
            .expect("send");
    }
    let got = sqs
        .receive_message()
        .queue_url(&src)
        .max_number_of_messages(10)
        .visibility_timeout(60)
        .send()
        .await
        .expect("receive");
    assert_eq!(got.messages().len(), 4);
    let handle = |body: &str| {
        got.messages()
            .iter()
            .find(|m| m.body() == Some(body))
            .and_then(|m| m.receipt_handle())
            .expect("received")
            .to_string()
    };
    let (bad1, bad2, slow, odd) = (
        handle("bad-1"),
        handle("bad-2"),
        handle("slow"),
        handle("odd"),
    );
    let raw = server.raw();
    let src2 = src.clone();
    let slow2 = slow.clone();
    tokio::task::spawn_blocking(move || {
        // JSON and Query: a validation failure goes to its DLQ at once.
        let nack = json!({"QueueUrl": src2, "ReceiptHandle": bad1, "Reason": "total missing", "FailureClass": "validation"});
        let r = raw.json_target("Sluice.NackMessage", &nack.to_string());
        assert_eq!(r.status, 200, "{}", r.body);
        let r = raw.query(
            "/000000000000/src",
            &[("Action", "NackMessage"), ("ReceiptHandle", &bad2), ("FailureClass", "validation")],
        );
        assert_eq!(r.status, 200, "{}", r.body);
        // An unrouted class, permanent: RedrivePolicy's DLQ, class kept.
        let nack = json!({"QueueUrl": src2, "ReceiptHandle": odd, "FailureClass": "schema", "Permanent": true});
        let r = raw.json_target("Sluice.NackMessage", &nack.to_string());
        assert_eq!(r.status, 200, "{}", r.body);
        let bad = json!({"QueueUrl": src2, "ReceiptHandle": slow2, "FailureClass": "no spaces"});
        let r = raw.json_target("Sluice.NackMessage", &bad.to_string());
        assert_eq!(r.header("x-amzn-query-error"), Some("InvalidParameterValue;Sender"));
    })
    .await
    .expect("nacks");
    // The timeout: "slow" comes back twice more and then moves on its
    // RedrivePolicy count (2), not on any class's.
    sqs.change_message_visibility()
        .queue_url(&src)
        .receipt_handle(slow)
        .visibility_timeout(0)
        .send()
        .await
        .expect("time out");
    for expected in [1, 0] {
        let again = sqs
            .receive_message()
            .queue_url(&src)
            .visibility_timeout(0)
            .send()
            .await
            .expect("receive");
        assert_eq!(again.messages().len(), expected);
    }

    let endpoint = server.endpoint.clone();
    let peek = |queue: &'static str, class: Option<&'static str>| {
        let endpoint = endpoint.clone();
        async move {
            let mut args = vec!["dlq", "peek", queue, "--json"];
            if let Some(class) = class {
                args.extend(["--class", class]);
            }
            let run = sluice(&endpoint, &args).await.expect_code(0);
            let bodies: Vec<(String, Value)> = run.json()["Messages"]
                .as_array()
                .expect("messages")
                .iter()
                .map(|m| {
                    (
                        m["Body"].as_str().unwrap_or_default().to_string(),
                        m["FailureClass"].clone(),
                    )
                })
                .collect();
            bodies
        }
    };
    assert_eq!(
        peek("invalid-dlq", None).await,
        [
            ("bad-1".into(), json!("validation")),
            ("bad-2".into(), json!("validation"))
        ]
    );
    assert_eq!(
        peek("main-dlq", None).await,
        [
            ("odd".into(), json!("schema")),
            ("slow".into(), Value::Null)
        ]
    );
    // The Query protocol filters by class too.
    let raw = server.raw();
    let classes = tokio::task::spawn_blocking(move || {
        let r = raw.query(
            "/000000000000/main-dlq",
            &[("Action", "PeekMessages"), ("FailureClass", "schema")],
        );
        assert_eq!(r.status, 200, "{}", r.body);
        (
            xml_values(&r.body, "Body"),
            xml_values(&r.body, "FailureClass"),
        )
    })
    .await
    .expect("peek");
    assert_eq!(
        classes,
        (vec!["odd".to_string()], vec!["schema".to_string()])
    );

    server.kill_9();
    let server = SluiceProcess::start(args);
    let endpoint = server.endpoint.clone();
    let peek = |queue: &'static str| {
        let endpoint = endpoint.clone();
        async move {
            sluice(
                &endpoint,
                &["dlq", "peek", queue, "--json", "--class", "schema"],
            )
            .await
            .expect_code(0)
            .json()
        }
    };
    assert_eq!(
        peek("main-dlq").await["Messages"][0]["Body"],
        "odd",
        "kept across a kill -9"
    );
    // The fix for "schema" replays that class alone.
    let run = sluice(
        &endpoint,
        &["dlq", "redrive", "main-dlq", "--class", "schema", "--json"],
    )
    .await;
    let run = run.expect_code(0);
    assert_eq!(run.json()["Moved"], 1, "{run:?}");
    let raw: RawClient = server.raw();
    let left = tokio::task::spawn_blocking(move || {
        let peek = json!({"QueueUrl": "http://x/000000000000/main-dlq"});
        let r = raw.json_target("Sluice.PeekMessages", &peek.to_string());
        assert_eq!(r.status, 200, "{}", r.body);
        serde_json::from_str::<Value>(&r.body).expect("JSON")
    })
    .await
    .expect("peek");
    assert_eq!(left["Messages"].as_array().map(Vec::len), Some(1));
    assert_eq!(left["Messages"][0]["Body"], "slow");
    let sqs = sdk_client(&server.endpoint);
    let src = format!("{}/000000000000/src", server.endpoint);
    let back = sqs
        .receive_message()
        .queue_url(src)
        .send()
        .await
        .expect("receive");
    assert_eq!(back.messages().len(), 1);
    assert_eq!(back.messages()[0].body(), Some("odd"));

    // A class's DLQ is a DLQ: listed with its source, and a move task
    // takes its messages back.
    let list = sluice(&endpoint, &["dlq", "list", "--json"])
        .await
        .expect_code(0)
        .json();
    let listed: Vec<&str> = list["DeadLetterQueues"]
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|d| d["Name"].as_str())
        .collect();
    assert_eq!(listed, ["invalid-dlq", "main-dlq"], "{list}");
    let source = &list["DeadLetterQueues"][0]["Sources"][0];
    assert_eq!(source["Name"], "src");
    assert_eq!(
        source["MaxReceiveCount"],
        Value::Null,
        "its RedrivePolicy targets main-dlq"
    );
    assert_eq!(
        source["Classes"],
        json!([{"Class": "validation", "MaxReceiveCount": 1}])
    );
    sqs.start_message_move_task()
        .source_arn(format!("{ARN}:invalid-dlq"))
        .send()
        .await
        .expect("a move task from a class's DLQ");
    let mut bodies = Vec::new();
    for _ in 0..50 {
        let got = sqs
            .receive_message()
            .queue_url(format!("{}/000000000000/src", server.endpoint))
            .max_number_of_messages(10)
            .wait_time_seconds(1)
            .send()
            .await
            .expect("receive");
        bodies.extend(
            got.messages()
                .iter()
                .filter_map(|m| m.body().map(str::to_string)),
        );
        if bodies.len() >= 2 {
            break;
        }
    }
    bodies.sort();
    assert_eq!(bodies, ["bad-1", "bad-2"]);
}

//! Alarms behind the access rules (rule A9): DeleteAlarms checks the queue
//! of each alarm it names, and a queue an alarm's `Actions` send to must be
//! one the key may send to; and who sent a message (rule A12): its
//! `SenderId` is the signing key's access key id. The refusal is SQS's
//! `AccessDenied` (403), as for any queue outside the key's rules (see
//! `auth_access.rs` for its source).

use aws_sdk_sqs::types::MessageSystemAttributeName as Sys;

use crate::auth_access::{ACCOUNT_B, Server, TEAM_B, credential};
use crate::auth_redrive::signed_sluice;
use crate::common::RawResponse;

const ADMIN: &str = "AKIDSLUICEADMIN";
const OPS: &str = "AKIDSLUICEOPS";
/// May set alarms on orders* but not send messages.
const WATCHER: &str = "AKIDSLUICEWATCHER";

fn arn(name: &str) -> String {
    format!("arn:aws:sqs:us-east-1:000000000000:{name}")
}

fn alarm(name: &str, url: &str, actions: &[String]) -> serde_json::Value {
    serde_json::json!({"AlarmName": name, "QueueUrl": url,
        "MetricName": "ApproximateNumberOfMessagesVisible", "Period": 10,
        "Threshold": 100, "ComparisonOperator": "GreaterThanOrEqualToThreshold",
        "Actions": actions})
}

/// The `__type` and message of a JSON error answer.
fn denied(r: &RawResponse) -> String {
    assert_eq!(r.status, 403, "{}", r.body);
    let v: serde_json::Value = serde_json::from_str(&r.body).expect("json");
    assert_eq!(
        v["__type"].as_str(),
        Some("com.amazonaws.sqs#AccessDenied"),
        "{}",
        r.body
    );
    v["message"].as_str().unwrap_or_default().to_string()
}

async fn start() -> (Server, String, String) {
    let server = Server::start(vec![
        credential(ADMIN, "000000000000", None, None),
        credential(
            OPS,
            "000000000000",
            Some(&["sqs:*", "sluice:*"]),
            Some(&["orders*"]),
        ),
        credential(
            WATCHER,
            "000000000000",
            Some(&["sluice:*"]),
            Some(&["orders*"]),
        ),
        credential(TEAM_B, ACCOUNT_B, None, None),
    ])
    .await;
    let admin = server.sdk(ADMIN);
    let mut urls = Vec::new();
    for name in ["orders-1", "payments"] {
        let url = admin
            .create_queue()
            .queue_name(name)
            .send()
            .await
            .expect("create")
            .queue_url
            .expect("url");
        let put = signed_sluice(
            &server,
            ADMIN,
            "PutAlarm",
            alarm(&format!("{name}-backlog"), &url, &[]),
        )
        .await;
        assert_eq!(put.status, 200, "{}", put.body);
        urls.push(url);
    }
    let payments = urls.pop().expect("payments");
    let orders = urls.pop().expect("orders");
    (server, orders, payments)
}

async fn alarm_names(server: &Server) -> Vec<String> {
    let r = signed_sluice(server, ADMIN, "DescribeAlarms", serde_json::json!({})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let v: serde_json::Value = serde_json::from_str(&r.body).expect("json");
    let mut names: Vec<String> = v["Alarms"]
        .as_array()
        .expect("alarms")
        .iter()
        .map(|a| a["AlarmName"].as_str().unwrap_or_default().to_string())
        .collect();
    names.sort();
    names
}

/// A9: DeleteAlarms is refused, all of it, when an alarm it names watches
/// a queue outside the key's `queues` or of another account; the key
/// deletes the alarms of its own queues.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a9_delete_alarms_checks_each_alarms_queue() {
    let (server, _, _) = start().await;
    let both = serde_json::json!({"AlarmNames": ["orders-1-backlog", "payments-backlog"]});
    let message = denied(&signed_sluice(&server, OPS, "DeleteAlarms", both).await);
    assert!(
        message.contains("sluice:deletealarms") && message.contains(&arn("payments")),
        "{message}"
    );
    let other_account = serde_json::json!({"AlarmNames": ["orders-1-backlog"]});
    let message = denied(&signed_sluice(&server, TEAM_B, "DeleteAlarms", other_account).await);
    assert!(message.contains(&arn("orders-1")), "{message}");
    assert_eq!(
        alarm_names(&server).await,
        ["orders-1-backlog", "payments-backlog"]
    );
    let own = serde_json::json!({"AlarmNames": ["orders-1-backlog"]});
    let r = signed_sluice(&server, OPS, "DeleteAlarms", own).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(alarm_names(&server).await, ["payments-backlog"]);
}

/// A9: an alarm's action that sends to a queue needs a key that may send
/// there: a queue outside its `queues`, or any queue for a key without
/// `sqs:SendMessage`, is AccessDenied for `sqs:sendmessage` on that queue,
/// and no alarm is stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a9_alarm_actions_send_only_where_the_key_may_send() {
    let (server, orders, _) = start().await;
    let to_payments = alarm("leak", &orders, &[arn("payments")]);
    let message = denied(&signed_sluice(&server, OPS, "PutAlarm", to_payments).await);
    assert!(
        message.contains("sqs:sendmessage") && message.contains(&arn("payments")),
        "{message}"
    );
    let to_orders = alarm("own", &orders, &[arn("orders-1")]);
    let message = denied(&signed_sluice(&server, WATCHER, "PutAlarm", to_orders.clone()).await);
    assert!(
        message.contains("sqs:sendmessage") && message.contains(&arn("orders-1")),
        "{message}"
    );
    let webhook_only = alarm("hook", &orders, &["http://127.0.0.1:9/hook".to_string()]);
    let r = signed_sluice(&server, WATCHER, "PutAlarm", webhook_only).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = signed_sluice(&server, OPS, "PutAlarm", to_orders).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        alarm_names(&server).await,
        ["hook", "orders-1-backlog", "own", "payments-backlog"]
    );
}

/// A12: with authentication on, a received message's SenderId is the
/// access key id that signed its send (the SQS API reference: "For a
/// user, returns the user ID"), one per sender, in SendMessage and
/// SendMessageBatch alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a12_sender_id_is_the_signing_key() {
    let (server, orders, _) = start().await;
    let admin = server.sdk(ADMIN);
    let ops = server.sdk(OPS);
    admin
        .send_message()
        .queue_url(&orders)
        .message_body("from admin")
        .send()
        .await
        .expect("send");
    let entry = aws_sdk_sqs::types::SendMessageBatchRequestEntry::builder()
        .id("1")
        .message_body("from ops")
        .build()
        .expect("entry");
    ops.send_message_batch()
        .queue_url(&orders)
        .entries(entry)
        .send()
        .await
        .expect("batch");
    let mut senders = Vec::new();
    for _ in 0..10 {
        if senders.len() == 2 {
            break;
        }
        let got = ops
            .receive_message()
            .queue_url(&orders)
            .message_system_attribute_names(Sys::All)
            .max_number_of_messages(10)
            .wait_time_seconds(1)
            .send()
            .await
            .expect("receive");
        for m in got.messages() {
            let sender = m
                .attributes()
                .and_then(|a| a.get(&aws_sdk_sqs::types::MessageSystemAttributeName::SenderId));
            senders.push((
                m.body().unwrap_or_default().to_string(),
                sender.cloned().unwrap_or_default(),
            ));
        }
    }
    senders.sort();
    assert_eq!(
        senders,
        [
            ("from admin".to_string(), ADMIN.to_string()),
            ("from ops".to_string(), OPS.to_string())
        ]
    );
}

//! Every refused request is logged once by the binary, at WARN, with the
//! access key id it named, the action, the queue and the reason, and
//! never the secret (rule A5, docs/security.md "What is enforced now").

use crate::auth::sdk_signing;
use crate::auth_rates::Binary;
use crate::common::{RawClient, code};

const FULL: &str = "AKIDSLUICELOGFULL";
const FULL_SECRET: &str = "full-secret-never-logged";
const LIMITED: &str = "AKIDSLUICELOGLIMITED";
const LIMITED_SECRET: &str = "limited-secret-never-logged";
const WRONG_SECRET: &str = "wrong-secret-never-logged";

fn config() -> String {
    format!(
        "[auth]\nmode = \"sigv4\"\n\
         [[auth.credentials]]\naccess_key_id = \"{FULL}\"\nsecret_access_key = \"{FULL_SECRET}\"\n\
         [[auth.credentials]]\naccess_key_id = \"{LIMITED}\"\nsecret_access_key = \"{LIMITED_SECRET}\"\n\
         queues = [\"orders*\"]\n"
    )
}

/// The log lines of refusals that mention `needle`.
fn refusals<'a>(log: &'a str, needle: &str) -> Vec<&'a str> {
    log.lines()
        .filter(|l| l.contains("request refused") && l.contains(needle))
        .collect()
}

/// A5: authentication refusals (a wrong secret over JSON naming a queue
/// by URL, an unsigned Query request naming one by name, and one sent to
/// a queue's URL) and an AccessDenied are each logged once, with the key,
/// the action, the queue and the reason; no secret is ever in the log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a5_each_refusal_is_logged_once_with_key_action_queue_and_reason() {
    let server = Binary::start(&config());
    let admin = sdk_signing(&server.endpoint, FULL, FULL_SECRET, None);
    let orders = admin
        .create_queue()
        .queue_name("orders")
        .send()
        .await
        .expect("create orders")
        .queue_url
        .expect("url");
    admin
        .create_queue()
        .queue_name("payments")
        .send()
        .await
        .expect("create payments");

    // A wrong secret, JSON, naming its queue by URL.
    let forged = sdk_signing(&server.endpoint, FULL, WRONG_SECRET, None);
    let e = forged
        .send_message()
        .queue_url(&orders)
        .message_body("x")
        .send()
        .await
        .expect_err("wrong secret");
    assert_eq!(code(&e), "SignatureDoesNotMatch");
    // Unsigned Query requests: one naming its queue by name, one sent to
    // the queue's URL.
    let raw = RawClient::at(&server.endpoint);
    let unsigned = raw.query(
        "/",
        &[("Action", "GetQueueUrl"), ("QueueName", "ledger-unsigned")],
    );
    assert_eq!(unsigned.status, 403, "{}", unsigned.body);
    let to_url = raw.query(
        "/000000000000/audit-trail",
        &[("Action", "PurgeQueue"), ("Version", "2012-11-05")],
    );
    assert_eq!(to_url.status, 403, "{}", to_url.body);
    // A key limited to orders* naming payments.
    let limited = sdk_signing(&server.endpoint, LIMITED, LIMITED_SECRET, None);
    let e = limited
        .get_queue_url()
        .queue_name("payments")
        .send()
        .await
        .expect_err("outside the key's queues");
    assert_eq!(code(&e), "AccessDenied");

    let log = server.log();
    let all = refusals(&log, "");
    assert_eq!(all.len(), 4, "{log}");

    let wrong = refusals(&log, "SignatureDoesNotMatch");
    assert_eq!(wrong.len(), 1, "{log}");
    let orders_field = format!("queue=\"{orders}\"");
    for part in [
        "authentication failed",
        &format!("access_key=\"{FULL}\""),
        "action=\"SendMessage\"",
        &orders_field,
        "reason=\"signature does not match\"",
    ] {
        assert!(wrong[0].contains(part), "{part} missing: {}", wrong[0]);
    }
    let by_name = refusals(&log, "ledger-unsigned");
    assert_eq!(by_name.len(), 1, "{log}");
    for part in [
        "authentication failed",
        "access_key=\"-\"",
        "action=\"GetQueueUrl\"",
        "queue=\"ledger-unsigned\"",
        "code=\"MissingAuthenticationToken\"",
        "reason=\"request is not signed\"",
    ] {
        assert!(by_name[0].contains(part), "{part} missing: {}", by_name[0]);
    }
    let by_path = refusals(&log, "queue=\"000000000000/audit-trail\"");
    assert_eq!(by_path.len(), 1, "{log}");
    assert!(
        by_path[0].contains("action=\"PurgeQueue\""),
        "{}",
        by_path[0]
    );
    let denied = refusals(&log, "access denied");
    assert_eq!(denied.len(), 1, "{log}");
    for part in [
        &format!("access_key=\"{LIMITED}\""),
        "action=\"GetQueueUrl\"",
        "queue=\"payments\"",
        "reason=\"queue not allowed\"",
    ] {
        assert!(denied[0].contains(part), "{part} missing: {}", denied[0]);
    }
    for secret in [FULL_SECRET, LIMITED_SECRET, WRONG_SECRET] {
        assert!(!log.contains(secret), "{secret} in the log:\n{log}");
    }
}

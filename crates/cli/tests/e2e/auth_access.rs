//! Per-credential access rules and accounts end to end (rule A2,
//! docs/security.md), through the Rust SDK: a key limited to some actions
//! and queues gets `AccessDenied` outside them, sees only its queues in
//! ListQueues, and two accounts each own a queue of the same name.
//!
//! The expected refusal is SQS's recorded one (aws/serverless-application-
//! model#3633, SendMessageBatch refused by SQS): code `AccessDenied`, HTTP
//! 403, "User: arn:aws:iam::ACCOUNT:user/NAME is not authorized to perform:
//! sqs:sendmessage on resource: arn:aws:sqs:REGION:ACCOUNT:QUEUE because no
//! identity-based policy allows the sqs:sendmessage action"; the batch is
//! authorized as `sqs:sendmessage`. The SDK reads the code from
//! `x-amzn-query-error` (`AccessDenied;Sender`) over JSON.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use aws_sdk_sqs::types::SendMessageBatchRequestEntry;
use sluice_core::ManualClock;
use sluice_server::ServiceConfig;
use sluice_server::auth::{Access, Authenticator, Credential};

use crate::auth::{sdk_signing, status};
use crate::common::{TestServer, code};

const ADMIN: &str = "AKIDSLUICEADMIN";
const READER: &str = "AKIDSLUICEREADER";
const OPS: &str = "AKIDSLUICEOPS";
pub(crate) const TEAM_A: &str = "AKIDSLUICETEAMA";
pub(crate) const TEAM_B: &str = "AKIDSLUICETEAMB";
pub(crate) const ACCOUNT_A: &str = "111122223333";
pub(crate) const ACCOUNT_B: &str = "444455556666";

fn secret(key: &str) -> String {
    format!("{key}-secret")
}

pub(crate) fn credential(
    key: &str,
    account: &str,
    allow: Option<&[&str]>,
    queues: Option<&[&str]>,
) -> Credential {
    let own = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
    Credential {
        access_key_id: key.into(),
        secret_access_key: secret(key),
        session_token: None,
        account_id: account.into(),
        access: Arc::new(Access {
            allow: allow.map(own),
            queues: queues.map(own),
        }),
        rate_limit: None,
    }
}

/// A server with SigV4 on and these keys, on a clock at the real time
/// (SDKs sign with it).
pub(crate) struct Server {
    server: TestServer,
}

impl Server {
    pub(crate) async fn start(credentials: Vec<Credential>) -> Self {
        Self::start_in(credentials, None).await
    }

    /// [`Server::start`] with the accounts in the AWS Organizations
    /// organisation `organization_id` (`aws:PrincipalOrgID`).
    pub(crate) async fn start_in(
        credentials: Vec<Credential>,
        organization_id: Option<&str>,
    ) -> Self {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        let auth = Authenticator::new(credentials).expect("credentials");
        let config = ServiceConfig {
            auth: Some(Arc::new(auth)),
            organization_id: organization_id.map(str::to_string),
            ..Default::default()
        };
        let server = TestServer::start_with_clock(config, ManualClock::new(now)).await;
        Self { server }
    }

    pub(crate) fn addr(&self) -> std::net::SocketAddr {
        self.server.addr
    }

    pub(crate) fn endpoint(&self) -> String {
        self.server.endpoint.clone()
    }

    pub(crate) fn raw(&self) -> crate::common::RawClient {
        self.server.raw()
    }

    pub(crate) fn sdk(&self, key: &str) -> aws_sdk_sqs::Client {
        sdk_signing(&self.server.endpoint, key, &secret(key), None)
    }
}

/// Asserts an SDK error is SQS's AccessDenied for `action` on `resource`.
fn assert_denied<E: aws_sdk_sqs::error::ProvideErrorMetadata + std::fmt::Debug>(
    e: &aws_sdk_sqs::error::SdkError<E, aws_sdk_sqs::config::http::HttpResponse>,
    user: &str,
    action: &str,
    resource: &str,
) {
    assert_eq!(code(e), "AccessDenied", "{e:?}");
    assert_eq!(status(e), 403);
    let message = aws_sdk_sqs::error::ProvideErrorMetadata::message(e).unwrap_or_default();
    assert_eq!(
        message,
        format!(
            "User: {user} is not authorized to perform: {action} on resource: {resource} \
             because no identity-based policy allows the {action} action"
        )
    );
}

/// A2: a key limited to `orders*` and to the receive side receives,
/// changes visibility and deletes on `orders-1`, but may not send there
/// (single or batch) nor touch `payments` by name, URL or ARN; ListQueues
/// lists only its queues. A key with every action but only `orders*` may
/// not name `payments` by ARN either.
#[tokio::test]
async fn a2_a_limited_key_gets_access_denied_outside_its_rules() {
    let server = Server::start(vec![
        credential(ADMIN, "000000000000", None, None),
        credential(
            READER,
            "000000000000",
            Some(&[
                "sqs:ReceiveMessage",
                "sqs:DeleteMessage",
                "sqs:ChangeMessageVisibility*",
                "sqs:GetQueue*",
                "sqs:ListQueues",
            ]),
            Some(&["orders*"]),
        ),
        credential(
            OPS,
            "000000000000",
            Some(&["sqs:*", "sluice:*"]),
            Some(&["orders*"]),
        ),
    ])
    .await;
    let admin = server.sdk(ADMIN);
    let reader = server.sdk(READER);
    let ops = server.sdk(OPS);
    let mut urls = Vec::new();
    for name in ["orders-1", "payments"] {
        let url = admin
            .create_queue()
            .queue_name(name)
            .send()
            .await
            .expect("admin creates")
            .queue_url
            .expect("url");
        urls.push(url);
    }
    let (orders, payments) = (urls[0].clone(), urls[1].clone());
    admin
        .send_message()
        .queue_url(&orders)
        .message_body("order 1")
        .send()
        .await
        .expect("admin sends");

    // Allowed: its queue by name, receive, change visibility, delete.
    let url = reader
        .get_queue_url()
        .queue_name("orders-1")
        .send()
        .await
        .expect("reader resolves orders-1")
        .queue_url
        .expect("url");
    assert_eq!(url, orders);
    let received = reader
        .receive_message()
        .queue_url(&orders)
        .send()
        .await
        .expect("reader receives")
        .messages
        .unwrap_or_default();
    assert_eq!(received.len(), 1);
    let handle = received[0].receipt_handle.clone().expect("handle");
    reader
        .change_message_visibility()
        .queue_url(&orders)
        .receipt_handle(&handle)
        .visibility_timeout(5)
        .send()
        .await
        .expect("reader changes visibility");
    reader
        .delete_message()
        .queue_url(&orders)
        .receipt_handle(&handle)
        .send()
        .await
        .expect("reader deletes");

    // Refused: sending, to its own queue.
    let user = "arn:aws:iam::000000000000:user/AKIDSLUICEREADER";
    let orders_arn = "arn:aws:sqs:us-east-1:000000000000:orders-1";
    let payments_arn = "arn:aws:sqs:us-east-1:000000000000:payments";
    let e = reader
        .send_message()
        .queue_url(&orders)
        .message_body("not mine to send")
        .send()
        .await
        .expect_err("reader may not send");
    assert_denied(&e, user, "sqs:sendmessage", orders_arn);
    let e = reader
        .send_message_batch()
        .queue_url(&orders)
        .entries(
            SendMessageBatchRequestEntry::builder()
                .id("1")
                .message_body("b")
                .build()
                .expect("entry"),
        )
        .send()
        .await
        .expect_err("reader may not send a batch");
    assert_denied(&e, user, "sqs:sendmessage", orders_arn);

    // Refused: another queue, by name and by URL, even for allowed actions.
    let e = reader
        .get_queue_url()
        .queue_name("payments")
        .send()
        .await
        .expect_err("payments is not the reader's");
    assert_denied(&e, user, "sqs:getqueueurl", payments_arn);
    let e = reader
        .receive_message()
        .queue_url(&payments)
        .send()
        .await
        .expect_err("payments is not the reader's");
    assert_denied(&e, user, "sqs:receivemessage", payments_arn);

    // ListQueues: only what it may name.
    let listed = reader
        .list_queues()
        .send()
        .await
        .expect("reader lists")
        .queue_urls
        .unwrap_or_default();
    assert_eq!(listed, vec![orders.clone()]);
    let all = admin
        .list_queues()
        .send()
        .await
        .expect("admin lists")
        .queue_urls
        .unwrap_or_default();
    assert_eq!(all.len(), 2);

    // ARNs name queues too.
    let e = ops
        .list_message_move_tasks()
        .source_arn(payments_arn)
        .send()
        .await
        .expect_err("payments is not ops'");
    assert_denied(
        &e,
        "arn:aws:iam::000000000000:user/AKIDSLUICEOPS",
        "sqs:listmessagemovetasks",
        payments_arn,
    );
    if let Err(e) = ops
        .list_message_move_tasks()
        .source_arn(orders_arn)
        .send()
        .await
    {
        assert_ne!(code(&e), "AccessDenied", "{e:?}");
    }
    ops.send_message()
        .queue_url(&orders)
        .message_body("ops may send")
        .send()
        .await
        .expect("ops sends to orders-1");
}

/// A2: accounts own their queues. Two keys of two accounts each create
/// `jobs`: two queues, whose URLs and ARNs carry their account; each lists
/// only its own, and the other's URL or owner id is AccessDenied. The
/// server's own account sees neither.
#[tokio::test]
async fn a2_two_accounts_each_own_their_jobs_queue() {
    let server = Server::start(vec![
        credential(ADMIN, "000000000000", None, None),
        credential(TEAM_A, ACCOUNT_A, None, None),
        credential(TEAM_B, ACCOUNT_B, None, None),
    ])
    .await;
    let (a, b, admin) = (server.sdk(TEAM_A), server.sdk(TEAM_B), server.sdk(ADMIN));
    let mut urls = Vec::new();
    for sqs in [&a, &b] {
        let url = sqs
            .create_queue()
            .queue_name("jobs")
            .send()
            .await
            .expect("create jobs")
            .queue_url
            .expect("url");
        urls.push(url);
    }
    let (url_a, url_b) = (urls[0].clone(), urls[1].clone());
    assert!(url_a.ends_with(&format!("/{ACCOUNT_A}/jobs")), "{url_a}");
    assert!(url_b.ends_with(&format!("/{ACCOUNT_B}/jobs")), "{url_b}");
    assert_ne!(url_a, url_b);

    let arn = a
        .get_queue_attributes()
        .queue_url(&url_a)
        .attribute_names(aws_sdk_sqs::types::QueueAttributeName::QueueArn)
        .send()
        .await
        .expect("attributes")
        .attributes
        .unwrap_or_default()
        .remove(&aws_sdk_sqs::types::QueueAttributeName::QueueArn);
    assert_eq!(
        arn.as_deref(),
        Some("arn:aws:sqs:us-east-1:111122223333:jobs")
    );

    a.send_message()
        .queue_url(&url_a)
        .message_body("for A")
        .send()
        .await
        .expect("A sends to its jobs");
    // AWS's URL form, `/<account>/<name>`, names the same queue.
    let short = url_a.replace("/us-east-1/", "/");
    assert_ne!(short, url_a);
    let got = a
        .receive_message()
        .queue_url(&short)
        .send()
        .await
        .expect("A receives by /<account>/<name>")
        .messages
        .unwrap_or_default();
    assert_eq!(got.len(), 1);
    let got = b
        .receive_message()
        .queue_url(&url_b)
        .send()
        .await
        .expect("B receives from its jobs")
        .messages
        .unwrap_or_default();
    assert!(got.is_empty(), "B's jobs is another queue: {got:?}");

    for (sqs, own) in [(&a, &url_a), (&b, &url_b)] {
        let listed = sqs
            .list_queues()
            .send()
            .await
            .expect("list")
            .queue_urls
            .unwrap_or_default();
        assert_eq!(listed, std::slice::from_ref(own));
        let resolved = sqs
            .get_queue_url()
            .queue_name("jobs")
            .send()
            .await
            .expect("resolve")
            .queue_url;
        assert_eq!(resolved.as_deref(), Some(own.as_str()));
    }
    let by_admin = admin
        .list_queues()
        .send()
        .await
        .expect("admin lists")
        .queue_urls
        .unwrap_or_default();
    assert!(by_admin.is_empty(), "{by_admin:?}");

    // The other account's queue: AccessDenied (no queue policy grants it).
    let e = b
        .receive_message()
        .queue_url(&url_a)
        .send()
        .await
        .expect_err("A's queue is not B's");
    assert_denied(
        &e,
        "arn:aws:iam::444455556666:user/AKIDSLUICETEAMB",
        "sqs:receivemessage",
        "arn:aws:sqs:us-east-1:111122223333:jobs",
    );
    let e = b
        .get_queue_url()
        .queue_name("jobs")
        .queue_owner_aws_account_id(ACCOUNT_A)
        .send()
        .await
        .expect_err("A's queue is not B's");
    assert_eq!(code(&e), "AccessDenied");
    let e = admin
        .delete_queue()
        .queue_url(&url_b)
        .send()
        .await
        .expect_err("B's queue is not the server account's");
    assert_eq!(code(&e), "AccessDenied");
    // A queue another account does not have is simply not there.
    let e = b
        .get_queue_url()
        .queue_name("nothing")
        .queue_owner_aws_account_id(ACCOUNT_A)
        .send()
        .await
        .expect_err("no such queue");
    assert_eq!(code(&e), "AWS.SimpleQueueService.NonExistentQueue");
}

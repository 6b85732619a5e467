//! Malformed requests get the SQS error a client expects and change
//! nothing (rule W5).

use crate::common::{TestServer, create_queue};

/// W5: wrong JSON types, oversize bodies, and unknown methods are refused
/// with an error and leave stored messages alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w5_malformed_requests_change_nothing() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let url = create_queue(&sqs, "q").await;
    sqs.send_message()
        .queue_url(&url)
        .message_body("kept")
        .send()
        .await
        .unwrap();
    let raw = server.raw();
    let url2 = url.clone();
    tokio::task::spawn_blocking(move || {
        let wrong_type = raw.json(
            "ReceiveMessage",
            &format!(r#"{{"QueueUrl":"{url2}","MaxNumberOfMessages":"ten"}}"#),
        );
        assert_eq!(wrong_type.status, 400);
        assert!(
            wrong_type.body.contains("SerializationException"),
            "{}",
            wrong_type.body
        );

        let not_object = raw.json("SendMessage", r#"["QueueUrl"]"#);
        assert_eq!(not_object.status, 400);
        assert!(not_object.body.contains("SerializationException"));

        let huge = vec![b'a'; 5 * 1024 * 1024];
        let oversize = raw.request(
            "POST",
            "/",
            &[
                ("Content-Type", "application/x-amz-json-1.0"),
                ("X-Amz-Target", "AmazonSQS.SendMessage"),
            ],
            &huge,
        );
        assert_eq!(oversize.status, 400);
        assert_eq!(
            oversize.header("x-amzn-query-error"),
            Some("InvalidParameterValue;Sender")
        );

        let bad_form = raw.request(
            "POST",
            "/",
            &[("Content-Type", "application/x-www-form-urlencoded")],
            b"%%%&&&==",
        );
        // No action: SQS answers 404 and an UnknownOperationException
        // document (AWS recorded answer, rule W7).
        assert_eq!(bad_form.status, 404, "{}", bad_form.body);
        assert!(
            bad_form.body.contains("<UnknownOperationException/>"),
            "{}",
            bad_form.body
        );

        let method = raw.request("DELETE", "/", &[], b"");
        assert_eq!(method.status, 405);
        let health = raw.request("GET", "/health", &[], b"");
        assert_eq!((health.status, health.body.as_str()), (200, "ok\n"));
    })
    .await
    .unwrap();
    let got = sqs.receive_message().queue_url(&url).send().await.unwrap();
    assert_eq!(
        got.messages()[0].body(),
        Some("kept"),
        "nothing stored was lost or altered"
    );
}

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

/// H4: bytes a protocol forbids are refused, never altered. A Query body
/// whose escapes are not UTF-8 gets InvalidMessageContents (the answer SQS
/// gives for characters it cannot store) and nothing is stored; a NUL in a
/// parameter that the error message echoes still makes a well-formed XML
/// document; JSON that is not UTF-8 is a SerializationException; a Number
/// attribute past SQS's ±10^126 range is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h4_forbidden_bytes_are_refused_not_altered() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let url = create_queue(&sqs, "bytes").await;
    let raw = server.raw();
    let url2 = url.clone();
    tokio::task::spawn_blocking(move || {
        let form = [("Content-Type", "application/x-www-form-urlencoded")];
        let body = format!("Action=SendMessage&QueueUrl={url2}&MessageBody=caf%C3%A9%FF");
        let resp = raw.request("POST", "/", &form, body.as_bytes());
        assert_eq!(resp.status, 400, "{}", resp.body);
        assert_eq!(resp.xml("Code").as_deref(), Some("InvalidMessageContents"));

        let body =
            format!("Action=GetQueueAttributes&QueueUrl={url2}&AttributeName.1=Bad%00Name%1B");
        let resp = raw.request("POST", "/", &form, body.as_bytes());
        assert_eq!(resp.status, 400, "{}", resp.body);
        assert_eq!(resp.xml("Code").as_deref(), Some("InvalidAttributeName"));
        assert!(
            !resp
                .body
                .chars()
                .any(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r')),
            "the error document holds characters XML cannot carry: {:?}",
            resp.body
        );
        assert!(
            resp.body.contains("Bad\u{FFFD}Name\u{FFFD}"),
            "{}",
            resp.body
        );

        let mut json = format!(r#"{{"QueueUrl":"{url2}","MessageBody":"caf"#).into_bytes();
        json.extend_from_slice(b"\xff\"}");
        let resp = raw.request(
            "POST",
            "/",
            &[
                ("Content-Type", "application/x-amz-json-1.0"),
                ("X-Amz-Target", "AmazonSQS.SendMessage"),
            ],
            &json,
        );
        assert_eq!(resp.status, 400, "{}", resp.body);
        assert!(
            resp.body.contains("SerializationException"),
            "{}",
            resp.body
        );

        let resp = raw.json(
            "SendMessage",
            &format!(r#"{{"QueueUrl":"{url2}","MessageBody":"a\u0000b"}}"#),
        );
        assert_eq!(resp.status, 400, "{}", resp.body);
        assert_eq!(
            resp.header("x-amzn-query-error"),
            Some("InvalidMessageContents;Sender")
        );
    })
    .await
    .unwrap();

    let number = |v: &str| {
        aws_sdk_sqs::types::MessageAttributeValue::builder()
            .data_type("Number")
            .string_value(v)
            .build()
            .unwrap()
    };
    let e = sqs
        .send_message()
        .queue_url(&url)
        .message_body("n")
        .message_attributes("n", number("1e400"))
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert_eq!(crate::common::code(&e), "InvalidParameterValue");
    sqs.send_message()
        .queue_url(&url)
        .message_body("in range")
        .message_attributes("n", number("-1e126"))
        .send()
        .await
        .unwrap();

    let got = sqs
        .receive_message()
        .queue_url(&url)
        .max_number_of_messages(10)
        .send()
        .await
        .unwrap();
    let bodies: Vec<_> = got.messages().iter().filter_map(|m| m.body()).collect();
    assert_eq!(bodies, ["in range"], "only the valid send was stored");
}

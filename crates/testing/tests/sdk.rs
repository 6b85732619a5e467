//! The helper as a user's test suite uses it: aws-sdk-sqs against a server
//! started in the test.

use std::time::Instant;

use sluice_testing::TestServer;

/// A queue's life through the official SDK: create, send, receive, delete.
#[tokio::test]
async fn a_message_round_trip_through_the_sdk() {
    let began = Instant::now();
    let server = TestServer::start().await.unwrap();
    eprintln!("server started in {:?}", began.elapsed());
    let sqs = server.client();
    let url = sqs
        .create_queue()
        .queue_name("orders")
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    assert!(url.starts_with(server.endpoint()), "{url}");
    sqs.send_message()
        .queue_url(&url)
        .message_body("hello")
        .send()
        .await
        .unwrap();
    let got = sqs
        .receive_message()
        .queue_url(&url)
        .wait_time_seconds(1)
        .send()
        .await
        .unwrap();
    let message = &got.messages()[0];
    assert_eq!(message.body(), Some("hello"));
    sqs.delete_message()
        .queue_url(&url)
        .receipt_handle(message.receipt_handle().unwrap())
        .send()
        .await
        .unwrap();
    let attrs = sqs
        .get_queue_attributes()
        .queue_url(&url)
        .attribute_names(aws_sdk_sqs::types::QueueAttributeName::All)
        .send()
        .await
        .unwrap();
    let visible = attrs
        .attributes()
        .and_then(|a| a.get(&aws_sdk_sqs::types::QueueAttributeName::ApproximateNumberOfMessages));
    assert_eq!(visible.map(String::as_str), Some("0"));
}

/// Two servers share nothing, and a deleted queue's name is free at once.
#[tokio::test]
async fn each_server_has_its_own_queues() {
    let first = TestServer::start().await.unwrap();
    let second = TestServer::start().await.unwrap();
    let url = first
        .client()
        .create_queue()
        .queue_name("only-here")
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    let listed = second.client().list_queues().send().await.unwrap();
    assert!(listed.queue_urls().is_empty(), "{listed:?}");
    first
        .client()
        .delete_queue()
        .queue_url(&url)
        .send()
        .await
        .unwrap();
    first
        .client()
        .create_queue()
        .queue_name("only-here")
        .send()
        .await
        .expect("the name is free again at once");
}

/// Dropping the server stops it: its port refuses connections.
#[tokio::test]
async fn dropping_the_server_stops_it() {
    let server = TestServer::start().await.unwrap();
    let addr = server.addr();
    drop(server);
    let mut refused = false;
    for _ in 0..50 {
        if tokio::net::TcpStream::connect(addr).await.is_err() {
            refused = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(refused, "the port still accepts connections");
}

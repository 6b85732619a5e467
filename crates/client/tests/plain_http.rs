//! What an unsigned client sends over plain HTTP: nothing, or (for the
//! bench, which also loads emulators) SQS's credential scope with a dummy
//! signature; and which endpoints it accepts.

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::Full;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use sluice_client::{Client, ClientOptions, Empty, PLACEHOLDER_AUTHORIZATION, sluice, sqs};

/// A plain HTTP server answering every request with a CreateQueue output;
/// records each request's `Authorization` header.
async fn recording_server(seen: Arc<Mutex<Vec<Option<String>>>>) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let seen = seen.clone();
            let service = service_fn(move |req: Request<hyper::body::Incoming>| {
                let auth = req
                    .headers()
                    .get("authorization")
                    .map(|v| v.to_str().unwrap().to_string());
                seen.lock().unwrap().push(auth);
                async move {
                    let body = Full::new(Bytes::from_static(br#"{"QueueUrl":"http://q/1/q"}"#));
                    Ok::<_, std::convert::Infallible>(Response::new(body))
                }
            });
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    addr
}

/// Emulators route on the scope: without it moto's server answers an SQS
/// request as S3.
#[tokio::test]
async fn the_placeholder_carries_the_sqs_credential_scope() {
    let seen: Arc<Mutex<Vec<Option<String>>>> = Arc::default();
    let addr = recording_server(seen.clone()).await;
    let endpoint = format!("http://{addr}");
    let bench = ClientOptions {
        placeholder_authorization: true,
        ..ClientOptions::default()
    };
    let created = Client::new(&endpoint, &bench)
        .unwrap()
        .create_queue("q", &[])
        .await
        .unwrap();
    assert_eq!(created.url, "http://q/1/q");
    assert!(!created.null_server);
    let plain = Client::new(&endpoint, &ClientOptions::default()).unwrap();
    plain.create_queue("q", &[]).await.unwrap();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2);
    let placeholder = seen[0].as_deref().unwrap();
    assert_eq!(placeholder, PLACEHOLDER_AUTHORIZATION);
    assert!(placeholder.contains("/us-east-1/sqs/aws4_request,"));
    assert_eq!(seen[1], None);
}

#[test]
fn endpoints_must_be_http_or_https_with_a_host() {
    let options = ClientOptions::default();
    assert!(Client::new("ftp://example.com", &options).is_err());
    assert!(Client::new("not a url", &options).is_err());
    assert!(Client::new("/just/a/path", &options).is_err());
    assert!(Client::new("http://127.0.0.1:9324", &options).is_ok());
}

/// A server answering by `X-Amz-Target`: GetQueueUrl with a URL, anything
/// else with an empty body (as operations without output may).
async fn target_server(targets: Arc<Mutex<Vec<String>>>) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let targets = targets.clone();
            let service = service_fn(move |req: Request<hyper::body::Incoming>| {
                let target = req.headers()["x-amz-target"].to_str().unwrap().to_string();
                let body: &'static [u8] = match target.as_str() {
                    "AmazonSQS.GetQueueUrl" => br#"{"QueueUrl":"http://h/1/q"}"#,
                    _ => b"",
                };
                targets.lock().unwrap().push(target);
                async move {
                    Ok::<_, std::convert::Infallible>(Response::new(Full::new(Bytes::from_static(
                        body,
                    ))))
                }
            });
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    addr
}

/// `call` sends an input to its own target and reads its operation's
/// output; an empty answer is an output without members.
#[tokio::test]
async fn call_posts_to_the_inputs_target_and_reads_its_output() {
    let targets: Arc<Mutex<Vec<String>>> = Arc::default();
    let addr = target_server(targets.clone()).await;
    let client = Client::new(&format!("http://{addr}"), &ClientOptions::default()).unwrap();
    let url = client
        .call(&sqs::GetQueueUrlRequest {
            queue_name: Some("q".into()),
            ..Default::default()
        })
        .await
        .unwrap()
        .queue_url;
    assert_eq!(url.as_deref(), Some("http://h/1/q"));
    let purged: Empty = client
        .call(&sqs::PurgeQueueRequest {
            queue_url: Some("http://h/1/q".into()),
        })
        .await
        .unwrap();
    assert_eq!(purged, Empty {});
    let consumers = client
        .call(&sluice::ListConsumersRequest::default())
        .await
        .unwrap();
    assert!(consumers.consumers.is_empty());
    assert_eq!(
        *targets.lock().unwrap(),
        [
            "AmazonSQS.GetQueueUrl",
            "AmazonSQS.PurgeQueue",
            "Sluice.ListConsumers"
        ]
    );
}

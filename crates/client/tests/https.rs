//! `https://` endpoints: the client speaks TLS (rustls) to a server whose
//! self-signed certificate it trusts through `--ca-file`, and refuses it
//! without; requests over TLS are signed like any other.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::Full;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use sluice_client::sqs::ListQueuesRequest;
use sluice_client::{Client, ClientOptions, Credentials, Signing};

fn testdata(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(name)
}

/// A TLS server on 127.0.0.1 with the test certificate, answering every
/// request with `{"QueueUrls":["…"]}`; records each request's headers.
async fn tls_server(seen: Arc<Mutex<Vec<hyper::HeaderMap>>>) -> std::net::SocketAddr {
    let certs = CertificateDer::pem_file_iter(testdata("localhost.crt"))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_file(testdata("localhost.key")).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(certs, key)
    .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let acceptor = acceptor.clone();
            let seen = seen.clone();
            tokio::spawn(async move {
                // A client that refuses the certificate ends the handshake.
                let Ok(tls) = acceptor.accept(stream).await else {
                    return;
                };
                let service = service_fn(move |req: Request<hyper::body::Incoming>| {
                    seen.lock().unwrap().push(req.headers().clone());
                    async move {
                        let body = Full::new(Bytes::from_static(
                            br#"{"QueueUrls":["https://localhost/000000000000/q"]}"#,
                        ));
                        Ok::<_, std::convert::Infallible>(Response::new(body))
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
            });
        }
    });
    addr
}

fn signed_options(ca_file: Option<PathBuf>) -> ClientOptions {
    ClientOptions {
        signing: Signing {
            credentials: Some(Credentials {
                access_key_id: "AKIDTLS".into(),
                secret_access_key: "secret".into(),
                session_token: Some("token".into()),
            }),
            region: "eu-west-1".into(),
        },
        ca_file,
        ..ClientOptions::default()
    }
}

#[tokio::test]
async fn https_with_the_ca_file_works_and_is_signed() {
    let seen = Arc::default();
    let addr = tls_server(Arc::clone(&seen)).await;
    for host in ["localhost", "127.0.0.1"] {
        let endpoint = format!("https://{host}:{}", addr.port());
        let client =
            Client::new(&endpoint, &signed_options(Some(testdata("localhost.crt")))).unwrap();
        let out = client.call(&ListQueuesRequest::default()).await.unwrap();
        assert_eq!(out.queue_urls[0], "https://localhost/000000000000/q");
        assert_eq!(
            client.list_queue_urls().await.unwrap(),
            ["https://localhost/000000000000/q"]
        );
    }
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 4);
    for headers in seen.iter() {
        let auth = headers["authorization"].to_str().unwrap();
        assert!(
            auth.starts_with("AWS4-HMAC-SHA256 Credential=AKIDTLS/")
                && auth.contains("/eu-west-1/sqs/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-security-token;x-amz-target, Signature="),
            "{auth}"
        );
        assert_eq!(headers["x-amz-security-token"], "token");
        assert!(headers.contains_key("x-amz-date"));
    }
}

#[tokio::test]
async fn https_without_trusting_the_certificate_fails() {
    let addr = tls_server(Arc::default()).await;
    let endpoint = format!("https://localhost:{}", addr.port());
    let client = Client::new(&endpoint, &signed_options(None)).unwrap();
    let e = client
        .call(&ListQueuesRequest::default())
        .await
        .unwrap_err();
    let text = e.to_string();
    assert!(text.contains("cannot reach the server"), "{text}");
    assert!(text.to_lowercase().contains("certificate"), "{text}");
}

#[test]
fn a_ca_file_that_is_not_pem_is_refused() {
    let e = match Client::new(
        "https://localhost:1",
        &signed_options(Some(testdata("localhost.key"))),
    ) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("a key file is not a CA file"),
    };
    assert!(e.contains("holds no PEM CERTIFICATE"), "{e}");
}

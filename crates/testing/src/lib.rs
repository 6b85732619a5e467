//! A sluice server inside your test process: in memory, on a free loopback
//! port, started in milliseconds, stopped when dropped. Point any SQS
//! client at [`TestServer::endpoint`]; with the `aws-sdk-sqs` feature,
//! [`TestServer::client`] gives an `aws_sdk_sqs::Client` ready to use.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let server = sluice_testing::TestServer::start().await?;
//! println!("SQS at {}", server.endpoint());
//! # Ok(()) }
//! ```
//!
//! Each server has its own queues, so a test that starts its own server
//! never sees another test's; a deleted queue's name may be used again at
//! once (real SQS holds it for 60 seconds).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use sluice_broker::Broker;
use sluice_core::clock::SystemClock;
use sluice_embedded::EmbeddedBroker;
use sluice_server::{Service, ServiceConfig};
use tokio::sync::oneshot;

/// The region queue URLs and ARNs carry unless told otherwise.
pub const REGION: &str = "us-east-1";

/// Why a server could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// No loopback port could be bound.
    #[error("cannot listen on a loopback port: {0}")]
    Listen(#[from] std::io::Error),
}

/// A running in-process server; dropping it stops it.
pub struct TestServer {
    endpoint: String,
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
}

impl TestServer {
    /// Starts an in-memory server on a free loopback port. Must be called
    /// inside a Tokio runtime (e.g. a `#[tokio::test]`).
    pub async fn start() -> Result<Self, StartError> {
        Self::start_with(ServiceConfig::default()).await
    }

    /// Starts an in-memory server with these settings (account, region,
    /// base URL, ...).
    pub async fn start_with(config: ServiceConfig) -> Result<Self, StartError> {
        let broker = EmbeddedBroker::in_memory(Arc::new(SystemClock));
        broker.set_deleted_name_hold(Duration::ZERO);
        Self::serve(Arc::new(Service::new(broker, config))).await
    }

    /// Serves `service`, already built over any engine and clock, on a
    /// free loopback port (sluice's own tests serve a durable engine or a
    /// manual clock this way).
    pub async fn serve<B: Broker>(service: Arc<Service<B>>) -> Result<Self, StartError> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(async move {
            let shutdown = async {
                let _ = stopped.await;
            };
            if let Err(e) = sluice_server::serve(listener, service, shutdown).await {
                eprintln!("sluice-testing: the server stopped: {e}");
            }
        });
        Ok(Self {
            endpoint: format!("http://{addr}"),
            addr,
            stop: Some(stop),
        })
    }

    /// `http://127.0.0.1:PORT`: the endpoint URL to give an SQS client.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// An aws-sdk-sqs client for this server: its endpoint, the region
    /// [`REGION`], placeholder credentials (the server accepts any), and no
    /// retries, so a test sees every error as the server answered it.
    #[cfg(feature = "aws-sdk-sqs")]
    pub fn client(&self) -> aws_sdk_sqs::Client {
        use aws_sdk_sqs::config::{BehaviorVersion, Credentials, Region, retry::RetryConfig};
        let config = aws_sdk_sqs::Config::builder()
            .behavior_version(BehaviorVersion::latest())
            .endpoint_url(&self.endpoint)
            .region(Region::new(REGION))
            .credentials_provider(Credentials::new(
                "test",
                "test",
                None,
                None,
                "sluice-testing",
            ))
            .http_client(aws_smithy_http_client::Builder::new().build_http())
            .retry_config(RetryConfig::disabled())
            .build();
        aws_sdk_sqs::Client::from_conf(config)
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

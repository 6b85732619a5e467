//! Notifications of state changes: the JSON body, and the webhook sender.
//!
//! The sender never blocks its caller: notifications go into a bounded
//! queue (full: dropped with an error log) read by a dispatcher task, which
//! hands each to the worker task of its receiver. A worker delivers in
//! order and retries with exponential backoff while its receiver is down,
//! so one dead receiver delays only its own notifications. One connector
//! serves `http://` and `https://` receivers; a TLS failure (an untrusted
//! certificate, say) is retried like a receiver that is down.

use sluice_core::error::error_chain;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};
use sluice_outbound::{ConnectionSettings, OutboundClient, OutboundTls};
use tokio::sync::mpsc;

use super::definition::AlarmDefinition;
use super::store::Transition;

/// How webhooks are delivered.
#[derive(Debug, Clone)]
pub struct WebhookPolicy {
    /// Wait before the first retry; doubles after each failure.
    pub first_backoff: Duration,
    /// Longest wait between tries.
    pub max_backoff: Duration,
    /// Tries before a notification is given up (logged as an error).
    pub max_attempts: u32,
    /// Longest time one try may take.
    pub timeout: Duration,
    /// Notifications waiting for the dispatcher, and per receiver.
    pub queue_capacity: usize,
}

impl Default for WebhookPolicy {
    /// 1 s, 2 s, 4 s … up to 5 min between tries, 12 tries (about 20
    /// minutes): long enough to ride out a receiver's restart.
    fn default() -> Self {
        Self {
            first_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(300),
            max_attempts: 12,
            timeout: Duration::from_secs(10),
            queue_capacity: 1024,
        }
    }
}

impl WebhookPolicy {
    /// The wait after the `failures`-th failed try (1-based).
    pub fn backoff(&self, failures: u32) -> Duration {
        let factor = 2u32.saturating_pow(failures.saturating_sub(1));
        self.first_backoff
            .saturating_mul(factor)
            .min(self.max_backoff)
    }
}

/// The JSON body of a notification: the same for webhooks and queues.
/// `text` is the one-line summary Slack-style incoming webhooks show.
pub fn body(def: &AlarmDefinition, t: &Transition) -> Value {
    let text = format!(
        "[{}] {} on queue {} ({} {} {} {}): {}",
        t.new.as_str(),
        def.name,
        def.queue,
        def.statistic.as_str(),
        def.metric.as_str(),
        comparison_symbol(def),
        super::evaluate::number(def.threshold),
        t.reason
    );
    json!({
        "text": text,
        "alarm_name": def.name,
        "queue": def.queue,
        "metric": def.metric.as_str(),
        "old_state": t.old.as_str(),
        "new_state": t.new.as_str(),
        "reason": t.reason,
        "timestamp": rfc3339(t.at),
        "timestamp_ms": t.at,
        "description": def.description,
    })
}

fn comparison_symbol(def: &AlarmDefinition) -> &'static str {
    use super::definition::Comparison::*;
    match def.comparison {
        GreaterThanOrEqualToThreshold => ">=",
        GreaterThanThreshold => ">",
        LessThanThreshold => "<",
        LessThanOrEqualToThreshold => "<=",
    }
}

/// `2026-01-01T00:01:00.000Z` from ms since the epoch.
pub use sluice_core::timestamp::rfc3339;

/// What became of notifications since the server started, by outcome
/// (exported as `sluice_alarm_notifications_total`).
#[derive(Debug, Default)]
pub struct NotificationCounters {
    /// Accepted by a webhook (2xx) or sent to a queue.
    pub delivered: AtomicU64,
    /// Webhook tries that failed and will be tried again.
    pub retried: AtomicU64,
    /// Given up: refused by the receiver, out of tries, or the queue send failed.
    pub failed: AtomicU64,
    /// Dropped because too many were waiting.
    pub dropped: AtomicU64,
}

impl NotificationCounters {
    /// Adds one to `counter`.
    pub fn add(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// (outcome, count) pairs.
    pub fn snapshot(&self) -> [(&'static str, u64); 4] {
        [
            ("delivered", self.delivered.load(Ordering::Relaxed)),
            ("retried", self.retried.load(Ordering::Relaxed)),
            ("failed", self.failed.load(Ordering::Relaxed)),
            ("dropped", self.dropped.load(Ordering::Relaxed)),
        ]
    }
}

/// One webhook delivery.
#[derive(Debug)]
struct Delivery {
    url: String,
    body: Bytes,
}

/// Sends webhooks in the background.
pub struct WebhookSender {
    policy: WebhookPolicy,
    tls: OutboundTls,
    queue: OnceLock<mpsc::Sender<Delivery>>,
    counters: Arc<NotificationCounters>,
}

impl WebhookSender {
    /// A sender; its tasks start with the first notification.
    pub fn new(policy: WebhookPolicy, tls: OutboundTls) -> Self {
        Self {
            policy,
            tls,
            queue: OnceLock::new(),
            counters: Arc::default(),
        }
    }

    /// The outcome counters, shared with the queue notifications.
    pub fn counters(&self) -> &NotificationCounters {
        &self.counters
    }

    /// Queues `body` for `url` without waiting. Must be called inside a
    /// Tokio runtime.
    pub fn send(&self, url: &str, body: &Value) {
        let queue = self.queue.get_or_init(|| {
            let (tx, rx) = mpsc::channel(self.policy.queue_capacity.max(1));
            let client = client(&self.policy, &self.tls);
            tokio::spawn(dispatch(
                rx,
                client,
                self.policy.clone(),
                self.counters.clone(),
            ));
            tx
        });
        let delivery = Delivery {
            url: url.to_string(),
            body: Bytes::from(serde_json::to_vec(body).unwrap_or_default()),
        };
        if let Err(e) = queue.try_send(delivery) {
            NotificationCounters::add(&self.counters.dropped);
            tracing::error!(url, error = %e, "alarm notification dropped: the webhook queue is full");
        }
    }
}

/// The client of all webhooks, for `http://` and `https://` URLs.
fn client(policy: &WebhookPolicy, tls: &OutboundTls) -> OutboundClient {
    let settings = ConnectionSettings {
        connect_timeout: Some(policy.timeout),
        ..ConnectionSettings::default()
    };
    sluice_outbound::client(tls, &settings)
}

/// Hands each delivery to its receiver's worker.
async fn dispatch(
    mut rx: mpsc::Receiver<Delivery>,
    client: OutboundClient,
    policy: WebhookPolicy,
    counters: Arc<NotificationCounters>,
) {
    let mut workers: HashMap<String, mpsc::Sender<Bytes>> = HashMap::new();
    while let Some(d) = rx.recv().await {
        let worker = workers.entry(d.url.clone()).or_insert_with(|| {
            let (tx, rx) = mpsc::channel(policy.queue_capacity.max(1));
            tokio::spawn(deliver_all(
                client.clone(),
                d.url.clone(),
                rx,
                policy.clone(),
                counters.clone(),
            ));
            tx
        });
        if let Err(e) = worker.try_send(d.body) {
            NotificationCounters::add(&counters.dropped);
            tracing::error!(url = d.url, error = %e, "alarm notification dropped: too many waiting for this receiver");
        }
    }
}

/// Delivers one receiver's notifications in order.
async fn deliver_all(
    client: OutboundClient,
    url: String,
    mut rx: mpsc::Receiver<Bytes>,
    policy: WebhookPolicy,
    counters: Arc<NotificationCounters>,
) {
    while let Some(body) = rx.recv().await {
        let mut failures = 0;
        loop {
            match post(&client, &url, body.clone(), policy.timeout).await {
                Ok(()) => {
                    NotificationCounters::add(&counters.delivered);
                    break;
                }
                Err(Failure::Permanent(e)) => {
                    NotificationCounters::add(&counters.failed);
                    tracing::error!(url, error = e, "alarm webhook refused the notification");
                    break;
                }
                Err(Failure::Retry(e)) => {
                    failures += 1;
                    if failures >= policy.max_attempts {
                        NotificationCounters::add(&counters.failed);
                        tracing::error!(url, error = e, tries = failures, "alarm webhook gave up");
                        break;
                    }
                    NotificationCounters::add(&counters.retried);
                    let wait = policy.backoff(failures);
                    tracing::warn!(
                        url,
                        error = e,
                        retry_in_ms = wait.as_millis() as u64,
                        "alarm webhook failed; retrying"
                    );
                    tokio::time::sleep(wait).await;
                }
            }
        }
    }
}

enum Failure {
    /// Down, timed out, TLS failure, 5xx or 429: try again later.
    Retry(String),
    /// Any other refusal: trying again would not help.
    Permanent(String),
}

async fn post(
    client: &OutboundClient,
    url: &str,
    body: Bytes,
    timeout: Duration,
) -> Result<(), Failure> {
    let request = http::Request::post(url)
        .header(http::header::CONTENT_TYPE, "application/json")
        .header(http::header::USER_AGENT, "sluice-alarms")
        .body(Full::new(body))
        .map_err(|e| Failure::Permanent(e.to_string()))?;
    let response = match tokio::time::timeout(timeout, client.request(request)).await {
        Err(_) => return Err(Failure::Retry("timed out".into())),
        Ok(Err(e)) => return Err(Failure::Retry(error_chain(&e))),
        Ok(Ok(r)) => r,
    };
    let status = response.status();
    // Read the answer so the connection can be reused.
    let _ = tokio::time::timeout(timeout, response.into_body().collect()).await;
    if status.is_success() {
        Ok(())
    } else if status.is_server_error() || status == http::StatusCode::TOO_MANY_REQUESTS {
        Err(Failure::Retry(format!("HTTP {status}")))
    } else {
        Err(Failure::Permanent(format!("HTTP {status}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An https:// receiver whose certificate no trusted root issued: the
    /// try fails as one to retry, and the error (the text logged) names
    /// the TLS failure.
    #[tokio::test]
    async fn untrusted_certificate_is_a_retry_naming_the_tls_error() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("https://{}/hook", listener.local_addr().unwrap());
        let cert = rcgen::generate_simple_self_signed(vec!["127.0.0.1".into()]).unwrap();
        let key = rustls::pki_types::PrivatePkcs8KeyDer::from(cert.signing_key.serialize_der());
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert.cert.der().clone()], key.into())
        .unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        tokio::spawn(async move {
            while let Ok((conn, _)) = listener.accept().await {
                let _ = acceptor.accept(conn).await;
            }
        });
        let policy = WebhookPolicy::default();
        let client = client(&policy, &OutboundTls::default());
        match post(&client, &url, Bytes::from_static(b"{}"), policy.timeout).await {
            Err(Failure::Retry(e)) => {
                assert!(e.contains("invalid peer certificate: UnknownIssuer"), "{e}")
            }
            Err(Failure::Permanent(e)) => panic!("retried like a receiver that is down: {e}"),
            Ok(()) => panic!("an untrusted certificate was accepted"),
        }
    }

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let p = WebhookPolicy {
            first_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(500),
            ..Default::default()
        };
        let waits: Vec<u128> = (1..=5).map(|n| p.backoff(n).as_millis()).collect();
        assert_eq!(waits, vec![100, 200, 400, 500, 500]);
    }
}

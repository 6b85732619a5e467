//! One batch's delivery: the POST to the handler, the visibility kept up
//! while it runs (rule C4), and its answer applied (rule C2): on a FIFO
//! queue with the group rule (C3), permanent items dead-lettered (C5).

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use sluice_broker::receipts::HandleSealer;
use sluice_broker::{Broker, Nack, ReceivedMessage, VisibilityChange};
use sluice_core::error::error_chain;
use sluice_outbound::{ConnectionSettings, OutboundClient, OutboundTls};

use super::config::ConsumerSpec;
use super::event::{EventSource, build_event, seal_receipt_handles};
use super::outcome::{
    FailureKind, ItemFailure, MAX_REASON_CHARS, Outcome, answer_failure_reason, hold_back_groups,
    read_success, retry_after,
};
use crate::metrics::ConsumerMetrics;

/// The client of all handlers, `http://` and `https://`.
pub type HandlerClient = OutboundClient;

/// The header with which Lambda's Invoke reports a function's error.
const FUNCTION_ERROR: &str = "x-amz-function-error";

/// Shortest wait between two visibility extensions.
const MIN_HEARTBEAT: Duration = Duration::from_millis(500);

/// A new handler client, checking `https://` handlers against `tls`.
pub fn handler_client(tls: &OutboundTls) -> HandlerClient {
    sluice_outbound::client(tls, &ConnectionSettings::default())
}

/// What a delivery needs besides its messages.
pub struct Delivery<B> {
    /// The engine.
    pub broker: B,
    /// The consumer.
    pub spec: ConsumerSpec,
    /// The queue's ARN and region, for the records.
    pub source: EventSource,
    /// The HTTP client.
    pub client: HandlerClient,
    /// Counters.
    pub metrics: ConsumerMetrics,
    /// The queue is FIFO: a failed item holds back the rest of its group.
    pub fifo: bool,
    /// Seals the handles of the event (rule A3), keyed at the first
    /// delivery with the engine's secret.
    pub sealer: tokio::sync::OnceCell<HandleSealer>,
    /// The messages delivered; the others are deleted (rule C13).
    pub filter: super::filter::Filter,
    /// Messages whose work is completed are deleted undelivered (rule I1).
    pub skip_completed: Option<super::completed::SkipCompleted>,
}

impl<B: Broker> Delivery<B> {
    /// POSTs `messages` (received with `visibility` seconds) and applies the
    /// answer; returns what became of the batch.
    pub async fn deliver(&self, messages: &[ReceivedMessage], visibility: u32) -> Outcome {
        let mut event = build_event(&self.source, messages);
        let sealer = self
            .sealer
            .get_or_try_init(|| async {
                Ok::<_, sluice_core::SqsError>(HandleSealer::new(
                    &self.broker.handle_secret().await?,
                ))
            })
            .await;
        match sealer {
            Ok(sealer) => {
                seal_receipt_handles(&mut event, |h| sealer.seal(&self.spec.queue, h));
            }
            Err(e) => {
                // Never hand out an engine handle: the batch comes back
                // after its visibility timeout.
                tracing::warn!(consumer = %self.spec.name, error = %e, "cannot read the receipt handle key");
                return Outcome::Failed(FailureKind::Connection);
            }
        }
        let body = Bytes::from(event.to_json());
        let ids: BTreeSet<&str> = messages.iter().map(|m| m.message_id.as_str()).collect();
        let handles: Vec<String> = messages.iter().map(|m| m.receipt_handle.clone()).collect();
        let invoked = self.invoke(body, &ids);
        let posted = tokio::time::Instant::now();
        let (outcome, reason) = self.keeping_invisible(&handles, visibility, invoked).await;
        if outcome != Outcome::Unreached {
            self.metrics
                .delivered(&self.spec.name, messages.len(), posted.elapsed());
        }
        let keep = match &outcome {
            Outcome::AllSucceeded => BTreeMap::new(),
            Outcome::Partial(failed) => {
                self.metrics.failed(&self.spec.name, "partial");
                let named = messages.iter().filter_map(|m| {
                    let f = failed.get(&m.message_id).filter(|f| !f.permanent)?;
                    let reason = f
                        .reason
                        .clone()
                        .unwrap_or_else(|| "named in the handler's batchItemFailures".to_string());
                    Some((m, reason, f.class.clone()))
                });
                self.record_failures(named.collect(), visibility).await;
                if self.fifo {
                    let batch: Vec<(&str, Option<&str>)> = messages
                        .iter()
                        .map(|m| (m.message_id.as_str(), m.group_id.as_deref()))
                        .collect();
                    hold_back_groups(&batch, failed)
                } else {
                    failed.clone()
                }
            }
            Outcome::Unreached => {
                self.metrics
                    .failed(&self.spec.name, FailureKind::Connection.as_str());
                tracing::warn!(
                    consumer = %self.spec.name,
                    queue = %self.spec.queue,
                    messages = messages.len(),
                    reason = reason.as_deref().unwrap_or(""),
                    "handler unreachable: the batch is kept and posted again after a back-off pause"
                );
                return outcome;
            }
            Outcome::Throttled(wait) => {
                self.metrics
                    .failed(&self.spec.name, FailureKind::Throttled.as_str());
                tracing::warn!(
                    consumer = %self.spec.name,
                    queue = %self.spec.queue,
                    messages = messages.len(),
                    retry_after_seconds = wait.as_secs(),
                    "handler asked to slow down: no new batch until its Retry-After has passed"
                );
                return outcome;
            }
            Outcome::Failed(kind) => {
                self.metrics.failed(&self.spec.name, kind.as_str());
                tracing::warn!(
                    consumer = %self.spec.name,
                    queue = %self.spec.queue,
                    messages = messages.len(),
                    failure = kind.as_str(),
                    reason = reason.as_deref().unwrap_or(""),
                    "batch failed: its messages come back after their visibility timeout"
                );
                let reason = reason.unwrap_or_else(|| kind.as_str().to_string());
                let all = messages.iter().map(|m| (m, reason.clone(), None)).collect();
                self.record_failures(all, visibility).await;
                return outcome;
            }
        };
        self.dead_letter(messages, &keep).await;
        let done: Vec<String> = messages
            .iter()
            .filter(|m| !keep.contains_key(&m.message_id))
            .map(|m| m.receipt_handle.clone())
            .collect();
        self.delete(done).await;
        outcome
    }

    /// The POST, bounded by the consumer's timeout, and the answer read;
    /// with a whole-batch failure, its reason (rule C11).
    async fn invoke(&self, body: Bytes, ids: &BTreeSet<&str>) -> (Outcome, Option<String>) {
        let request = http::Request::post(self.spec.url.as_str())
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(Full::new(body));
        let Ok(request) = request else {
            // The URL was checked at start; a request that cannot be built
            // is counted as a connection failure.
            return (
                Outcome::Failed(FailureKind::Connection),
                Some("the handler's URL cannot be requested".into()),
            );
        };
        let call = async {
            let response = self.client.request(request).await.map_err(|e| {
                let chain = error_chain(&e);
                tracing::debug!(consumer = %self.spec.name, error = %chain, "handler unreachable");
                // No connection: the request never left, the handler
                // never saw the batch (rule C12).
                (e.is_connect(), format!("handler unreachable: {chain}"))
            })?;
            let status = response.status();
            let function_error = response.headers().contains_key(FUNCTION_ERROR);
            let wait = retry_after(
                status.as_u16(),
                response
                    .headers()
                    .get(http::header::RETRY_AFTER)
                    .and_then(|v| v.to_str().ok()),
                std::time::SystemTime::now(),
            );
            let body = response
                .into_body()
                .collect()
                .await
                .map_err(|e| (false, format!("answer broken off: {}", error_chain(&e))))?
                .to_bytes();
            Ok::<_, (bool, String)>((status, function_error, wait, body))
        };
        let failed = |kind, status: http::StatusCode, body: &[u8]| {
            let reason = answer_failure_reason(kind, status.as_u16(), body);
            (Outcome::Failed(kind), Some(reason))
        };
        match tokio::time::timeout(self.spec.timeout, call).await {
            Err(_) => (
                Outcome::Failed(FailureKind::Timeout),
                Some(format!(
                    "handler timed out after {} s",
                    self.spec.timeout.as_secs()
                )),
            ),
            Ok(Err((true, reason))) => (Outcome::Unreached, Some(reason)),
            Ok(Err((false, reason))) => (Outcome::Failed(FailureKind::Connection), Some(reason)),
            Ok(Ok((status, true, _, body))) => failed(FailureKind::FunctionError, status, &body),
            Ok(Ok((_, false, Some(wait), _))) => (Outcome::Throttled(wait), None),
            Ok(Ok((status, false, None, body))) if !status.is_success() => {
                failed(FailureKind::Status(status.as_u16()), status, &body)
            }
            Ok(Ok((status, false, None, body))) => {
                match read_success(&body, ids, self.spec.report_batch_item_failures) {
                    Outcome::Failed(kind) => failed(kind, status, &body),
                    outcome => (outcome, None),
                }
            }
        }
    }

    /// Keeps each failure's reason with its message as its last failure
    /// reason (rule C11), so that the dead-letter queue shows it when the
    /// message finally moves there by maxReceiveCount. The message comes
    /// back after a visibility timeout from now, or after the queue's
    /// `SluiceRetryBackoff` when it has one, as without a reason. One that
    /// cannot be recorded (its handle expired) comes back as it would have.
    async fn record_failures(
        &self,
        failed: Vec<(&ReceivedMessage, String, Option<String>)>,
        visibility: u32,
    ) {
        if failed.is_empty() {
            return;
        }
        let retry_after_seconds = match self.broker.get_queue(&self.spec.queue).await {
            Ok(meta) if meta.config.backoff().is_some() => None,
            _ => Some(visibility),
        };
        for (m, reason, class) in failed {
            let reason = format!("consumer {}: {reason}", self.spec.name);
            let nack = Nack {
                reason: Some(reason.chars().take(MAX_REASON_CHARS).collect()),
                class,
                permanent: false,
                retry_after_seconds,
            };
            if let Err(e) = self
                .broker
                .nack_message(&self.spec.queue, &m.receipt_handle, nack)
                .await
            {
                tracing::debug!(consumer = %self.spec.name, message = %m.message_id, error = %e, "cannot record a failure reason");
            }
        }
    }

    /// Gives a batch whose handler could not be reached a full visibility
    /// timeout again, to be posted again after the back-off pause (rule
    /// C12); false when some of its messages are no longer held (their
    /// handles expired, the queue was purged): the batch is then let go
    /// and what is left of it comes back as after any failure.
    pub async fn keep(&self, messages: &[ReceivedMessage], visibility: u32) -> bool {
        let handles: Vec<String> = messages.iter().map(|m| m.receipt_handle.clone()).collect();
        self.extend(&handles, visibility).await == 0
    }

    /// Keeps `messages` invisible until `wait` ends, without delivering
    /// them (a handler's Retry-After, rule C7).
    pub async fn hold<F: Future>(&self, messages: &[ReceivedMessage], visibility: u32, wait: F) {
        let handles: Vec<String> = messages.iter().map(|m| m.receipt_handle.clone()).collect();
        self.keeping_invisible(&handles, visibility, wait).await;
    }

    /// Runs `work`, and every half visibility timeout while it runs gives
    /// the batch's messages a full visibility timeout again, so that a slow
    /// handler's messages are not received a second time (rule C4).
    async fn keeping_invisible<F: Future>(
        &self,
        handles: &[String],
        visibility: u32,
        work: F,
    ) -> F::Output {
        if visibility == 0 {
            return work.await;
        }
        let every = (Duration::from_secs(u64::from(visibility)) / 2).max(MIN_HEARTBEAT);
        let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        tokio::pin!(work);
        loop {
            tokio::select! {
                out = &mut work => return out,
                _ = ticker.tick() => {
                    self.extend(handles, visibility).await;
                }
            }
        }
    }

    /// Gives `handles` a full visibility timeout again; how many could not
    /// be extended.
    pub(super) async fn extend(&self, handles: &[String], visibility: u32) -> usize {
        let changes = handles
            .iter()
            .map(|h| VisibilityChange {
                receipt_handle: h.clone(),
                visibility_timeout: visibility,
            })
            .collect();
        match self
            .broker
            .change_visibility(&self.spec.queue, changes)
            .await
        {
            Ok(results) => {
                let lost = results.iter().filter(|r| r.is_err()).count();
                if lost > 0 {
                    tracing::warn!(consumer = %self.spec.name, messages = lost, "cannot extend the visibility of messages in delivery");
                }
                lost
            }
            Err(e) => {
                tracing::warn!(consumer = %self.spec.name, error = %e, "cannot extend the visibility of a batch in delivery");
                handles.len()
            }
        }
    }

    /// Moves the items the handler marked permanent to the queue's
    /// dead-letter queue now, their reason kept as the last failure reason
    /// (rule C5). One that cannot move (the queue has no dead-letter queue)
    /// stays in flight and comes back like any failed item.
    async fn dead_letter(
        &self,
        messages: &[ReceivedMessage],
        failed: &BTreeMap<String, ItemFailure>,
    ) {
        for m in messages {
            let Some(failure) = failed.get(&m.message_id).filter(|f| f.permanent) else {
                continue;
            };
            let reason = failure
                .reason
                .clone()
                .unwrap_or_else(|| format!("marked permanent by consumer {}", self.spec.name));
            let nack = Nack {
                reason: Some(reason),
                class: failure.class.clone(),
                permanent: true,
                retry_after_seconds: None,
            };
            match self
                .broker
                .nack_message(&self.spec.queue, &m.receipt_handle, nack)
                .await
            {
                Ok(()) => self.metrics.dead_lettered(&self.spec.name),
                Err(e) => {
                    tracing::warn!(consumer = %self.spec.name, message = %m.message_id, error = %e, "cannot move a permanent failure to the dead-letter queue; it is retried instead");
                }
            }
        }
    }

    async fn delete(&self, handles: Vec<String>) {
        if handles.is_empty() {
            return;
        }
        let count = handles.len();
        match self.broker.delete_messages(&self.spec.queue, handles).await {
            Ok(results) => {
                let failed = results.iter().filter(|r| r.is_err()).count();
                self.metrics.deleted(&self.spec.name, count - failed);
                if failed > 0 {
                    tracing::warn!(consumer = %self.spec.name, messages = failed, "cannot delete handled messages");
                }
            }
            Err(e) => {
                tracing::warn!(consumer = %self.spec.name, error = %e, "cannot delete handled messages");
            }
        }
    }
}

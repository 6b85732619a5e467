//! Gathering one batch: a long poll for the first messages, then, with a
//! batching window, more receives until the batch is full, the window has
//! passed or the bodies reach Lambda's payload limit, whichever comes first
//! (Lambda's `MaximumBatchingWindowInSeconds`). Each receive drops the
//! messages the consumer's filter does not admit (rule C13) and, when told
//! to, those whose work is completed (rule I1).

use std::time::Duration;

use sluice_broker::{Broker, ReceiveOptions, ReceivedMessage};
use sluice_core::SqsError;
use tokio::time::Instant;

use super::deliver::Delivery;
use super::event::record_value;

/// The longest long poll of a receive (SQS's limit).
pub const POLL_WAIT: Duration = Duration::from_secs(20);

/// Most messages one receive returns (SQS's limit).
const RECEIVE_LIMIT: u32 = 10;

/// A batch stops growing once its bodies reach this many bytes: Lambda's
/// limit on an invocation's payload (6 MB).
pub const MAX_BATCH_BYTES: usize = 6 * 1000 * 1000;

impl<B: Broker> Delivery<B> {
    /// Receives one batch, its messages invisible for `visibility` seconds
    /// from their receive. While a window gathers, the messages already
    /// received get a full visibility timeout again every half of it, as a
    /// running delivery's do (rule C4). Empty when the first long poll
    /// found nothing.
    pub async fn gather(&self, visibility: u32) -> Result<Vec<ReceivedMessage>, SqsError> {
        let spec = &self.spec;
        let mut batch = self
            .receive(spec.batch_size.min(RECEIVE_LIMIT), visibility, POLL_WAIT)
            .await?;
        if batch.is_empty() || spec.batching_window.is_zero() {
            return Ok(batch);
        }
        let deadline = Instant::now() + spec.batching_window;
        let refresh_every = (Duration::from_secs(u64::from(visibility)) / 2).max(MIN_REFRESH);
        let mut refreshed = Instant::now();
        let mut bytes: usize = batch.iter().map(|m| m.body.len()).sum();
        while (batch.len() as u32) < spec.batch_size && bytes < MAX_BATCH_BYTES {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            if visibility > 0 && now - refreshed >= refresh_every {
                let handles: Vec<String> = batch.iter().map(|m| m.receipt_handle.clone()).collect();
                self.extend(&handles, visibility).await;
                refreshed = now;
            }
            let mut wait = (deadline - now).min(POLL_WAIT);
            if visibility > 0 {
                wait = wait.min(refresh_every);
            }
            let want = (spec.batch_size - batch.len() as u32).min(RECEIVE_LIMIT);
            // A failed receive ends the gathering: what is gathered is
            // delivered rather than left to time out.
            let Ok(more) = self.receive(want, visibility, wait).await else {
                break;
            };
            bytes += more.iter().map(|m| m.body.len()).sum::<usize>();
            batch.extend(more);
        }
        Ok(batch)
    }

    async fn receive(
        &self,
        max_messages: u32,
        visibility: u32,
        wait: Duration,
    ) -> Result<Vec<ReceivedMessage>, SqsError> {
        // The visibility is given explicitly: the delivery's extensions
        // then use the very timeout its messages got, even if the queue's
        // changes during the long poll.
        let options = ReceiveOptions {
            max_messages,
            visibility_timeout: Some(visibility),
            wait,
            attempt_id: None,
        };
        let mut received = self
            .broker
            .receive_messages(&self.spec.queue, options)
            .await
            .map_err(SqsError::from)?;
        // Hashed here, together: the filter's record and the event's
        // then take the digest as it is.
        ReceivedMessage::fill_body_digests(&mut received);
        let admitted = self.drop_filtered(received).await;
        Ok(self.drop_completed(admitted).await)
    }

    /// The messages the consumer's filter admits; the others are deleted
    /// without delivery, as Lambda deletes them (rule C13). One that
    /// cannot be deleted comes back after its visibility timeout and is
    /// filtered again.
    async fn drop_filtered(&self, received: Vec<ReceivedMessage>) -> Vec<ReceivedMessage> {
        if self.filter.is_empty() || received.is_empty() {
            return received;
        }
        let (admitted, dropped): (Vec<_>, Vec<_>) = received.into_iter().partition(|m| {
            // A record that could not be read back is delivered, not
            // dropped: the handler decides.
            record_value(&self.source, m).is_none_or(|r| self.filter.admits(&r))
        });
        if dropped.is_empty() {
            return admitted;
        }
        let handles = dropped.into_iter().map(|m| m.receipt_handle).collect();
        self.delete_undelivered(handles, Undelivered::Filtered)
            .await;
        admitted
    }

    /// The messages whose key is not completed; the others are deleted
    /// without delivery. A lookup that fails delivers the message: doing
    /// the work twice is the consumer's risk anyway, losing it is not.
    pub(crate) async fn drop_completed(
        &self,
        received: Vec<ReceivedMessage>,
    ) -> Vec<ReceivedMessage> {
        let Some(skip) = &self.skip_completed else {
            return received;
        };
        // The messages' keys, those that have one, looked up in one call.
        let keyed: Vec<(usize, String)> = (received.iter().enumerate())
            .filter_map(|(i, m)| Some((i, format!("{}/{}", skip.account, skip.key.key_of(m)?))))
            .collect();
        let keys: Vec<String> = keyed.iter().map(|(_, k)| k.clone()).collect();
        let answers = self
            .broker
            .idempotency_keys_completed(&keys)
            .await
            .unwrap_or_default();
        let completed: std::collections::HashSet<usize> = (keyed.iter().zip(&answers))
            .filter(|(_, done)| **done)
            .map(|((i, _), _)| *i)
            .collect();
        let mut kept = Vec::with_capacity(received.len());
        let mut done = Vec::new();
        for (i, m) in received.into_iter().enumerate() {
            if completed.contains(&i) {
                done.push(m.receipt_handle);
            } else {
                kept.push(m);
            }
        }
        if !done.is_empty() {
            self.delete_undelivered(done, Undelivered::Completed).await;
        }
        kept
    }

    /// Deletes messages the handler is not to get and counts them; one
    /// that cannot be deleted comes back after its visibility timeout and
    /// is looked at again.
    async fn delete_undelivered(&self, handles: Vec<String>, why: Undelivered) {
        let name = &self.spec.name;
        match self.broker.delete_messages(&self.spec.queue, handles).await {
            Ok(results) => {
                let deleted = results.iter().filter(|r| r.is_ok()).count();
                match why {
                    Undelivered::Filtered => self.metrics.filtered(name, deleted),
                    Undelivered::Completed => self.metrics.skipped_completed(name, deleted),
                }
            }
            Err(e) => {
                tracing::warn!(consumer = %name, error = %e, messages = why.as_str(), "cannot delete messages the handler is not to get");
            }
        }
    }
}

/// Why messages are deleted without delivery.
#[derive(Debug, Clone, Copy)]
enum Undelivered {
    /// They matched none of the filter patterns (rule C13).
    Filtered,
    /// Their idempotency key is completed (rule I1).
    Completed,
}

impl Undelivered {
    fn as_str(self) -> &'static str {
        match self {
            Self::Filtered => "filtered out",
            Self::Completed => "work completed",
        }
    }
}

/// Shortest wait between two refreshes of a gathering batch's visibility.
const MIN_REFRESH: Duration = Duration::from_millis(500);

//! A consumer's settings, and the checks made before it starts.

use std::time::Duration;

use sluice_broker::QueueMeta;

/// Most messages in one delivered batch of a standard queue (Lambda's limit).
pub const MAX_BATCH_SIZE: u32 = 10_000;

/// Largest batch without a batching window (one receive's worth).
pub const MAX_BATCH_WITHOUT_WINDOW: u32 = 10;

/// Fewest batches in flight a consumer may be limited to (Lambda's
/// `MaximumConcurrency` range).
pub const MIN_CONCURRENCY: u32 = 2;

/// Most batches in flight at once.
pub const MAX_CONCURRENCY: u32 = 1000;

/// Longest batching window (Lambda's limit).
pub const MAX_BATCHING_WINDOW: Duration = Duration::from_secs(300);

/// Most messages in one delivered batch of a FIFO queue (Lambda's limit).
pub const MAX_FIFO_BATCH_SIZE: u32 = 10;

/// One push consumer: where a queue's batches are POSTed, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumerSpec {
    /// Unique name, used in logs and counters.
    pub name: String,
    /// The queue read (its name on this server).
    pub queue: String,
    /// The handler's `http://` or `https://` URL.
    pub url: String,
    /// Most messages per batch: 1–10,000 on a standard queue, 1–10 on a
    /// FIFO queue; above 10 needs a batching window.
    pub batch_size: u32,
    /// How long to gather a batch after its first message (Lambda's
    /// `MaximumBatchingWindowInSeconds`), 0–300 s; zero delivers what one
    /// receive returns. Not on FIFO queues.
    pub batching_window: Duration,
    /// Most batches in flight at once, 2–1,000; fewer while the backlog is
    /// small or the handler fails.
    pub max_concurrency: u32,
    /// The handler's time limit; a longer delivery fails its batch.
    pub timeout: Duration,
    /// Read the answer's `batchItemFailures` (Lambda's
    /// `ReportBatchItemFailures`); otherwise any 2xx deletes the batch.
    pub report_batch_item_failures: bool,
    /// Lambda's filter patterns (JSON texts, up to 5): a message matching
    /// none is deleted without delivery (rule C13). Empty: no filter.
    pub filter: Vec<String>,
    /// `message_id` or a `$.`-path into the JSON body: messages whose key
    /// is a completed idempotency key are deleted without delivery (rule
    /// I1). `None`: every message is delivered.
    pub skip_completed: Option<String>,
}

/// Why a consumer is refused at start.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConsumerConfigError {
    /// A field is out of its range.
    #[error("consumer {name}: {message}")]
    Invalid {
        /// The consumer.
        name: String,
        /// What is wrong.
        message: String,
    },
    /// Two consumers share a name.
    #[error("consumer {0} is declared twice")]
    Duplicate(String),
}

impl ConsumerSpec {
    /// Checks the settings alone (not the queue's).
    pub fn validate(&self) -> Result<(), ConsumerConfigError> {
        if self.name.is_empty() {
            return Err(self.invalid("name must not be empty".into()));
        }
        if !(1..=MAX_BATCH_SIZE).contains(&self.batch_size) {
            return Err(self.invalid(format!(
                "batch_size must be 1 to {MAX_BATCH_SIZE}, got {}",
                self.batch_size
            )));
        }
        if self.batching_window > MAX_BATCHING_WINDOW {
            return Err(self.invalid(format!(
                "batching_window_seconds must be 0 to {}, got {}",
                MAX_BATCHING_WINDOW.as_secs(),
                self.batching_window.as_secs()
            )));
        }
        if self.batch_size > MAX_BATCH_WITHOUT_WINDOW && self.batching_window.is_zero() {
            return Err(self.invalid(format!(
                "batch_size {} above {MAX_BATCH_WITHOUT_WINDOW} needs batching_window_seconds of \
                 at least 1",
                self.batch_size
            )));
        }
        if !(MIN_CONCURRENCY..=MAX_CONCURRENCY).contains(&self.max_concurrency) {
            return Err(self.invalid(format!(
                "max_concurrency must be {MIN_CONCURRENCY} to {MAX_CONCURRENCY}, got {}",
                self.max_concurrency
            )));
        }
        if self.timeout.is_zero() {
            return Err(self.invalid("timeout_seconds must be at least 1".into()));
        }
        let scheme_known = self.url.starts_with("http://") || self.url.starts_with("https://");
        if !scheme_known || self.url.parse::<http::Uri>().is_err() {
            return Err(self.invalid(format!(
                "url must be an http:// or https:// URL, got {:?}",
                self.url
            )));
        }
        super::filter::Filter::compile(&self.filter).map_err(|e| self.invalid(e.to_string()))?;
        if let Some(key) = &self.skip_completed {
            super::completed::CompletedKey::parse(key).map_err(|e| self.invalid(e))?;
        }
        Ok(())
    }

    /// Checks the settings against the queue read: as Lambda requires, the
    /// queue's visibility timeout must cover the handler's time limit, or a
    /// message would be delivered again while its first delivery runs.
    pub fn validate_against(&self, queue: &QueueMeta) -> Result<(), ConsumerConfigError> {
        if queue.config.fifo && self.batch_size > MAX_FIFO_BATCH_SIZE {
            return Err(self.invalid(format!(
                "batch_size must be 1 to {MAX_FIFO_BATCH_SIZE} for FIFO queue {}, got {}",
                self.queue, self.batch_size
            )));
        }
        if queue.config.fifo && !self.batching_window.is_zero() {
            return Err(self.invalid(format!(
                "batching_window_seconds must be 0 for FIFO queue {}: as on Lambda, a FIFO \
                 queue's batches have no window",
                self.queue
            )));
        }
        let visibility = u64::from(queue.config.visibility_timeout);
        if self.timeout.as_secs() > visibility {
            return Err(self.invalid(format!(
                "timeout_seconds ({}) exceeds the visibility timeout of queue {} ({visibility} s); \
                 raise the queue's VisibilityTimeout or lower the timeout",
                self.timeout.as_secs(),
                self.queue
            )));
        }
        Ok(())
    }

    fn invalid(&self, message: String) -> ConsumerConfigError {
        ConsumerConfigError::Invalid {
            name: self.name.clone(),
            message,
        }
    }
}

/// Checks every consumer alone, and that names are unique.
pub fn validate_all(specs: &[ConsumerSpec]) -> Result<(), ConsumerConfigError> {
    let mut seen = std::collections::BTreeSet::new();
    for spec in specs {
        spec.validate()?;
        if !seen.insert(spec.name.as_str()) {
            return Err(ConsumerConfigError::Duplicate(spec.name.clone()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn spec() -> ConsumerSpec {
        ConsumerSpec {
            name: "w".into(),
            queue: "q".into(),
            url: "http://127.0.0.1:9000/invoke".into(),
            batch_size: 10,
            batching_window: Duration::ZERO,
            max_concurrency: 2,
            timeout: Duration::from_secs(30),
            report_batch_item_failures: true,
            filter: Vec::new(),
            skip_completed: None,
        }
    }

    fn queue(visibility: u32) -> QueueMeta {
        let mut meta = QueueMeta {
            name: "q".into(),
            config: Default::default(),
            tags: Default::default(),
            created_at: 0,
            modified_at: 0,
        };
        meta.config.visibility_timeout = visibility;
        meta
    }

    /// C3: a FIFO queue takes batches of at most 10 and no batching window.
    #[test]
    fn c3_fifo_limits() {
        let mut fifo = queue(30);
        fifo.config.fifo = true;
        assert_eq!(spec().validate_against(&fifo), Ok(()));
        let big = ConsumerSpec {
            batch_size: 11,
            batching_window: Duration::from_secs(1),
            ..spec()
        };
        assert_eq!(big.validate(), Ok(()));
        assert_eq!(big.validate_against(&queue(30)), Ok(()));
        let err = big.validate_against(&fifo).unwrap_err().to_string();
        assert!(
            err.contains("batch_size must be 1 to 10 for FIFO queue q"),
            "{err}"
        );
        let windowed = ConsumerSpec {
            batching_window: Duration::from_secs(1),
            ..spec()
        };
        let err = windowed.validate_against(&fifo).unwrap_err().to_string();
        assert!(
            err.contains("batching_window_seconds must be 0 for FIFO"),
            "{err}"
        );
    }

    /// C4: a handler time limit longer than the visibility timeout is refused, by name.
    #[test]
    fn c4_timeout_over_visibility_is_refused() {
        let s = spec();
        assert_eq!(s.validate_against(&queue(30)), Ok(()));
        let err = s.validate_against(&queue(29)).unwrap_err().to_string();
        assert!(
            err.contains("consumer w") && err.contains("visibility timeout of queue q (29 s)"),
            "{err}"
        );
    }

    #[test]
    fn ranges_and_names_are_checked() {
        assert_eq!(spec().validate(), Ok(()));
        let large = ConsumerSpec {
            batch_size: MAX_BATCH_SIZE,
            batching_window: MAX_BATCHING_WINDOW,
            ..spec()
        };
        assert_eq!(large.validate(), Ok(()));
        for bad in [
            ConsumerSpec {
                batch_size: 0,
                ..spec()
            },
            ConsumerSpec {
                batch_size: 11,
                ..spec()
            },
            ConsumerSpec {
                batch_size: MAX_BATCH_SIZE + 1,
                batching_window: Duration::from_secs(1),
                ..spec()
            },
            ConsumerSpec {
                batching_window: MAX_BATCHING_WINDOW + Duration::from_secs(1),
                ..spec()
            },
            ConsumerSpec {
                max_concurrency: 1,
                ..spec()
            },
            ConsumerSpec {
                max_concurrency: MAX_CONCURRENCY + 1,
                ..spec()
            },
            ConsumerSpec {
                timeout: Duration::ZERO,
                ..spec()
            },
            ConsumerSpec {
                url: "ftp://x/".into(),
                ..spec()
            },
            ConsumerSpec {
                url: "http://".into(),
                ..spec()
            },
            ConsumerSpec {
                url: "https://".into(),
                ..spec()
            },
        ] {
            assert!(bad.validate().is_err(), "{bad:?}");
        }
        assert_eq!(
            validate_all(&[spec(), spec()]),
            Err(ConsumerConfigError::Duplicate("w".into()))
        );
    }
}

//! The consumers created at run time, saved in `consumers.json` in the data
//! directory so that they survive a restart (rule C9), as `alarms.json`
//! keeps the alarms defined through the API; on storage several nodes
//! share, the same record is kept there as JSON instead.

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::config::ConsumerSpec;

/// One saved consumer: its settings, and whether PauseConsumer stopped it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedConsumer {
    /// Unique name.
    pub name: String,
    /// The queue read.
    pub queue: String,
    /// The handler's URL.
    pub url: String,
    /// Most messages per batch.
    pub batch_size: u32,
    /// Seconds to gather a batch.
    pub batching_window_seconds: u64,
    /// Most batches in flight.
    pub max_concurrency: u32,
    /// The handler's time limit, seconds.
    pub timeout_seconds: u64,
    /// Read `batchItemFailures`.
    pub report_batch_item_failures: bool,
    /// Stopped by PauseConsumer.
    #[serde(default)]
    pub stopped: bool,
    /// The filter patterns (rule C13).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub filter: Vec<String>,
    /// Which key's completion skips a message (rule I1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip_completed: Option<String>,
}

impl SavedConsumer {
    /// The saved form of `spec`.
    pub fn new(spec: &ConsumerSpec, stopped: bool) -> Self {
        Self {
            name: spec.name.clone(),
            queue: spec.queue.clone(),
            url: spec.url.clone(),
            batch_size: spec.batch_size,
            batching_window_seconds: spec.batching_window.as_secs(),
            max_concurrency: spec.max_concurrency,
            timeout_seconds: spec.timeout.as_secs(),
            report_batch_item_failures: spec.report_batch_item_failures,
            stopped,
            filter: spec.filter.clone(),
            skip_completed: spec.skip_completed.clone(),
        }
    }

    /// The settings saved.
    pub fn spec(&self) -> ConsumerSpec {
        ConsumerSpec {
            name: self.name.clone(),
            queue: self.queue.clone(),
            url: self.url.clone(),
            batch_size: self.batch_size,
            batching_window: Duration::from_secs(self.batching_window_seconds),
            max_concurrency: self.max_concurrency,
            timeout: Duration::from_secs(self.timeout_seconds),
            report_batch_item_failures: self.report_batch_item_failures,
            filter: self.filter.clone(),
            skip_completed: self.skip_completed.clone(),
        }
    }
}

/// The record shared storage keeps of `saved`.
pub fn to_stored(
    saved: &SavedConsumer,
) -> Result<sluice_broker::StoredConsumer, serde_json::Error> {
    Ok(sluice_broker::StoredConsumer {
        name: saved.name.clone(),
        definition: serde_json::to_string(saved)?,
    })
}

/// The consumer a shared storage's record holds; `None` (logged) when it
/// cannot be read, e.g. written by a newer server.
pub fn from_stored(stored: sluice_broker::StoredConsumer) -> Option<SavedConsumer> {
    match serde_json::from_str::<SavedConsumer>(&stored.definition) {
        Ok(saved) if saved.name == stored.name => Some(saved),
        Ok(_) | Err(_) => {
            tracing::warn!(consumer = %stored.name, "a stored consumer cannot be read; skipped");
            None
        }
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct SavedConsumers {
    consumers: Vec<SavedConsumer>,
}

/// The saved consumers; none when the file does not exist yet.
pub fn read(path: &Path) -> std::io::Result<Vec<SavedConsumer>> {
    sluice_broker::json_file::read::<SavedConsumers>(path).map(|s| s.consumers)
}

/// Writes the list so that a crash leaves either the old one or the new.
pub fn write(path: &Path, consumers: Vec<SavedConsumer>) -> std::io::Result<()> {
    sluice_broker::json_file::write(path, &SavedConsumers { consumers })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// C9: what is written is read back, stopped flag included; a missing
    /// file is an empty list.
    #[test]
    fn c9_saved_consumers_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("consumers.json");
        assert_eq!(read(&path).unwrap(), Vec::new());
        let spec = ConsumerSpec {
            name: "w".into(),
            queue: "q".into(),
            url: "http://127.0.0.1:9/".into(),
            batch_size: 20,
            batching_window: Duration::from_secs(2),
            max_concurrency: 3,
            timeout: Duration::from_secs(5),
            report_batch_item_failures: true,
            filter: vec![r#"{"body": {"type": ["order"]}}"#.into()],
            skip_completed: Some("$.order.id".into()),
        };
        write(&path, vec![SavedConsumer::new(&spec, true)]).unwrap();
        let back = read(&path).unwrap();
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].spec(), spec);
        assert!(back[0].stopped);
        // C9: the shared storage's record reads back the same.
        let stored = to_stored(&back[0]).unwrap();
        assert_eq!(stored.name, "w");
        assert_eq!(from_stored(stored.clone()), Some(back[0].clone()));
        let renamed = sluice_broker::StoredConsumer {
            name: "other".into(),
            ..stored
        };
        assert_eq!(from_stored(renamed), None, "a record under another name");
    }
}

//! The running consumers' settings and state, as the ListConsumers action
//! shows them (and `sluice doctor` reads them).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::config::ConsumerSpec;

/// Where a consumer was declared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConsumerSource {
    /// `[[consumers]]` in the config file: changed there, not at run time.
    Config,
    /// CreateConsumer: changed and deleted at run time (rule C9).
    Api,
}

impl ConsumerSource {
    /// As ListConsumers shows it.
    pub fn as_str(self) -> &'static str {
        match self {
            ConsumerSource::Config => "config",
            ConsumerSource::Api => "api",
        }
    }
}

/// One consumer as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumerStatus {
    /// Its settings.
    pub spec: ConsumerSpec,
    /// Where it was declared.
    pub source: ConsumerSource,
    /// Batches being delivered (or held by a Retry-After) now.
    pub in_flight: u32,
    /// Batches it may have in flight now (rule C7).
    pub limit: u32,
    /// A handler's Retry-After holds new deliveries back.
    pub paused: bool,
    /// The handler is down: new deliveries wait out a back-off pause
    /// (rule C12).
    pub backing_off: bool,
    /// PauseConsumer stopped it from receiving (rule C10).
    pub stopped: bool,
}

impl ConsumerStatus {
    /// As ListConsumers' `State` shows it: `stopped` (PauseConsumer),
    /// `throttled` (a handler's Retry-After), `backing_off` (the handler is
    /// down), or `running`.
    pub fn state(&self) -> &'static str {
        if self.stopped {
            "stopped"
        } else if self.paused {
            "throttled"
        } else if self.backing_off {
            "backing_off"
        } else {
            "running"
        }
    }
}

/// Every consumer of this node, by name. Clones share the same list.
#[derive(Debug, Clone, Default)]
pub struct ConsumerRegistry {
    consumers: Arc<Mutex<BTreeMap<String, ConsumerStatus>>>,
}

impl ConsumerRegistry {
    /// Adds (or replaces) a config-file consumer that is starting.
    pub fn register(&self, spec: &ConsumerSpec) {
        self.register_from(spec, ConsumerSource::Config, false);
    }

    /// Adds (or replaces) a consumer that is starting, from `source`,
    /// stopped or not.
    pub fn register_from(&self, spec: &ConsumerSpec, source: ConsumerSource, stopped: bool) {
        let status = ConsumerStatus {
            spec: spec.clone(),
            source,
            in_flight: 0,
            limit: 1,
            paused: false,
            backing_off: false,
            stopped,
        };
        self.lock().insert(spec.name.clone(), status);
    }

    /// Removes a consumer.
    pub fn remove(&self, name: &str) {
        self.lock().remove(name);
    }

    /// One consumer.
    pub fn get(&self, name: &str) -> Option<ConsumerStatus> {
        self.lock().get(name).cloned()
    }

    /// Stops a consumer from receiving, or lets it go on; false if there
    /// is none of that name.
    pub fn set_stopped(&self, name: &str, stopped: bool) -> bool {
        match self.lock().get_mut(name) {
            Some(s) => {
                s.stopped = stopped;
                true
            }
            None => false,
        }
    }

    /// Whether PauseConsumer stopped it.
    pub fn is_stopped(&self, name: &str) -> bool {
        self.lock().get(name).is_some_and(|s| s.stopped)
    }

    /// Records a consumer's state: batches in flight, the limit, and
    /// whether a Retry-After or a back-off pause holds.
    pub fn update(&self, name: &str, in_flight: u32, limit: u32, paused: bool, backing_off: bool) {
        if let Some(s) = self.lock().get_mut(name) {
            (s.in_flight, s.limit, s.paused, s.backing_off) =
                (in_flight, limit, paused, backing_off);
        }
    }

    /// Every consumer, by name.
    pub fn list(&self) -> Vec<ConsumerStatus> {
        self.lock().values().cloned().collect()
    }

    // Only whole values are written under the lock: a poisoned one is
    // still consistent.
    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, ConsumerStatus>> {
        self.consumers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

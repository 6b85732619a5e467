//! The running consumers' settings and state, as the ListConsumers action
//! shows them (and `sluice doctor` reads them).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::config::ConsumerSpec;

/// One consumer as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumerStatus {
    /// Its settings.
    pub spec: ConsumerSpec,
    /// Batches being delivered (or held by a Retry-After) now.
    pub in_flight: u32,
    /// Batches it may have in flight now (rule C7).
    pub limit: u32,
    /// A handler's Retry-After holds new deliveries back.
    pub paused: bool,
}

/// Every consumer of this node, by name. Clones share the same list.
#[derive(Debug, Clone, Default)]
pub struct ConsumerRegistry {
    consumers: Arc<Mutex<BTreeMap<String, ConsumerStatus>>>,
}

impl ConsumerRegistry {
    /// Adds (or replaces) a consumer that is starting.
    pub fn register(&self, spec: &ConsumerSpec) {
        let status = ConsumerStatus {
            spec: spec.clone(),
            in_flight: 0,
            limit: 1,
            paused: false,
        };
        self.lock().insert(spec.name.clone(), status);
    }

    /// Records a consumer's state.
    pub fn update(&self, name: &str, in_flight: u32, limit: u32, paused: bool) {
        if let Some(s) = self.lock().get_mut(name) {
            (s.in_flight, s.limit, s.paused) = (in_flight, limit, paused);
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

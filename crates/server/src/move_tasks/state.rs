//! The move task component's state: the broker tasks are stored in and
//! the cancel flags of the tasks this process runs. The task runner and
//! the component's operations (`mod.rs`) both work on it.

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, MutexGuard};

use sluice_core::clock::Clock;
use sluice_core::queue_name::Account;

/// The move tasks of a service: the broker they are stored in, and the
/// cancel flags of those this process runs.
pub struct MoveTasks<B> {
    pub(super) broker: B,
    pub(super) account: Account,
    /// The clock tasks stamp their start with.
    pub(super) clock: Arc<dyn Clock>,
    /// Cancel flags of the tasks this process runs, by handle.
    cancels: Mutex<HashMap<String, Arc<AtomicBool>>>,
}

impl<B> MoveTasks<B> {
    /// The move tasks stored in `broker`.
    pub fn new(broker: B, account: Account, clock: Arc<dyn Clock>) -> Self {
        Self {
            broker,
            account,
            clock,
            cancels: Mutex::new(HashMap::new()),
        }
    }

    /// The cancel flags of running tasks.
    pub(super) fn cancels(&self) -> MutexGuard<'_, HashMap<String, Arc<AtomicBool>>> {
        // A panic elsewhere cannot leave this map half-written: recover it.
        self.cancels.lock().unwrap_or_else(|e| e.into_inner())
    }
}

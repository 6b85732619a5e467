//! Starting the log writer and the applier.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver};
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::Mutex;

use super::applier::Applier;
use super::gate::Gate;
use super::handoff::{Failure, Pending};
use super::log_writer::LogWriter;
use crate::store::Store;
use crate::wal::Log;

/// Starts the writer (which starts the applier); joining it joins both.
#[allow(clippy::too_many_arguments)]
pub(crate) fn spawn(
    store: Store,
    log: Log,
    on_disk: BTreeSet<u64>,
    next_lsn: u64,
    interval: Duration,
    rx: Receiver<Pending>,
    failed: Arc<Failure>,
    gate: Arc<Mutex<Gate>>,
) -> Option<JoinHandle<()>> {
    let (to_applier, from_writer) = mpsc::channel();
    let segments = store.segments().clone();
    let applier = Applier {
        store,
        gate: gate.clone(),
        failed: failed.clone(),
        broken: None,
        compacting: VecDeque::new(),
        compacted: BTreeSet::new(),
        lengths: BTreeMap::new(),
        live_before: BTreeMap::new(),
    };
    let applier = std::thread::Builder::new()
        .name("sluice-apply".into())
        .spawn(move || applier.run(from_writer))
        .ok()?;
    let writer = LogWriter {
        log,
        on_disk,
        segments,
        gate,
        next_lsn,
        to_applier,
        dirty_since: None,
        log_bytes: 0,
        interval,
        failed,
    };
    std::thread::Builder::new()
        .name("sluice-journal".into())
        .spawn(move || {
            writer.run(rx);
            let _ = applier.join();
        })
        .ok()
}

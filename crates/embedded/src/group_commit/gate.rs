//! The gate readers of redb wait at until every record handed to the
//! applier is applied.

use parking_lot::Mutex;
use tokio::sync::oneshot;

use super::handoff::{Outcome, resolve};

/// Where readers of redb wait until the records before them are applied.
#[derive(Default)]
pub(crate) struct Gate {
    /// The last record applied to redb (the applier applies in order).
    pub(super) applied: u64,
    /// The last record handed to the applier.
    pub(super) handed: u64,
    /// Why applying failed, once it has: every later waiter's answer.
    pub(super) failed: Option<String>,
    /// Waiters for records handed over but not yet applied, by record.
    pub(super) waiting: Vec<(u64, Vec<oneshot::Sender<Outcome>>)>,
}

impl Gate {
    /// A gate over a store that holds every record up to `applied`.
    pub(crate) fn new(applied: u64) -> Self {
        Gate {
            applied,
            handed: applied,
            ..Gate::default()
        }
    }

    /// A receiver that resolves once every record handed over so far is
    /// applied, or `None` when they are already.
    pub(crate) fn readable(
        gate: &Mutex<Gate>,
    ) -> Result<Option<oneshot::Receiver<Outcome>>, String> {
        let mut g = gate.lock();
        if let Some(e) = &g.failed {
            return Err(e.clone());
        }
        if g.applied >= g.handed {
            return Ok(None);
        }
        let (tx, rx) = oneshot::channel();
        let at = g.handed;
        g.waiting.push((at, vec![tx]));
        Ok(Some(rx))
    }

    /// Record `lsn` goes to the applier.
    pub(super) fn handed(gate: &Mutex<Gate>, lsn: u64) {
        gate.lock().handed = lsn;
    }

    /// The applier has applied every record up to `lsn`: resolves the
    /// waiters for those.
    pub(super) fn applied(gate: &Mutex<Gate>, lsn: u64) {
        let ready = {
            let mut g = gate.lock();
            g.applied = lsn;
            if g.waiting.is_empty() {
                return;
            }
            let (ready, held): (Vec<_>, Vec<_>) =
                g.waiting.drain(..).partition(|(at, _)| *at <= lsn);
            g.waiting = held;
            ready
        };
        for (_, done) in ready {
            resolve(done, Ok(()));
        }
    }

    /// Applying failed: resolves every waiter, and every later one, with
    /// `error`.
    pub(super) fn apply_failed(gate: &Mutex<Gate>, error: &str) {
        let held = {
            let mut g = gate.lock();
            g.failed = Some(error.to_string());
            std::mem::take(&mut g.waiting)
        };
        for (_, done) in held {
            resolve(done, Err(error.to_string()));
        }
    }
}

//! Consumers managed at run time (rules C9, C10): created, changed,
//! deleted, stopped and resumed by sluice actions, checked as the config
//! file's are, and kept so that they start again after a restart. Config-file
//! consumers can be stopped and resumed, not changed or deleted: the file
//! declares them.
//!
//! Where they are kept depends on the engine. Alone on its storage, a node
//! saves them in `consumers.json` in its data directory (with
//! `--in-memory`, nowhere) and its own list is the truth. On storage other
//! nodes share (PostgreSQL), the storage keeps them and is the truth: every
//! node runs every stored consumer, brings itself up to date before each
//! change and regularly in between ([`RuntimeConsumers::sync`]), and a
//! change made through any node reaches the others at their next sync.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use sluice_broker::Broker;
use sluice_core::SqsError;
use tokio::task::JoinHandle;

use super::config::{ConsumerConfigError, ConsumerSpec};
use super::registry::ConsumerSource;
use super::store::{self, SavedConsumer};
use super::{ConsumerHost, ConsumerRegistry};

/// Why a run-time change is refused.
#[derive(Debug, thiserror::Error)]
pub enum ConsumerChangeError {
    /// A setting is out of its range (the config file's checks).
    #[error(transparent)]
    Invalid(#[from] ConsumerConfigError),
    /// The name is taken.
    #[error("consumer {0} already exists")]
    Exists(String),
    /// No consumer has this name.
    #[error("consumer {0} does not exist")]
    NotFound(String),
    /// The config file declares it.
    #[error("consumer {0} is declared in the config file: change or remove it there, then restart")]
    FromConfig(String),
    /// The queue cannot be read.
    #[error(transparent)]
    Queue(SqsError),
    /// The list cannot be saved.
    #[error("cannot save the consumers: {0}")]
    Save(String),
    /// The saved list cannot be read.
    #[error("cannot read the saved consumers: {0}")]
    Read(String),
    /// The shared storage failed.
    #[error(transparent)]
    Storage(SqsError),
}

/// Where the run-time consumers are kept.
#[derive(Debug)]
enum Keeping {
    /// Nowhere: they last until the server stops.
    Nowhere,
    /// In this file (`consumers.json`).
    File(PathBuf),
    /// In the storage every node shares.
    Shared,
}

/// A change to the kept list.
enum Change<'a> {
    Insert(&'a SavedConsumer),
    Update(&'a SavedConsumer),
    Delete(&'a str),
}

#[derive(Default)]
struct State {
    /// Every run-time consumer, as kept (including one whose queue was
    /// missing at start: it stays kept, not running).
    saved: BTreeMap<String, SavedConsumer>,
    /// The poll loops of those that run.
    tasks: BTreeMap<String, JoinHandle<()>>,
}

/// The consumers created at run time, as this node runs them.
pub struct RuntimeConsumers {
    keeping: Keeping,
    /// One change at a time, so that what is kept follows the list.
    state: tokio::sync::Mutex<State>,
}

impl std::fmt::Debug for RuntimeConsumers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeConsumers")
            .field("keeping", &self.keeping)
            .finish_non_exhaustive()
    }
}

impl Drop for RuntimeConsumers {
    fn drop(&mut self) {
        for task in self.state.get_mut().tasks.values() {
            task.abort();
        }
    }
}

impl RuntimeConsumers {
    /// Run-time consumers kept in the storage other nodes share
    /// (`shared`), else saved in `file` (none: not saved).
    pub fn new(file: Option<PathBuf>, shared: bool) -> Self {
        let keeping = match file {
            _ if shared => Keeping::Shared,
            Some(file) => Keeping::File(file),
            None => Keeping::Nowhere,
        };
        Self {
            keeping,
            state: Default::default(),
        }
    }

    /// True when the storage other nodes share keeps them.
    pub fn is_shared(&self) -> bool {
        matches!(self.keeping, Keeping::Shared)
    }

    /// Starts the kept consumers (after the config file's, which win a
    /// name both use). One that fails its checks (its queue was deleted,
    /// say) is logged and kept without running. Returns how many started.
    pub async fn restore<B: Broker>(
        &self,
        host: ConsumerHost<'_, B>,
    ) -> Result<usize, ConsumerChangeError> {
        let kept = self.read_kept(host.broker).await?;
        let mut state = self.state.lock().await;
        Ok(self.reconcile(&mut state, host, kept).await)
    }

    /// On shared storage, brings this node's consumers up to what the
    /// storage keeps: starts those created through other nodes, restarts
    /// those changed, pauses or resumes those paused or resumed, stops
    /// those deleted. Alone on its storage, a node's list is the truth:
    /// nothing to do.
    pub async fn sync<B: Broker>(
        &self,
        host: ConsumerHost<'_, B>,
    ) -> Result<(), ConsumerChangeError> {
        let mut state = self.state.lock().await;
        self.refresh(&mut state, host).await
    }

    /// CreateConsumer: checks `spec` as a config-file consumer is checked,
    /// saves it and starts it.
    pub async fn create<B: Broker>(
        &self,
        host: ConsumerHost<'_, B>,
        spec: ConsumerSpec,
    ) -> Result<(), ConsumerChangeError> {
        let mut state = self.state.lock().await;
        self.refresh(&mut state, host).await?;
        if host.registry.get(&spec.name).is_some() || state.saved.contains_key(&spec.name) {
            return Err(ConsumerChangeError::Exists(spec.name));
        }
        check(host.broker, &spec).await?;
        let saved = SavedConsumer::new(&spec, false);
        if !self
            .keep(&state, host.broker, Change::Insert(&saved))
            .await?
        {
            return Err(ConsumerChangeError::Exists(spec.name));
        }
        state.saved.insert(spec.name.clone(), saved);
        self.start(&mut state, host, spec, false);
        Ok(())
    }

    /// UpdateConsumer: `change` applied to the settings of run-time
    /// consumer `name`, checked, saved, and the consumer restarted with
    /// them (batches in flight stop; their messages come back after their
    /// visibility timeout). A stopped consumer stays stopped.
    pub async fn update<B: Broker>(
        &self,
        host: ConsumerHost<'_, B>,
        name: &str,
        change: impl FnOnce(&mut ConsumerSpec),
    ) -> Result<(), ConsumerChangeError> {
        let mut state = self.state.lock().await;
        self.refresh(&mut state, host).await?;
        let current = self.run_time(&state, host.registry, name)?;
        let mut spec = current.spec();
        change(&mut spec);
        spec.name = name.to_string();
        check(host.broker, &spec).await?;
        let saved = SavedConsumer::new(&spec, current.stopped);
        if !self
            .keep(&state, host.broker, Change::Update(&saved))
            .await?
        {
            return Err(ConsumerChangeError::NotFound(name.to_string()));
        }
        state.saved.insert(name.to_string(), saved);
        self.stop(&mut state, host.registry, name);
        self.start(&mut state, host, spec, current.stopped);
        Ok(())
    }

    /// DeleteConsumer: stops run-time consumer `name` and forgets it.
    pub async fn delete<B: Broker>(
        &self,
        host: ConsumerHost<'_, B>,
        name: &str,
    ) -> Result<(), ConsumerChangeError> {
        let mut state = self.state.lock().await;
        self.refresh(&mut state, host).await?;
        self.run_time(&state, host.registry, name)?;
        if !self.keep(&state, host.broker, Change::Delete(name)).await? {
            return Err(ConsumerChangeError::NotFound(name.to_string()));
        }
        state.saved.remove(name);
        self.stop(&mut state, host.registry, name);
        Ok(())
    }

    /// PauseConsumer (`stopped`) and ResumeConsumer: a stopped consumer
    /// receives nothing; its batches in flight finish. Kept for a
    /// run-time consumer (on shared storage, every node's pauses); a
    /// config-file one runs again after a restart, and on shared storage
    /// is paused on this node only.
    pub async fn set_stopped<B: Broker>(
        &self,
        host: ConsumerHost<'_, B>,
        name: &str,
        stopped: bool,
    ) -> Result<(), ConsumerChangeError> {
        let mut state = self.state.lock().await;
        self.refresh(&mut state, host).await?;
        if let Some(saved) = state.saved.get(name) {
            let mut saved = saved.clone();
            saved.stopped = stopped;
            if !self
                .keep(&state, host.broker, Change::Update(&saved))
                .await?
            {
                return Err(ConsumerChangeError::NotFound(name.to_string()));
            }
            state.saved.insert(name.to_string(), saved);
        }
        if !host.registry.set_stopped(name, stopped) && !state.saved.contains_key(name) {
            return Err(ConsumerChangeError::NotFound(name.to_string()));
        }
        Ok(())
    }

    /// The saved record of run-time consumer `name`.
    fn run_time(
        &self,
        state: &State,
        registry: &ConsumerRegistry,
        name: &str,
    ) -> Result<SavedConsumer, ConsumerChangeError> {
        if let Some(saved) = state.saved.get(name) {
            return Ok(saved.clone());
        }
        match registry.get(name) {
            Some(s) if s.source == ConsumerSource::Config => {
                Err(ConsumerChangeError::FromConfig(name.to_string()))
            }
            _ => Err(ConsumerChangeError::NotFound(name.to_string())),
        }
    }

    fn start<B: Broker>(
        &self,
        state: &mut State,
        host: ConsumerHost<'_, B>,
        spec: ConsumerSpec,
        stopped: bool,
    ) {
        host.registry
            .register_from(&spec, ConsumerSource::Api, stopped);
        let name = spec.name.clone();
        let task = host.spawn(spec);
        state.tasks.insert(name, task);
    }

    /// Stops the poll loop of run-time consumer `name`, if it runs (a
    /// config-file consumer of that name stays listed).
    fn stop(&self, state: &mut State, registry: &ConsumerRegistry, name: &str) {
        if let Some(task) = state.tasks.remove(name) {
            task.abort();
            registry.remove(name);
        }
    }

    /// The kept list.
    async fn read_kept<B: Broker>(
        &self,
        broker: &B,
    ) -> Result<Vec<SavedConsumer>, ConsumerChangeError> {
        match &self.keeping {
            Keeping::Nowhere => Ok(Vec::new()),
            Keeping::File(file) => {
                store::read(file).map_err(|e| ConsumerChangeError::Read(e.to_string()))
            }
            Keeping::Shared => {
                let stored = broker
                    .stored_consumers()
                    .await
                    .map_err(|e| ConsumerChangeError::Storage(e.into()))?;
                Ok(stored.into_iter().filter_map(store::from_stored).collect())
            }
        }
    }

    /// On shared storage, the list brought up to the storage's.
    async fn refresh<B: Broker>(
        &self,
        state: &mut State,
        host: ConsumerHost<'_, B>,
    ) -> Result<(), ConsumerChangeError> {
        if self.is_shared() {
            let kept = self.read_kept(host.broker).await?;
            self.reconcile(state, host, kept).await;
        }
        Ok(())
    }

    /// Runs what `kept` holds: starts the new, restarts the changed,
    /// pauses or resumes those that differ only in that, stops those not
    /// kept. Returns how many started.
    async fn reconcile<B: Broker>(
        &self,
        state: &mut State,
        host: ConsumerHost<'_, B>,
        kept: Vec<SavedConsumer>,
    ) -> usize {
        let names: BTreeSet<&str> = kept.iter().map(|s| s.name.as_str()).collect();
        let gone: Vec<String> = state
            .saved
            .keys()
            .filter(|n| !names.contains(n.as_str()))
            .cloned()
            .collect();
        for name in gone {
            state.saved.remove(&name);
            self.stop(state, host.registry, &name);
            tracing::info!(consumer = %name, "push consumer deleted");
        }
        let mut started = 0;
        for s in kept {
            match state.saved.get(&s.name) {
                Some(current) if *current == s => continue,
                Some(current) if current.spec() == s.spec() => {
                    if state.tasks.contains_key(&s.name) {
                        host.registry.set_stopped(&s.name, s.stopped);
                    }
                }
                _ => {
                    self.stop(state, host.registry, &s.name);
                    if self.run_kept(state, host, &s).await {
                        started += 1;
                    }
                }
            }
            state.saved.insert(s.name.clone(), s);
        }
        started
    }

    /// Starts a kept consumer unless a config-file one has its name or it
    /// fails its checks (both logged); true when it started.
    async fn run_kept<B: Broker>(
        &self,
        state: &mut State,
        host: ConsumerHost<'_, B>,
        saved: &SavedConsumer,
    ) -> bool {
        let spec = saved.spec();
        if host.registry.get(&spec.name).is_some() {
            tracing::warn!(consumer = %spec.name, "a config-file consumer has the name of a saved one: the saved one does not start");
            false
        } else if let Err(e) = check(host.broker, &spec).await {
            tracing::warn!(consumer = %spec.name, queue = %spec.queue, error = %e, "saved consumer not started");
            false
        } else {
            tracing::info!(consumer = %spec.name, queue = %spec.queue, "saved push consumer started");
            self.start(state, host, spec, saved.stopped);
            true
        }
    }

    /// Keeps `change` before it is made, so that a failed write changes
    /// nothing; false when shared storage refuses it (the name is taken,
    /// or gone, since the last sync).
    async fn keep<B: Broker>(
        &self,
        state: &State,
        broker: &B,
        change: Change<'_>,
    ) -> Result<bool, ConsumerChangeError> {
        match &self.keeping {
            Keeping::Nowhere => Ok(true),
            Keeping::File(file) => {
                let mut all = state.saved.clone();
                match change {
                    Change::Insert(s) | Change::Update(s) => {
                        all.insert(s.name.clone(), s.clone());
                    }
                    Change::Delete(name) => {
                        all.remove(name);
                    }
                }
                store::write(file, all.into_values().collect())
                    .map_err(|e| ConsumerChangeError::Save(e.to_string()))?;
                Ok(true)
            }
            Keeping::Shared => {
                let stored = |s: &SavedConsumer| {
                    store::to_stored(s).map_err(|e| ConsumerChangeError::Save(e.to_string()))
                };
                let done = match change {
                    Change::Insert(s) => broker.insert_stored_consumer(stored(s)?).await,
                    Change::Update(s) => broker.update_stored_consumer(stored(s)?).await,
                    Change::Delete(name) => broker.delete_stored_consumer(name.to_string()).await,
                };
                done.map_err(|e| ConsumerChangeError::Storage(e.into()))
            }
        }
    }
}

/// The config file's checks of one consumer: its settings, then its queue.
async fn check<B: Broker>(broker: &B, spec: &ConsumerSpec) -> Result<(), ConsumerChangeError> {
    spec.validate()?;
    let meta = broker
        .get_queue(&spec.queue)
        .await
        .map_err(|e| ConsumerChangeError::Queue(e.into()))?;
    spec.validate_against(&meta)?;
    Ok(())
}

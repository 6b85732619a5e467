//! Consumers managed at run time (rules C9, C10): created, changed,
//! deleted, stopped and resumed by sluice actions, checked as the config
//! file's are, and saved (with the embedded engine's data directory) so
//! that they start again after a restart. Config-file consumers can be
//! stopped and resumed, not changed or deleted: the file declares them.

use std::collections::BTreeMap;
use std::path::PathBuf;

use sluice_broker::Broker;
use sluice_core::SqsError;
use tokio::task::JoinHandle;

use super::config::{ConsumerConfigError, ConsumerSpec};
use super::deliver::{HandlerClient, handler_client};
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
}

#[derive(Default)]
struct State {
    /// Every run-time consumer, as saved (including one whose queue was
    /// missing at start: it stays saved, not running).
    saved: BTreeMap<String, SavedConsumer>,
    /// The poll loops of those that run.
    tasks: BTreeMap<String, JoinHandle<()>>,
}

/// The consumers created at run time on this node.
pub struct RuntimeConsumers {
    /// `consumers.json`, or `None`: they last until the server stops.
    file: Option<PathBuf>,
    /// One change at a time, so that the file follows the list.
    state: tokio::sync::Mutex<State>,
    client: HandlerClient,
}

impl std::fmt::Debug for RuntimeConsumers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeConsumers")
            .field("file", &self.file)
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
    /// Run-time consumers saved in `file` (none: not saved).
    pub fn new(file: Option<PathBuf>) -> Self {
        Self {
            file,
            state: Default::default(),
            client: handler_client(),
        }
    }

    /// Starts the saved consumers (after the config file's, which win a
    /// name both use). One that fails its checks (its queue was deleted,
    /// say) is logged and kept in the file without running. Returns how
    /// many started.
    pub async fn restore<B: Broker>(&self, host: ConsumerHost<'_, B>) -> std::io::Result<usize> {
        let Some(file) = &self.file else {
            return Ok(0);
        };
        let saved = store::read(file)?;
        let mut state = self.state.lock().await;
        let mut started = 0;
        for s in saved {
            let spec = s.spec();
            if host.registry.get(&spec.name).is_some() {
                tracing::warn!(consumer = %spec.name, "a config-file consumer has the name of a saved one: the saved one does not start");
            } else if let Err(e) = check(host.broker, &spec).await {
                tracing::warn!(consumer = %spec.name, queue = %spec.queue, error = %e, "saved consumer not started");
            } else {
                host.registry
                    .register_from(&spec, ConsumerSource::Api, s.stopped);
                let task = host.spawn(spec.clone(), self.client.clone());
                state.tasks.insert(spec.name.clone(), task);
                tracing::info!(consumer = %spec.name, queue = %spec.queue, "saved push consumer started");
                started += 1;
            }
            state.saved.insert(s.name.clone(), s);
        }
        Ok(started)
    }

    /// CreateConsumer: checks `spec` as a config-file consumer is checked,
    /// saves it and starts it.
    pub async fn create<B: Broker>(
        &self,
        host: ConsumerHost<'_, B>,
        spec: ConsumerSpec,
    ) -> Result<(), ConsumerChangeError> {
        let mut state = self.state.lock().await;
        if host.registry.get(&spec.name).is_some() || state.saved.contains_key(&spec.name) {
            return Err(ConsumerChangeError::Exists(spec.name));
        }
        check(host.broker, &spec).await?;
        self.save_with(&state, Some(SavedConsumer::new(&spec, false)), None)?;
        state
            .saved
            .insert(spec.name.clone(), SavedConsumer::new(&spec, false));
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
        let current = self.run_time(&state, host.registry, name)?;
        let mut spec = current.spec();
        change(&mut spec);
        spec.name = name.to_string();
        check(host.broker, &spec).await?;
        let saved = SavedConsumer::new(&spec, current.stopped);
        self.save_with(&state, Some(saved.clone()), None)?;
        state.saved.insert(name.to_string(), saved);
        if let Some(task) = state.tasks.remove(name) {
            task.abort();
        }
        self.start(&mut state, host, spec, current.stopped);
        Ok(())
    }

    /// DeleteConsumer: stops run-time consumer `name` and forgets it.
    pub async fn delete(
        &self,
        registry: &ConsumerRegistry,
        name: &str,
    ) -> Result<(), ConsumerChangeError> {
        let mut state = self.state.lock().await;
        self.run_time(&state, registry, name)?;
        self.save_with(&state, None, Some(name))?;
        state.saved.remove(name);
        if let Some(task) = state.tasks.remove(name) {
            task.abort();
        }
        registry.remove(name);
        Ok(())
    }

    /// PauseConsumer (`stopped`) and ResumeConsumer: a stopped consumer
    /// receives nothing; its batches in flight finish. Saved for a
    /// run-time consumer; a config-file one runs again after a restart.
    pub async fn set_stopped(
        &self,
        registry: &ConsumerRegistry,
        name: &str,
        stopped: bool,
    ) -> Result<(), ConsumerChangeError> {
        let mut state = self.state.lock().await;
        if let Some(saved) = state.saved.get(name) {
            let mut saved = saved.clone();
            saved.stopped = stopped;
            self.save_with(&state, Some(saved.clone()), None)?;
            state.saved.insert(name.to_string(), saved);
        }
        if !registry.set_stopped(name, stopped) && !state.saved.contains_key(name) {
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
        let task = host.spawn(spec, self.client.clone());
        state.tasks.insert(name, task);
    }

    /// Writes the list with `put` added (or replaced) and `remove` left
    /// out, before the change is made, so that a failed write changes
    /// nothing.
    fn save_with(
        &self,
        state: &State,
        put: Option<SavedConsumer>,
        remove: Option<&str>,
    ) -> Result<(), ConsumerChangeError> {
        let Some(file) = &self.file else {
            return Ok(());
        };
        let mut all = state.saved.clone();
        if let Some(p) = put {
            all.insert(p.name.clone(), p);
        }
        if let Some(r) = remove {
            all.remove(r);
        }
        store::write(file, all.into_values().collect())
            .map_err(|e| ConsumerChangeError::Save(e.to_string()))
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

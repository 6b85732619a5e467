//! The alarms this server knows: definitions, current states and the
//! history of state changes; API-defined alarms are saved to a file so
//! they survive a restart (states and history do not: an alarm starts
//! again in INSUFFICIENT_DATA). On storage shared by several nodes the
//! store is this node's copy of the shared alarms ([`super::shared`]),
//! without a file.

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use sluice_core::clock::Millis;

use super::definition::{AlarmDefinition, AlarmSource, AlarmState};
use sluice_broker::json_file;

/// State changes kept per alarm, newest first.
pub const HISTORY_LIMIT: usize = 100;

/// One state change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Transition {
    /// When.
    pub at: Millis,
    /// From.
    pub old: AlarmState,
    /// To.
    pub new: AlarmState,
    /// Why.
    pub reason: String,
}

/// An alarm with its state.
#[derive(Debug, Clone)]
pub struct AlarmEntry {
    /// What it watches.
    pub def: AlarmDefinition,
    /// Where it was defined.
    pub source: AlarmSource,
    /// Its state.
    pub state: AlarmState,
    /// Why it is in that state.
    pub reason: String,
    /// When the state last changed (or the alarm was created).
    pub updated_at: Millis,
    /// State changes, newest first, at most [`HISTORY_LIMIT`].
    pub history: VecDeque<Transition>,
}

impl AlarmEntry {
    /// A new alarm, in INSUFFICIENT_DATA until its first evaluation.
    pub fn new(def: AlarmDefinition, source: AlarmSource, now: Millis) -> Self {
        Self {
            def,
            source,
            state: AlarmState::InsufficientData,
            reason: "Unchecked: the alarm was just defined.".into(),
            updated_at: now,
            history: VecDeque::new(),
        }
    }

    /// Moves to `state` for `reason` at `at`; the transition, when the
    /// state changed.
    pub fn apply(&mut self, state: AlarmState, reason: String, at: Millis) -> Option<Transition> {
        if state == self.state {
            return None;
        }
        let t = Transition {
            at,
            old: self.state,
            new: state,
            reason: reason.clone(),
        };
        self.state = state;
        self.reason = reason;
        self.updated_at = at;
        self.history.push_front(t.clone());
        self.history.truncate(HISTORY_LIMIT);
        Some(t)
    }
}

/// The file of API-defined alarms.
#[derive(Debug, Default, Serialize, Deserialize)]
struct SavedAlarms {
    alarms: Vec<AlarmDefinition>,
}

/// Every alarm, by name.
#[derive(Debug, Default)]
pub struct AlarmStore {
    alarms: BTreeMap<String, AlarmEntry>,
    file: Option<PathBuf>,
}

/// Why the store refused a change.
#[derive(Debug, PartialEq, Eq)]
pub enum StoreError {
    /// The alarm comes from the config file or the DLQ setting.
    NotApiAlarm(String, AlarmSource),
    /// No such alarm.
    Unknown(String),
    /// The alarms file could not be written.
    Save(String),
}

impl AlarmStore {
    /// A store that saves API alarms to `file` (none: memory only) and
    /// starts with the ones saved there.
    pub fn open(file: Option<PathBuf>, now: Millis) -> Self {
        let mut store = Self {
            alarms: BTreeMap::new(),
            file,
        };
        if let Some(path) = &store.file {
            match json_file::read::<SavedAlarms>(path) {
                Ok(saved) => {
                    for def in saved.alarms {
                        let name = def.name.clone();
                        store
                            .alarms
                            .insert(name, AlarmEntry::new(def, AlarmSource::Api, now));
                    }
                }
                Err(e) => {
                    // Keep the unreadable file for a person; the next save
                    // would otherwise overwrite it.
                    let aside = path.with_extension("json.unreadable");
                    let moved = std::fs::rename(path, &aside).is_ok();
                    tracing::error!(
                        file = %path.display(),
                        error = %e,
                        kept_as = %aside.display(),
                        moved,
                        "cannot read saved alarms; starting without them"
                    );
                }
            }
        }
        store
    }

    /// Every alarm, by name.
    pub fn entries(&self) -> impl Iterator<Item = &AlarmEntry> {
        self.alarms.values()
    }

    /// Every alarm, to evaluate.
    pub fn entries_mut(&mut self) -> impl Iterator<Item = &mut AlarmEntry> {
        self.alarms.values_mut()
    }

    /// One alarm.
    pub fn get(&self, name: &str) -> Option<&AlarmEntry> {
        self.alarms.get(name)
    }

    /// Adds or replaces an alarm. A replaced alarm keeps its state and
    /// history (the next evaluation brings the state up to date). The API
    /// may only replace API alarms.
    pub fn put(
        &mut self,
        def: AlarmDefinition,
        source: AlarmSource,
        now: Millis,
    ) -> Result<(), StoreError> {
        // An API change that cannot be saved is undone, so the answer tells the truth.
        let before = (source == AlarmSource::Api).then(|| self.alarms.clone());
        match self.alarms.get_mut(&def.name) {
            Some(e) if source == AlarmSource::Api && e.source != AlarmSource::Api => {
                return Err(StoreError::NotApiAlarm(def.name, e.source));
            }
            Some(e) => {
                e.def = def;
                e.source = source;
            }
            None => {
                self.alarms
                    .insert(def.name.clone(), AlarmEntry::new(def, source, now));
            }
        }
        if let Some(before) = before
            && let Err(e) = self.save()
        {
            self.alarms = before;
            return Err(e);
        }
        Ok(())
    }

    /// Deletes API alarms, all or none.
    pub fn delete_api(&mut self, names: &[String]) -> Result<(), StoreError> {
        self.check_deletable(names)?;
        let before = self.alarms.clone();
        for n in names {
            self.alarms.remove(n);
        }
        self.save().inspect_err(|_| self.alarms = before)
    }

    /// Whether the API may delete every alarm of `names`.
    pub fn check_deletable(&self, names: &[String]) -> Result<(), StoreError> {
        for n in names {
            match self.alarms.get(n) {
                None => return Err(StoreError::Unknown(n.clone())),
                Some(e) if e.source != AlarmSource::Api => {
                    return Err(StoreError::NotApiAlarm(n.clone(), e.source));
                }
                Some(_) => {}
            }
        }
        Ok(())
    }

    /// Replaces every alarm by `entries` (a fresh copy of shared alarms).
    pub fn replace_all(&mut self, entries: Vec<AlarmEntry>) {
        self.alarms = entries
            .into_iter()
            .map(|e| (e.def.name.clone(), e))
            .collect();
    }

    /// Removes an alarm whatever its source (the DLQ setting's, when its
    /// queue is no longer a dead-letter queue).
    pub fn remove(&mut self, name: &str) {
        self.alarms.remove(name);
    }

    fn save(&self) -> Result<(), StoreError> {
        let Some(path) = &self.file else {
            return Ok(());
        };
        let saved = SavedAlarms {
            alarms: self
                .alarms
                .values()
                .filter(|e| e.source == AlarmSource::Api)
                .map(|e| e.def.clone())
                .collect(),
        };
        json_file::write(path, &saved).map_err(|e| StoreError::Save(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definition::{Comparison, Metric, Statistic, TreatMissingData};

    fn def(name: &str) -> AlarmDefinition {
        AlarmDefinition {
            name: name.into(),
            queue: "q".into(),
            metric: Metric::ApproximateNumberOfMessagesVisible,
            statistic: Statistic::Maximum,
            period_secs: 60,
            evaluation_periods: 1,
            datapoints_to_alarm: 1,
            threshold: 1.0,
            comparison: Comparison::GreaterThanOrEqualToThreshold,
            treat_missing: TreatMissingData::Missing,
            actions: vec!["http://127.0.0.1:1/".into()],
            description: Some("d".into()),
        }
    }

    /// M2: a state change is recorded once, newest first; staying in a
    /// state records nothing.
    #[test]
    fn m2_history_records_each_change_once() {
        let mut s = AlarmStore::open(None, 0);
        s.put(def("a"), AlarmSource::Api, 0).unwrap();
        let e = s.entries_mut().next().unwrap();
        assert_eq!(e.state, AlarmState::InsufficientData);
        assert!(e.apply(AlarmState::Ok, "fine".into(), 10).is_some());
        assert!(e.apply(AlarmState::Ok, "still fine".into(), 20).is_none());
        let t = e.apply(AlarmState::Alarm, "bad".into(), 30).unwrap();
        assert_eq!(
            (t.old, t.new, t.at),
            (AlarmState::Ok, AlarmState::Alarm, 30)
        );
        let states: Vec<_> = e.history.iter().map(|t| (t.new, t.at)).collect();
        assert_eq!(states, vec![(AlarmState::Alarm, 30), (AlarmState::Ok, 10)]);
        assert_eq!((e.reason.as_str(), e.updated_at), ("bad", 30));
        for i in 0..200 {
            let to = if i % 2 == 0 {
                AlarmState::Ok
            } else {
                AlarmState::Alarm
            };
            e.apply(to, String::new(), 100 + i);
        }
        assert_eq!(e.history.len(), HISTORY_LIMIT);
    }

    /// M2: API alarms survive a restart through the file; config alarms
    /// are not saved and cannot be changed or deleted by the API.
    #[test]
    fn m2_api_alarms_are_saved_and_config_alarms_protected() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("alarms.json");
        let mut s = AlarmStore::open(Some(path.clone()), 0);
        s.put(def("api"), AlarmSource::Api, 0).unwrap();
        s.put(def("cfg"), AlarmSource::Config, 0).unwrap();
        assert_eq!(
            s.put(def("cfg"), AlarmSource::Api, 0),
            Err(StoreError::NotApiAlarm("cfg".into(), AlarmSource::Config))
        );
        assert_eq!(
            s.delete_api(&["api".into(), "cfg".into()]),
            Err(StoreError::NotApiAlarm("cfg".into(), AlarmSource::Config))
        );
        assert_eq!(
            s.delete_api(&["nope".into()]),
            Err(StoreError::Unknown("nope".into()))
        );
        assert!(
            s.get("api").is_some(),
            "nothing deleted when one name is refused"
        );
        let reopened = AlarmStore::open(Some(path.clone()), 5);
        let names: Vec<_> = reopened.entries().map(|e| e.def.name.clone()).collect();
        assert_eq!(names, vec!["api"]);
        assert_eq!(reopened.get("api").unwrap().def, def("api"));
        s.delete_api(&["api".into()]).unwrap();
        assert_eq!(AlarmStore::open(Some(path.clone()), 5).entries().count(), 0);

        // A change that cannot be saved is refused and undone.
        let mut s = AlarmStore::open(Some(dir.path().join("gone/alarms.json")), 0);
        assert!(matches!(
            s.put(def("x"), AlarmSource::Api, 0),
            Err(StoreError::Save(_))
        ));
        assert!(s.get("x").is_none());
        // An unreadable file is kept aside, not overwritten.
        std::fs::write(&path, b"{not json").unwrap();
        let s = AlarmStore::open(Some(path.clone()), 0);
        assert_eq!(s.entries().count(), 0);
        assert_eq!(
            std::fs::read(path.with_extension("json.unreadable")).unwrap(),
            b"{not json"
        );
    }
}

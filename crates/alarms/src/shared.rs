//! Alarms on storage several nodes share (PostgreSQL): the alarms live in
//! the storage, each node keeps a copy refreshed every tick and before
//! every DescribeAlarms, every node samples its queues (so a node taking
//! over has recent samples), and one node at a time — the holder of the
//! [`ALARM_JOB`] claim — evaluates, saves each state change by
//! compare-and-set and notifies it. When that node dies its claim goes
//! with its database session and the next tick of another node takes over.

use std::collections::VecDeque;

use sluice_broker::StoredAlarm;
use sluice_core::SqsError;

use super::definition::{AlarmDefinition, AlarmSource, AlarmState};
use super::store::{AlarmEntry, Transition};

/// The claim of the node that evaluates and notifies.
pub const ALARM_JOB: &str = "alarms";

/// The stored form of an alarm.
pub fn to_stored(e: &AlarmEntry) -> Result<StoredAlarm, SqsError> {
    let json = |r: Result<String, serde_json::Error>| {
        r.map_err(|e| SqsError::internal(format!("The alarm could not be encoded: {e}")))
    };
    Ok(StoredAlarm {
        name: e.def.name.clone(),
        source: e.source.as_str().to_string(),
        definition: json(serde_json::to_string(&e.def))?,
        state: e.state.as_str().to_string(),
        reason: e.reason.clone(),
        updated_at: e.updated_at,
        history: json(serde_json::to_string(&e.history))?,
    })
}

/// The alarm a stored record holds; `None` (logged) when it cannot be
/// read, e.g. written by a newer server.
pub fn from_stored(s: StoredAlarm) -> Option<AlarmEntry> {
    let def: Result<AlarmDefinition, _> = serde_json::from_str(&s.definition);
    let history: Result<VecDeque<Transition>, _> = serde_json::from_str(&s.history);
    let source = [
        AlarmSource::Api,
        AlarmSource::Config,
        AlarmSource::DlqAlarms,
    ]
    .into_iter()
    .find(|src| src.as_str() == s.source);
    match (def, history, source, AlarmState::parse(&s.state)) {
        (Ok(def), Ok(history), Some(source), Some(state)) => Some(AlarmEntry {
            def,
            source,
            state,
            reason: s.reason,
            updated_at: s.updated_at,
            history,
        }),
        _ => {
            tracing::warn!(alarm = s.name, "a stored alarm cannot be read; skipped");
            None
        }
    }
}

/// The sources of the alarms a definition from `source` may replace: the
/// API replaces its own, the config file any, the `dlq_alarms` setting its own.
pub fn replaceable_by(source: AlarmSource) -> Vec<String> {
    let sources: &[AlarmSource] = match source {
        AlarmSource::Api => &[AlarmSource::Api],
        AlarmSource::Config => &[
            AlarmSource::Api,
            AlarmSource::Config,
            AlarmSource::DlqAlarms,
        ],
        AlarmSource::DlqAlarms => &[AlarmSource::DlqAlarms],
    };
    sources.iter().map(|s| s.as_str().to_string()).collect()
}

/// The source named `name` in a refusal.
pub fn source_named(name: &str) -> AlarmSource {
    [AlarmSource::Config, AlarmSource::DlqAlarms]
        .into_iter()
        .find(|s| s.as_str() == name)
        .unwrap_or(AlarmSource::Config)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definition::{Comparison, Metric, Statistic, TreatMissingData};

    /// M2: an alarm read back from its stored form is the same alarm, with
    /// its state and history.
    #[test]
    fn m2_stored_alarms_round_trip() {
        let def = AlarmDefinition {
            name: "a".into(),
            queue: "q".into(),
            metric: Metric::NumberOfMessagesSent,
            statistic: Statistic::Sum,
            period_secs: 60,
            evaluation_periods: 2,
            datapoints_to_alarm: 1,
            threshold: 4.0,
            comparison: Comparison::GreaterThanOrEqualToThreshold,
            treat_missing: TreatMissingData::NotBreaching,
            actions: vec!["http://127.0.0.1:1/".into()],
            description: None,
        };
        let mut e = AlarmEntry::new(def, AlarmSource::Config, 5);
        e.apply(AlarmState::Ok, "fine".into(), 10);
        e.apply(AlarmState::Alarm, "bad".into(), 20);
        let stored = to_stored(&e).unwrap();
        assert_eq!(
            (stored.state.as_str(), stored.source.as_str()),
            ("ALARM", "config")
        );
        let back = from_stored(stored.clone()).unwrap();
        assert_eq!(back.def, e.def);
        assert_eq!(back.history, e.history);
        assert_eq!(
            (
                back.state,
                back.source,
                back.reason.as_str(),
                back.updated_at
            ),
            (AlarmState::Alarm, AlarmSource::Config, "bad", 20)
        );
        let unreadable = StoredAlarm {
            definition: "{}".into(),
            ..stored
        };
        assert!(from_stored(unreadable).is_none());
    }

    #[test]
    fn only_the_config_file_replaces_other_sources() {
        assert_eq!(replaceable_by(AlarmSource::Api), vec!["api"]);
        assert_eq!(replaceable_by(AlarmSource::DlqAlarms), vec!["dlq_alarms"]);
        assert_eq!(replaceable_by(AlarmSource::Config).len(), 3);
    }
}

//! Alarm evaluation, pure: samples and a time in, a state and its reason
//! out (rule M2). No clock, no I/O, so tests give exact inputs.
//!
//! The evaluated range is the last `evaluation_periods` complete periods,
//! aligned on multiples of the period since the epoch (as CloudWatch). Each
//! period's samples make one datapoint through the statistic; a period
//! without samples is missing. Then:
//! 1. missing datapoints become breaching or not breaching when
//!    `TreatMissingData` says so (`breaching`, `notBreaching`);
//! 2. `datapoints_to_alarm` or more breaching datapoints: ALARM;
//! 3. otherwise, with no datapoint at all: INSUFFICIENT_DATA (`missing`),
//!    or the current state unchanged (`ignore`);
//! 4. otherwise OK.

use sluice_core::clock::Millis;

use super::definition::{AlarmDefinition, AlarmState, Statistic, TreatMissingData};

/// One sample of a metric.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// When it was taken.
    pub at: Millis,
    /// Its value.
    pub value: f64,
}

/// The outcome of one evaluation.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    /// The state the alarm should be in.
    pub state: AlarmState,
    /// Why, for history and notifications.
    pub reason: String,
    /// The evaluated datapoints, oldest first (`None`: missing).
    pub datapoints: Vec<Option<f64>>,
}

/// One period's datapoint from its samples.
pub fn aggregate(statistic: Statistic, values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    Some(match statistic {
        Statistic::Average => values.iter().sum::<f64>() / values.len() as f64,
        Statistic::Sum => values.iter().sum(),
        Statistic::Minimum => values.iter().copied().fold(f64::INFINITY, f64::min),
        Statistic::Maximum => values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        Statistic::SampleCount => values.len() as f64,
    })
}

/// The datapoints of the last `evaluation_periods` complete periods before
/// `now`, oldest first.
pub fn datapoints(def: &AlarmDefinition, samples: &[Sample], now: Millis) -> Vec<Option<f64>> {
    let period = u64::from(def.period_secs) * 1000;
    let end = now - now % period;
    let n = u64::from(def.evaluation_periods);
    (0..n)
        .map(|k| {
            let from = end.saturating_sub((n - k) * period);
            let to = end.saturating_sub((n - k - 1) * period);
            let values: Vec<f64> = samples
                .iter()
                .filter(|s| s.at >= from && s.at < to)
                .map(|s| s.value)
                .collect();
            aggregate(def.statistic, &values)
        })
        .collect()
}

/// Evaluates `def` over `samples` at `now`, from state `current`.
pub fn evaluate(
    def: &AlarmDefinition,
    samples: &[Sample],
    now: Millis,
    current: AlarmState,
) -> Evaluation {
    let points = datapoints(def, samples, now);
    let missing_breaches = match def.treat_missing {
        TreatMissingData::Breaching => Some(true),
        TreatMissingData::NotBreaching => Some(false),
        TreatMissingData::Missing | TreatMissingData::Ignore => None,
    };
    let verdicts: Vec<Option<bool>> = points
        .iter()
        .map(|p| match p {
            Some(v) => Some(def.comparison.breaches(*v, def.threshold)),
            None => missing_breaches,
        })
        .collect();
    let breaching = verdicts.iter().filter(|v| **v == Some(true)).count() as u32;
    let counted = verdicts.iter().filter(|v| v.is_some()).count();
    let listed = list(&points);
    let n = def.evaluation_periods;
    let crossed = |count: u32| {
        format!(
            "Threshold Crossed: {count} out of the last {n} datapoints [{listed}] {} {} the threshold ({}) (minimum {} for ALARM; TreatMissingData: {}).",
            if count == 1 { "was" } else { "were" },
            def.comparison.words(),
            number(def.threshold),
            def.datapoints_to_alarm,
            def.treat_missing.as_str(),
        )
    };
    let (state, reason) = if breaching >= def.datapoints_to_alarm {
        (AlarmState::Alarm, crossed(breaching))
    } else if counted == 0 {
        let state = match def.treat_missing {
            TreatMissingData::Ignore => current,
            _ => AlarmState::InsufficientData,
        };
        let reason = format!(
            "No datapoints in the last {n} periods of {} s (TreatMissingData: {}).",
            def.period_secs,
            def.treat_missing.as_str()
        );
        (state, reason)
    } else {
        (AlarmState::Ok, crossed(breaching))
    };
    Evaluation {
        state,
        reason,
        datapoints: points,
    }
}

/// `1, 2.5, missing`.
fn list(points: &[Option<f64>]) -> String {
    points
        .iter()
        .map(|p| p.map_or_else(|| "missing".to_string(), number))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A number as people write it: `3`, `2.5`.
pub fn number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definition::{Comparison, Metric};

    const P: u64 = 60_000;
    /// A period boundary, well after the epoch.
    const T0: Millis = 1_767_225_600_000;

    fn def(n: u32, m: u32, treat: TreatMissingData) -> AlarmDefinition {
        AlarmDefinition {
            name: "a".into(),
            queue: "q".into(),
            metric: Metric::ApproximateNumberOfMessagesVisible,
            statistic: Statistic::Maximum,
            period_secs: 60,
            evaluation_periods: n,
            datapoints_to_alarm: m,
            threshold: 1.0,
            comparison: Comparison::GreaterThanOrEqualToThreshold,
            treat_missing: treat,
            actions: vec![],
            description: None,
        }
    }

    fn s(at: Millis, value: f64) -> Sample {
        Sample { at, value }
    }

    /// M2: each statistic over one period's samples.
    #[test]
    fn m2_statistics() {
        let v = [3.0, 1.0, 2.0];
        assert_eq!(aggregate(Statistic::Average, &v), Some(2.0));
        assert_eq!(aggregate(Statistic::Sum, &v), Some(6.0));
        assert_eq!(aggregate(Statistic::Minimum, &v), Some(1.0));
        assert_eq!(aggregate(Statistic::Maximum, &v), Some(3.0));
        assert_eq!(aggregate(Statistic::SampleCount, &v), Some(3.0));
        assert_eq!(aggregate(Statistic::Sum, &[]), None);
    }

    /// M2: periods are complete and aligned: a sample at the end of the
    /// current period is not read until the period is over; samples before
    /// the range are not read at all.
    #[test]
    fn m2_periods_are_complete_and_aligned() {
        let d = def(2, 1, TreatMissingData::Missing);
        let samples = [
            s(T0 - 1, 100.0),
            s(T0, 1.0),
            s(T0 + 30_000, 4.0),
            s(T0 + P, 2.0),
            s(T0 + 2 * P, 9.0),
        ];
        // At T0+2P the range is [T0, T0+P) and [T0+P, T0+2P).
        assert_eq!(
            datapoints(&d, &samples, T0 + 2 * P),
            vec![Some(4.0), Some(2.0)]
        );
        // Anywhere inside the next period, still the same two.
        assert_eq!(
            datapoints(&d, &samples, T0 + 3 * P - 1),
            vec![Some(4.0), Some(2.0)]
        );
        assert_eq!(
            datapoints(&d, &samples, T0 + 3 * P),
            vec![Some(2.0), Some(9.0)]
        );
    }

    /// M2: every comparison, at and around the threshold.
    #[test]
    fn m2_thresholds_and_comparisons() {
        use Comparison::*;
        for (op, below, at, above) in [
            (GreaterThanOrEqualToThreshold, false, true, true),
            (GreaterThanThreshold, false, false, true),
            (LessThanThreshold, true, false, false),
            (LessThanOrEqualToThreshold, true, true, false),
        ] {
            let mut d = def(1, 1, TreatMissingData::Missing);
            d.comparison = op;
            d.threshold = 5.0;
            for (value, breaches) in [(4.0, below), (5.0, at), (6.0, above)] {
                let e = evaluate(&d, &[s(T0, value)], T0 + P, AlarmState::Ok);
                let want = if breaches {
                    AlarmState::Alarm
                } else {
                    AlarmState::Ok
                };
                assert_eq!(e.state, want, "{op:?} {value}");
            }
        }
    }

    /// M2: M out of N: ALARM needs `datapoints_to_alarm` breaching periods
    /// among the last `evaluation_periods`; the reason says which.
    #[test]
    fn m2_m_out_of_n() {
        let d = def(3, 2, TreatMissingData::Missing);
        let one = [s(T0, 0.0), s(T0 + P, 3.0), s(T0 + 2 * P, 0.0)];
        let e = evaluate(&d, &one, T0 + 3 * P, AlarmState::Ok);
        assert_eq!(e.state, AlarmState::Ok);
        assert_eq!(e.datapoints, vec![Some(0.0), Some(3.0), Some(0.0)]);
        assert_eq!(
            e.reason,
            "Threshold Crossed: 1 out of the last 3 datapoints [0, 3, 0] was greater than or equal to the threshold (1) (minimum 2 for ALARM; TreatMissingData: missing)."
        );
        let two = [s(T0, 2.0), s(T0 + P, 0.0), s(T0 + 2 * P, 1.0)];
        let e = evaluate(&d, &two, T0 + 3 * P, AlarmState::Ok);
        assert_eq!(e.state, AlarmState::Alarm);
        assert!(
            e.reason
                .starts_with("Threshold Crossed: 2 out of the last 3 datapoints [2, 0, 1] were")
        );
    }

    /// M2: each TreatMissingData, with every period missing and with some.
    #[test]
    fn m2_missing_data_treatments() {
        use AlarmState::*;
        use TreatMissingData::*;
        let now = T0 + 3 * P;
        // No samples at all.
        for (treat, from, want) in [
            (Missing, Ok, InsufficientData),
            (Missing, Alarm, InsufficientData),
            (NotBreaching, Alarm, Ok),
            (NotBreaching, InsufficientData, Ok),
            (Breaching, Ok, Alarm),
            (Ignore, Alarm, Alarm),
            (Ignore, Ok, Ok),
            (Ignore, InsufficientData, InsufficientData),
        ] {
            let e = evaluate(&def(3, 2, treat), &[], now, from);
            assert_eq!(e.state, want, "{treat:?} from {from:?}");
            assert_eq!(e.datapoints, vec![None, None, None]);
        }
        // One breaching datapoint, two missing, 2 of 3 needed.
        let one = [s(T0 + P, 7.0)];
        for (treat, want) in [
            (Missing, Ok),
            (NotBreaching, Ok),
            (Breaching, Alarm),
            (Ignore, Ok),
        ] {
            let e = evaluate(&def(3, 2, treat), &one, now, Alarm);
            assert_eq!(e.state, want, "{treat:?}");
            assert_eq!(e.datapoints, vec![None, Some(7.0), None]);
        }
        let e = evaluate(&def(3, 2, Missing), &[], now, Ok);
        assert_eq!(
            e.reason,
            "No datapoints in the last 3 periods of 60 s (TreatMissingData: missing)."
        );
    }

    #[test]
    fn numbers_read_as_written() {
        assert_eq!(number(3.0), "3");
        assert_eq!(number(2.5), "2.5");
        assert_eq!(number(-1.0), "-1");
    }
}

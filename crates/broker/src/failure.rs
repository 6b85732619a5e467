//! What a message's failures leave with it, and where a nack sends it
//! (rules X2, X7): the last reason a consumer gave, how many failures of
//! each class it has had, and the decision between a retry and a
//! dead-letter queue. Every engine stores the record as one text beside the
//! message (where the failure reason alone used to be) and decides here.

use sluice_core::attributes::QueueConfig;
use sluice_core::message::MessageAttributes;

use crate::EngineError;
use crate::moves::{recorded_class, recorded_failure};
use crate::types::Nack;

/// Starts a record that carries class counts; a reason alone is stored as
/// its bare text, as it always was. No stored reason starts with U+0001:
/// NackMessage refuses a reason with characters a message body may not
/// hold (U+0001 among them), and a push consumer's reasons all start with
/// `consumer NAME:`. So the two forms never mix.
const CLASSES_MARK: char = '\u{1}';

/// A message's failures so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FailureRecord {
    /// The last reason a consumer gave.
    pub reason: Option<String>,
    /// Failures per class, the latest class first.
    pub classes: Vec<(String, u32)>,
}

impl FailureRecord {
    /// Reads a stored record (`None`: the message never failed).
    pub fn decode(stored: Option<&str>) -> Self {
        let Some(text) = stored else {
            return Self::default();
        };
        let Some(rest) = text.strip_prefix(CLASSES_MARK) else {
            return Self {
                reason: Some(text.to_string()),
                classes: Vec::new(),
            };
        };
        let (tally, reason) = rest.split_once('\n').unwrap_or((rest, ""));
        let classes = tally
            .split(',')
            .filter_map(|entry| {
                let (class, count) = entry.split_once('=')?;
                Some((class.to_string(), count.parse().ok()?))
            })
            .collect();
        Self {
            reason: (!reason.is_empty()).then(|| reason.to_string()),
            classes,
        }
    }

    /// The text an engine stores (`None`: nothing to store).
    pub fn encode(&self) -> Option<String> {
        if self.classes.is_empty() {
            return self.reason.clone();
        }
        let mut out = String::from(CLASSES_MARK);
        for (i, (class, count)) in self.classes.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(class);
            out.push('=');
            out.push_str(&count.to_string());
        }
        out.push('\n');
        out.push_str(self.reason.as_deref().unwrap_or_default());
        Some(out)
    }

    /// The class of the latest classified failure.
    pub fn last_class(&self) -> Option<&str> {
        self.classes.first().map(|(class, _)| class.as_str())
    }

    /// Failures of `class` so far.
    pub fn count_of(&self, class: &str) -> u32 {
        self.classes
            .iter()
            .find(|(c, _)| c == class)
            .map_or(0, |(_, n)| *n)
    }

    /// Counts a nack's failure: its reason replaces the last one (a nack
    /// without a reason keeps it), its class counts one more and becomes
    /// the latest.
    pub fn note(&mut self, reason: Option<&str>, class: Option<&str>) {
        if let Some(reason) = reason {
            self.reason = Some(reason.to_string());
        }
        if let Some(class) = class {
            let count = self.count_of(class).saturating_add(1);
            self.classes.retain(|(c, _)| c != class);
            self.classes.insert(0, (class.to_string(), count));
        }
    }
}

/// The failure reason and class a peek shows (rules X1, X7): the
/// message's own record where it failed, or what its provenance recorded
/// when it failed in another queue and was dead-lettered.
pub fn shown(
    stored: Option<&str>,
    system_attributes: &MessageAttributes,
) -> (Option<String>, Option<String>) {
    let record = FailureRecord::decode(stored);
    let class = record.last_class().map(str::to_string);
    (
        record
            .reason
            .or_else(|| recorded_failure(system_attributes).map(str::to_string)),
        class.or_else(|| recorded_class(system_attributes).map(str::to_string)),
    )
}

/// Where a nacked message goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NackOutcome {
    /// Visible again, after the nack's or the queue's delay.
    Retry,
    /// Into the dead-letter queue this ARN names, now.
    DeadLetter {
        /// The DLQ's ARN, as the queue's attribute gives it.
        target_arn: String,
        /// What moved it, for the logs.
        trigger: &'static str,
    },
}

/// Counts `nack` into `record` and decides where the message goes: its
/// class's route once that class's failures reach the route's count (at
/// once when permanent), else the `RedrivePolicy` DLQ when permanent, else
/// a retry (rule X7). A nack without a class takes the class whose route's
/// `reasonContains` its reason matches, if any.
pub fn decide(
    config: &QueueConfig,
    record: &mut FailureRecord,
    nack: &Nack,
) -> Result<NackOutcome, EngineError> {
    let routes = config.routes().unwrap_or_default();
    // Without a class, the routes' reason rules may give one.
    let class = nack.class.as_deref().or_else(|| {
        nack.reason
            .as_deref()
            .and_then(|reason| routes.class_of_reason(reason))
    });
    record.note(nack.reason.as_deref(), class);
    if let Some(route) = class.and_then(|c| routes.route_of(c))
        && (nack.permanent || record.count_of(&route.class) >= route.max_receive_count)
    {
        return Ok(NackOutcome::DeadLetter {
            target_arn: route.dead_letter_target_arn.clone(),
            trigger: "failure class route",
        });
    }
    if nack.permanent {
        let policy = config.redrive().ok_or(EngineError::NoRedrivePolicy)?;
        return Ok(NackOutcome::DeadLetter {
            target_arn: policy.dead_letter_target_arn,
            trigger: "permanent nack",
        });
    }
    Ok(NackOutcome::Retry)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DLQ: &str = "arn:aws:sqs:us-east-1:000000000000:main-dlq";
    const BAD: &str = "arn:aws:sqs:us-east-1:000000000000:invalid-dlq";

    fn config() -> QueueConfig {
        let mut c = QueueConfig::default();
        let attrs = [
            (
                "RedrivePolicy".to_string(),
                format!(r#"{{"deadLetterTargetArn":"{DLQ}","maxReceiveCount":5}}"#),
            ),
            (
                "SluiceDeadLetterRoutes".to_string(),
                format!(
                    r#"[{{"class":"validation","deadLetterTargetArn":"{BAD}","maxReceiveCount":1}},
                        {{"class":"infra","deadLetterTargetArn":"{BAD}","maxReceiveCount":3,"reasonContains":"HTTP 503"}}]"#
                ),
            ),
        ];
        c.apply(&attrs.into_iter().collect(), false).unwrap();
        c
    }

    fn nack(class: Option<&str>, permanent: bool) -> Nack {
        Nack {
            reason: Some("boom".into()),
            class: class.map(str::to_string),
            permanent,
            retry_after_seconds: None,
        }
    }

    #[test]
    fn x7_a_record_round_trips_and_a_bare_reason_is_read_as_before() {
        assert_eq!(FailureRecord::decode(None), FailureRecord::default());
        let old = FailureRecord::decode(Some("invalid JSON"));
        assert_eq!(old.reason.as_deref(), Some("invalid JSON"));
        assert_eq!(old.encode().as_deref(), Some("invalid JSON"));
        let mut r = FailureRecord::default();
        r.note(Some("line 1\nline 2"), Some("infra"));
        r.note(None, Some("validation"));
        r.note(Some("again"), Some("infra"));
        assert_eq!(r.last_class(), Some("infra"));
        assert_eq!((r.count_of("infra"), r.count_of("validation")), (2, 1));
        let back = FailureRecord::decode(r.encode().as_deref());
        assert_eq!(back, r);
        assert_eq!(back.reason.as_deref(), Some("again"));
        let mut no_reason = FailureRecord::default();
        no_reason.note(None, Some("x"));
        assert_eq!(
            FailureRecord::decode(no_reason.encode().as_deref()),
            no_reason
        );
    }

    #[test]
    fn x7_a_routed_class_moves_at_its_count_others_follow_the_redrive_policy() {
        let c = config();
        let mut r = FailureRecord::default();
        for _ in 0..2 {
            assert_eq!(
                decide(&c, &mut r, &nack(Some("infra"), false)),
                Ok(NackOutcome::Retry)
            );
        }
        let to_bad = NackOutcome::DeadLetter {
            target_arn: BAD.into(),
            trigger: "failure class route",
        };
        assert_eq!(
            decide(&c, &mut r, &nack(Some("infra"), false)),
            Ok(to_bad.clone())
        );
        let mut r = FailureRecord::default();
        assert_eq!(
            decide(&c, &mut r, &nack(Some("validation"), false)),
            Ok(to_bad.clone())
        );
        // An unrouted class and no class retry, and a permanent one goes
        // where RedrivePolicy says.
        let mut r = FailureRecord::default();
        assert_eq!(
            decide(&c, &mut r, &nack(Some("other"), false)),
            Ok(NackOutcome::Retry)
        );
        assert_eq!(
            decide(&c, &mut r, &nack(None, false)),
            Ok(NackOutcome::Retry)
        );
        assert_eq!(
            decide(&c, &mut r, &nack(Some("other"), true)),
            Ok(NackOutcome::DeadLetter {
                target_arn: DLQ.into(),
                trigger: "permanent nack"
            })
        );
        // A reason alone picks its class by the routes' rules; a class
        // given wins over the rules.
        let mut r = FailureRecord::default();
        let reason = |text: &str, class: Option<&str>| Nack {
            reason: Some(text.into()),
            class: class.map(str::to_string),
            ..Nack::default()
        };
        for _ in 0..2 {
            let got = decide(&c, &mut r, &reason("consumer w: HTTP 503", None));
            assert_eq!(got, Ok(NackOutcome::Retry));
        }
        assert_eq!(r.last_class(), Some("infra"));
        let got = decide(&c, &mut r, &reason("HTTP 503", Some("other")));
        assert_eq!((got, r.count_of("infra")), (Ok(NackOutcome::Retry), 2));
        let got = decide(&c, &mut r, &reason("HTTP 503 again", None));
        assert_eq!(got, Ok(to_bad.clone()));
        // A permanent failure of a routed class takes its route at once.
        let mut r = FailureRecord::default();
        assert_eq!(decide(&c, &mut r, &nack(Some("infra"), true)), Ok(to_bad));
        // Without a RedrivePolicy a permanent unrouted failure is refused.
        let mut r = FailureRecord::default();
        assert_eq!(
            decide(&QueueConfig::default(), &mut r, &nack(None, true)),
            Err(EngineError::NoRedrivePolicy)
        );
    }
}

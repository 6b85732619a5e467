//! Queue attributes (rule V11): which exist, which can be set, their ranges,
//! and the typed configuration they make.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::dead_letter_routes::DeadLetterRoutes;
use crate::error::{ErrorCode, SqsError};
use crate::fifo_settings::{DeduplicationScope, FifoThroughputLimit};
use crate::limits::*;
use crate::retry_backoff::RetryBackoff;

/// Attribute names a client may set with CreateQueue or SetQueueAttributes.
pub const SETTABLE: &[&str] = &[
    "DelaySeconds",
    "MaximumMessageSize",
    "MessageRetentionPeriod",
    "Policy",
    "ReceiveMessageWaitTimeSeconds",
    "VisibilityTimeout",
    "RedrivePolicy",
    "RedriveAllowPolicy",
    "KmsMasterKeyId",
    "KmsDataKeyReusePeriodSeconds",
    "SqsManagedSseEnabled",
    "FifoQueue",
    "ContentBasedDeduplication",
    "DeduplicationScope",
    "FifoThroughputLimit",
    crate::retry_backoff::ATTRIBUTE,
    crate::dead_letter_routes::ATTRIBUTE,
    ARCHIVE_EXPIRED,
];

/// sluice's attribute that keeps what the queue's retention drops: its
/// messages go to the archive before they leave the queue (rule X8).
pub const ARCHIVE_EXPIRED: &str = "SluiceArchiveExpired";

/// Attribute names only the server sets.
pub const READ_ONLY: &[&str] = &[
    "ApproximateNumberOfMessages",
    "ApproximateNumberOfMessagesNotVisible",
    "ApproximateNumberOfMessagesDelayed",
    "CreatedTimestamp",
    "LastModifiedTimestamp",
    "QueueArn",
];

/// Attributes that only FIFO queues have.
const FIFO_ONLY: &[&str] = &[
    "FifoQueue",
    "ContentBasedDeduplication",
    "DeduplicationScope",
    "FifoThroughputLimit",
];

/// True for any name GetQueueAttributes accepts (besides `All`).
pub fn is_known_attribute(name: &str) -> bool {
    SETTABLE.contains(&name) || READ_ONLY.contains(&name)
}

/// A queue's settable configuration, typed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueConfig {
    /// A FIFO queue (fixed at creation).
    pub fifo: bool,
    /// Default delay of new messages, seconds.
    pub delay_seconds: u32,
    /// Largest message in bytes.
    pub maximum_message_size: u32,
    /// How long a message is kept, seconds.
    pub message_retention_period: u32,
    /// Default long-poll wait, seconds.
    pub receive_message_wait_time_seconds: u32,
    /// Default visibility timeout, seconds.
    pub visibility_timeout: u32,
    /// The access policy document, as given.
    pub policy: Option<String>,
    /// The redrive policy document (rule R1), normalised.
    pub redrive_policy: Option<String>,
    /// The redrive-allow policy document (rule R5), normalised.
    pub redrive_allow_policy: Option<String>,
    /// KMS key id, kept and shown; sluice does not encrypt with KMS.
    pub kms_master_key_id: Option<String>,
    /// KMS data key reuse period, seconds.
    pub kms_data_key_reuse_period_seconds: u32,
    /// Server-side encryption flag, kept and shown.
    pub sqs_managed_sse_enabled: bool,
    /// FIFO: deduplicate by body hash.
    pub content_based_deduplication: bool,
    /// FIFO: `queue` or `messageGroup`.
    pub deduplication_scope: DeduplicationScope,
    /// FIFO: `perQueue` or `perMessageGroupId`.
    pub fifo_throughput_limit: FifoThroughputLimit,
    /// sluice's retry backoff policy document, normalised (absent in
    /// records written before it existed).
    #[serde(default)]
    pub retry_backoff: Option<String>,
    /// sluice's dead-letter routes by failure class (rule X7), normalised.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dead_letter_routes: Option<String>,
    /// Messages reaching retention are archived before they leave (rule X8).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub archive_expired: bool,
    /// FIFO: the `DeduplicationScope` given at creation, which governs
    /// deduplication even after SetQueueAttributes changes the attribute
    /// (rule F12); `None` when none was given (or in records written
    /// before it was kept), and then `deduplication_scope` governs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creation_deduplication_scope: Option<DeduplicationScope>,
}

impl Default for QueueConfig {
    fn default() -> Self {
        Self {
            fifo: false,
            delay_seconds: 0,
            maximum_message_size: MAX_MESSAGE_SIZE,
            message_retention_period: DEFAULT_RETENTION,
            receive_message_wait_time_seconds: 0,
            visibility_timeout: DEFAULT_VISIBILITY_TIMEOUT,
            policy: None,
            redrive_policy: None,
            redrive_allow_policy: None,
            kms_master_key_id: None,
            kms_data_key_reuse_period_seconds: DEFAULT_KMS_REUSE,
            sqs_managed_sse_enabled: true,
            content_based_deduplication: false,
            deduplication_scope: DeduplicationScope::Queue,
            fifo_throughput_limit: FifoThroughputLimit::PerQueue,
            retry_backoff: None,
            dead_letter_routes: None,
            archive_expired: false,
            creation_deduplication_scope: None,
        }
    }
}

pub use crate::redrive_policy::{RedriveAllowPolicy, RedrivePolicy};

fn invalid_value(name: &str) -> SqsError {
    SqsError::new(
        ErrorCode::InvalidAttributeValue,
        format!("Invalid value for the parameter {name}."),
    )
}

fn unknown_attribute(name: &str) -> SqsError {
    SqsError::new(
        ErrorCode::InvalidAttributeName,
        format!("Unknown Attribute {name}."),
    )
}

/// A request may not enable SSE-KMS and SSE-SQS together (rule V14; AWS's
/// recorded answer, LocalStack snapshot
/// test_sqs.py::test_sse_kms_and_sqs_are_mutually_exclusive).
fn check_one_sse_kind(attrs: &BTreeMap<String, String>) -> Result<(), SqsError> {
    let kms = attrs.get("KmsMasterKeyId").is_some_and(|v| !v.is_empty());
    let sqs = attrs
        .get("SqsManagedSseEnabled")
        .is_some_and(|v| v.eq_ignore_ascii_case("true"));
    if kms && sqs {
        return Err(SqsError::new(
            ErrorCode::InvalidAttributeName,
            "You can use one type of server-side encryption (SSE) at one time. You can either enable KMS SSE or SQS SSE.",
        ));
    }
    Ok(())
}

/// A FIFO-only attribute given for a standard queue (rule F6), with the
/// message SQS gives for each.
fn not_for_standard_queues(name: &str) -> SqsError {
    match name {
        "DeduplicationScope" | "FifoThroughputLimit" => SqsError::new(
            ErrorCode::InvalidAttributeName,
            format!("You can specify the {name} only when FifoQueue is set to true."),
        ),
        _ => unknown_attribute(name),
    }
}

fn parse_range(name: &str, value: &str, min: u32, max: u32) -> Result<u32, SqsError> {
    value
        .trim()
        .parse::<u32>()
        .ok()
        .filter(|v| (min..=max).contains(v))
        .ok_or_else(|| invalid_value(name))
}

fn parse_bool(name: &str, value: &str) -> Result<bool, SqsError> {
    match value.to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(invalid_value(name)),
    }
}

fn non_empty(value: &str) -> Option<String> {
    (!value.is_empty()).then(|| value.to_string())
}

impl QueueConfig {
    /// The configuration of a new queue named `name` with the given attributes.
    ///
    /// Checks FIFO consistency: `FifoQueue=true` needs a `.fifo` name and a
    /// `.fifo` name needs `FifoQueue=true`.
    pub fn for_create(name: &str, attrs: &BTreeMap<String, String>) -> Result<Self, SqsError> {
        let fifo_attr = match attrs.get("FifoQueue") {
            Some(v) => parse_bool("FifoQueue", v)?,
            None => false,
        };
        let fifo_name = crate::queue_name::is_fifo_name(name);
        if fifo_attr && !fifo_name {
            return Err(SqsError::invalid_parameter(
                "The name of a FIFO queue can only include alphanumeric characters, hyphens, or underscores, must end with .fifo suffix and be 1 to 80 in length.",
            ));
        }
        if fifo_name && !fifo_attr {
            return Err(SqsError::invalid_parameter(
                "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length",
            ));
        }
        let mut config = QueueConfig {
            fifo: fifo_attr,
            ..Default::default()
        };
        config.apply(attrs, true)?;
        // SQS keeps deduplicating in the scope the queue was created with
        // (rule F12).
        config.creation_deduplication_scope = config.fifo.then_some(config.deduplication_scope);
        Ok(config)
    }

    /// Applies changed attributes (SetQueueAttributes, or CreateQueue when
    /// `creating`). All-or-nothing: on error `self` is unchanged.
    pub fn apply(
        &mut self,
        attrs: &BTreeMap<String, String>,
        creating: bool,
    ) -> Result<(), SqsError> {
        check_one_sse_kind(attrs)?;
        let mut next = self.clone();
        for (name, value) in attrs {
            next.set_one(name, value, creating)?;
        }
        // One kind of server-side encryption at a time (rule V14): a KMS key
        // given without SqsManagedSseEnabled turns SSE-SQS off.
        if attrs.contains_key("KmsMasterKeyId")
            && !attrs.contains_key("SqsManagedSseEnabled")
            && next.kms_master_key_id.is_some()
        {
            next.sqs_managed_sse_enabled = false;
        }
        if !next.fifo && next.content_based_deduplication {
            return Err(unknown_attribute("ContentBasedDeduplication"));
        }
        // High-throughput FIFO needs both settings (rule F2).
        if next.fifo_throughput_limit == FifoThroughputLimit::PerMessageGroupId
            && next.deduplication_scope != DeduplicationScope::MessageGroup
        {
            return Err(SqsError::new(
                ErrorCode::InvalidAttributeValue,
                "Invalid value for the parameter FifoThroughputLimit. Reason: perMessageGroupId is only allowed with DeduplicationScope messageGroup.",
            ));
        }
        *self = next;
        Ok(())
    }

    fn set_one(&mut self, name: &str, value: &str, creating: bool) -> Result<(), SqsError> {
        if FIFO_ONLY.contains(&name) && !self.fifo {
            return Err(not_for_standard_queues(name));
        }
        match name {
            "DelaySeconds" => self.delay_seconds = parse_range(name, value, 0, MAX_DELAY)?,
            "MaximumMessageSize" => {
                self.maximum_message_size =
                    parse_range(name, value, MIN_MAX_MESSAGE_SIZE, MAX_MESSAGE_SIZE)?
            }
            "MessageRetentionPeriod" => {
                self.message_retention_period =
                    parse_range(name, value, MIN_RETENTION, MAX_RETENTION)?
            }
            "ReceiveMessageWaitTimeSeconds" => {
                self.receive_message_wait_time_seconds = parse_range(name, value, 0, MAX_WAIT_TIME)?
            }
            "VisibilityTimeout" => {
                self.visibility_timeout = parse_range(name, value, 0, MAX_VISIBILITY_TIMEOUT)?
            }
            "KmsDataKeyReusePeriodSeconds" => {
                self.kms_data_key_reuse_period_seconds =
                    parse_range(name, value, KMS_REUSE_RANGE.0, KMS_REUSE_RANGE.1)?
            }
            "Policy" => {
                if !value.is_empty()
                    && !serde_json::from_str::<serde_json::Value>(value)
                        .is_ok_and(|v| v.is_object())
                {
                    return Err(invalid_value(name));
                }
                self.policy = non_empty(value);
            }
            "RedrivePolicy" => {
                self.redrive_policy = if value.is_empty() {
                    None
                } else {
                    Some(RedrivePolicy::parse(value)?.to_document())
                }
            }
            "RedriveAllowPolicy" => {
                self.redrive_allow_policy = if value.is_empty() {
                    None
                } else {
                    Some(RedriveAllowPolicy::parse(value)?.to_document())
                }
            }
            "KmsMasterKeyId" => self.kms_master_key_id = non_empty(value),
            "SqsManagedSseEnabled" => self.sqs_managed_sse_enabled = parse_bool(name, value)?,
            "FifoQueue" => {
                // Fixed at creation: repeating the same value is allowed
                // (rule V17: a FIFO queue may be told FifoQueue=true again,
                // never false).
                if !parse_bool(name, value)? {
                    return Err(if creating {
                        invalid_value(name)
                    } else {
                        SqsError::new(
                            ErrorCode::InvalidAttributeValue,
                            "Invalid value for the parameter FifoQueue. Reason: Modifying queue type is not supported.",
                        )
                    });
                }
            }
            "ContentBasedDeduplication" => {
                self.content_based_deduplication = parse_bool(name, value)?
            }
            "DeduplicationScope" => {
                self.deduplication_scope =
                    DeduplicationScope::parse(value).ok_or_else(|| invalid_value(name))?
            }
            "FifoThroughputLimit" => {
                self.fifo_throughput_limit =
                    FifoThroughputLimit::parse(value).ok_or_else(|| invalid_value(name))?
            }
            crate::retry_backoff::ATTRIBUTE => {
                self.retry_backoff = if value.is_empty() {
                    None
                } else {
                    Some(RetryBackoff::parse(value)?.to_document())
                }
            }
            crate::dead_letter_routes::ATTRIBUTE => {
                self.dead_letter_routes = if value.is_empty() {
                    None
                } else {
                    Some(DeadLetterRoutes::parse(value)?.to_document())
                }
            }
            ARCHIVE_EXPIRED => self.archive_expired = parse_bool(name, value)?,
            _ => return Err(unknown_attribute(name)),
        }
        Ok(())
    }

    /// FIFO: true when deduplication ids count per message group: in the
    /// scope the queue was created with, whatever the attribute says since
    /// (rule F12).
    pub fn deduplicates_per_group(&self) -> bool {
        self.creation_deduplication_scope
            .unwrap_or(self.deduplication_scope)
            == DeduplicationScope::MessageGroup
    }

    /// The parsed redrive policy, if one is set.
    pub fn redrive(&self) -> Option<RedrivePolicy> {
        self.redrive_policy
            .as_deref()
            .and_then(|d| RedrivePolicy::parse(d).ok())
    }

    /// The redrive policy that moves messages out of the queue named
    /// `own_name` on receive: none when it names that queue itself, which
    /// AWS accepts (rule R12); moving a message into its own queue would
    /// leave it counted yet never delivered, so it stays deliverable.
    /// `own_name` may be the queue's key (rule W3): a queue and its DLQ
    /// share a region, so their names compare without it.
    pub fn redrive_out_of(&self, own_name: &str) -> Option<RedrivePolicy> {
        let own = crate::queue_name::name_of_key(own_name);
        self.redrive()
            .filter(|p| p.dead_letter_target_arn.rsplit(':').next() != Some(own))
    }

    /// The parsed dead-letter routes (rule X7), if any are set.
    pub fn routes(&self) -> Option<DeadLetterRoutes> {
        self.dead_letter_routes
            .as_deref()
            .and_then(|d| DeadLetterRoutes::parse(d).ok())
    }

    /// The ARNs of every dead-letter queue this queue sends messages to:
    /// its RedrivePolicy's, then its failure classes' (rule X7), each once.
    pub fn dead_letter_targets(&self) -> Vec<String> {
        crate::dead_letter_routes::dead_letter_targets(
            self.redrive().map(|p| p.dead_letter_target_arn),
            self.routes()
                .unwrap_or_default()
                .0
                .into_iter()
                .map(|r| r.dead_letter_target_arn),
        )
    }

    /// The parsed retry backoff policy, if one is set.
    pub fn backoff(&self) -> Option<RetryBackoff> {
        self.retry_backoff
            .as_deref()
            .and_then(|d| RetryBackoff::parse(d).ok())
    }

    /// The settable attributes as GetQueueAttributes shows them; unset
    /// optional documents are left out, as SQS does.
    pub fn to_attributes(&self) -> BTreeMap<&'static str, String> {
        let mut out = BTreeMap::new();
        out.insert("DelaySeconds", self.delay_seconds.to_string());
        out.insert("MaximumMessageSize", self.maximum_message_size.to_string());
        out.insert(
            "MessageRetentionPeriod",
            self.message_retention_period.to_string(),
        );
        out.insert(
            "ReceiveMessageWaitTimeSeconds",
            self.receive_message_wait_time_seconds.to_string(),
        );
        out.insert("VisibilityTimeout", self.visibility_timeout.to_string());
        out.insert(
            "SqsManagedSseEnabled",
            self.sqs_managed_sse_enabled.to_string(),
        );
        if let Some(p) = &self.policy {
            out.insert("Policy", p.clone());
        }
        if let Some(p) = &self.redrive_policy {
            out.insert("RedrivePolicy", p.clone());
        }
        if let Some(p) = &self.redrive_allow_policy {
            out.insert("RedriveAllowPolicy", p.clone());
        }
        if let Some(k) = &self.kms_master_key_id {
            out.insert("KmsMasterKeyId", k.clone());
            out.insert(
                "KmsDataKeyReusePeriodSeconds",
                self.kms_data_key_reuse_period_seconds.to_string(),
            );
        }
        if let Some(p) = &self.retry_backoff {
            out.insert(crate::retry_backoff::ATTRIBUTE, p.clone());
        }
        if let Some(p) = &self.dead_letter_routes {
            out.insert(crate::dead_letter_routes::ATTRIBUTE, p.clone());
        }
        if self.archive_expired {
            out.insert(ARCHIVE_EXPIRED, "true".into());
        }
        if self.fifo {
            out.insert("FifoQueue", "true".into());
            out.insert(
                "ContentBasedDeduplication",
                self.content_based_deduplication.to_string(),
            );
            out.insert("DeduplicationScope", self.deduplication_scope.to_string());
            out.insert(
                "FifoThroughputLimit",
                self.fifo_throughput_limit.to_string(),
            );
        }
        out
    }

    /// Would CreateQueue with `attrs` describe this queue? (rule V9)
    ///
    /// Compares each given attribute with the queue's value after the same
    /// normalisation; attributes not given are not compared.
    pub fn matches(&self, name: &str, attrs: &BTreeMap<String, String>) -> bool {
        self.first_mismatch(name, attrs).is_none()
    }

    /// The first attribute (by name) of a CreateQueue request whose value
    /// differs from this queue's current one, which `QueueAlreadyExists`
    /// names (rules V9, V13); `None` when the request describes the queue.
    pub fn first_mismatch(&self, name: &str, attrs: &BTreeMap<String, String>) -> Option<String> {
        let Ok(wanted) = QueueConfig::for_create(name, attrs) else {
            return attrs.keys().next().cloned();
        };
        let have = self.to_attributes();
        let want = wanted.to_attributes();
        attrs
            .keys()
            .find(|k| have.get(k.as_str()) != want.get(k.as_str()))
            .cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn x7_dead_letter_targets_are_the_redrive_policys_then_the_routes() {
        let arn = |n: &str| format!("arn:aws:sqs:us-east-1:000000000000:{n}");
        let routes = format!(
            r#"[{{"class":"a","deadLetterTargetArn":"{}","maxReceiveCount":1}},{{"class":"b","deadLetterTargetArn":"{}","maxReceiveCount":1}},{{"class":"c","deadLetterTargetArn":"{}","maxReceiveCount":1}}]"#,
            arn("invalid"),
            arn("main"),
            arn("invalid")
        );
        let redrive = format!(
            r#"{{"deadLetterTargetArn":"{}","maxReceiveCount":5}}"#,
            arn("main")
        );
        let c = QueueConfig::for_create(
            "q",
            &attrs(&[
                ("RedrivePolicy", &redrive),
                ("SluiceDeadLetterRoutes", &routes),
            ]),
        )
        .unwrap();
        assert_eq!(c.dead_letter_targets(), [arn("main"), arn("invalid")]);
        assert!(QueueConfig::default().dead_letter_targets().is_empty());
    }

    #[test]
    fn l3_ranges() {
        let ok = QueueConfig::for_create(
            "q",
            &attrs(&[
                ("VisibilityTimeout", "43200"),
                ("MessageRetentionPeriod", "60"),
                ("DelaySeconds", "900"),
                ("ReceiveMessageWaitTimeSeconds", "20"),
                ("MaximumMessageSize", "1024"),
            ]),
        )
        .unwrap();
        assert_eq!(ok.visibility_timeout, 43200);
        for (k, v) in [
            ("VisibilityTimeout", "43201"),
            ("VisibilityTimeout", "-1"),
            ("VisibilityTimeout", "abc"),
            ("MessageRetentionPeriod", "59"),
            ("MessageRetentionPeriod", "1209601"),
            ("DelaySeconds", "901"),
            ("ReceiveMessageWaitTimeSeconds", "21"),
            ("MaximumMessageSize", "1023"),
            ("MaximumMessageSize", "1048577"),
            ("Policy", "{not json"),
            ("SqsManagedSseEnabled", "yes"),
        ] {
            let e = QueueConfig::for_create("q", &attrs(&[(k, v)])).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidAttributeValue, "{k}={v}");
        }
    }

    #[test]
    fn v11_unknown_and_read_only_names() {
        for k in ["Bogus", "QueueArn", "ContentBasedDeduplication"] {
            let e = QueueConfig::for_create("q", &attrs(&[(k, "1")])).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidAttributeName, "{k}");
        }
    }

    #[test]
    fn v11_set_is_all_or_nothing() {
        let mut c = QueueConfig::default();
        let e = c
            .apply(
                &attrs(&[("DelaySeconds", "5"), ("VisibilityTimeout", "99999")]),
                false,
            )
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidAttributeValue);
        assert_eq!(c.delay_seconds, 0);
    }

    #[test]
    fn fifo_name_and_attribute_must_agree() {
        assert!(QueueConfig::for_create("q.fifo", &attrs(&[])).is_err());
        assert!(QueueConfig::for_create("q", &attrs(&[("FifoQueue", "true")])).is_err());
        let c = QueueConfig::for_create("q.fifo", &attrs(&[("FifoQueue", "true")])).unwrap();
        assert!(c.fifo);
    }

    /// F6: FIFO-only attributes on a standard queue, even `FifoQueue=false`,
    /// are refused with the messages SQS gives (AWS recorded answer,
    /// LocalStack snapshot test_sqs.py::test_create_standard_queue_with_fifo_attribute_raises_error).
    #[test]
    fn f6_fifo_only_attributes_on_a_standard_queue() {
        for (k, v, message) in [
            ("FifoQueue", "false", "Unknown Attribute FifoQueue."),
            (
                "ContentBasedDeduplication",
                "false",
                "Unknown Attribute ContentBasedDeduplication.",
            ),
            (
                "DeduplicationScope",
                "queue",
                "You can specify the DeduplicationScope only when FifoQueue is set to true.",
            ),
            (
                "FifoThroughputLimit",
                "perQueue",
                "You can specify the FifoThroughputLimit only when FifoQueue is set to true.",
            ),
        ] {
            let e = QueueConfig::for_create("q", &attrs(&[(k, v)])).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidAttributeName, "{k}");
            assert_eq!(e.message, message);
            let e = QueueConfig::default()
                .apply(&attrs(&[(k, v)]), false)
                .unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidAttributeName, "{k}");
        }
    }

    /// F7: SetQueueAttributes may repeat `FifoQueue=true` on a FIFO queue
    /// but not change the type (AWS recorded answer, LocalStack snapshot
    /// test_sqs.py::test_set_unsupported_attribute_fifo).
    #[test]
    fn f7_fifo_queue_attribute_after_creation() {
        let mut c = QueueConfig::for_create("q.fifo", &attrs(&[("FifoQueue", "true")])).unwrap();
        c.apply(&attrs(&[("FifoQueue", "true")]), false).unwrap();
        let e = c
            .apply(&attrs(&[("FifoQueue", "false")]), false)
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidAttributeValue);
        assert_eq!(
            e.message,
            "Invalid value for the parameter FifoQueue. Reason: Modifying queue type is not supported."
        );
        let e = QueueConfig::default()
            .apply(&attrs(&[("FifoQueue", "true")]), false)
            .unwrap_err();
        assert_eq!(e.message, "Unknown Attribute FifoQueue.");
    }

    /// F12: the deduplication scope a queue was created with keeps
    /// governing after SetQueueAttributes changes the attribute (AWS
    /// recorded answer, LocalStack snapshot
    /// test_sqs.py::test_fifo_change_to_high_throughput_after_creation).
    #[test]
    fn f12_deduplication_scope_is_fixed_at_creation() {
        let fifo = |pairs: &[(&str, &str)]| {
            let mut all = attrs(pairs);
            all.insert("FifoQueue".into(), "true".into());
            QueueConfig::for_create("q.fifo", &all).unwrap()
        };
        let high = [
            ("DeduplicationScope", "messageGroup"),
            ("FifoThroughputLimit", "perMessageGroupId"),
        ];
        let regular = [
            ("DeduplicationScope", "queue"),
            ("FifoThroughputLimit", "perQueue"),
        ];
        let mut c = fifo(&[]);
        assert!(!c.deduplicates_per_group());
        c.apply(&attrs(&high), false).unwrap();
        assert_eq!(c.to_attributes()["DeduplicationScope"], "messageGroup");
        assert!(!c.deduplicates_per_group());
        let mut c = fifo(&high);
        assert!(c.deduplicates_per_group());
        c.apply(&attrs(&regular), false).unwrap();
        assert!(c.deduplicates_per_group());
        // Records written before the creation scope was kept follow the attribute.
        let mut old = fifo(&[]);
        old.creation_deduplication_scope = None;
        old.deduplication_scope = DeduplicationScope::MessageGroup;
        assert!(old.deduplicates_per_group());
    }

    #[test]
    fn v9_matches_compares_given_attributes() {
        let c = QueueConfig::for_create("q", &attrs(&[("VisibilityTimeout", "40")])).unwrap();
        assert!(c.matches("q", &attrs(&[])));
        assert!(c.matches("q", &attrs(&[("VisibilityTimeout", "40")])));
        assert!(!c.matches("q", &attrs(&[("VisibilityTimeout", "41")])));
        assert!(c.matches("q", &attrs(&[("DelaySeconds", "0")])));
    }

    /// V13: the first differing attribute is named (AWS recorded answer,
    /// LocalStack snapshot test_create_queue_with_different_attributes_raises_exception).
    #[test]
    fn v13_first_mismatch_names_the_attribute() {
        let c = QueueConfig::for_create(
            "q",
            &attrs(&[
                ("ReceiveMessageWaitTimeSeconds", "1"),
                ("DelaySeconds", "1"),
            ]),
        )
        .unwrap();
        assert_eq!(
            c.first_mismatch("q", &attrs(&[("DelaySeconds", "1")])),
            None
        );
        assert_eq!(
            c.first_mismatch(
                "q",
                &attrs(&[
                    ("ReceiveMessageWaitTimeSeconds", "1"),
                    ("DelaySeconds", "2")
                ])
            )
            .as_deref(),
            Some("DelaySeconds")
        );
    }

    /// V14: SSE-KMS and SSE-SQS together are refused and nothing changes
    /// (AWS recorded answer, test_sse_kms_and_sqs_are_mutually_exclusive);
    /// SSE-SQS is on by default; a KMS key alone turns it off.
    #[test]
    fn v14_one_kind_of_sse() {
        let mut c = QueueConfig::default();
        assert!(c.sqs_managed_sse_enabled);
        let e = c
            .apply(
                &attrs(&[("KmsMasterKeyId", "k"), ("SqsManagedSseEnabled", "true")]),
                false,
            )
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidAttributeName);
        assert_eq!(
            e.message,
            "You can use one type of server-side encryption (SSE) at one time. You can either enable KMS SSE or SQS SSE."
        );
        assert_eq!(c, QueueConfig::default());
        c.apply(&attrs(&[("KmsMasterKeyId", "k")]), false).unwrap();
        assert!(!c.sqs_managed_sse_enabled);
        assert_eq!(c.kms_master_key_id.as_deref(), Some("k"));
    }

    /// V25: setting the KMS attributes back to their defaults (an empty key,
    /// a reuse period of 300) removes them from the attribute list, and
    /// SSE-SQS stays off (AWS recorded answer of 2025,
    /// test_set_queue_attributes_default_values); 1 MiB is the default size.
    #[test]
    fn v25_kms_attributes_back_to_defaults() {
        let mut c = QueueConfig::default();
        assert_eq!(c.to_attributes()["MaximumMessageSize"], "1048576");
        c.apply(
            &attrs(&[
                ("KmsMasterKeyId", "testKeyId"),
                ("KmsDataKeyReusePeriodSeconds", "6000"),
            ]),
            false,
        )
        .unwrap();
        let shown = c.to_attributes();
        assert_eq!(shown["KmsMasterKeyId"], "testKeyId");
        assert_eq!(shown["KmsDataKeyReusePeriodSeconds"], "6000");
        assert_eq!(shown["SqsManagedSseEnabled"], "false");
        c.apply(
            &attrs(&[
                ("KmsMasterKeyId", ""),
                ("KmsDataKeyReusePeriodSeconds", "300"),
            ]),
            false,
        )
        .unwrap();
        let shown = c.to_attributes();
        assert!(!shown.contains_key("KmsMasterKeyId"));
        assert!(!shown.contains_key("KmsDataKeyReusePeriodSeconds"));
        assert_eq!(shown["SqsManagedSseEnabled"], "false");
    }

    /// V17: FifoQueue cannot be changed by SetQueueAttributes (AWS recorded
    /// answer, test_set_unsupported_attribute_fifo).
    #[test]
    fn v17_queue_type_is_fixed() {
        let mut std_q = QueueConfig::default();
        let e = std_q
            .apply(&attrs(&[("FifoQueue", "true")]), false)
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidAttributeName);
        assert_eq!(e.message, "Unknown Attribute FifoQueue.");
        // A FIFO queue told FifoQueue=true again, or false: F7's test.
        f7_fifo_queue_attribute_after_creation();
    }

    #[test]
    fn r1_redrive_policy_format() {
        let p = RedrivePolicy::parse(r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:d","maxReceiveCount":"5"}"#).unwrap();
        assert_eq!(p.max_receive_count, 5);
        for bad in [
            "nope",
            r#"{"deadLetterTargetArn":"a","maxReceiveCount":5,"x":1}"#,
        ] {
            assert_eq!(
                RedrivePolicy::parse(bad).unwrap_err().code,
                ErrorCode::InvalidAttributeValue,
                "{bad}"
            );
        }
    }

    /// R15 (AWS-validated LocalStack test_sqs.py::
    /// test_redrive_policy_attribute_validity): a policy without one of its
    /// two members, or with a count that is no number, is an invalid parameter.
    #[test]
    fn r15_redrive_policy_missing_member() {
        for (doc, member) in [
            (r#"{"maxReceiveCount": "42"}"#, "deadLetterTargetArn"),
            (
                r#"{"deadLetterTargetArn": "arn:aws:sqs:us-east-1:000000000000:d"}"#,
                "maxReceiveCount",
            ),
        ] {
            let e = RedrivePolicy::parse(doc).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidParameterValue, "{doc}");
            assert_eq!(
                e.message,
                format!(
                    "Value {doc} for parameter RedrivePolicy is invalid. Reason: Redrive policy does not contain mandatory attribute: {member}."
                )
            );
        }
        let doc = r#"{"deadLetterTargetArn": "arn:aws:sqs:us-east-1:000000000000:d", "maxReceiveCount": "invalid"}"#;
        assert_eq!(
            RedrivePolicy::parse(doc).unwrap_err().code,
            ErrorCode::InvalidParameterValue
        );
    }

    /// R13: a maxReceiveCount outside 1..=1000 is an invalid parameter
    /// naming the value.
    #[test]
    fn r13_max_receive_count_out_of_range() {
        for (doc, shown) in [
            (r#"{"deadLetterTargetArn":"a","maxReceiveCount":0}"#, "0"),
            (
                r#"{"deadLetterTargetArn":"a","maxReceiveCount":"1001"}"#,
                "1001",
            ),
        ] {
            let e = RedrivePolicy::parse(doc).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidParameterValue, "{doc}");
            assert_eq!(
                e.message,
                format!(
                    "Value {doc} for parameter RedrivePolicy is invalid. Reason: Invalid value for maxReceiveCount: {shown}, valid values are from 1 to 1000 both inclusive."
                )
            );
        }
    }

    /// R11 (AWS recorded answer, LocalStack snapshot test_sqs.py::
    /// test_invalid_dead_letter_arn_rejected_before_lookup): a target that
    /// is no queue ARN is an invalid parameter, echoing the document as sent.
    #[test]
    fn r11_malformed_dead_letter_arn() {
        let doc = r#"{"deadLetterTargetArn": "dummy", "maxReceiveCount": 42}"#;
        let e = RedrivePolicy::parse(doc).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidParameterValue);
        assert_eq!(
            e.message,
            format!(
                "Value {doc} for parameter RedrivePolicy is invalid. Reason: Invalid value for deadLetterTargetArn."
            )
        );
        // Another account's queue has the shape: it is refused later, on lookup.
        assert!(
            RedrivePolicy::parse(r#"{"deadLetterTargetArn":"arn:aws:sqs:eu-west-1:123456789012:d","maxReceiveCount":1}"#)
                .is_ok()
        );
    }

    #[test]
    fn r5_redrive_allow_policy_format() {
        assert!(RedriveAllowPolicy::parse(r#"{"redrivePermission":"allowAll"}"#).is_ok());
        assert!(
            RedriveAllowPolicy::parse(r#"{"redrivePermission":"byQueue","sourceQueueArns":["a"]}"#)
                .is_ok()
        );
        assert!(RedriveAllowPolicy::parse(r#"{"redrivePermission":"byQueue"}"#).is_err());
        assert!(RedriveAllowPolicy::parse(r#"{"redrivePermission":"maybe"}"#).is_err());
    }
}

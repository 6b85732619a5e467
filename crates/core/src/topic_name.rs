//! Topic names and ARNs (rule N1): where a topic lives in the AWS naming
//! scheme, stored under a key as a queue is (its name in the server's own
//! account and region, `<region>/<account>/<name>` in another).

use crate::queue_name::{Account, key_parts};

/// The longest topic name (a FIFO topic's `.fifo` included).
pub const MAX_TOPIC_NAME: usize = 256;

/// True for a topic name SNS accepts: 1–256 characters of
/// `[A-Za-z0-9_-]`, a FIFO topic's ending in `.fifo` (counted in the 256),
/// and `fifo` saying which it must be.
pub fn is_valid_topic_name(name: &str, fifo: bool) -> bool {
    let stem = if fifo {
        match name.strip_suffix(".fifo") {
            Some(stem) => stem,
            None => return false,
        }
    } else {
        name
    };
    !stem.is_empty()
        && name.len() <= MAX_TOPIC_NAME
        && stem
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The parts of an SNS ARN: (region, account, resource), where the
/// resource is a topic's name, or `<topic>:<subscription id>`.
pub fn sns_arn_parts(arn: &str) -> Option<(&str, &str, &str)> {
    let mut parts = arn.splitn(6, ':');
    let (arn_, aws, sns, region, account, resource) = (
        parts.next()?,
        parts.next()?,
        parts.next()?,
        parts.next()?,
        parts.next()?,
        parts.next()?,
    );
    (arn_ == "arn" && aws.starts_with("aws") && sns == "sns" && !resource.is_empty())
        .then_some((region, account, resource))
}

impl Account {
    /// The ARN of the topic stored under `key`.
    pub fn topic_arn(&self, key: &str) -> String {
        let (region, account, name) = key_parts(key);
        format!(
            "arn:aws:sns:{}:{}:{name}",
            region.unwrap_or(&self.region),
            account.unwrap_or(&self.id)
        )
    }

    /// The key of the topic a topic ARN names, of any account and region.
    pub fn topic_key_from_arn(&self, arn: &str) -> Option<String> {
        let (region, account, name) = sns_arn_parts(arn)?;
        let plain = |s: &str| !s.is_empty() && !s.contains('/') && !s.contains(':');
        (plain(region) && plain(account) && plain(name)).then(|| self.key(region, account, name))
    }

    /// The topic key and subscription id a subscription ARN names.
    pub fn subscription_from_arn(&self, arn: &str) -> Option<(String, String)> {
        let (region, account, resource) = sns_arn_parts(arn)?;
        let (topic, id) = resource.split_once(':')?;
        let plain = |s: &str| !s.is_empty() && !s.contains('/') && !s.contains(':');
        (plain(region) && plain(account) && plain(topic) && plain(id))
            .then(|| (self.key(region, account, topic), id.to_string()))
    }

    /// The ARN of subscription `id` to the topic stored under `topic`.
    pub fn subscription_arn(&self, topic: &str, id: &str) -> String {
        format!("{}:{id}", self.topic_arn(topic))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// N1: topic names as SNS takes them (recorded: LocalStack
    /// test_sns.py::test_create_topic_name_constraints, case 12).
    #[test]
    fn n1_topic_names() {
        assert!(is_valid_topic_name("orders_events-1", false));
        assert!(is_valid_topic_name("orders.fifo", true));
        assert!(
            !is_valid_topic_name("orders.fifo", false),
            "a .fifo name needs FifoTopic"
        );
        assert!(
            !is_valid_topic_name("orders", true),
            "FifoTopic needs .fifo"
        );
        assert!(!is_valid_topic_name("", false));
        assert!(!is_valid_topic_name("a b", false));
        assert!(!is_valid_topic_name("a:b", false));
        assert!(is_valid_topic_name(&"a".repeat(256), false));
        assert!(!is_valid_topic_name(&"a".repeat(257), false));
        assert!(is_valid_topic_name(
            &format!("{}.fifo", "a".repeat(251)),
            true
        ));
        assert!(!is_valid_topic_name(
            &format!("{}.fifo", "a".repeat(252)),
            true
        ));
    }

    /// N1: topic and subscription ARNs name their keys, of any account.
    #[test]
    fn n1_topic_and_subscription_arns() {
        let acct = Account::default();
        assert_eq!(acct.topic_arn("t"), "arn:aws:sns:us-east-1:000000000000:t");
        assert_eq!(
            acct.topic_key_from_arn("arn:aws:sns:us-east-1:000000000000:t")
                .as_deref(),
            Some("t")
        );
        assert_eq!(
            acct.topic_key_from_arn("arn:aws:sns:eu-west-1:111122223333:t")
                .as_deref(),
            Some("eu-west-1/111122223333/t")
        );
        assert_eq!(
            acct.topic_arn("eu-west-1/111122223333/t"),
            "arn:aws:sns:eu-west-1:111122223333:t"
        );
        assert_eq!(
            acct.topic_key_from_arn("arn:aws:sqs:us-east-1:000000000000:t"),
            None
        );
        assert_eq!(
            acct.subscription_from_arn("arn:aws:sns:us-east-1:000000000000:t:abc-1"),
            Some(("t".to_string(), "abc-1".to_string()))
        );
        assert_eq!(
            acct.subscription_from_arn("arn:aws:sns:us-east-1:000000000000:t"),
            None
        );
        assert_eq!(
            acct.subscription_arn("t", "x"),
            "arn:aws:sns:us-east-1:000000000000:t:x"
        );
    }
}

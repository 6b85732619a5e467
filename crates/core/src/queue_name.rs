//! Queue names (rule L5), URLs and ARNs (rule W3).

use crate::error::{ErrorCode, SqsError};
use crate::limits::MAX_QUEUE_NAME;

/// Checks a queue name: 1–80 characters of `[A-Za-z0-9_-]`, where a FIFO
/// queue's name ends in `.fifo` (counted in the 80).
pub fn validate_queue_name(name: &str) -> Result<(), SqsError> {
    let stem = name.strip_suffix(".fifo").unwrap_or(name);
    let ok = !name.is_empty()
        && name.len() <= MAX_QUEUE_NAME
        && !stem.is_empty()
        && stem
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(SqsError::new(
            ErrorCode::InvalidParameterValue,
            "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length",
        ))
    }
}

/// The account of sluice's own queues (SNS's outbox of HTTP/S
/// deliveries): no request can name it, for an account id of credentials
/// is 12 digits, an ARN's account holds no `:` and a URL's path no `#`.
pub const INTERNAL_ACCOUNT: &str = "sluice:internal#";

/// The name, among sluice's own queues, of SNS's outbox of HTTP/S
/// deliveries.
pub const SNS_HTTP_OUTBOX: &str = "sns-http-outbox";

/// The key of sluice's own queue `name`, in no region a request names.
pub fn internal_key(name: &str) -> String {
    format!("sluice/{INTERNAL_ACCOUNT}/{name}")
}

/// True for the key of one of sluice's own queues, which engines leave
/// out of their queue lists (so ListQueues, metrics, alarms, the console
/// and the doctor never see them).
pub fn is_internal_key(key: &str) -> bool {
    key_parts(key).1 == Some(INTERNAL_ACCOUNT)
}

/// True for a name that names a FIFO queue.
pub fn is_fifo_name(name: &str) -> bool {
    name.ends_with(".fifo")
}

/// Where this server lives in the AWS naming scheme.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    /// The 12-digit account id in URLs and ARNs.
    pub id: String,
    /// The region in ARNs.
    pub region: String,
}

impl Default for Account {
    fn default() -> Self {
        Self {
            id: "000000000000".to_string(),
            region: "us-east-1".to_string(),
        }
    }
}

impl Account {
    /// The key a queue of `account` is stored under (rule W3: queues are
    /// regional; rule A2: accounts own their queues): its name for this
    /// server's own account and region, `<region>/<account>/<name>` for any
    /// other region or account, which is also the path of its URL.
    pub fn key(&self, region: &str, account: &str, name: &str) -> String {
        let region = if region.is_empty() {
            self.region.as_str()
        } else {
            region
        };
        if region == self.region && account == self.id {
            name.to_string()
        } else {
            format!("{region}/{account}/{name}")
        }
    }

    /// The account that owns the queue stored under `key`.
    pub fn owner_of<'a>(&'a self, key: &'a str) -> &'a str {
        key_parts(key).1.unwrap_or(&self.id)
    }

    /// The region a queue key lives in.
    pub fn region_of<'a>(&'a self, key: &'a str) -> &'a str {
        key_parts(key).0.unwrap_or(&self.region)
    }

    /// The ARN of the queue stored under `key` (a bare name is a queue of
    /// this server's region).
    pub fn queue_arn(&self, key: &str) -> String {
        let (region, account, name) = key_parts(key);
        format!(
            "arn:aws:sqs:{}:{}:{name}",
            region.unwrap_or(&self.region),
            account.unwrap_or(&self.id)
        )
    }

    /// The key of the queue an ARN of this account names, in any region.
    pub fn key_from_arn(&self, arn: &str) -> Option<String> {
        self.key_from_any_arn(arn)
            .filter(|key| self.owner_of(key) == self.id)
    }

    /// The key of the queue an ARN names, of any account and region (rule
    /// A2: with authentication on, accounts other than the server's own
    /// have queues).
    pub fn key_from_any_arn(&self, arn: &str) -> Option<String> {
        let (region, account, name) = arn_parts(arn)?;
        (!account.is_empty() && !account.contains('/') && !region.contains('/'))
            .then(|| self.key(region, account, name))
    }

    /// The queue name an ARN of this account and of this server's region
    /// names, if it is one.
    pub fn name_from_arn<'a>(&self, arn: &'a str) -> Option<&'a str> {
        let (region, account, name) = arn_parts(arn)?;
        (region == self.region && account == self.id).then_some(name)
    }
}

/// (region, account, name) of an SQS queue ARN.
pub fn arn_parts(arn: &str) -> Option<(&str, &str, &str)> {
    let mut parts = arn.splitn(6, ':');
    let (arn_, aws, sqs, region, account, name) = (
        parts.next()?,
        parts.next()?,
        parts.next()?,
        parts.next()?,
        parts.next()?,
        parts.next()?,
    );
    (arn_ == "arn" && aws.starts_with("aws") && sqs == "sqs" && !name.is_empty())
        .then_some((region, account, name))
}

/// (region, account, name) of a queue key: region and account are `None`
/// for a queue of the server's own region.
pub fn key_parts(key: &str) -> (Option<&str>, Option<&str>, &str) {
    let mut parts = key.splitn(3, '/');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(region), Some(account), Some(name)) => (Some(region), Some(account), name),
        _ => (None, None, key),
    }
}

/// The queue name of a key, without its region.
pub fn name_of_key(key: &str) -> &str {
    key_parts(key).2
}

/// The key of queue `name` in the same region and account as the queue
/// stored under `near` (a dead-letter queue and its sources share both:
/// rule R1).
pub fn key_near(near: &str, name: &str) -> String {
    match key_parts(near) {
        (Some(region), Some(account), _) => format!("{region}/{account}/{name}"),
        _ => name.to_string(),
    }
}

/// The account (when the URL has one) and queue key of a queue URL or path:
/// `…/<account>/<name>` in the server's region, `…/<region>/<account>/<name>`
/// in another (rule W3: the host does not matter), or a bare name.
pub fn parse_queue_url(url: &str) -> Option<(Option<&str>, &str)> {
    let path = match url.find("://") {
        Some(i) => {
            let rest = &url[i + 3..];
            rest.find('/').map(|j| &rest[j..]).unwrap_or("")
        }
        None => url,
    };
    let path = path.split(['?', '#']).next().unwrap_or("");
    let trimmed = path.trim_matches('/');
    // At most three segments, none empty (no allocation: every request
    // resolves its queue through here).
    let mut segments = trimmed.split('/');
    let first = segments.next().filter(|s| !s.is_empty())?;
    let second = segments.next();
    let third = segments.next();
    if segments.next().is_some() || [second, third].iter().flatten().any(|s| s.is_empty()) {
        return None;
    }
    match (second, third) {
        (Some(name), None) => Some((Some(first), name)),
        (Some(account), Some(_name)) => Some((Some(account), trimmed)),
        (None, _) if !url.contains("://") => Some((None, first)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// N6: no ARN nor URL a request can give names sluice's own queues
    /// (the outbox of HTTP/S deliveries).
    #[test]
    fn n6_the_outbox_cannot_be_named() {
        let key = internal_key("sns-http-outbox");
        assert!(is_internal_key(&key));
        assert!(!is_internal_key("q") && !is_internal_key("us-east-1/000000000000/q"));
        let account = Account::default();
        let arn = format!("arn:aws:sqs:sluice:{INTERNAL_ACCOUNT}:sns-http-outbox");
        assert!(
            account
                .key_from_any_arn(&arn)
                .is_none_or(|k| !is_internal_key(&k))
        );
        let url = format!("http://h/{key}");
        assert!(parse_queue_url(&url).is_none_or(|(_, k)| !is_internal_key(k)));
    }

    #[test]
    fn l5_names() {
        assert!(validate_queue_name("orders").is_ok());
        assert!(validate_queue_name("a-b_C9").is_ok());
        assert!(validate_queue_name("orders.fifo").is_ok());
        assert!(validate_queue_name(&"a".repeat(80)).is_ok());
        assert!(validate_queue_name(&"a".repeat(81)).is_err());
        assert!(validate_queue_name("").is_err());
        assert!(validate_queue_name(".fifo").is_err());
        assert!(validate_queue_name("a.b").is_err());
        assert!(validate_queue_name("a b").is_err());
        assert!(validate_queue_name("ñ").is_err());
    }

    #[test]
    fn w3_urls_and_arns() {
        assert_eq!(
            parse_queue_url("http://localhost:9324/000000000000/q1"),
            Some((Some("000000000000"), "q1"))
        );
        assert_eq!(
            parse_queue_url("https://sqs.eu-west-1.amazonaws.com/123/q1"),
            Some((Some("123"), "q1"))
        );
        assert_eq!(
            parse_queue_url("/000000000000/q1"),
            Some((Some("000000000000"), "q1"))
        );
        assert_eq!(parse_queue_url("q1"), Some((None, "q1")));
        assert_eq!(parse_queue_url("http://host/"), None);
        assert_eq!(
            parse_queue_url("http://host/eu-west-1/123/q1"),
            Some((Some("123"), "eu-west-1/123/q1"))
        );
        assert_eq!(parse_queue_url("http://host/a/b/c/d"), None);
        assert_eq!(parse_queue_url("http://host//b"), None);
        let acct = Account::default();
        let arn = acct.queue_arn("dlq");
        assert_eq!(arn, "arn:aws:sqs:us-east-1:000000000000:dlq");
        assert_eq!(acct.name_from_arn(&arn), Some("dlq"));
        assert_eq!(
            acct.name_from_arn("arn:aws:sqs:eu-west-1:000000000000:dlq"),
            None
        );
        assert_eq!(acct.name_from_arn("nonsense"), None);
    }

    /// W3: queues are regional; a queue of another region is stored under
    /// `<region>/<account>/<name>`, its URL's path, and its ARN carries the
    /// region.
    #[test]
    fn w3_regional_keys() {
        let acct = Account::default();
        assert_eq!(acct.key("us-east-1", &acct.id, "q"), "q");
        assert_eq!(acct.key("", &acct.id, "q"), "q");
        let key = acct.key("eu-north-1", &acct.id, "q");
        assert_eq!(key, "eu-north-1/000000000000/q");
        assert_eq!(
            acct.queue_arn(&key),
            "arn:aws:sqs:eu-north-1:000000000000:q"
        );
        assert_eq!(acct.region_of(&key), "eu-north-1");
        assert_eq!(acct.region_of("q"), "us-east-1");
        assert_eq!(
            acct.key_from_arn("arn:aws:sqs:eu-north-1:000000000000:q"),
            Some(key.clone())
        );
        assert_eq!(
            acct.key_from_arn("arn:aws:sqs:us-east-1:000000000000:q"),
            Some("q".into())
        );
        assert_eq!(acct.key_from_arn("arn:aws:sqs:us-east-1:1:q"), None);
        assert_eq!(name_of_key(&key), "q");
        assert_eq!(key_near(&key, "dlq"), "eu-north-1/000000000000/dlq");
        assert_eq!(key_near("src", "dlq"), "dlq");
    }

    /// A2: a queue of another account than the server's is stored under
    /// `<region>/<account>/<name>`, in the server's region too; its ARN
    /// carries that account, and only the any-account lookup resolves it.
    #[test]
    fn a2_account_keys() {
        let acct = Account::default();
        let key = acct.key("", "111122223333", "jobs");
        assert_eq!(key, "us-east-1/111122223333/jobs");
        assert_eq!(acct.owner_of(&key), "111122223333");
        assert_eq!(acct.owner_of("jobs"), "000000000000");
        assert_eq!(
            acct.queue_arn(&key),
            "arn:aws:sqs:us-east-1:111122223333:jobs"
        );
        let arn = "arn:aws:sqs:us-east-1:111122223333:jobs";
        assert_eq!(acct.key_from_arn(arn), None);
        assert_eq!(acct.key_from_any_arn(arn), Some(key));
        assert_eq!(
            acct.key_from_any_arn("arn:aws:sqs:us-east-1:000000000000:jobs"),
            Some("jobs".into())
        );
        assert_eq!(acct.key_from_any_arn("arn:aws:sqs:us-east-1::jobs"), None);
    }
}

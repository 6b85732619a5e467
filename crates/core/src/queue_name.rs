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
    /// The ARN of a queue of this account.
    pub fn queue_arn(&self, name: &str) -> String {
        format!("arn:aws:sqs:{}:{}:{}", self.region, self.id, name)
    }

    /// The queue name an ARN of this account names, if it is one.
    pub fn name_from_arn<'a>(&self, arn: &'a str) -> Option<&'a str> {
        let mut parts = arn.splitn(6, ':');
        let (arn_, aws, sqs, region, account, name) = (
            parts.next()?,
            parts.next()?,
            parts.next()?,
            parts.next()?,
            parts.next()?,
            parts.next()?,
        );
        (arn_ == "arn"
            && aws.starts_with("aws")
            && sqs == "sqs"
            && region == self.region
            && account == self.id
            && !name.is_empty())
        .then_some(name)
    }
}

/// The account (when the URL has one) and queue name of a queue URL or path
/// `…/<account>/<name>` (rule W3: the host does not matter), or of a bare name.
pub fn parse_queue_url(url: &str) -> Option<(Option<&str>, &str)> {
    let path = match url.find("://") {
        Some(i) => {
            let rest = &url[i + 3..];
            rest.find('/').map(|j| &rest[j..]).unwrap_or("")
        }
        None => url,
    };
    let path = path.split(['?', '#']).next().unwrap_or("");
    let mut segments = path.split('/').filter(|s| !s.is_empty());
    let first = segments.next()?;
    match segments.next() {
        Some(second) if segments.next().is_none() => Some((Some(first), second)),
        None if !url.contains("://") => Some((None, first)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(parse_queue_url("http://host/a/b/c"), None);
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
}

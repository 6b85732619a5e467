//! Publishing an alarm's notification to a topic (an alarm action that is
//! a topic ARN): the server's SNS API does the publishing, so the alarms
//! reach it through this trait, set once the service is served
//! ([`crate::Alarms::set_topic_publisher`]).

use std::future::Future;
use std::pin::Pin;

/// The longest subject SNS takes.
const MAX_SUBJECT: usize = 100;

/// What publishes to a topic for the alarms.
pub trait TopicPublisher: Send + Sync {
    /// Publishes `message` with `subject` to the topic stored under
    /// `topic`; an error says why it was not published.
    fn publish(
        &self,
        topic: String,
        subject: String,
        message: String,
    ) -> Pin<Box<dyn Future<Output = Result<(), String>> + Send>>;
}

/// The subject of an alarm's notification, as CloudWatch words it
/// (`ALARM: "orders-dlq-depth"`), cut to SNS's 100 characters.
pub fn subject(state: &str, alarm: &str) -> String {
    let mut subject = format!("{state}: \"{alarm}\"");
    if subject.len() > MAX_SUBJECT {
        let mut end = MAX_SUBJECT;
        while !subject.is_char_boundary(end) {
            end -= 1;
        }
        subject.truncate(end);
    }
    subject
}

#[cfg(test)]
mod tests {
    use super::*;

    /// M2: a notification's subject names the state and the alarm, within
    /// SNS's limit.
    #[test]
    fn m2_subjects() {
        assert_eq!(
            subject("ALARM", "orders-dlq-depth"),
            "ALARM: \"orders-dlq-depth\""
        );
        let long = subject("OK", &"é".repeat(200));
        assert!(long.len() <= MAX_SUBJECT && long.starts_with("OK: \"é"));
    }
}

//! The JSON documents SNS delivers (rule N3): a `Notification` for each
//! published message, a `SubscriptionConfirmation` and an
//! `UnsubscribeConfirmation` for HTTP/S endpoints, written as SNS writes
//! them (members in SNS's order, `"Key" : value` on lines of their own, the
//! message attributes one compact object each: captured AWS deliveries),
//! and the text each one's signature covers.

use crate::signing::SignatureVersion;

/// A message attribute as an envelope carries it: its name, its data type
/// as published (`String`, `Number`, `Binary`, `String.Array`, …) and its
/// value (base64 for binary).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvelopeAttribute {
    /// The attribute's name.
    pub name: String,
    /// Its data type as published.
    pub data_type: String,
    /// Its value; binary values base64.
    pub value: String,
}

/// A published message as a subscriber gets it.
#[derive(Debug, Clone)]
pub struct Notification<'a> {
    /// The publish's message id.
    pub message_id: &'a str,
    /// A FIFO topic's sequence number.
    pub sequence_number: Option<&'a str>,
    /// The topic's ARN.
    pub topic_arn: &'a str,
    /// The publish's subject, when it had one.
    pub subject: Option<&'a str>,
    /// The message for this subscriber's protocol.
    pub message: &'a str,
    /// When it was published: ISO 8601, milliseconds, UTC.
    pub timestamp: &'a str,
    /// The URL that unsubscribes this subscriber.
    pub unsubscribe_url: &'a str,
    /// The message attributes; none when the message was published with
    /// `MessageStructure=json`.
    pub attributes: &'a [EnvelopeAttribute],
}

/// Which confirmation a confirmation message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfirmationKind {
    /// Sent when an HTTP/S endpoint subscribes.
    Subscription,
    /// Sent when it unsubscribes.
    Unsubscribe,
}

/// A subscription or unsubscribe confirmation.
#[derive(Debug, Clone)]
pub struct Confirmation<'a> {
    /// Which one.
    pub kind: ConfirmationKind,
    /// Its message id.
    pub message_id: &'a str,
    /// The token that confirms the subscription.
    pub token: &'a str,
    /// The topic's ARN.
    pub topic_arn: &'a str,
    /// The subscription's ARN (an unsubscribe's message names it).
    pub subscription_arn: &'a str,
    /// The URL that confirms it.
    pub subscribe_url: &'a str,
    /// When it was sent: ISO 8601, milliseconds, UTC.
    pub timestamp: &'a str,
}

/// A signature and where its certificate is.
#[derive(Debug, Clone)]
pub struct Signed {
    /// The version it was made with.
    pub version: SignatureVersion,
    /// The signature, base64.
    pub signature: String,
    /// The certificate's URL.
    pub signing_cert_url: String,
}

impl Notification<'_> {
    /// What the signature covers: `Name\nValue\n` for `Message`,
    /// `MessageId`, `Subject` (when there is one), `Timestamp`, `TopicArn`
    /// and `Type`, in that order.
    pub fn string_to_sign(&self) -> String {
        let mut out = String::with_capacity(self.message.len() + 256);
        field(&mut out, "Message", self.message);
        field(&mut out, "MessageId", self.message_id);
        if let Some(subject) = self.subject {
            field(&mut out, "Subject", subject);
        }
        field(&mut out, "Timestamp", self.timestamp);
        field(&mut out, "TopicArn", self.topic_arn);
        field(&mut out, "Type", "Notification");
        out
    }

    /// The envelope, signed or (a FIFO topic's, which SNS does not sign)
    /// not.
    pub fn to_json(&self, signed: Option<&Signed>) -> String {
        let mut doc = Document::new(self.message.len() + 1024);
        doc.member("Type", "Notification");
        doc.member("MessageId", self.message_id);
        if let Some(seq) = self.sequence_number {
            doc.member("SequenceNumber", seq);
        }
        doc.member("TopicArn", self.topic_arn);
        if let Some(subject) = self.subject {
            doc.member("Subject", subject);
        }
        doc.member("Message", self.message);
        doc.member("Timestamp", self.timestamp);
        if let Some(signed) = signed {
            doc.member("SignatureVersion", signed.version.as_str());
            doc.member("Signature", &signed.signature);
            doc.member("SigningCertURL", &signed.signing_cert_url);
        }
        doc.member("UnsubscribeURL", self.unsubscribe_url);
        if !self.attributes.is_empty() {
            doc.attributes(self.attributes);
        }
        doc.finish()
    }
}

impl Confirmation<'_> {
    /// The message text SNS puts in it.
    pub fn message(&self) -> String {
        match self.kind {
            ConfirmationKind::Subscription => format!(
                "You have chosen to subscribe to the topic {}.\nTo confirm the subscription, visit the SubscribeURL included in this message.",
                self.topic_arn
            ),
            ConfirmationKind::Unsubscribe => format!(
                "You have chosen to deactivate subscription {}.\nTo cancel this operation and restore the subscription, visit the SubscribeURL included in this message.",
                self.subscription_arn
            ),
        }
    }

    /// The message type (`SubscriptionConfirmation`, …).
    pub fn type_name(&self) -> &'static str {
        match self.kind {
            ConfirmationKind::Subscription => "SubscriptionConfirmation",
            ConfirmationKind::Unsubscribe => "UnsubscribeConfirmation",
        }
    }

    /// What the signature covers: `Message`, `MessageId`, `SubscribeURL`,
    /// `Timestamp`, `Token`, `TopicArn`, `Type`.
    pub fn string_to_sign(&self) -> String {
        let mut out = String::with_capacity(512);
        field(&mut out, "Message", &self.message());
        field(&mut out, "MessageId", self.message_id);
        field(&mut out, "SubscribeURL", self.subscribe_url);
        field(&mut out, "Timestamp", self.timestamp);
        field(&mut out, "Token", self.token);
        field(&mut out, "TopicArn", self.topic_arn);
        field(&mut out, "Type", self.type_name());
        out
    }

    /// The confirmation, signed.
    pub fn to_json(&self, signed: &Signed) -> String {
        let mut doc = Document::new(1024);
        doc.member("Type", self.type_name());
        doc.member("MessageId", self.message_id);
        doc.member("Token", self.token);
        doc.member("TopicArn", self.topic_arn);
        doc.member("Message", &self.message());
        doc.member("SubscribeURL", self.subscribe_url);
        doc.member("Timestamp", self.timestamp);
        doc.member("SignatureVersion", signed.version.as_str());
        doc.member("Signature", &signed.signature);
        doc.member("SigningCertURL", &signed.signing_cert_url);
        doc.finish()
    }
}

/// `name\nvalue\n`.
fn field(out: &mut String, name: &str, value: &str) {
    out.push_str(name);
    out.push('\n');
    out.push_str(value);
    out.push('\n');
}

/// An envelope being written as SNS writes it.
struct Document {
    out: String,
    first: bool,
}

impl Document {
    fn new(capacity: usize) -> Self {
        let mut out = String::with_capacity(capacity);
        out.push('{');
        Document { out, first: true }
    }

    fn separator(&mut self) {
        if !self.first {
            self.out.push(',');
        }
        self.first = false;
        self.out.push_str("\n  ");
    }

    fn member(&mut self, name: &str, value: &str) {
        self.separator();
        self.out.push_str(&quote(name));
        self.out.push_str(" : ");
        self.out.push_str(&quote(value));
    }

    fn attributes(&mut self, attributes: &[EnvelopeAttribute]) {
        self.separator();
        self.out.push_str("\"MessageAttributes\" : {");
        for (i, a) in attributes.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            self.out.push_str("\n    ");
            self.out.push_str(&quote(&a.name));
            self.out.push_str(" : {\"Type\":");
            self.out.push_str(&quote(&a.data_type));
            self.out.push_str(",\"Value\":");
            self.out.push_str(&quote(&a.value));
            self.out.push('}');
        }
        self.out.push_str("\n  }");
    }

    fn finish(mut self) -> String {
        self.out.push_str("\n}");
        self.out
    }
}

/// `text` as a JSON string: `/` left as it is, as SNS writes it.
fn quote(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notification<'a>(attributes: &'a [EnvelopeAttribute]) -> Notification<'a> {
        Notification {
            message_id: "1f3078d0-c792-5cf3-a130-189c3b846a3f",
            sequence_number: None,
            topic_arn: "arn:aws:sns:sa-east-1:425362996713:t",
            subject: None,
            message: "{}",
            timestamp: "2025-03-13T15:29:26.348Z",
            unsubscribe_url: "https://sns.example/?Action=Unsubscribe&SubscriptionArn=arn:aws:sns:sa-east-1:425362996713:t:5f6",
            attributes,
        }
    }

    /// N3: a notification is laid out as AWS delivers one (captured: an
    /// SQS body kept as a fixture in datadog-lambda-python's tests):
    /// members in SNS's order, `"Key" : value`, attributes compact.
    #[test]
    fn n3_notifications_are_laid_out_as_aws_delivers_them() {
        let attributes = [EnvelopeAttribute {
            name: "Service".into(),
            data_type: "String".into(),
            value: "AWS::IAM::Policy".into(),
        }];
        let n = notification(&attributes);
        let signed = Signed {
            version: SignatureVersion::V1,
            signature: "mxOq/A==".into(),
            signing_cert_url: "https://sns.example/SimpleNotificationService-x.pem".into(),
        };
        assert_eq!(
            n.to_json(Some(&signed)),
            "{\n  \"Type\" : \"Notification\",\n  \"MessageId\" : \"1f3078d0-c792-5cf3-a130-189c3b846a3f\",\n  \"TopicArn\" : \"arn:aws:sns:sa-east-1:425362996713:t\",\n  \"Message\" : \"{}\",\n  \"Timestamp\" : \"2025-03-13T15:29:26.348Z\",\n  \"SignatureVersion\" : \"1\",\n  \"Signature\" : \"mxOq/A==\",\n  \"SigningCertURL\" : \"https://sns.example/SimpleNotificationService-x.pem\",\n  \"UnsubscribeURL\" : \"https://sns.example/?Action=Unsubscribe&SubscriptionArn=arn:aws:sns:sa-east-1:425362996713:t:5f6\",\n  \"MessageAttributes\" : {\n    \"Service\" : {\"Type\":\"String\",\"Value\":\"AWS::IAM::Policy\"}\n  }\n}"
        );
        let parsed: serde_json::Value = serde_json::from_str(&n.to_json(None)).unwrap();
        assert!(
            parsed.get("Signature").is_none(),
            "a FIFO topic's is not signed"
        );
    }

    /// N3: the signed text is `Name\nValue\n` in SNS's order, Subject only
    /// when present; a confirmation's adds SubscribeURL and Token.
    #[test]
    fn n3_what_the_signature_covers() {
        let mut n = notification(&[]);
        assert_eq!(
            n.string_to_sign(),
            "Message\n{}\nMessageId\n1f3078d0-c792-5cf3-a130-189c3b846a3f\nTimestamp\n2025-03-13T15:29:26.348Z\nTopicArn\narn:aws:sns:sa-east-1:425362996713:t\nType\nNotification\n"
        );
        n.subject = Some("Hi");
        assert!(
            n.string_to_sign().contains(
                "MessageId\n1f3078d0-c792-5cf3-a130-189c3b846a3f\nSubject\nHi\nTimestamp\n"
            )
        );
        let c = Confirmation {
            kind: ConfirmationKind::Subscription,
            message_id: "m",
            token: "ab12",
            topic_arn: "arn:aws:sns:us-east-1:000000000000:t",
            subscription_arn: "arn:aws:sns:us-east-1:000000000000:t:s",
            subscribe_url: "https://h/?Action=ConfirmSubscription&TopicArn=arn:aws:sns:us-east-1:000000000000:t&Token=ab12",
            timestamp: "2025-01-01T00:00:00.000Z",
        };
        assert_eq!(
            c.message(),
            "You have chosen to subscribe to the topic arn:aws:sns:us-east-1:000000000000:t.\nTo confirm the subscription, visit the SubscribeURL included in this message."
        );
        let text = c.string_to_sign();
        assert!(text.starts_with("Message\nYou have chosen"));
        assert!(text.ends_with("Token\nab12\nTopicArn\narn:aws:sns:us-east-1:000000000000:t\nType\nSubscriptionConfirmation\n"));
    }
}

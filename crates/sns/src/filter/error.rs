//! Why a filter policy is refused: [`FilterPolicyError`], whose `Display`
//! is AWS's own wording, and the whole messages Subscribe and
//! SetSubscriptionAttributes answer with.
//!
//! AWS appends a Jackson location (`\n at [Source: …; line: 1, column: N]`)
//! to many of these messages; the notes (filter-policies.md §4) say to
//! compare only the first line, so none is added here.

/// The prefix SetSubscriptionAttributes puts before every filter policy
/// error (`Invalid parameter: `).
const SET_PREFIX: &str = "Invalid parameter: ";

/// The prefix Subscribe puts before an error in one of its `Attributes`.
const SUBSCRIBE_PREFIX: &str = "Invalid parameter: Attributes Reason: ";

/// A filter policy AWS refuses, with AWS's words.
///
/// `Display` holds the text that follows `Invalid parameter: FilterPolicy: `
/// in AWS's answer, for every variant but
/// [`NestedInAttributeScope`](Self::NestedInAttributeScope), whose text AWS
/// puts right after `Invalid parameter: ` (no `FilterPolicy: `).
/// [`names_attribute`](Self::names_attribute) tells the two apart, and
/// [`subscribe_message`](Self::subscribe_message) /
/// [`set_subscription_attributes_message`](Self::set_subscription_attributes_message)
/// build the whole message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FilterPolicyError {
    /// The text is over 256 KB, the documented maximum. AWS's message for
    /// this is not recorded; the wording is sluice's, shaped like
    /// "Filter policy is too complex".
    #[error("Filter policy is too large")]
    TooLarge,
    /// The text is not JSON; the payload is the Jackson parser's message
    /// (recorded for two inputs, modelled on Jackson for the rest).
    #[error("failed to parse JSON. {0}")]
    Json(String),
    /// More than 5 keys at the top level (`$or` counts as one).
    #[error("Filter policy can not have more than 5 keys")]
    TooManyKeys,
    /// More than 150 combinations (see `complexity.rs`).
    #[error("Filter policy is too complex")]
    TooComplex,
    /// A nested object while the scope is `MessageAttributes`. AWS writes
    /// this one without `FilterPolicy: `.
    #[error("Filter policy scope MessageAttributes does not support nested filter policy")]
    NestedInAttributeScope,
    /// A structure or a rule AWS's rule compiler refuses (`"key" must be an
    /// object or an array`, `Unrecognized match type x`, …).
    #[error("{0}")]
    Invalid(String),
}

impl FilterPolicyError {
    /// Whether AWS writes `FilterPolicy: ` before this message (all but
    /// [`NestedInAttributeScope`](Self::NestedInAttributeScope)).
    pub fn names_attribute(&self) -> bool {
        !matches!(self, Self::NestedInAttributeScope)
    }

    /// The whole `InvalidParameter` message SetSubscriptionAttributes
    /// answers with: `Invalid parameter: FilterPolicy: <Display>`, or
    /// `Invalid parameter: <Display>` when the attribute is not named.
    pub fn set_subscription_attributes_message(&self) -> String {
        self.with_prefix(SET_PREFIX)
    }

    /// The whole `InvalidParameter` message Subscribe answers with:
    /// `Invalid parameter: Attributes Reason: FilterPolicy: <Display>`, or
    /// without `FilterPolicy: ` when the attribute is not named (that form
    /// on Subscribe is not recorded; it follows the other Subscribe errors).
    pub fn subscribe_message(&self) -> String {
        self.with_prefix(SUBSCRIBE_PREFIX)
    }

    fn with_prefix(&self, prefix: &str) -> String {
        if self.names_attribute() {
            format!("{prefix}FilterPolicy: {self}")
        } else {
            format!("{prefix}{self}")
        }
    }
}

//! The FIFO queue settings that take one of a few names:
//! `DeduplicationScope` and `FifoThroughputLimit` (rule F2). Parsed at the
//! edge, shown by GetQueueAttributes, and stored under the same names.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Where a deduplication id is unique: in the queue, or per message group.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum DeduplicationScope {
    /// `queue`: one deduplication window for the whole queue.
    #[default]
    #[serde(rename = "queue")]
    Queue,
    /// `messageGroup`: a window per message group (high-throughput FIFO).
    #[serde(rename = "messageGroup")]
    MessageGroup,
}

impl DeduplicationScope {
    /// The setting an attribute value names; `None` for any other value.
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "queue" => Some(Self::Queue),
            "messageGroup" => Some(Self::MessageGroup),
            _ => None,
        }
    }

    /// The attribute value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Queue => "queue",
            Self::MessageGroup => "messageGroup",
        }
    }
}

impl fmt::Display for DeduplicationScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the FIFO throughput quota applies to: the queue, or each group.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum FifoThroughputLimit {
    /// `perQueue`.
    #[default]
    #[serde(rename = "perQueue")]
    PerQueue,
    /// `perMessageGroupId` (high-throughput FIFO).
    #[serde(rename = "perMessageGroupId")]
    PerMessageGroupId,
}

impl FifoThroughputLimit {
    /// The setting an attribute value names; `None` for any other value.
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "perQueue" => Some(Self::PerQueue),
            "perMessageGroupId" => Some(Self::PerMessageGroupId),
            _ => None,
        }
    }

    /// The attribute value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::PerQueue => "perQueue",
            Self::PerMessageGroupId => "perMessageGroupId",
        }
    }
}

impl fmt::Display for FifoThroughputLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// F2: the settings are stored under their attribute names, so records
    /// written while they were plain strings read back the same.
    #[test]
    fn f2_settings_round_trip_by_their_attribute_names() {
        for scope in [DeduplicationScope::Queue, DeduplicationScope::MessageGroup] {
            let json = serde_json::to_string(&scope).unwrap();
            assert_eq!(json, format!("\"{scope}\""));
            assert_eq!(
                serde_json::from_str::<DeduplicationScope>(&json).unwrap(),
                scope
            );
            assert_eq!(DeduplicationScope::parse(scope.as_str()), Some(scope));
        }
        for limit in [
            FifoThroughputLimit::PerQueue,
            FifoThroughputLimit::PerMessageGroupId,
        ] {
            let json = serde_json::to_string(&limit).unwrap();
            assert_eq!(json, format!("\"{limit}\""));
            assert_eq!(
                serde_json::from_str::<FifoThroughputLimit>(&json).unwrap(),
                limit
            );
            assert_eq!(FifoThroughputLimit::parse(limit.as_str()), Some(limit));
        }
        assert_eq!(DeduplicationScope::parse("Queue"), None);
        assert_eq!(FifoThroughputLimit::parse("perGroup"), None);
    }
}

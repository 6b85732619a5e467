//! Changes to a queue's metadata (its attributes and tags), written once
//! for every engine: an engine loads the queue's [`QueueMeta`], applies a
//! [`MetaChange`] to it and stores the result, all under the queue's lock
//! (or row lock), so concurrent changes never lose one another.

use std::collections::BTreeMap;

use sluice_core::SqsError;
use sluice_core::clock::Millis;

use crate::tags;
use crate::types::QueueMeta;

/// One change to a queue's metadata, all or nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MetaChange {
    /// SetQueueAttributes: changed attributes, by name.
    SetAttributes(BTreeMap<String, String>),
    /// TagQueue: tags added or replaced.
    Tag(BTreeMap<String, String>),
    /// UntagQueue: tags removed by key; unknown keys are ignored.
    Untag(Vec<String>),
}

impl MetaChange {
    /// Applies the change to `meta`, the metadata of queue `queue`, at
    /// time `now`; on error `meta` is unchanged. Attribute changes stamp
    /// `modified_at` (`LastModifiedTimestamp`); tag changes do not.
    pub fn apply(self, queue: &str, meta: &mut QueueMeta, now: Millis) -> Result<(), SqsError> {
        match self {
            Self::SetAttributes(attributes) => {
                meta.config.apply(&attributes, false)?;
                meta.modified_at = now;
            }
            Self::Tag(added) => tags::add_tags(queue, &mut meta.tags, added)?,
            Self::Untag(keys) => tags::remove_tags(&mut meta.tags, &keys),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use sluice_core::attributes::QueueConfig;

    use super::*;

    fn meta() -> QueueMeta {
        QueueMeta {
            name: "q".into(),
            config: QueueConfig::default(),
            tags: BTreeMap::new(),
            created_at: 1,
            modified_at: 1,
        }
    }

    #[test]
    fn v11_attribute_changes_are_all_or_nothing_and_stamp_the_time() {
        let mut m = meta();
        let before = m.clone();
        let bad = [
            ("DelaySeconds".to_string(), "5".to_string()),
            ("VisibilityTimeout".to_string(), "-1".to_string()),
        ];
        assert!(
            MetaChange::SetAttributes(bad.into())
                .apply("q", &mut m, 9)
                .is_err()
        );
        assert_eq!(m, before, "nothing applied");
        let good = [("DelaySeconds".to_string(), "5".to_string())];
        MetaChange::SetAttributes(good.into())
            .apply("q", &mut m, 9)
            .unwrap();
        assert_eq!((m.config.delay_seconds, m.modified_at), (5, 9));
    }

    #[test]
    fn v11_tag_changes_leave_the_modified_time() {
        let mut m = meta();
        let tag = [("team".to_string(), "a".to_string())];
        MetaChange::Tag(tag.into()).apply("q", &mut m, 9).unwrap();
        assert_eq!((m.tags.len(), m.modified_at), (1, 1));
        MetaChange::Untag(vec!["team".into(), "absent".into()])
            .apply("q", &mut m, 9)
            .unwrap();
        assert_eq!((m.tags.len(), m.modified_at), (0, 1));
    }
}

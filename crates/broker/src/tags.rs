//! The tag rules every engine applies when it stores a queue's tags.

use std::collections::BTreeMap;

use sluice_core::SqsError;
use sluice_core::limits::MAX_TAGS;

/// Checks a new queue's tags: at most [`MAX_TAGS`].
pub fn check_tags(queue: &str, tags: &BTreeMap<String, String>) -> Result<(), SqsError> {
    if tags.len() > MAX_TAGS {
        return Err(SqsError::invalid_parameter(format!(
            "Too many tags added for queue {queue}."
        )));
    }
    Ok(())
}

/// TagQueue: adds or replaces `tags`, all or nothing when the result would
/// hold more than [`MAX_TAGS`].
pub fn add_tags(
    queue: &str,
    existing: &mut BTreeMap<String, String>,
    tags: BTreeMap<String, String>,
) -> Result<(), SqsError> {
    let mut merged = existing.clone();
    merged.extend(tags);
    check_tags(queue, &merged)?;
    *existing = merged;
    Ok(())
}

/// UntagQueue: removes `keys`; unknown keys are ignored.
pub fn remove_tags(existing: &mut BTreeMap<String, String>, keys: &[String]) {
    for k in keys {
        existing.remove(k);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v11_tags_are_all_or_nothing_under_the_limit() {
        let mut tags: BTreeMap<String, String> = (0..MAX_TAGS)
            .map(|i| (format!("k{i}"), "v".into()))
            .collect();
        let before = tags.clone();
        let extra = [("new".to_string(), "v".to_string())].into();
        assert!(add_tags("q", &mut tags, extra).is_err());
        assert_eq!(tags, before, "nothing applied");
        add_tags("q", &mut tags, [("k0".to_string(), "w".to_string())].into()).unwrap();
        assert_eq!(tags["k0"], "w");
        remove_tags(&mut tags, &["k0".into(), "absent".into()]);
        assert_eq!(tags.len(), MAX_TAGS - 1);
    }
}

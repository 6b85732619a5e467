//! Name-ordered pagination of the List actions. A leaf: it imports
//! nothing of the crate's, so anything may use it.

use sluice_core::SqsError;
use sluice_core::limits::in_range;

/// Pagination in name order: a page of at most `max` after `token` (rule W8).
pub fn paginate(
    mut names: Vec<String>,
    max_results: Option<i64>,
    next_token: Option<&str>,
) -> Result<(Vec<String>, Option<String>), SqsError> {
    use base64::Engine;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let max = match max_results {
        Some(m) => in_range(
            "MaxResults",
            m,
            1,
            i64::from(sluice_core::limits::MAX_LIST_RESULTS),
        )? as usize,
        None => sluice_core::limits::MAX_LIST_RESULTS as usize,
    };
    let after = match next_token {
        Some(t) => {
            let bytes = URL_SAFE_NO_PAD
                .decode(t)
                .map_err(|_| SqsError::invalid_parameter("Invalid NextToken value."))?;
            Some(
                String::from_utf8(bytes)
                    .map_err(|_| SqsError::invalid_parameter("Invalid NextToken value."))?,
            )
        }
        None => None,
    };
    // Pages follow name order whatever order the engine lists in (rule W8;
    // AWS recorded answer, test_sqs.py::test_list_queues_pagination).
    names.sort();
    let mut rest: Vec<String> = names
        .into_iter()
        .filter(|n| after.as_ref().is_none_or(|a| n > a))
        .collect();
    let more = rest.len() > max;
    rest.truncate(max);
    // SQS gives a NextToken only when the caller asked for pages.
    let token = (more && max_results.is_some())
        .then(|| {
            rest.last()
                .map(|last| URL_SAFE_NO_PAD.encode(last.as_bytes()))
        })
        .flatten();
    Ok((rest, token))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// W8: ten names, pages of two then of ten: name order, a NextToken only
    /// while more follow and only when MaxResults was given (AWS recorded
    /// answer, LocalStack snapshot test_sqs.py::test_list_queues_pagination).
    #[test]
    fn w8_pages_in_name_order() {
        let names: Vec<String> = (0..10).rev().map(|i| format!("q-{i}")).collect();
        let (all, token) = paginate(names.clone(), None, None).unwrap();
        assert_eq!(all.len(), 10);
        assert_eq!(all[0], "q-0");
        assert!(token.is_none());
        let (first, token) = paginate(names.clone(), Some(2), None).unwrap();
        assert_eq!(first, ["q-0", "q-1"]);
        let token = token.unwrap();
        let (rest, token) = paginate(names, Some(10), Some(&token)).unwrap();
        assert_eq!(rest.len(), 8);
        assert_eq!(rest[0], "q-2");
        assert!(token.is_none());
    }
}

//! SNS's pages: at most 100 items, sorted, and a `NextToken` (opaque: the
//! base64 of the last item's sort key) only when more remain (rule N1;
//! recorded: LocalStack test_list_topic_paging,
//! test_list_subscriptions_by_topic_pagination).

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sluice_protocol::sns::SnsError;

/// The most items a page holds.
pub const PAGE: usize = 100;

/// The page of `items` (each with its sort key, sorted by it) after
/// `token`, and the token of the next page if there is one.
pub fn page<T>(
    mut items: Vec<(String, T)>,
    token: Option<&str>,
) -> Result<(Vec<T>, Option<String>), SnsError> {
    items.sort_by(|a, b| a.0.cmp(&b.0));
    let after = match token {
        Some(t) => Some(
            URL_SAFE_NO_PAD
                .decode(t)
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .ok_or_else(|| SnsError::invalid_parameter("NextToken"))?,
        ),
        None => None,
    };
    let mut rest: Vec<(String, T)> = items
        .into_iter()
        .filter(|(key, _)| after.as_ref().is_none_or(|a| key > a))
        .collect();
    let more = rest.len() > PAGE;
    rest.truncate(PAGE);
    let next = more
        .then(|| rest.last().map(|(key, _)| URL_SAFE_NO_PAD.encode(key)))
        .flatten();
    Ok((rest.into_iter().map(|(_, item)| item).collect(), next))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// N1: 120 items are a page of 100 with a token, then the 20 left
    /// without one.
    #[test]
    fn n1_pages_of_a_hundred() {
        let items: Vec<(String, usize)> = (0..120).map(|i| (format!("k{i:03}"), i)).collect();
        let (first, token) = page(items.clone(), None).unwrap();
        assert_eq!(first.len(), 100);
        assert_eq!(first[0], 0);
        let (second, token) = page(items, token.as_deref()).unwrap();
        assert_eq!(second.len(), 20);
        assert_eq!(second[0], 100);
        assert!(token.is_none());
        assert!(page::<u8>(Vec::new(), Some("not base64!")).is_err());
    }
}

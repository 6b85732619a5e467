//! SNS's pages: at most 100 items, sorted, and a `NextToken` (opaque: the
//! base64 of the last item's sort key) only when more remain (rule N1;
//! recorded: LocalStack test_list_topic_paging,
//! test_list_subscriptions_by_topic_pagination).
//!
//! AWS's tokens decode as standard, padded base64 (the recorded pagination
//! test decodes one), so ours are written so too; tokens in the URL-safe,
//! unpadded alphabet that earlier versions handed out are still read.

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
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
            STANDARD
                .decode(t)
                .or_else(|_| URL_SAFE_NO_PAD.decode(t))
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
        .then(|| rest.last().map(|(key, _)| STANDARD.encode(key)))
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

    /// N1: the token is standard, padded base64, as AWS's is (recorded:
    /// LocalStack test_list_subscriptions_by_topic_pagination decodes it);
    /// a URL-safe unpadded token is still accepted.
    #[test]
    fn n1_token_is_standard_base64() {
        let items: Vec<(String, usize)> = (0..101)
            .map(|i| (format!("arn:aws:sns:k{i:03}?"), i))
            .collect();
        let (_, token) = page(items.clone(), None).unwrap();
        let token = token.unwrap();
        let key = STANDARD.decode(&token).unwrap();
        assert_eq!(key, b"arn:aws:sns:k099?");
        assert!(token.ends_with('='), "padded: {token}");
        let legacy = URL_SAFE_NO_PAD.encode(&key);
        let (rest, _) = page(items, Some(&legacy)).unwrap();
        assert_eq!(rest, vec![100]);
    }
}

//! The region a request was signed for: the third field of its SigV4
//! credential scope (`<key>/<date>/<region>/sqs/aws4_request`), from the
//! `Authorization` header or a presigned URL's `X-Amz-Credential`. Queues
//! are regional (rule W3); this only reads the scope, it verifies nothing.

use http::HeaderMap;

/// The region of the request's credential scope, if it names one.
pub fn signing_region(headers: &HeaderMap, url_query: &str) -> Option<String> {
    if let Some(auth) = headers
        .get(http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        && let Some(i) = auth.find("Credential=")
    {
        let scope = &auth[i + "Credential=".len()..];
        let scope = scope.split([',', ' ']).next().unwrap_or_default();
        return region_of_scope(scope);
    }
    form_urlencoded::parse(url_query.as_bytes())
        .find(|(k, _)| k == "X-Amz-Credential")
        .and_then(|(_, scope)| region_of_scope(&scope))
}

fn region_of_scope(scope: &str) -> Option<String> {
    let region = scope.split('/').nth(2)?;
    is_region_name(region).then(|| region.to_string())
}

/// A region name as a credential scope may give it: lower-case letters,
/// digits and dashes, at most 32 (the SigV4 verifier holds scopes to it
/// too, `auth/verify.rs`).
pub(crate) fn is_region_name(region: &str) -> bool {
    !region.is_empty()
        && region.len() <= 32
        && region
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    /// W3: the region comes from the credential scope, in a header or a
    /// presigned URL; anything that is not a region name is ignored.
    #[test]
    fn w3_region_of_the_credential_scope() {
        let mut headers = HeaderMap::new();
        assert_eq!(signing_region(&headers, ""), None);
        headers.insert(
            http::header::AUTHORIZATION,
            HeaderValue::from_static(
                "AWS4-HMAC-SHA256 Credential=AKID/20261201/eu-north-1/sqs/aws4_request, \
                 SignedHeaders=host;x-amz-date, Signature=abc",
            ),
        );
        assert_eq!(signing_region(&headers, "").as_deref(), Some("eu-north-1"));
        let query =
            "Action=ListQueues&X-Amz-Credential=AKID%2F20261201%2Fus-west-1%2Fsqs%2Faws4_request";
        assert_eq!(
            signing_region(&HeaderMap::new(), query).as_deref(),
            Some("us-west-1")
        );
        headers.insert(
            http::header::AUTHORIZATION,
            HeaderValue::from_static("AWS4-HMAC-SHA256 Credential=AKID/20261201/../sqs/x"),
        );
        assert_eq!(signing_region(&headers, ""), None);
    }
}

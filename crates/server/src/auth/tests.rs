//! The verifier against AWS's SigV4 test suite (`testdata/`, known answers
//! computed by AWS), then each refusal with AWS's code and words.

use std::path::PathBuf;

use http::{HeaderMap, HeaderName, HeaderValue};
use sluice_core::ErrorCode;

use super::verify::{INVALID_TOKEN, MISSING_TOKEN, RequestParts, SIGNATURE_MISMATCH};
use super::{Authenticator, Credential, Principal};
use sluice_sigv4 as sigv4;

/// The suite's time, 2015-08-30T12:36:00Z, in ms.
const SUITE_NOW: u64 = 1_440_938_160_000;

fn testdata(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("src/auth/testdata")
        .join(name)
}

fn read(dir: &str, file: &str) -> Option<String> {
    std::fs::read_to_string(testdata(dir).join(file)).ok()
}

/// A request of the suite's `.txt` form: request line, `Name:value` lines,
/// a blank line, the body.
struct RawRequest {
    method: String,
    path: String,
    query: String,
    headers: HeaderMap,
    body: Vec<u8>,
}

impl RawRequest {
    fn parse(text: &str) -> Self {
        let (head, body) = text.split_once("\n\n").unwrap_or((text, ""));
        let mut lines = head.lines();
        let first = lines.next().unwrap();
        let mut words = first.split(' ');
        let method = words.next().unwrap().to_string();
        // The target may hold spaces (get-space): everything up to " HTTP/".
        let target = &first[method.len() + 1..first.rfind(" HTTP/").unwrap()];
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        let mut headers = HeaderMap::new();
        for line in lines {
            let (name, value) = line.split_once(':').unwrap();
            headers.append(
                HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_str(value).unwrap(),
            );
        }
        Self {
            method,
            path: path.to_string(),
            query: query.to_string(),
            headers,
            body: body.as_bytes().to_vec(),
        }
    }

    fn parts(&self) -> RequestParts<'_> {
        RequestParts {
            method: &self.method,
            path: &self.path,
            query: &self.query,
            headers: &self.headers,
            body: &self.body,
        }
    }
}

/// The suite's verifier: its key, for its service name "service".
fn suite_verifier(dir: &str) -> Authenticator {
    let context: serde_json::Value =
        serde_json::from_str(&read(dir, "context.json").unwrap()).unwrap();
    let creds = &context["credentials"];
    let mut auth = Authenticator::new(vec![Credential {
        access_key_id: creds["access_key_id"].as_str().unwrap().into(),
        secret_access_key: creds["secret_access_key"].as_str().unwrap().into(),
        session_token: creds["token"].as_str().map(str::to_string),
        account_id: "000000000000".into(),
        access: Default::default(),
        rate_limit: None,
    }])
    .unwrap();
    auth.service = "service";
    auth
}

fn suite_dirs() -> Vec<String> {
    let mut dirs: Vec<String> = std::fs::read_dir(testdata(""))
        .unwrap()
        .filter_map(|e| {
            let e = e.ok()?;
            e.file_type()
                .ok()?
                .is_dir()
                .then(|| e.file_name().to_string_lossy().into_owned())
        })
        .filter(|d| testdata(d).join("context.json").exists())
        .collect();
    dirs.sort();
    dirs
}

/// AWS's test suite, `Authorization` header form: the canonical request
/// and string to sign are AWS's, and the signed request verifies; with one
/// character of the signature changed, it does not.
#[test]
fn a1_header_signatures_match_the_aws_test_suite() {
    let dirs = suite_dirs();
    assert!(dirs.len() >= 25, "{dirs:?}");
    for dir in &dirs {
        let signed = RawRequest::parse(&read(dir, "header-signed-request.txt").unwrap());
        let auth = signed.headers["authorization"]
            .to_str()
            .unwrap()
            .to_string();
        let names = auth.split("SignedHeaders=").nth(1).unwrap();
        let names = names.split(',').next().unwrap();
        let list: Vec<&str> = names.split(';').collect();
        let canonical = sigv4::canonical_request(
            &signed.method,
            &sigv4::canonical_uri(&signed.path),
            &sigv4::canonical_query(&signed.query, false),
            &sigv4::canonical_headers(&signed.headers, &list),
            names,
            &sluice_core::digest::sha256_hex(&signed.body),
        );
        assert_eq!(
            canonical,
            read(dir, "header-canonical-request.txt").unwrap(),
            "{dir}"
        );
        // What the verifier hashes, written straight into SHA-256.
        let body_hash = sigv4::sha256_hex_digest(&signed.body);
        let streamed = sigv4::CanonicalRequest {
            method: &signed.method,
            raw_path: &signed.path,
            raw_query: &signed.query,
            presigned: false,
            headers: &signed.headers,
            signed_headers: names,
            payload_hash: body_hash.as_str(),
        };
        assert_eq!(streamed.text(), canonical, "{dir}");
        assert_eq!(
            sluice_core::digest::hex(&streamed.hash()),
            sluice_core::digest::sha256_hex(canonical.as_bytes()),
            "{dir}"
        );
        let scope = "20150830/us-east-1/service/aws4_request";
        assert_eq!(
            sigv4::string_to_sign("20150830T123600Z", scope, &canonical),
            read(dir, "header-string-to-sign.txt").unwrap(),
            "{dir}"
        );
        let verifier = suite_verifier(dir);
        assert_eq!(
            verifier
                .verify(&signed.parts(), SUITE_NOW)
                .map(|p| p.access_key_id.clone()),
            Ok("AKIDEXAMPLE".to_string()),
            "{dir}"
        );
        let mut tampered = RawRequest::parse(&read(dir, "header-signed-request.txt").unwrap());
        // The same signature with its last hex digit changed.
        let last = if auth.ends_with('0') { "1" } else { "0" };
        let bad = format!("{}{last}", &auth[..auth.len() - 1]);
        tampered
            .headers
            .insert("authorization", HeaderValue::from_str(&bad).unwrap());
        let refused = verifier.verify(&tampered.parts(), SUITE_NOW).unwrap_err();
        assert_eq!(
            refused.error.code,
            ErrorCode::SignatureDoesNotMatch,
            "{dir}"
        );
        assert!(
            refused.error.message.starts_with(SIGNATURE_MISMATCH),
            "{dir}"
        );
        // The answer shows the canonical request, as AWS's does, unless
        // it would hold a session token (rule A5).
        let has_token = signed.headers.contains_key("x-amz-security-token");
        assert_eq!(
            refused.error.message.contains(&canonical),
            !has_token,
            "{dir}"
        );
    }
}

/// AWS's test suite, presigned form: the canonical request (signature
/// left out of the query) is AWS's, and the presigned request verifies
/// within its X-Amz-Expires, and is RequestExpired after.
#[test]
fn a1_presigned_signatures_match_the_aws_test_suite() {
    for dir in suite_dirs() {
        let Some(text) = read(&dir, "query-signed-request.txt") else {
            continue;
        };
        // A token added to the query after signing is a mode of services
        // other than SQS; SQS's SDKs sign it.
        if read(&dir, "context.json").is_some_and(|c| c.contains("\"omit_session_token\": true")) {
            continue;
        }
        let signed = RawRequest::parse(&text);
        let names = form_urlencoded::parse(signed.query.as_bytes())
            .find(|(k, _)| k == "X-Amz-SignedHeaders")
            .unwrap()
            .1
            .into_owned();
        let list: Vec<&str> = names.split(';').collect();
        let canonical = sigv4::canonical_request(
            &signed.method,
            &sigv4::canonical_uri(&signed.path),
            &sigv4::canonical_query(&signed.query, true),
            &sigv4::canonical_headers(&signed.headers, &list),
            &names,
            &sluice_core::digest::sha256_hex(&signed.body),
        );
        assert_eq!(
            canonical,
            read(&dir, "query-canonical-request.txt").unwrap(),
            "{dir}"
        );
        let body_hash = sigv4::sha256_hex_digest(&signed.body);
        let streamed = sigv4::CanonicalRequest {
            method: &signed.method,
            raw_path: &signed.path,
            raw_query: &signed.query,
            presigned: true,
            headers: &signed.headers,
            signed_headers: &names,
            payload_hash: body_hash.as_str(),
        };
        assert_eq!(streamed.text(), canonical, "{dir}");
        let verifier = suite_verifier(&dir);
        assert!(verifier.verify(&signed.parts(), SUITE_NOW).is_ok(), "{dir}");
        let late = SUITE_NOW + 3_600_000 + 1_000;
        let refused = verifier.verify(&signed.parts(), late).unwrap_err();
        assert_eq!(refused.error.code, ErrorCode::RequestExpired, "{dir}");
    }
}

/// A path's escapes are encoded once more (AWS's `double-encode-path`).
#[test]
fn a1_paths_are_encoded_twice_and_normalised() {
    let canonical = read("double-encode-path", "header-canonical-request.txt").unwrap();
    let want = canonical.lines().nth(1).unwrap();
    assert_eq!(
        sigv4::canonical_uri("/test/@connections/JBDvjfGEIAMCERw%3D"),
        want
    );
    assert_eq!(sigv4::canonical_uri(""), "/");
    assert_eq!(
        sigv4::canonical_uri("/000000000000/orders"),
        "/000000000000/orders"
    );
    assert_eq!(sigv4::canonical_uri("/a/./b/../c//"), "/a/c/");
}

// ---- the refusals, as SQS answers them ------------------------------------

const KEY: &str = "AKIDSLUICETEST";
const SECRET: &str = "sluice-test-secret";

fn sqs_verifier(token: Option<&str>) -> Authenticator {
    Authenticator::new(vec![Credential {
        access_key_id: KEY.into(),
        secret_access_key: SECRET.into(),
        session_token: token.map(str::to_string),
        account_id: "123456789012".into(),
        access: Default::default(),
        rate_limit: None,
    }])
    .unwrap()
}

/// Signs a JSON ListQueues at `at` (ms) with `key`/`secret`, as an SDK does.
fn signed_request(key: &str, secret: &str, at: u64, token: Option<&str>) -> RawRequest {
    signed_request_in("eu-west-1", key, secret, at, token)
}

/// [`signed_request`] for `region`.
fn signed_request_in(
    region: &str,
    key: &str,
    secret: &str,
    at: u64,
    token: Option<&str>,
) -> RawRequest {
    signed_request_for("sqs", region, key, secret, at, token)
}

/// [`signed_request_in`], its credential scoped to `service`.
fn signed_request_for(
    service: &str,
    region: &str,
    key: &str,
    secret: &str,
    at: u64,
    token: Option<&str>,
) -> RawRequest {
    let date = super::verify::amz_date_for_tests(at);
    let body = b"{}".to_vec();
    let mut headers = HeaderMap::new();
    headers.insert("host", HeaderValue::from_static("127.0.0.1:9324"));
    headers.insert("x-amz-date", HeaderValue::from_str(&date).unwrap());
    headers.insert(
        "x-amz-target",
        HeaderValue::from_static("AmazonSQS.ListQueues"),
    );
    let mut names = vec!["host", "x-amz-date"];
    if let Some(t) = token {
        headers.insert("x-amz-security-token", HeaderValue::from_str(t).unwrap());
        names.push("x-amz-security-token");
    }
    names.push("x-amz-target");
    let signed_headers = names.join(";");
    let canonical = sigv4::canonical_request(
        "POST",
        "/",
        "",
        &sigv4::canonical_headers(&headers, &names),
        &signed_headers,
        &sluice_core::digest::sha256_hex(&body),
    );
    let scope = format!("{}/{region}/{service}/aws4_request", &date[..8]);
    let to_sign = sigv4::string_to_sign(&date, &scope, &canonical);
    let signature = sigv4::signature(
        &sigv4::signing_key(secret, &date[..8], region, service),
        &to_sign,
    );
    let auth = format!(
        "AWS4-HMAC-SHA256 Credential={key}/{scope}, SignedHeaders={signed_headers}, Signature={signature}"
    );
    headers.insert("authorization", HeaderValue::from_str(&auth).unwrap());
    RawRequest {
        method: "POST".into(),
        path: "/".into(),
        query: String::new(),
        headers,
        body,
    }
}

const NOW: u64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

#[test]
fn a1_a_signed_request_yields_its_principal() {
    let req = signed_request(KEY, SECRET, NOW, None);
    assert_eq!(
        sqs_verifier(None).verify(&req.parts(), NOW + 60_000),
        Ok(std::sync::Arc::new(Principal {
            access_key_id: KEY.into(),
            account_id: "123456789012".into(),
            access: Default::default(),
            bucket: None,
        }))
    );
}

/// A1: the signing key a verifier keeps between requests is the one of
/// the request's own day and region: a request of another region or the
/// next day verifies, one signed with another secret still does not, and
/// a request of the first day verifies again after them.
#[test]
fn a1_the_kept_signing_key_follows_day_and_region() {
    let verifier = sqs_verifier(None);
    const DAY: u64 = 86_400_000;
    let ok = |region: &str, at: u64| {
        let req = signed_request_in(region, KEY, SECRET, at, None);
        verifier
            .verify(&req.parts(), at)
            .map(|p| p.access_key_id.clone())
    };
    assert_eq!(ok("eu-west-1", NOW), Ok(KEY.to_string()));
    assert_eq!(ok("eu-west-1", NOW + 1_000), Ok(KEY.to_string()));
    assert_eq!(ok("us-east-2", NOW + 2_000), Ok(KEY.to_string()));
    assert_eq!(ok("us-east-2", NOW + DAY), Ok(KEY.to_string()));
    let forged = signed_request_in("us-east-2", KEY, "another-secret", NOW + DAY, None);
    let refused = verifier.verify(&forged.parts(), NOW + DAY).unwrap_err();
    assert_eq!(refused.error.code, ErrorCode::SignatureDoesNotMatch);
    assert_eq!(ok("eu-west-1", NOW + 3_000), Ok(KEY.to_string()));
}

/// A1, N1: one key signs for SQS and SNS, whose signing keys differ by
/// service: an SQS request verifies after an SNS one of the same day and
/// region, and the other way round.
#[test]
fn a1_the_kept_signing_key_follows_the_service() {
    let verifier = sqs_verifier(None);
    let ok = |service: &str, at: u64| {
        let req = signed_request_for(service, "us-east-1", KEY, SECRET, at, None);
        verifier
            .verify_for(&req.parts(), service, at)
            .map(|p| p.access_key_id.clone())
    };
    assert_eq!(ok("sqs", NOW), Ok(KEY.to_string()));
    assert_eq!(ok("sns", NOW + 1_000), Ok(KEY.to_string()));
    assert_eq!(ok("sqs", NOW + 2_000), Ok(KEY.to_string()));
    assert_eq!(ok("sns", NOW + 3_000), Ok(KEY.to_string()));
}

/// A1: an unsigned request is MissingAuthenticationToken.
#[test]
fn a1_unsigned_is_missing_authentication_token() {
    let mut req = signed_request(KEY, SECRET, NOW, None);
    req.headers.remove("authorization");
    let refused = sqs_verifier(None).verify(&req.parts(), NOW).unwrap_err();
    assert_eq!(refused.error.code, ErrorCode::MissingAuthenticationToken);
    assert_eq!(refused.error.message, MISSING_TOKEN);
    assert_eq!(refused.access_key_id, None);
}

/// A1: an unknown key, a missing or wrong session token, and a token for
/// a key that has none are InvalidClientTokenId.
#[test]
fn a1_unknown_key_or_token_is_invalid_client_token_id() {
    let cases = [
        (
            sqs_verifier(None),
            signed_request("AKIDOTHER", SECRET, NOW, None),
        ),
        (
            sqs_verifier(Some("tok")),
            signed_request(KEY, SECRET, NOW, None),
        ),
        (
            sqs_verifier(Some("tok")),
            signed_request(KEY, SECRET, NOW, Some("tak")),
        ),
        (
            sqs_verifier(None),
            signed_request(KEY, SECRET, NOW, Some("tok")),
        ),
    ];
    for (i, (verifier, req)) in cases.iter().enumerate() {
        let refused = verifier.verify(&req.parts(), NOW).unwrap_err();
        assert_eq!(
            refused.error.code,
            ErrorCode::InvalidClientTokenId,
            "case {i}"
        );
        assert_eq!(refused.error.message, INVALID_TOKEN);
    }
    let ok = signed_request(KEY, SECRET, NOW, Some("tok"));
    assert!(sqs_verifier(Some("tok")).verify(&ok.parts(), NOW).is_ok());
}

/// A1: a wrong secret and a changed body are SignatureDoesNotMatch.
#[test]
fn a1_wrong_secret_or_changed_body_is_signature_does_not_match() {
    let wrong = signed_request(KEY, "not-the-secret", NOW, None);
    let refused = sqs_verifier(None).verify(&wrong.parts(), NOW).unwrap_err();
    assert_eq!(refused.error.code, ErrorCode::SignatureDoesNotMatch);
    assert_eq!(refused.access_key_id.as_deref(), Some(KEY));
    let mut changed = signed_request(KEY, SECRET, NOW, None);
    changed.body = br#"{"QueueNamePrefix":"x"}"#.to_vec();
    let refused = sqs_verifier(None)
        .verify(&changed.parts(), NOW)
        .unwrap_err();
    assert_eq!(refused.error.code, ErrorCode::SignatureDoesNotMatch);
}

/// A1: 15 minutes of skew either way, in AWS's recorded words.
#[test]
fn a1_dates_beyond_fifteen_minutes_are_refused() {
    let req = signed_request(KEY, SECRET, NOW, None);
    let v = sqs_verifier(None);
    assert!(v.verify(&req.parts(), NOW + 15 * 60_000).is_ok());
    assert!(v.verify(&req.parts(), NOW - 15 * 60_000).is_ok());
    let old = v.verify(&req.parts(), NOW + 16 * 60_000).unwrap_err();
    assert_eq!(old.error.code, ErrorCode::SignatureDoesNotMatch);
    assert_eq!(
        old.error.message,
        "Signature expired: 20260101T000000Z is now earlier than 20260101T000100Z (20260101T001600Z - 15 min.)"
    );
    let future = v.verify(&req.parts(), NOW - 16 * 60_000).unwrap_err();
    assert_eq!(future.error.code, ErrorCode::SignatureDoesNotMatch);
    assert_eq!(
        future.error.message,
        "Signature not yet current: 20260101T000000Z is still later than 20251231T235900Z (20251231T234400Z + 15 min.)"
    );
}

/// A1: a header without its parts, another algorithm, a scope of another
/// service are refused before any key is looked up.
#[test]
fn a1_malformed_signatures_are_refused() {
    let v = sqs_verifier(None);
    let mut req = signed_request(KEY, SECRET, NOW, None);
    req.headers.insert(
        "authorization",
        HeaderValue::from_static(
            "AWS4-HMAC-SHA256 Credential=AKIDSLUICETEST/20260101/eu-west-1/sqs/aws4_request",
        ),
    );
    let refused = v.verify(&req.parts(), NOW).unwrap_err();
    assert_eq!(refused.error.code, ErrorCode::IncompleteSignature);
    assert_eq!(
        refused.error.message,
        "Authorization header requires 'Signature' parameter. Authorization header requires 'SignedHeaders' parameter."
    );
    req.headers
        .insert("authorization", HeaderValue::from_static("AWS x:y"));
    assert_eq!(
        v.verify(&req.parts(), NOW).unwrap_err().error.code,
        ErrorCode::IncompleteSignature
    );
    let sns = signed_request(KEY, SECRET, NOW, None);
    let auth = sns.headers["authorization"]
        .to_str()
        .unwrap()
        .replace("/sqs/", "/sns/");
    let mut sns = sns;
    sns.headers
        .insert("authorization", HeaderValue::from_str(&auth).unwrap());
    let refused = v.verify(&sns.parts(), NOW).unwrap_err();
    assert_eq!(refused.error.code, ErrorCode::SignatureDoesNotMatch);
    assert_eq!(
        refused.error.message,
        "Credential should be scoped to correct service: 'sqs'. "
    );
}

/// A5: the configuration refuses what cannot work, and Debug prints
/// never show a secret; a refusal of a request with a session token does
/// not echo its canonical request (which would hold the token).
#[test]
fn a5_credentials_are_checked_and_secrets_stay_out_of_debug() {
    assert!(Authenticator::new(vec![]).is_err());
    let c = Credential {
        access_key_id: KEY.into(),
        secret_access_key: SECRET.into(),
        session_token: None,
        account_id: "000000000000".into(),
        access: Default::default(),
        rate_limit: None,
    };
    assert!(Authenticator::new(vec![c.clone(), c.clone()]).is_err());
    let debug = format!("{:?}", Authenticator::new(vec![c.clone()]).unwrap());
    assert!(!debug.contains(SECRET), "{debug}");
    assert!(!format!("{c:?}").contains(SECRET));
    let forged = signed_request(KEY, "not-the-secret", NOW, Some("tok"));
    let refused = sqs_verifier(Some("tok"))
        .verify(&forged.parts(), NOW)
        .unwrap_err();
    assert_eq!(refused.error.message, SIGNATURE_MISMATCH);
}

/// A11: replacing the credentials takes effect at the next verification;
/// a bad set is refused and the credentials in use stay.
#[test]
fn a11_credentials_are_replaced_whole_or_not_at_all() {
    let auth = sqs_verifier(None);
    let old = signed_request(KEY, SECRET, NOW, None);
    let rotated = signed_request("AKIDROTATED", "rotated-secret", NOW, None);
    assert!(auth.verify(&old.parts(), NOW).is_ok());
    let credential = |key: &str, secret: &str| Credential {
        access_key_id: key.into(),
        secret_access_key: secret.into(),
        session_token: None,
        account_id: "123456789012".into(),
        access: Default::default(),
        rate_limit: None,
    };
    assert!(auth.replace(vec![]).is_err());
    let twice = vec![
        credential("AKIDROTATED", "rotated-secret"),
        credential("AKIDROTATED", "other"),
    ];
    assert!(auth.replace(twice).is_err());
    assert!(
        auth.verify(&old.parts(), NOW).is_ok(),
        "a bad set changes nothing"
    );
    auth.replace(vec![credential("AKIDROTATED", "rotated-secret")])
        .unwrap();
    assert_eq!(auth.len(), 1);
    let refused = auth.verify(&old.parts(), NOW).unwrap_err();
    assert_eq!(refused.error.code, ErrorCode::InvalidClientTokenId);
    assert!(auth.verify(&rotated.parts(), NOW).is_ok());
}

/// A8, A11: a verified principal carries its key's bucket; a reload keeps
/// the bucket of a key whose rate is unchanged (no fresh burst), and a
/// changed rate starts a new one.
#[test]
fn a8_reload_keeps_an_unchanged_keys_bucket() {
    use super::RateLimit;
    let credential = |per_second| Credential {
        access_key_id: KEY.into(),
        secret_access_key: SECRET.into(),
        session_token: None,
        account_id: "123456789012".into(),
        access: Default::default(),
        rate_limit: Some(RateLimit {
            per_second,
            burst: 1,
        }),
    };
    let auth = Authenticator::new(vec![credential(1)]).unwrap();
    let req = signed_request(KEY, SECRET, NOW, None);
    let bucket = |auth: &Authenticator| {
        auth.verify(&req.parts(), NOW)
            .unwrap()
            .bucket
            .clone()
            .expect("a limited key has a bucket")
    };
    assert!(bucket(&auth).try_take());
    assert!(!bucket(&auth).try_take(), "the burst of one is spent");
    auth.replace(vec![credential(1)]).unwrap();
    assert!(!bucket(&auth).try_take(), "a reload hands out no new burst");
    auth.replace(vec![credential(2)]).unwrap();
    assert!(bucket(&auth).try_take(), "a new rate starts a new bucket");
    let mut unlimited = credential(1);
    unlimited.rate_limit = None;
    auth.replace(vec![unlimited]).unwrap();
    assert!(auth.verify(&req.parts(), NOW).unwrap().bucket.is_none());
}

/// A8: a zero rate is refused with the key named.
#[test]
fn a8_zero_rate_is_refused() {
    let c = Credential {
        access_key_id: KEY.into(),
        secret_access_key: SECRET.into(),
        session_token: None,
        account_id: "123456789012".into(),
        access: Default::default(),
        rate_limit: Some(super::RateLimit {
            per_second: 0,
            burst: 1,
        }),
    };
    let e = Authenticator::new(vec![c]).unwrap_err();
    assert!(e.contains(KEY) && e.contains("rate_limit"), "{e}");
}

/// A1: the fuzz target's seeds (fuzz/seeds/sigv4_request) are requests
/// that verify, so that fuzzing starts from inside the canonicalisation;
/// a changed byte is refused, not a panic.
#[test]
fn a1_fuzz_seeds_are_signed_requests() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/sigv4_request");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        assert!(
            super::fuzzing::verify_request_bytes(&bytes),
            "{} does not verify",
            path.display()
        );
        let mut changed = bytes.clone();
        let last = changed.len() - 1;
        changed[last] ^= 1;
        let _ = super::fuzzing::verify_request_bytes(&changed);
        seen += 1;
    }
    assert!(seen >= 5, "{seen} seeds");
}

// ---- each remaining check, with a request that would verify without it ----

/// What [`sign_custom`] varies from an SDK's JSON ListQueues.
struct Custom<'a> {
    /// The signed headers, in order.
    names: Vec<&'a str>,
    /// `x-amz-content-sha256`, sent (and signed) when set.
    content_sha256: Option<String>,
    /// The payload hash the client signs with; the body's by default.
    signed_payload: Option<String>,
    /// The credential scope's date, region and terminator.
    scope_date: Option<&'a str>,
    region: &'a str,
    terminator: &'a str,
    /// `X-Amz-Date` as sent; the signing time's by default.
    amz_date: Option<&'a str>,
}

impl Default for Custom<'_> {
    fn default() -> Self {
        Self {
            names: vec!["host", "x-amz-date", "x-amz-target"],
            content_sha256: None,
            signed_payload: None,
            scope_date: None,
            region: "eu-west-1",
            terminator: "aws4_request",
            amz_date: None,
        }
    }
}

/// Signs as a client would, with `custom`'s changes, computing the
/// signature the server computes (it always rebuilds the scope with
/// `aws4_request`): so every request here verifies unless a check
/// refuses it.
fn sign_custom(at: u64, custom: Custom<'_>) -> RawRequest {
    let real_date = super::verify::amz_date_for_tests(at);
    let date = custom.amz_date.unwrap_or(&real_date);
    let scope_date = custom.scope_date.unwrap_or_else(|| &date[..8]);
    let body = b"{}".to_vec();
    let mut headers = HeaderMap::new();
    headers.insert("host", HeaderValue::from_static("127.0.0.1:9324"));
    headers.insert("x-amz-date", HeaderValue::from_str(date).unwrap());
    headers.insert(
        "x-amz-target",
        HeaderValue::from_static("AmazonSQS.ListQueues"),
    );
    let mut names = custom.names.clone();
    if let Some(claimed) = &custom.content_sha256 {
        headers.insert(
            "x-amz-content-sha256",
            HeaderValue::from_str(claimed).unwrap(),
        );
        names.push("x-amz-content-sha256");
        names.sort_unstable();
    }
    let signed_headers = names.join(";");
    let payload = custom
        .signed_payload
        .unwrap_or_else(|| sluice_core::digest::sha256_hex(&body));
    let canonical = sigv4::canonical_request(
        "POST",
        "/",
        "",
        &sigv4::canonical_headers(&headers, &names),
        &signed_headers,
        &payload,
    );
    let region = custom.region;
    let scope = format!("{scope_date}/{region}/sqs/aws4_request");
    let to_sign = sigv4::string_to_sign(date, &scope, &canonical);
    let signature = sigv4::signature(
        &sigv4::signing_key(SECRET, scope_date, region, "sqs"),
        &to_sign,
    );
    let credential = format!("{KEY}/{scope_date}/{region}/sqs/{}", custom.terminator);
    let auth = format!(
        "AWS4-HMAC-SHA256 Credential={credential}, SignedHeaders={signed_headers}, Signature={signature}"
    );
    headers.insert("authorization", HeaderValue::from_str(&auth).unwrap());
    RawRequest {
        method: "POST".into(),
        path: "/".into(),
        query: String::new(),
        headers,
        body,
    }
}

/// A presigned GET of ListQueues dated `at`, valid `expires` seconds,
/// signed correctly.
fn presign(at: u64, expires: u64) -> RawRequest {
    let date = super::verify::amz_date_for_tests(at);
    let scope = format!("{}/eu-west-1/sqs/aws4_request", &date[..8]);
    let mut query: String = form_urlencoded::Serializer::new(String::new())
        .append_pair("Action", "ListQueues")
        .append_pair("X-Amz-Algorithm", "AWS4-HMAC-SHA256")
        .append_pair("X-Amz-Credential", &format!("{KEY}/{scope}"))
        .append_pair("X-Amz-Date", &date)
        .append_pair("X-Amz-Expires", &expires.to_string())
        .append_pair("X-Amz-SignedHeaders", "host")
        .finish();
    let mut headers = HeaderMap::new();
    headers.insert("host", HeaderValue::from_static("127.0.0.1:9324"));
    let canonical = sigv4::canonical_request(
        "GET",
        "/",
        &sigv4::canonical_query(&query, true),
        &sigv4::canonical_headers(&headers, &["host"]),
        "host",
        &sluice_core::digest::sha256_hex(b""),
    );
    let to_sign = sigv4::string_to_sign(&date, &scope, &canonical);
    let signature = sigv4::signature(
        &sigv4::signing_key(SECRET, &date[..8], "eu-west-1", "sqs"),
        &to_sign,
    );
    query.push_str(&format!("&X-Amz-Signature={signature}"));
    RawRequest {
        method: "GET".into(),
        path: "/".into(),
        query,
        headers,
        body: Vec::new(),
    }
}

fn refusal(req: &RawRequest, now: u64) -> super::Refusal {
    sqs_verifier(None).verify(&req.parts(), now).unwrap_err()
}

/// The helpers sign what verifies: each test below changes one thing.
#[test]
fn a1_custom_signatures_verify_unchanged() {
    let v = sqs_verifier(None);
    assert!(
        v.verify(&sign_custom(NOW, Custom::default()).parts(), NOW)
            .is_ok()
    );
    let body_hash = Custom {
        content_sha256: Some(sluice_core::digest::sha256_hex(b"{}")),
        ..Custom::default()
    };
    assert!(v.verify(&sign_custom(NOW, body_hash).parts(), NOW).is_ok());
    assert!(v.verify(&presign(NOW, 604_800).parts(), NOW).is_ok());
}

/// A1: a signature that leaves out `host` is IncompleteSignature, AWS's
/// words (recorded: NetSPI/AWSSigner#3, babbel/okhttp-aws-signer#10).
#[test]
fn a1_host_must_be_signed() {
    let req = sign_custom(
        NOW,
        Custom {
            names: vec!["x-amz-date", "x-amz-target"],
            ..Custom::default()
        },
    );
    let refused = refusal(&req, NOW);
    assert_eq!(refused.error.code, ErrorCode::IncompleteSignature);
    assert_eq!(
        refused.error.message,
        "'Host' must be a 'SignedHeader' in the AWS Authorization."
    );
    assert_eq!(refused.access_key_id.as_deref(), Some(KEY));
}

/// A1: an `x-amz-content-sha256` that is not the body's hash is refused
/// even when the signature over the real body is right; SigV4 services
/// other than S3 answer SignatureDoesNotMatch to it (apache/opendal-reqsign#346).
#[test]
fn a1_content_sha256_must_be_the_bodys() {
    let req = sign_custom(
        NOW,
        Custom {
            content_sha256: Some(sluice_core::digest::sha256_hex(b"another body")),
            ..Custom::default()
        },
    );
    let refused = refusal(&req, NOW);
    assert_eq!(refused.error.code, ErrorCode::SignatureDoesNotMatch);
    assert_eq!(
        refused.error.message,
        "The provided 'x-amz-content-sha256' header does not match what was computed."
    );
}

/// A1: `UNSIGNED-PAYLOAD` (an S3 mode) is refused: every SQS body is
/// signed; services other than S3 answer SignatureDoesNotMatch
/// (apache/opendal-reqsign#346, aws-sdk-go's signer signs it for S3 only).
#[test]
fn a1_unsigned_payload_is_refused() {
    for signed_payload in [None, Some("UNSIGNED-PAYLOAD".to_string())] {
        let req = sign_custom(
            NOW,
            Custom {
                content_sha256: Some("UNSIGNED-PAYLOAD".into()),
                signed_payload,
                ..Custom::default()
            },
        );
        let refused = refusal(&req, NOW);
        assert_eq!(refused.error.code, ErrorCode::SignatureDoesNotMatch);
        assert_eq!(refused.reason, "payload hash does not match the body");
    }
}

/// A1: a scope dated another day than X-Amz-Date, in AWS's words (the IAM
/// guide, "Troubleshoot signed requests for AWS APIs": "Date in
/// Credential scope does not match YYYYMMDD from ISO-8601 version of date
/// from HTTP").
#[test]
fn a1_scope_date_must_be_the_requests() {
    let req = sign_custom(
        NOW,
        Custom {
            scope_date: Some("20251231"),
            ..Custom::default()
        },
    );
    let refused = refusal(&req, NOW);
    assert_eq!(refused.error.code, ErrorCode::SignatureDoesNotMatch);
    assert_eq!(
        refused.error.message,
        "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '20251231' != '20260101', from '20260101T000000Z'."
    );
}

/// A1: a scope whose region is no region name, or whose terminator is not
/// `aws4_request`, in AWS's words (region: boto/boto#3690 and the IAM
/// guide's "Credential should be scoped to a valid Region, not …").
#[test]
fn a1_scope_region_and_terminator_must_be_valid() {
    let bad_region = sign_custom(
        NOW,
        Custom {
            region: "EU_WEST",
            ..Custom::default()
        },
    );
    let refused = refusal(&bad_region, NOW);
    assert_eq!(refused.error.code, ErrorCode::SignatureDoesNotMatch);
    assert_eq!(
        refused.error.message,
        "Credential should be scoped to a valid region, not 'EU_WEST'. "
    );
    let bad_terminator = sign_custom(
        NOW,
        Custom {
            terminator: "aws5_request",
            ..Custom::default()
        },
    );
    let refused = refusal(&bad_terminator, NOW);
    assert_eq!(refused.error.code, ErrorCode::SignatureDoesNotMatch);
    assert_eq!(
        refused.error.message,
        "Credential should be scoped with a valid terminator: 'aws4_request', not 'aws5_request'. "
    );
}

/// A1: a malformed X-Amz-Date is IncompleteSignature, AWS's words
/// ("Date must be in ISO-8601 'basic format'. Got '…'. See
/// http://en.wikipedia.org/wiki/ISO_8601", as AWS's coral services
/// answer: scratchstack-aws-signature's and versitygw's recordings).
#[test]
fn a1_x_amz_date_must_be_iso_8601_basic() {
    for bad in [
        "2026-01-01T00:00:00Z",
        "20260101T000000",
        "20260101T00000aZ",
    ] {
        let req = sign_custom(
            NOW,
            Custom {
                amz_date: Some(bad),
                scope_date: Some("20260101"),
                ..Custom::default()
            },
        );
        let refused = refusal(&req, NOW);
        assert_eq!(refused.error.code, ErrorCode::IncompleteSignature, "{bad}");
        assert_eq!(
            refused.error.message,
            format!(
                "Date must be in ISO-8601 'basic format'. Got '{bad}'. See http://en.wikipedia.org/wiki/ISO_8601"
            )
        );
    }
}

/// A1: X-Amz-Expires over 7 days (604800 s) is refused whatever the
/// signature, in AWS's words (recorded from S3, the one service that
/// documents the limit: aws/aws-cli#5464, bryanjos/aws_auth#31); 604800
/// itself is good.
#[test]
fn a1_presigned_expiry_is_at_most_seven_days() {
    let v = sqs_verifier(None);
    assert!(v.verify(&presign(NOW, 604_800).parts(), NOW).is_ok());
    let refused = refusal(&presign(NOW, 604_801), NOW);
    assert_eq!(refused.error.code, ErrorCode::IncompleteSignature);
    assert_eq!(
        refused.error.message,
        "X-Amz-Expires must be less than a week (in seconds); that is, the given X-Amz-Expires must be less than 604800 seconds"
    );
}

/// A1: a presigned URL dated more than 15 minutes ahead of the server's
/// clock is not yet good, in AWS's words ("Signature not yet current: …",
/// the IAM guide and the SQS recordings above); within the skew it is.
#[test]
fn a1_presigned_url_from_the_future_is_refused() {
    let v = sqs_verifier(None);
    let ahead = presign(NOW + 14 * 60_000, 300);
    assert!(v.verify(&ahead.parts(), NOW).is_ok());
    let future = presign(NOW + 16 * 60_000, 300);
    let refused = refusal(&future, NOW);
    assert_eq!(refused.error.code, ErrorCode::SignatureDoesNotMatch);
    assert_eq!(
        refused.error.message,
        "Signature not yet current: 20260101T001600Z is still later than 20260101T001500Z (20260101T000000Z + 15 min.)"
    );
}

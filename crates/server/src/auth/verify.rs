//! What a signed request must carry, and the checks, each failing with the
//! answer AWS gives for it (sources in docs/security.md):
//!
//! 1. a signature at all: the `Authorization` header or a presigned URL's
//!    `X-Amz-*` parameters (`MissingAuthenticationToken`), with every part
//!    (`IncompleteSignature`);
//! 2. a credential scope `<key>/<date>/<region>/sqs/aws4_request`;
//! 3. a known access key, and its session token if it has one
//!    (`InvalidClientTokenId`);
//! 4. a date within 15 minutes of the server's clock, or a presigned URL
//!    within its `X-Amz-Expires` (`SignatureDoesNotMatch`, `RequestExpired`);
//! 5. the signature itself, over what the client said it signed, the body
//!    included, compared in constant time (`SignatureDoesNotMatch`).

use std::borrow::Cow;
use std::sync::Arc;

use http::{HeaderMap, HeaderName};
use sluice_core::ErrorCode;
use sluice_core::clock::Millis;
use sluice_core::timestamp::{parse_basic_utc, rfc3339};
use subtle::ConstantTimeEq;

use sluice_sigv4::{self as sigv4, ALGORITHM};

use super::authenticator::{Authenticator, Key};
use super::principal::{Credential, Principal};
use super::refusal::Refusal;

/// The SigV4 headers read on every signed request, named once: a name
/// given as text is parsed again at each lookup.
static X_AMZ_DATE: HeaderName = HeaderName::from_static("x-amz-date");
static X_AMZ_CONTENT_SHA256: HeaderName = HeaderName::from_static("x-amz-content-sha256");
static X_AMZ_SECURITY_TOKEN: HeaderName = HeaderName::from_static("x-amz-security-token");

/// How far a request's date may be from the server's clock (AWS: 15 min).
const MAX_SKEW_MS: u64 = 15 * 60 * 1000;

/// The longest `X-Amz-Expires` a presigned URL may have (AWS: 7 days).
const MAX_EXPIRES_SECS: u64 = 7 * 24 * 3600;

/// AWS's message for a signature that does not verify.
pub const SIGNATURE_MISMATCH: &str = "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.";

/// AWS's message for an unknown access key or a wrong session token.
pub const INVALID_TOKEN: &str = "The security token included in the request is invalid.";

/// AWS's message for a signature that does not cover the `Host` header
/// (recorded from AWS's services: NetSPI/AWSSigner#3,
/// babbel/okhttp-aws-signer#10).
pub const HOST_NOT_SIGNED: &str = "'Host' must be a 'SignedHeader' in the AWS Authorization.";

/// AWS's message for a request without a signature.
pub const MISSING_TOKEN: &str = "Request is missing Authentication Token";

/// What the verifier reads of a request.
#[derive(Debug, Clone, Copy)]
pub struct RequestParts<'a> {
    /// `GET` or `POST`.
    pub method: &'a str,
    /// The path as it came, still percent-encoded.
    pub path: &'a str,
    /// The raw query string, without `?`.
    pub query: &'a str,
    /// Every header.
    pub headers: &'a HeaderMap,
    /// The whole body.
    pub body: &'a [u8],
}

/// The signature's parts, wherever they came from.
struct Signed<'a> {
    credential: Cow<'a, str>,
    signed_headers: Cow<'a, str>,
    signature: Cow<'a, str>,
    amz_date: Cow<'a, str>,
    /// `X-Amz-Expires` of a presigned URL.
    expires_secs: Option<u64>,
    token: Option<Cow<'a, str>>,
    presigned: bool,
}

/// A credential scope's five fields, `<key>/<date>/<region>/<service>/
/// aws4_request`.
struct Scope<'a> {
    key_id: &'a str,
    date: &'a str,
    region: &'a str,
    service: &'a str,
    terminator: &'a str,
    /// `<date>/<region>/<service>/aws4_request`: the scope the string to
    /// sign names.
    signing_scope: &'a str,
}

impl<'a> Scope<'a> {
    /// The fields of `credential`, which must have exactly five.
    fn parse(credential: &'a str) -> Result<Self, Refusal> {
        let mut fields = credential.split('/');
        let (Some(key_id), Some(date), Some(region), Some(service), Some(terminator), None) = (
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
        ) else {
            return Err(Refusal::new(
                ErrorCode::IncompleteSignature,
                format!(
                    "Credential must have exactly 5 slash-delimited elements, e.g. keyid/date/region/service/term, got '{credential}'"
                ),
                "malformed credential scope",
            ));
        };
        Ok(Scope {
            key_id,
            date,
            region,
            service,
            terminator,
            signing_scope: &credential[key_id.len() + 1..],
        })
    }

    /// The scope names `service`, a valid region and the terminator.
    fn check(&self, service: &str) -> Result<(), Refusal> {
        let mismatch = |message: String, reason| {
            Refusal::new(ErrorCode::SignatureDoesNotMatch, message, reason)
        };
        if self.service != service {
            return Err(mismatch(
                format!("Credential should be scoped to correct service: '{service}'. "),
                "credential scope names another service",
            ));
        }
        if self.terminator != "aws4_request" {
            return Err(mismatch(
                format!(
                    "Credential should be scoped with a valid terminator: 'aws4_request', not '{}'. ",
                    self.terminator
                ),
                "credential scope has a wrong terminator",
            ));
        }
        if !crate::signing_region::is_region_name(self.region) {
            return Err(mismatch(
                format!(
                    "Credential should be scoped to a valid region, not '{}'. ",
                    self.region
                ),
                "credential scope names no valid region",
            ));
        }
        Ok(())
    }
}

impl Authenticator {
    /// Verifies `req`'s signature at `now` for the verifier's service
    /// (`sqs`): the principal it was signed by, or why it is refused.
    pub fn verify(&self, req: &RequestParts<'_>, now: Millis) -> Result<Arc<Principal>, Refusal> {
        self.verify_for(req, self.service, now)
    }

    /// Verifies `req`'s signature at `now` for `service` (`sqs`, `sns`):
    /// its credential scope must name that service.
    pub fn verify_for(
        &self,
        req: &RequestParts<'_>,
        service: &str,
        now: Millis,
    ) -> Result<Arc<Principal>, Refusal> {
        let signed = signed_parts(req)?;
        let scope = Scope::parse(&signed.credential)?;
        let keys = self.keys.load();
        let Some(entry) = keys.get(scope.key_id) else {
            return Err(Refusal::new(
                ErrorCode::InvalidClientTokenId,
                INVALID_TOKEN,
                "unknown access key",
            )
            .by(scope.key_id));
        };
        let checked = scope
            .check(service)
            .and_then(|()| check_token(&entry.credential, &signed))
            .and_then(|()| check_time(&signed, scope.date, now))
            .and_then(|()| check_host_signed(&signed))
            .and_then(|()| check_signature(req, &signed, &scope, entry));
        checked.map_err(|r| r.by(scope.key_id))?;
        Ok(entry.principal.clone())
    }
}

/// A key with a session token needs it; a key without one takes none
/// (AWS refuses a token that belongs to no key alike).
fn check_token(cred: &Credential, signed: &Signed<'_>) -> Result<(), Refusal> {
    let token_ok = match (&cred.session_token, &signed.token) {
        (None, None) => true,
        (Some(want), Some(got)) => bool::from(want.as_bytes().ct_eq(got.as_bytes())),
        _ => false,
    };
    if token_ok {
        Ok(())
    } else {
        Err(Refusal::new(
            ErrorCode::InvalidClientTokenId,
            INVALID_TOKEN,
            "missing or wrong session token",
        ))
    }
}

/// The signature must cover the `Host` header.
fn check_host_signed(signed: &Signed<'_>) -> Result<(), Refusal> {
    if signed.signed_headers.split(';').any(|name| name == "host") {
        Ok(())
    } else {
        Err(Refusal::new(
            ErrorCode::IncompleteSignature,
            HOST_NOT_SIGNED,
            "host header not signed",
        ))
    }
}

/// The signature over what the client said it signed, the body included,
/// compared in constant time.
fn check_signature(
    req: &RequestParts<'_>,
    signed: &Signed<'_>,
    scope: &Scope<'_>,
    entry: &Key,
) -> Result<(), Refusal> {
    let mismatch =
        |message: String, reason| Refusal::new(ErrorCode::SignatureDoesNotMatch, message, reason);
    // Everything below hashes as it goes: the canonical request and the
    // string to sign are written out only for a refusal's answer.
    let payload_hash = sigv4::sha256_hex_digest(req.body);
    if let Some(claimed) = req.headers.get(&X_AMZ_CONTENT_SHA256)
        && claimed.as_bytes() != payload_hash.as_str().as_bytes()
    {
        // UNSIGNED-PAYLOAD included: every SQS request's body is signed.
        return Err(mismatch(
            "The provided 'x-amz-content-sha256' header does not match what was computed.".into(),
            "payload hash does not match the body",
        ));
    }
    let canonical = sigv4::CanonicalRequest {
        method: req.method,
        raw_path: req.path,
        raw_query: req.query,
        presigned: signed.presigned,
        headers: req.headers,
        signed_headers: &signed.signed_headers,
        payload_hash: payload_hash.as_str(),
    };
    let canonical_hash = canonical.hash();
    let mac = entry.signing_mac(scope.date, scope.region, scope.service);
    let verified = sigv4::unhex_signature(&signed.signature).is_some_and(|given| {
        sigv4::signature_matches_mac(
            &mac,
            &signed.amz_date,
            scope.signing_scope,
            &canonical_hash,
            &given,
        )
    });
    if verified {
        return Ok(());
    }
    // As AWS does, say what was signed, so a client's author can compare:
    // all of it comes from the request, but a session token is a
    // credential, and no answer carries one (rule A5).
    let message = if signed.token.is_some() {
        SIGNATURE_MISMATCH.to_string()
    } else {
        let canonical = canonical.text();
        let mut to_sign = String::with_capacity(160);
        sigv4::write_string_to_sign(
            &signed.amz_date,
            scope.signing_scope,
            &canonical_hash,
            &mut to_sign,
        );
        format!(
            "{SIGNATURE_MISMATCH}\n\nThe Canonical String for this request should have been\n'{canonical}'\n\nThe String-to-Sign should have been\n'{to_sign}'\n"
        )
    };
    Err(mismatch(message, "signature does not match"))
}

/// The signature's parts from the `Authorization` header or, failing that,
/// from a presigned URL's query.
fn signed_parts<'a>(req: &RequestParts<'a>) -> Result<Signed<'a>, Refusal> {
    if let Some(value) = req.headers.get(http::header::AUTHORIZATION) {
        let text = value.to_str().unwrap_or_default();
        return header_parts(text, req.headers);
    }
    if req.query.contains("X-Amz-") {
        let params: Vec<(Cow<'a, str>, Cow<'a, str>)> =
            form_urlencoded::parse(req.query.as_bytes()).collect();
        if params.iter().any(|(k, _)| k.starts_with("X-Amz-")) {
            return presigned_parts(params);
        }
    }
    Err(Refusal::new(
        ErrorCode::MissingAuthenticationToken,
        MISSING_TOKEN,
        "request is not signed",
    ))
}

/// `AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…`.
fn header_parts<'a>(text: &'a str, headers: &'a HeaderMap) -> Result<Signed<'a>, Refusal> {
    let Some(rest) = text.strip_prefix(ALGORITHM) else {
        let algorithm = text.split_whitespace().next().unwrap_or_default();
        return Err(Refusal::new(
            ErrorCode::IncompleteSignature,
            format!("Unsupported AWS 'algorithm': '{algorithm}'."),
            "unsupported signing algorithm",
        ));
    };
    let (mut credential, mut signed_headers, mut signature) = (None, None, None);
    for part in rest.split(',') {
        match part.trim().split_once('=') {
            Some(("Credential", v)) => credential = Some(v),
            Some(("SignedHeaders", v)) => signed_headers = Some(v),
            Some(("Signature", v)) => signature = Some(v),
            _ => {}
        }
    }
    let amz_date = headers.get(&X_AMZ_DATE).and_then(|v| v.to_str().ok());
    let mut missing = String::new();
    for (name, absent) in [
        ("Credential", credential.is_none()),
        ("Signature", signature.is_none()),
        ("SignedHeaders", signed_headers.is_none()),
    ] {
        if absent {
            missing.push_str(&format!(
                "Authorization header requires '{name}' parameter. "
            ));
        }
    }
    if amz_date.is_none() {
        missing.push_str(
            "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header. ",
        );
    }
    let (Some(credential), Some(signed_headers), Some(signature), Some(amz_date)) =
        (credential, signed_headers, signature, amz_date)
    else {
        return Err(Refusal::new(
            ErrorCode::IncompleteSignature,
            missing.trim_end().to_string(),
            "incomplete Authorization header",
        ));
    };
    Ok(Signed {
        credential: Cow::Borrowed(credential),
        signed_headers: Cow::Borrowed(signed_headers),
        signature: Cow::Borrowed(signature),
        amz_date: Cow::Borrowed(amz_date),
        expires_secs: None,
        token: headers
            .get(&X_AMZ_SECURITY_TOKEN)
            .map(|v| String::from_utf8_lossy(v.as_bytes())),
        presigned: false,
    })
}

/// `X-Amz-Algorithm`, `-Credential`, `-Date`, `-Expires`, `-SignedHeaders`,
/// `-Signature` (and `-Security-Token`) of a presigned URL.
fn presigned_parts<'a>(params: Vec<(Cow<'a, str>, Cow<'a, str>)>) -> Result<Signed<'a>, Refusal> {
    let get = |name: &str| {
        params
            .iter()
            .position(|(k, _)| k == name)
            .map(|i| params[i].1.clone())
    };
    let algorithm = get("X-Amz-Algorithm");
    let (credential, date, signed_headers, signature) = (
        get("X-Amz-Credential"),
        get("X-Amz-Date"),
        get("X-Amz-SignedHeaders"),
        get("X-Amz-Signature"),
    );
    let expires = get("X-Amz-Expires");
    let token = get("X-Amz-Security-Token");
    if algorithm.as_deref() != Some(ALGORITHM) {
        return Err(Refusal::new(
            ErrorCode::IncompleteSignature,
            format!(
                "Unsupported AWS 'algorithm': '{}'.",
                algorithm.as_deref().unwrap_or_default()
            ),
            "unsupported signing algorithm",
        ));
    }
    let mut missing = String::new();
    for (name, absent) in [
        ("X-Amz-Credential", credential.is_none()),
        ("X-Amz-Date", date.is_none()),
        ("X-Amz-SignedHeaders", signed_headers.is_none()),
        ("X-Amz-Signature", signature.is_none()),
    ] {
        if absent {
            missing.push_str(&format!(
                "AWS query-string parameters must include '{name}'. "
            ));
        }
    }
    let (Some(credential), Some(amz_date), Some(signed_headers), Some(signature)) =
        (credential, date, signed_headers, signature)
    else {
        missing.push_str("Re-examine the query-string parameters.");
        return Err(Refusal::new(
            ErrorCode::IncompleteSignature,
            missing,
            "incomplete presigned URL",
        ));
    };
    let expires_secs = expires.as_deref().map(expires_seconds).transpose()?;
    Ok(Signed {
        credential,
        signed_headers,
        signature,
        amz_date,
        expires_secs,
        token,
        presigned: true,
    })
}

/// A presigned URL's `X-Amz-Expires`: 1 s to 7 days.
fn expires_seconds(text: &str) -> Result<u64, Refusal> {
    match text.parse::<u64>() {
        Ok(secs) if (1..=MAX_EXPIRES_SECS).contains(&secs) => Ok(secs),
        // AWS's words for it (recorded from S3: aws/aws-cli#5464,
        // bryanjos/aws_auth#31); SigV4 keys last 7 days in every service.
        Ok(secs) if secs > MAX_EXPIRES_SECS => Err(Refusal::new(
            ErrorCode::IncompleteSignature,
            format!(
                "X-Amz-Expires must be less than a week (in seconds); that is, the given X-Amz-Expires must be less than {MAX_EXPIRES_SECS} seconds"
            ),
            "X-Amz-Expires over 7 days",
        )),
        _ => Err(Refusal::new(
            ErrorCode::IncompleteSignature,
            format!(
                "X-Amz-Expires must be a number of seconds from 1 to {MAX_EXPIRES_SECS}, not '{text}'."
            ),
            "bad X-Amz-Expires",
        )),
    }
}

/// The date checks: ISO 8601 basic format, the same day as the scope's,
/// within 15 minutes of `now` (AWS's words, recorded from SQS:
/// "Signature expired: … is now earlier than … (… - 15 min.)"), and a
/// presigned URL not past its `X-Amz-Expires`.
fn check_time(signed: &Signed<'_>, scope_date: &str, now: Millis) -> Result<(), Refusal> {
    let amz = signed.amz_date.as_ref();
    let Some(at) = parse_basic_utc(amz) else {
        return Err(Refusal::new(
            ErrorCode::IncompleteSignature,
            format!(
                "Date must be in ISO-8601 'basic format'. Got '{amz}'. See http://en.wikipedia.org/wiki/ISO_8601"
            ),
            "malformed X-Amz-Date",
        ));
    };
    if amz.get(..8) != Some(scope_date) {
        return Err(Refusal::new(
            ErrorCode::SignatureDoesNotMatch,
            format!(
                "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '{scope_date}' != '{}', from '{amz}'.",
                amz.get(..8).unwrap_or_default()
            ),
            "credential scope date differs from X-Amz-Date",
        ));
    }
    if at > now.saturating_add(MAX_SKEW_MS) {
        return Err(Refusal::new(
            ErrorCode::SignatureDoesNotMatch,
            format!(
                "Signature not yet current: {amz} is still later than {} ({} + 15 min.)",
                amz_date(now + MAX_SKEW_MS),
                amz_date(now)
            ),
            "request date is in the future",
        ));
    }
    match signed.expires_secs {
        Some(secs) => {
            let until = at.saturating_add(secs * 1000);
            if now > until {
                return Err(Refusal::new(
                    ErrorCode::RequestExpired,
                    format!(
                        "Request has expired. X-Amz-Date {amz} plus X-Amz-Expires {secs} s is {}, earlier than {}.",
                        amz_date(until),
                        amz_date(now)
                    ),
                    "presigned URL expired",
                ));
            }
        }
        None if now.saturating_sub(MAX_SKEW_MS) > at => {
            return Err(Refusal::new(
                ErrorCode::SignatureDoesNotMatch,
                format!(
                    "Signature expired: {amz} is now earlier than {} ({} - 15 min.)",
                    amz_date(now - MAX_SKEW_MS),
                    amz_date(now)
                ),
                "request date is too old",
            ));
        }
        None => {}
    }
    Ok(())
}

/// Milliseconds since the epoch as `20150830T123600Z`.
fn amz_date(ms: Millis) -> String {
    // rfc3339 gives `2015-08-30T12:36:00.000Z`: keep the digits we need.
    let full = rfc3339(ms);
    let mut out: String = full
        .chars()
        .take(19)
        .filter(|c| c.is_ascii_digit() || *c == 'T')
        .collect();
    out.push('Z');
    out
}

#[cfg(test)]
pub(super) fn amz_date_for_tests(ms: Millis) -> String {
    amz_date(ms)
}

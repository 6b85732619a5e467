//! The SigV4 verifier's entry point for the fuzz target `sigv4_request`
//! (fuzz/, feature `fuzzing`): arbitrary bytes read as an HTTP request and
//! verified, so that the parser and the canonicalisation meet whatever a
//! client can send. A panic is the bug; refusals are expected.

use http::{HeaderMap, HeaderName, HeaderValue};

use super::authenticator::Authenticator;
use super::hints::action_hint;
use super::principal::Credential;
use super::verify::RequestParts;

/// The key of AWS's SigV4 test suite (its requests are the seeds).
const SUITE_KEY: &str = "AKIDEXAMPLE";
const SUITE_SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
/// The suite's time, 2015-08-30T12:36:00Z, in ms.
pub const SUITE_NOW: u64 = 1_440_938_160_000;

/// A request as the suite writes it: `METHOD target HTTP/1.1`, then
/// `Name:value` lines, a blank line, the body. Whatever does not read as
/// such is taken as far as it goes (invalid header lines are skipped).
pub struct FuzzRequest {
    method: String,
    path: String,
    query: String,
    headers: HeaderMap,
    body: Vec<u8>,
}

impl FuzzRequest {
    /// Reads `data` as a request.
    pub fn parse(data: &[u8]) -> Self {
        let split = data
            .windows(2)
            .position(|w| w == b"\n\n")
            .map_or((data, &[][..]), |i| (&data[..i], &data[i + 2..]));
        let head = String::from_utf8_lossy(split.0);
        let mut lines = head.lines();
        let first = lines.next().unwrap_or_default();
        let (method, rest) = first.split_once(' ').unwrap_or((first, ""));
        let target = rest.rfind(" HTTP/").map_or(rest, |i| &rest[..i]);
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        let mut headers = HeaderMap::new();
        for line in lines {
            let Some((name, value)) = line.split_once(':') else {
                continue;
            };
            if let (Ok(name), Ok(value)) = (
                HeaderName::from_bytes(name.as_bytes()),
                HeaderValue::from_str(value),
            ) {
                headers.append(name, value);
            }
        }
        Self {
            method: method.to_string(),
            path: path.to_string(),
            query: query.to_string(),
            headers,
            body: split.1.to_vec(),
        }
    }

    /// The parts the verifier reads.
    pub fn parts(&self) -> RequestParts<'_> {
        RequestParts {
            method: &self.method,
            path: &self.path,
            query: &self.query,
            headers: &self.headers,
            body: &self.body,
        }
    }
}

/// Verifiers for the suite's key: for its service name `service` (its
/// requests verify, reaching the canonicalisation) and for `sqs`.
fn verifiers() -> [Authenticator; 2] {
    let credential = Credential {
        access_key_id: SUITE_KEY.into(),
        secret_access_key: SUITE_SECRET.into(),
        session_token: None,
        account_id: "000000000000".into(),
        access: Default::default(),
        rate_limit: None,
    };
    let mut suite = Authenticator::new(vec![credential.clone()]).unwrap_or_else(|e| panic!("{e}"));
    suite.service = "service";
    let sqs = Authenticator::new(vec![credential]).unwrap_or_else(|e| panic!("{e}"));
    [suite, sqs]
}

/// Verifies `data` read as a request, at the suite's time; true when some
/// verifier accepts it.
pub fn verify_request_bytes(data: &[u8]) -> bool {
    let request = FuzzRequest::parse(data);
    let parts = request.parts();
    let target = request
        .headers
        .get("x-amz-target")
        .and_then(|v| v.to_str().ok());
    let _ = action_hint(target, &request.query, &request.body);
    let mut accepted = false;
    for verifier in verifiers() {
        accepted |= verifier.verify(&parts, SUITE_NOW).is_ok();
    }
    accepted
}

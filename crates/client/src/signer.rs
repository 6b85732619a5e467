//! Signs requests with AWS Signature Version 4 (`Authorization` header),
//! with the arithmetic of `sluice-sigv4`, the functions the server verifies
//! with. The signing key changes once a day: it is derived once per day,
//! not per request.

use std::sync::RwLock;
use std::time::{SystemTime, UNIX_EPOCH};

use hyper::HeaderMap;
use hyper::header::{AUTHORIZATION, HeaderName, HeaderValue};
use sluice_sigv4 as sigv4;
use sluice_sigv4::Mac;

use crate::credentials::Credentials;

/// The service of every SQS credential scope.
pub const SERVICE: &str = "sqs";

/// The `X-Amz-Date` header.
pub const X_AMZ_DATE: HeaderName = HeaderName::from_static("x-amz-date");

/// The `X-Amz-Security-Token` header.
pub const X_AMZ_SECURITY_TOKEN: HeaderName = HeaderName::from_static("x-amz-security-token");

/// Signs with one key for one region and service.
#[derive(Debug)]
pub struct Signer {
    credentials: Credentials,
    region: String,
    service: String,
    /// The day (`yyyymmdd`) and a MAC keyed with its signing key.
    day_key: RwLock<Option<(String, sigv4::HmacSha256)>>,
}

impl Signer {
    /// A signer of `service` requests in `region`.
    pub fn new(credentials: Credentials, region: &str, service: &str) -> Self {
        Self {
            credentials,
            region: region.to_string(),
            service: service.to_string(),
            day_key: RwLock::new(None),
        }
    }

    /// The access key id signed with.
    pub fn access_key_id(&self) -> &str {
        &self.credentials.access_key_id
    }

    /// Signs a request now: adds `X-Amz-Date`, the session token if any,
    /// and `Authorization`, over every header `headers` holds (which must
    /// include `host`), the path, the raw query and the body.
    pub fn sign(
        &self,
        method: &str,
        path: &str,
        query: &str,
        headers: &mut HeaderMap,
        body: &[u8],
    ) {
        self.sign_at(
            &amz_date(SystemTime::now()),
            method,
            path,
            query,
            headers,
            body,
        );
    }

    /// [`sign`](Self::sign) at `amz_date` (`yyyymmddThhmmssZ`).
    pub fn sign_at(
        &self,
        amz_date: &str,
        method: &str,
        path: &str,
        query: &str,
        headers: &mut HeaderMap,
        body: &[u8],
    ) {
        if let Ok(value) = HeaderValue::from_str(amz_date) {
            headers.insert(X_AMZ_DATE, value);
        }
        if let Some(token) = &self.credentials.session_token
            && let Ok(value) = HeaderValue::from_str(token)
        {
            headers.insert(X_AMZ_SECURITY_TOKEN, value);
        }
        headers.remove(AUTHORIZATION);
        // HeaderMap's names are lower case already; sorted and unique.
        let mut names: Vec<&str> = headers.keys().map(HeaderName::as_str).collect();
        names.sort_unstable();
        let signed_headers = names.join(";");
        let payload_hash = sigv4::sha256_hex_digest(body);
        // Hashed as it is written: the canonical request is never built.
        let canonical_hash = sigv4::CanonicalRequest {
            method,
            raw_path: path,
            raw_query: query,
            presigned: false,
            headers,
            signed_headers: &signed_headers,
            payload_hash: payload_hash.as_str(),
        }
        .hash();
        let date = amz_date.get(..8).unwrap_or(amz_date);
        let scope = format!("{date}/{}/{}/aws4_request", self.region, self.service);
        let mut mac = self.mac_of(date);
        sigv4::write_string_to_sign(amz_date, &scope, &canonical_hash, &mut mac);
        let signature = sigv4::HexDigest::of(&mac.finalize().into_bytes().into());
        let signature = signature.as_str();
        let authorization = format!(
            "{} Credential={}/{scope}, SignedHeaders={signed_headers}, Signature={signature}",
            sigv4::ALGORITHM,
            self.credentials.access_key_id
        );
        if let Ok(value) = HeaderValue::from_str(&authorization) {
            headers.insert(AUTHORIZATION, value);
        }
    }

    /// A MAC keyed with the signing key of `date`, derived once per day.
    fn mac_of(&self, date: &str) -> sigv4::HmacSha256 {
        if let Ok(cached) = self.day_key.read()
            && let Some((day, mac)) = cached.as_ref()
            && day == date
        {
            return mac.clone();
        }
        let mac = sigv4::signing_mac(
            &self.credentials.secret_access_key,
            date,
            &self.region,
            &self.service,
        );
        if let Ok(mut cached) = self.day_key.write() {
            *cached = Some((date.to_string(), mac.clone()));
        }
        mac
    }
}

/// `time` as SigV4's `yyyymmddThhmmssZ` (UTC).
pub fn amz_date(time: SystemTime) -> String {
    let secs = time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard
/// Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::time::Duration;

    use hyper::header::HeaderName;

    use super::*;

    #[test]
    fn amz_dates_are_utc_calendar_dates() {
        let at = |secs| amz_date(UNIX_EPOCH + Duration::from_secs(secs));
        assert_eq!(at(0), "19700101T000000Z");
        // AWS's test suite's time.
        assert_eq!(at(1_440_938_160), "20150830T123600Z");
        assert_eq!(at(951_782_400), "20000229T000000Z");
        assert_eq!(at(4_102_444_799), "20991231T235959Z");
    }

    /// The server's copy of AWS's SigV4 test suite (known answers computed
    /// by AWS).
    fn suite_dir() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../server/src/auth/testdata")
    }

    /// A1: the client's `Authorization` header is, byte for byte, the one
    /// AWS's test suite gives for each request whose signed headers are all
    /// its headers (the client signs every header it sends).
    #[test]
    fn a1_signatures_equal_the_aws_test_suite() {
        let mut checked = Vec::new();
        let mut dirs: Vec<_> = std::fs::read_dir(suite_dir())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                p.join("header-signed-request.txt").exists() && p.join("context.json").exists()
            })
            .collect();
        dirs.sort();
        for dir in dirs {
            let text = std::fs::read_to_string(dir.join("header-signed-request.txt")).unwrap();
            let context: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(dir.join("context.json")).unwrap())
                    .unwrap();
            let (head, body) = text.split_once("\n\n").unwrap_or((&text, ""));
            let mut lines = head.lines();
            let first = lines.next().unwrap();
            let (method, rest) = first.split_once(' ').unwrap();
            let target = &rest[..rest.rfind(" HTTP/").unwrap()];
            let (path, query) = target.split_once('?').unwrap_or((target, ""));
            let mut headers = HeaderMap::new();
            let mut expected = String::new();
            for line in lines {
                let (name, value) = line.split_once(':').unwrap();
                if name.eq_ignore_ascii_case("authorization") {
                    expected = value.to_string();
                    continue;
                }
                headers.append(
                    HeaderName::from_bytes(name.as_bytes()).unwrap(),
                    HeaderValue::from_str(value).unwrap(),
                );
            }
            let mut all: Vec<&str> = headers.keys().map(HeaderName::as_str).collect();
            all.sort_unstable();
            if !expected.contains(&format!("SignedHeaders={},", all.join(";"))) {
                continue;
            }
            let creds = &context["credentials"];
            let signer = Signer::new(
                Credentials {
                    access_key_id: creds["access_key_id"].as_str().unwrap().into(),
                    secret_access_key: creds["secret_access_key"].as_str().unwrap().into(),
                    session_token: creds["token"].as_str().map(str::to_string),
                },
                context["region"].as_str().unwrap(),
                context["service"].as_str().unwrap(),
            );
            signer.sign_at(
                "20150830T123600Z",
                method,
                path,
                query,
                &mut headers,
                body.as_bytes(),
            );
            assert_eq!(
                headers[AUTHORIZATION],
                expected.as_str(),
                "{}",
                dir.display()
            );
            checked.push(dir);
        }
        assert!(checked.len() >= 20, "{checked:?}");
        assert!(
            checked
                .iter()
                .any(|d| d.ends_with("get-vanilla-with-session-token"))
        );
    }

    #[test]
    fn the_day_key_is_derived_once_and_renewed_on_a_new_day() {
        let signer = Signer::new(
            Credentials {
                access_key_id: "AKID".into(),
                secret_access_key: "secret".into(),
                session_token: None,
            },
            "eu-west-1",
            SERVICE,
        );
        let sign = |date: &str| {
            let mut mac = signer.mac_of(date);
            mac.update(b"to sign");
            sluice_core::digest::hex(&mac.finalize().into_bytes())
        };
        let first = sign("20260101");
        assert_eq!(
            first,
            sigv4::signature(
                &sigv4::signing_key("secret", "20260101", "eu-west-1", "sqs"),
                "to sign"
            )
        );
        assert_eq!(sign("20260101"), first);
        assert_ne!(sign("20260102"), first);
    }
}

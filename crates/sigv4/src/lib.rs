//! The arithmetic of AWS Signature Version 4: the canonical request, the
//! string to sign, the signing key and the signature. Pure functions over
//! strings and bytes, used by both sides: the server's verifier
//! (`sluice-server`'s `auth` module, checked against AWS's published test
//! suite) and the client's signer (`sluice-client`). What to accept is the
//! verifier's job, what to sign the signer's.

use hmac::{Hmac, Mac};
use http::HeaderMap;
use sha2::{Digest, Sha256};

/// HMAC-SHA256, the only algorithm SigV4 (not SigV4a) signs with.
pub type HmacSha256 = Hmac<Sha256>;

/// The algorithm named in the `Authorization` header and `X-Amz-Algorithm`.
pub const ALGORITHM: &str = "AWS4-HMAC-SHA256";

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 0xf)] as char);
    }
    out
}

/// The bytes of a hex string (either case), or `None` if it is not hex.
pub fn unhex(text: &str) -> Option<Vec<u8>> {
    fn nibble(c: u8) -> Option<u8> {
        match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            b'A'..=b'F' => Some(c - b'A' + 10),
            _ => None,
        }
    }
    let b = text.as_bytes();
    if !b.len().is_multiple_of(2) {
        return None;
    }
    b.chunks(2)
        .map(|pair| Some(nibble(pair[0])? << 4 | nibble(pair[1])?))
        .collect()
}

/// Hex SHA-256 of `data`: the payload hash and the canonical request's hash.
pub fn sha256_hex(data: &[u8]) -> String {
    hex(&Sha256::digest(data))
}

/// Appends `input` percent-encoded as SigV4 wants it: the unreserved
/// characters (`A-Z a-z 0-9 - _ . ~`) as they are, every other byte as
/// `%XX` in upper case; `/` kept when `keep_slash` (paths).
pub fn uri_encode(input: &[u8], keep_slash: bool, out: &mut String) {
    const UPPER: &[u8; 16] = b"0123456789ABCDEF";
    for &b in input {
        if b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'_' | b'.' | b'~')
            || (keep_slash && b == b'/')
        {
            out.push(b as char);
        } else {
            out.push('%');
            out.push(UPPER[usize::from(b >> 4)] as char);
            out.push(UPPER[usize::from(b & 0xf)] as char);
        }
    }
}

/// Decodes `%XX` escapes (a `%` not followed by two hex digits stays as it
/// is). `+` stays `+`: in SigV4 a space is `%20`.
pub fn percent_decode(text: &str) -> Vec<u8> {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && let Some(byte) = b.get(i + 1..i + 3).and_then(|h| {
                std::str::from_utf8(h)
                    .ok()
                    .and_then(unhex)
                    .and_then(|v| v.first().copied())
            })
        {
            out.push(byte);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    out
}

/// The canonical URI of a request path as it came on the wire (still
/// percent-encoded): dot segments and repeated slashes removed (RFC 3986
/// normalisation, which every SDK applies for services other than S3), then
/// encoded once more, so an escape such as `%3D` becomes `%253D` ("each
/// path segment must be URI-encoded twice").
pub fn canonical_uri(raw_path: &str) -> String {
    let mut segments: Vec<&str> = Vec::new();
    let mut parts = raw_path.split('/').peekable();
    let mut trailing_slash = false;
    while let Some(segment) = parts.next() {
        let last = parts.peek().is_none();
        match segment {
            "" => trailing_slash = last,
            "." => trailing_slash = last,
            ".." => {
                segments.pop();
                trailing_slash = last;
            }
            s => {
                segments.push(s);
                trailing_slash = false;
            }
        }
    }
    let mut out = String::with_capacity(raw_path.len() + 8);
    for s in &segments {
        out.push('/');
        uri_encode(s.as_bytes(), false, &mut out);
    }
    if segments.is_empty() || trailing_slash {
        out.push('/');
    }
    out
}

/// The canonical query string of a raw query: every parameter decoded and
/// encoded again the SigV4 way, sorted by name then value, `name=value`
/// joined by `&` (a parameter without `=` has an empty value). A presigned
/// request's own `X-Amz-Signature` is left out (`skip_signature`).
pub fn canonical_query(raw_query: &str, skip_signature: bool) -> String {
    let mut pairs: Vec<(String, String)> = raw_query
        .split('&')
        .filter(|p| !p.is_empty())
        .filter_map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            let key = percent_decode(k);
            if skip_signature && key == b"X-Amz-Signature" {
                return None;
            }
            let mut ek = String::new();
            uri_encode(&key, false, &mut ek);
            let mut ev = String::new();
            uri_encode(&percent_decode(v), false, &mut ev);
            Some((ek, ev))
        })
        .collect();
    pairs.sort();
    let mut out = String::with_capacity(raw_query.len() + 16);
    for (i, (k, v)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push('&');
        }
        out.push_str(k);
        out.push('=');
        out.push_str(v);
    }
    out
}

/// The canonical headers block: for each signed header name (lower case,
/// in the order the client listed them), `name:value\n`, where the value is
/// every value the request has under that name, trimmed, inner runs of
/// spaces made one, joined by `,`.
pub fn canonical_headers(headers: &HeaderMap, signed: &[&str]) -> String {
    let mut out = String::with_capacity(256);
    for name in signed {
        out.push_str(name);
        out.push(':');
        for (i, value) in headers.get_all(*name).iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let text = String::from_utf8_lossy(value.as_bytes());
            let mut first = true;
            for word in text.split_whitespace() {
                if !first {
                    out.push(' ');
                }
                out.push_str(word);
                first = false;
            }
        }
        out.push('\n');
    }
    out
}

/// The canonical request: method, URI, query, headers, signed header
/// names and payload hash, one per line.
pub fn canonical_request(
    method: &str,
    uri: &str,
    query: &str,
    headers: &str,
    signed_headers: &str,
    payload_hash: &str,
) -> String {
    format!("{method}\n{uri}\n{query}\n{headers}\n{signed_headers}\n{payload_hash}")
}

/// The string to sign: algorithm, request date, credential scope (without
/// the key id) and the canonical request's hash.
pub fn string_to_sign(amz_date: &str, scope: &str, canonical_request: &str) -> String {
    format!(
        "{ALGORITHM}\n{amz_date}\n{scope}\n{}",
        sha256_hex(canonical_request.as_bytes())
    )
}

fn hmac(key: &[u8], data: &[u8]) -> [u8; 32] {
    // HMAC takes keys of any length, so this cannot fail; were it ever to,
    // the zero key would fail every signature (closed, not open).
    match HmacSha256::new_from_slice(key) {
        Ok(mut mac) => {
            mac.update(data);
            mac.finalize().into_bytes().into()
        }
        Err(_) => [0; 32],
    }
}

/// The signing key of a secret for one day, region and service.
pub fn signing_key(secret: &str, date: &str, region: &str, service: &str) -> [u8; 32] {
    let k_date = hmac(format!("AWS4{secret}").as_bytes(), date.as_bytes());
    let k_region = hmac(&k_date, region.as_bytes());
    let k_service = hmac(&k_region, service.as_bytes());
    hmac(&k_service, b"aws4_request")
}

/// True when `given` (the signature's bytes) is the MAC of
/// `string_to_sign` under `key`, compared in constant time (`verify_slice`).
pub fn signature_matches(key: &[u8; 32], string_to_sign: &str, given: &[u8]) -> bool {
    match HmacSha256::new_from_slice(key) {
        Ok(mut mac) => {
            mac.update(string_to_sign.as_bytes());
            mac.verify_slice(given).is_ok()
        }
        Err(_) => false,
    }
}

/// The hex signature of `string_to_sign` under `key` (what a client
/// sends; the server never tells a client what the right signature was).
pub fn signature(key: &[u8; 32], string_to_sign: &str) -> String {
    hex(&hmac(key, string_to_sign.as_bytes()))
}

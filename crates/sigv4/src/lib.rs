//! The arithmetic of AWS Signature Version 4: the canonical request, the
//! string to sign, the signing key and the signature. Pure functions over
//! strings and bytes, used by both sides: the server's verifier
//! (`sluice-server`'s `auth` module, checked against AWS's published test
//! suite) and the client's signer (`sluice-client`). What to accept is the
//! verifier's job, what to sign the signer's.

use hmac::Hmac;
use hmac::digest::{Key, KeyInit};
use http::HeaderMap;
use sha2::{Digest, Sha256};
use sluice_core::digest::{hex, hex_into};

/// The MAC trait of [`HmacSha256`] (`update`, `finalize`).
pub use hmac::Mac;

/// HMAC-SHA256, the only algorithm SigV4 (not SigV4a) signs with.
pub type HmacSha256 = Hmac<Sha256>;

/// The algorithm named in the `Authorization` header and `X-Amz-Algorithm`.
pub const ALGORITHM: &str = "AWS4-HMAC-SHA256";

/// The value of a hex digit (either case).
fn nibble(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// The byte two hex digits spell, or `None` if either is not one.
fn hex_byte(pair: &[u8]) -> Option<u8> {
    Some(nibble(pair[0])? << 4 | nibble(pair[1])?)
}

/// The bytes of a hex string (either case), or `None` if it is not hex.
pub fn unhex(text: &str) -> Option<Vec<u8>> {
    let b = text.as_bytes();
    if !b.len().is_multiple_of(2) {
        return None;
    }
    b.chunks(2).map(hex_byte).collect()
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

/// Where canonical text goes: a hasher or a MAC on the hot path (nothing
/// is built), a `String` when the text itself is wanted (known-answer
/// tests, the answer to a signature that does not match).
pub trait Sink {
    /// Appends `text`.
    fn put(&mut self, text: &str);
}

impl Sink for String {
    fn put(&mut self, text: &str) {
        self.push_str(text);
    }
}

impl Sink for Sha256 {
    fn put(&mut self, text: &str) {
        Digest::update(self, text.as_bytes());
    }
}

impl Sink for HmacSha256 {
    fn put(&mut self, text: &str) {
        Mac::update(self, text.as_bytes());
    }
}

/// The lower-case hex of a SHA-256 digest, on the stack.
#[derive(Clone, Copy)]
pub struct HexDigest([u8; 64]);

impl HexDigest {
    /// The hex of `digest`.
    pub fn of(digest: &[u8; 32]) -> Self {
        let mut out = [0u8; 64];
        hex_into(digest, &mut out);
        Self(out)
    }

    /// The hex text.
    pub fn as_str(&self) -> &str {
        // Only hex digits were written: ASCII, hence UTF-8.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

/// Hex SHA-256 of `data`, on the stack: the payload hash.
pub fn sha256_hex_digest(data: &[u8]) -> HexDigest {
    HexDigest::of(&Sha256::digest(data).into())
}

/// The 32 bytes of a 64-digit hex signature (either case), or `None`.
pub fn unhex_signature(text: &str) -> Option<[u8; 32]> {
    let b: &[u8; 64] = text.as_bytes().try_into().ok()?;
    // On the stack: this runs on every signed request.
    let mut out = [0u8; 32];
    for (byte, pair) in out.iter_mut().zip(b.chunks_exact(2)) {
        *byte = hex_byte(pair)?;
    }
    Some(out)
}

/// True when `b` is kept as it is by [`uri_encode`] of a path.
fn path_safe(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~' | b'/')
}

/// Writes the canonical URI of `raw_path` (see [`canonical_uri`]).
pub fn write_canonical_uri(raw_path: &str, sink: &mut impl Sink) {
    // Most paths (`/`, a queue's `/<account>/<name>`) are their own
    // canonical form: absolute, nothing to encode, no empty or dot
    // segment to remove.
    let b = raw_path.as_bytes();
    if b.first() == Some(&b'/')
        && b.iter().copied().all(path_safe)
        && !raw_path.contains("//")
        && !raw_path.contains("/.")
    {
        sink.put(raw_path);
        return;
    }
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
    sink.put(&out);
}

/// The canonical URI of a request path as it came on the wire (still
/// percent-encoded): dot segments and repeated slashes removed (RFC 3986
/// normalisation, which every SDK applies for services other than S3), then
/// encoded once more, so an escape such as `%3D` becomes `%253D` ("each
/// path segment must be URI-encoded twice").
pub fn canonical_uri(raw_path: &str) -> String {
    let mut out = String::with_capacity(raw_path.len() + 8);
    write_canonical_uri(raw_path, &mut out);
    out
}

/// Writes the canonical query string of `raw_query` (see
/// [`canonical_query`]).
pub fn write_canonical_query(raw_query: &str, skip_signature: bool, sink: &mut impl Sink) {
    // JSON-protocol requests and form POSTs have none.
    if raw_query.is_empty() {
        return;
    }
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
    for (i, (k, v)) in pairs.iter().enumerate() {
        if i > 0 {
            sink.put("&");
        }
        sink.put(k);
        sink.put("=");
        sink.put(v);
    }
}

/// The canonical query string of a raw query: every parameter decoded and
/// encoded again the SigV4 way, sorted by name then value, `name=value`
/// joined by `&` (a parameter without `=` has an empty value). A presigned
/// request's own `X-Amz-Signature` is left out (`skip_signature`).
pub fn canonical_query(raw_query: &str, skip_signature: bool) -> String {
    let mut out = String::with_capacity(raw_query.len() + 16);
    write_canonical_query(raw_query, skip_signature, &mut out);
    out
}

/// Writes the canonical headers block of the `signed` names (see
/// [`canonical_headers`]).
pub fn write_canonical_headers<'n>(
    headers: &HeaderMap,
    signed: impl IntoIterator<Item = &'n str>,
    sink: &mut impl Sink,
) {
    for name in signed {
        sink.put(name);
        sink.put(":");
        for (i, value) in headers.get_all(name).iter().enumerate() {
            if i > 0 {
                sink.put(",");
            }
            let bytes = value.as_bytes();
            if is_canonical_value(bytes) {
                // Nearly every value: nothing to trim or fold, and ASCII.
                sink.put(std::str::from_utf8(bytes).unwrap_or_default());
                continue;
            }
            // Borrowed, not copied, when the value is UTF-8 (nearly always).
            let text = String::from_utf8_lossy(bytes);
            let mut first = true;
            for word in text.split_whitespace() {
                if !first {
                    sink.put(" ");
                }
                sink.put(word);
                first = false;
            }
        }
        sink.put("\n");
    }
}

/// True when a header value is its own canonical form: ASCII, no space
/// at either end, no run of spaces, no other whitespace (what trimming and
/// folding by `split_whitespace` would change).
fn is_canonical_value(b: &[u8]) -> bool {
    b.first() != Some(&b' ')
        && b.last() != Some(&b' ')
        && b.is_ascii()
        && !b
            .iter()
            .any(|&c| matches!(c, b'\t' | b'\n' | 0x0b | 0x0c | b'\r'))
        && !b.windows(2).any(|w| w == b"  ")
}

/// The canonical headers block: for each signed header name (lower case,
/// in the order the client listed them), `name:value\n`, where the value is
/// every value the request has under that name, trimmed, inner runs of
/// spaces made one, joined by `,`.
pub fn canonical_headers(headers: &HeaderMap, signed: &[&str]) -> String {
    let mut out = String::with_capacity(256);
    write_canonical_headers(headers, signed.iter().copied(), &mut out);
    out
}

/// A request as SigV4 signs it: what [`CanonicalRequest::write`] makes
/// its canonical request of.
#[derive(Debug, Clone, Copy)]
pub struct CanonicalRequest<'a> {
    /// `GET`, `POST`.
    pub method: &'a str,
    /// The path as it came on the wire, still percent-encoded.
    pub raw_path: &'a str,
    /// The raw query string, without `?`.
    pub raw_query: &'a str,
    /// Leave the query's `X-Amz-Signature` out (a presigned request).
    pub presigned: bool,
    /// Every header of the request.
    pub headers: &'a HeaderMap,
    /// The signed header names, lower case, `;`-separated, in the order
    /// the client listed them.
    pub signed_headers: &'a str,
    /// Hex SHA-256 of the body.
    pub payload_hash: &'a str,
}

impl CanonicalRequest<'_> {
    /// Writes the canonical request: method, URI, query, headers, signed
    /// header names and payload hash, one per line.
    pub fn write(&self, sink: &mut impl Sink) {
        sink.put(self.method);
        sink.put("\n");
        write_canonical_uri(self.raw_path, sink);
        sink.put("\n");
        write_canonical_query(self.raw_query, self.presigned, sink);
        sink.put("\n");
        write_canonical_headers(self.headers, self.signed_headers.split(';'), sink);
        sink.put("\n");
        sink.put(self.signed_headers);
        sink.put("\n");
        sink.put(self.payload_hash);
    }

    /// The canonical request's SHA-256, hashed as it is written.
    pub fn hash(&self) -> [u8; 32] {
        let mut hasher = Sha256::new();
        self.write(&mut hasher);
        hasher.finalize().into()
    }

    /// The canonical request's text.
    pub fn text(&self) -> String {
        let mut out = String::with_capacity(512);
        self.write(&mut out);
        out
    }
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

/// Writes the string to sign: algorithm, request date, credential scope
/// (without the key id) and the hex of the canonical request's hash.
pub fn write_string_to_sign(
    amz_date: &str,
    scope: &str,
    canonical_hash: &[u8; 32],
    sink: &mut impl Sink,
) {
    sink.put(ALGORITHM);
    sink.put("\n");
    sink.put(amz_date);
    sink.put("\n");
    sink.put(scope);
    sink.put("\n");
    sink.put(HexDigest::of(canonical_hash).as_str());
}

/// The string to sign: algorithm, request date, credential scope (without
/// the key id) and the canonical request's hash.
pub fn string_to_sign(amz_date: &str, scope: &str, canonical_request: &str) -> String {
    let mut out = String::with_capacity(160);
    let hash: [u8; 32] = Sha256::digest(canonical_request.as_bytes()).into();
    write_string_to_sign(amz_date, scope, &hash, &mut out);
    out
}

fn hmac(key: &[u8], data: &[u8]) -> [u8; 32] {
    // HMAC takes keys of any length, so this cannot fail; were it ever to,
    // the zero key would fail every signature (closed, not open).
    match <HmacSha256 as Mac>::new_from_slice(key) {
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

/// HMAC-SHA256 keyed with the signing key of a secret for one day, region
/// and service: clone it for each string to sign (keying costs two SHA-256
/// blocks, deriving the key four HMACs).
pub fn signing_mac(secret: &str, date: &str, region: &str, service: &str) -> HmacSha256 {
    keyed(&signing_key(secret, date, region, service))
}

/// HMAC-SHA256 keyed with `key`.
pub fn keyed(key: &[u8; 32]) -> HmacSha256 {
    // HMAC pads a key shorter than its block with zeros: padded here, the
    // keying cannot fail.
    let mut block = Key::<HmacSha256>::default();
    block[..32].copy_from_slice(key);
    <HmacSha256 as KeyInit>::new(&block)
}

/// True when `given` is the signature, under `mac` (keyed with the signing
/// key), of the string to sign of `amz_date`, `scope` and the canonical
/// request's hash, compared in constant time (`verify_slice`).
pub fn signature_matches_mac(
    mac: &HmacSha256,
    amz_date: &str,
    scope: &str,
    canonical_hash: &[u8; 32],
    given: &[u8; 32],
) -> bool {
    let mut mac = mac.clone();
    write_string_to_sign(amz_date, scope, canonical_hash, &mut mac);
    mac.verify_slice(given).is_ok()
}

/// True when `given` (the signature's bytes) is the MAC of
/// `string_to_sign` under `key`, compared in constant time (`verify_slice`).
pub fn signature_matches(key: &[u8; 32], string_to_sign: &str, given: &[u8]) -> bool {
    match <HmacSha256 as Mac>::new_from_slice(key) {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The padded keying is HMAC's own keying of a 32-byte key.
    #[test]
    fn keyed_equals_hmac_keying() {
        let key = signing_key("secret", "20260101", "eu-west-1", "sqs");
        let mut ours = keyed(&key);
        Mac::update(&mut ours, b"text");
        assert_eq!(hex(&ours.finalize().into_bytes()), signature(&key, "text"));
    }

    /// The stack hex and the signature decoding agree with `hex`/`unhex`.
    #[test]
    fn stack_hex_round_trip() {
        let digest: [u8; 32] = Sha256::digest(b"x").into();
        let text = HexDigest::of(&digest);
        assert_eq!(text.as_str(), hex(&digest));
        assert_eq!(
            sha256_hex_digest(b"x").as_str(),
            sluice_core::digest::sha256_hex(b"x")
        );
        assert_eq!(unhex_signature(text.as_str()), Some(digest));
        assert_eq!(unhex_signature(&text.as_str().to_uppercase()), Some(digest));
        assert_eq!(unhex_signature(&text.as_str()[..62]), None);
        assert_eq!(unhex_signature(&"g".repeat(64)), None);
    }

    /// A value taken as it is gives what trimming and folding give; one
    /// that needs either takes the long way.
    #[test]
    fn canonical_header_values() {
        let mut headers = HeaderMap::new();
        let values = [
            ("a", "plain"),
            ("b", "aws-sdk-rust/1.3 os/linux lang/rust"),
            ("c", "  padded  "),
            ("d", "two  spaces"),
            ("e", "tab\there"),
            ("f", "caf\u{e9} "),
        ];
        for (name, value) in values {
            headers.append(
                http::HeaderName::from_static(name),
                http::HeaderValue::from_bytes(value.as_bytes()).unwrap(),
            );
        }
        headers.append("a", http::HeaderValue::from_static("second"));
        assert_eq!(
            canonical_headers(&headers, &["a", "b", "c", "d", "e", "f"]),
            "a:plain,second\nb:aws-sdk-rust/1.3 os/linux lang/rust\nc:padded\nd:two spaces\ne:tab here\nf:caf\u{e9}\n"
        );
        assert!(is_canonical_value(b"x y"));
        assert!(!is_canonical_value(b" x"));
        assert!(!is_canonical_value(b"x\ry"));
    }

    /// The fast path of plain paths gives what the normalisation gives.
    #[test]
    fn plain_paths_are_their_canonical_uri() {
        for path in ["/", "/000000000000/orders", "/a/", "/q.fifo", "/x-y_z~"] {
            assert_eq!(canonical_uri(path), path);
        }
        assert_eq!(canonical_uri("/a//b"), "/a/b");
        assert_eq!(canonical_uri("/a/.b"), "/a/.b");
        assert_eq!(canonical_uri("/a/%41"), "/a/%2541");
        assert_eq!(canonical_uri("a"), "/a");
    }
}

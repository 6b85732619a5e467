// AWS Signature Version 4 for the console's requests, with its own SHA-256
// and HMAC: `crypto.subtle` exists only on secure origins (https or
// localhost), and the console must sign on a plain-http LAN address too.

const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

const encoder = new TextEncoder();

/** The UTF-8 bytes of `text`. */
export function utf8(text) {
  return encoder.encode(text);
}

/** Lower-case hex of `bytes`. */
export function hex(bytes) {
  let out = '';
  for (const b of bytes) out += b.toString(16).padStart(2, '0');
  return out;
}

/** SHA-256 (FIPS 180-4) of `bytes` (a Uint8Array or a string, as UTF-8). */
export function sha256(input) {
  const bytes = typeof input === 'string' ? utf8(input) : input;
  const bitLength = bytes.length * 8;
  // Message, 0x80, zeros, then the 64-bit length: a multiple of 64 bytes.
  const padded = new Uint8Array(((bytes.length + 9 + 63) >> 6) << 6);
  padded.set(bytes);
  padded[bytes.length] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 8, Math.floor(bitLength / 0x100000000));
  view.setUint32(padded.length - 4, bitLength >>> 0);
  const h = new Uint32Array([
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
  ]);
  const w = new Uint32Array(64);
  const rotr = (x, n) => (x >>> n) | (x << (32 - n));
  for (let off = 0; off < padded.length; off += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(off + i * 4);
    for (let i = 16; i < 64; i++) {
      const s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >>> 3);
      const s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >>> 10);
      w[i] = (w[i - 16] + s0 + w[i - 7] + s1) | 0;
    }
    let [a, b, c, d, e, f, g, hh] = h;
    for (let i = 0; i < 64; i++) {
      const S1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
      const ch = (e & f) ^ (~e & g);
      const t1 = (hh + S1 + ch + K[i] + w[i]) | 0;
      const S0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
      const maj = (a & b) ^ (a & c) ^ (b & c);
      const t2 = (S0 + maj) | 0;
      hh = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d;
    h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
  }
  const out = new Uint8Array(32);
  const outView = new DataView(out.buffer);
  h.forEach((v, i) => outView.setUint32(i * 4, v));
  return out;
}

/** HMAC-SHA256 (RFC 2104) of `data` under `key` (bytes or strings). */
export function hmacSha256(key, data) {
  let k = typeof key === 'string' ? utf8(key) : key;
  if (k.length > 64) k = sha256(k);
  const inner = new Uint8Array(64);
  const outer = new Uint8Array(64);
  inner.set(k);
  outer.set(k);
  for (let i = 0; i < 64; i++) {
    inner[i] ^= 0x36;
    outer[i] ^= 0x5c;
  }
  const msg = typeof data === 'string' ? utf8(data) : data;
  const innerInput = new Uint8Array(64 + msg.length);
  innerInput.set(inner);
  innerInput.set(msg, 64);
  const outerInput = new Uint8Array(64 + 32);
  outerInput.set(outer);
  outerInput.set(sha256(innerInput), 64);
  return sha256(outerInput);
}

/** `date` as SigV4's basic ISO 8601 time, `20150830T123600Z`. */
export function amzDate(date) {
  return date.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
}

/**
 * Signs a request with an `Authorization` header (SigV4, header form).
 *
 * `headers` are the headers to sign, `host` included, names in any case;
 * the answer is the same headers plus `x-amz-date`, `authorization` and,
 * with a session token, `x-amz-security-token`, names in lower case.
 * `query` is the canonical query string (empty for the console's POSTs).
 */
export function signRequest({
  method,
  path = '/',
  query = '',
  headers,
  body = '',
  region,
  service,
  accessKeyId,
  secretAccessKey,
  sessionToken,
  date = new Date(),
}) {
  const stamp = amzDate(date);
  const day = stamp.slice(0, 8);
  const all = {};
  for (const [name, value] of Object.entries(headers)) all[name.toLowerCase()] = String(value);
  all['x-amz-date'] = stamp;
  if (sessionToken) all['x-amz-security-token'] = sessionToken;
  const names = Object.keys(all).sort();
  const canonicalHeaders = names
    .map((n) => `${n}:${all[n].trim().replace(/\s+/g, ' ')}\n`)
    .join('');
  const signedHeaders = names.join(';');
  const canonicalRequest = [
    method,
    path,
    query,
    canonicalHeaders,
    signedHeaders,
    hex(sha256(body)),
  ].join('\n');
  const scope = `${day}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', stamp, scope, hex(sha256(canonicalRequest))].join('\n');
  let key = hmacSha256(`AWS4${secretAccessKey}`, day);
  key = hmacSha256(key, region);
  key = hmacSha256(key, service);
  key = hmacSha256(key, 'aws4_request');
  const signature = hex(hmacSha256(key, stringToSign));
  all.authorization =
    `AWS4-HMAC-SHA256 Credential=${accessKeyId}/${scope}, ` +
    `SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return all;
}

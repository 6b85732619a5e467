// Unit tests of the console's in-browser signer (crates/console/assets/sigv4.js):
// SHA-256 and HMAC-SHA256 against their standards' vectors, and SigV4
// against AWS's signing test suite as the server's verifier uses it
// (crates/server/src/auth/testdata).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { amzDate, hex, hmacSha256, sha256, signRequest } from '../../../crates/console/assets/sigv4.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const SUITE = join(ROOT, 'crates/server/src/auth/testdata');

test('SHA-256 matches FIPS 180-2 vectors', () => {
  assert.equal(hex(sha256('')), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  assert.equal(hex(sha256('abc')), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  assert.equal(
    hex(sha256('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')),
    '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
  );
  assert.equal(hex(sha256('a'.repeat(1000000))), 'cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0');
  // UTF-8: the bytes of "é" are c3 a9.
  assert.equal(hex(sha256('é')), hex(sha256(new Uint8Array([0xc3, 0xa9]))));
});

test('HMAC-SHA256 matches RFC 4231 vectors', () => {
  assert.equal(
    hex(hmacSha256(new Uint8Array(20).fill(0x0b), 'Hi There')),
    'b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7',
  );
  assert.equal(
    hex(hmacSha256('Jefe', 'what do ya want for nothing?')),
    '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
  );
  // Test case 6: a key longer than the block is hashed first.
  assert.equal(
    hex(hmacSha256(new Uint8Array(131).fill(0xaa), 'Test Using Larger Than Block-Size Key - Hash Key First')),
    '60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54',
  );
});

/** Signs a case of AWS's suite with the console's signer; returns [ours, AWS's] Authorization. */
function signSuiteCase(name, extra = {}) {
  const dir = join(SUITE, name);
  const context = JSON.parse(readFileSync(join(dir, 'context.json'), 'utf8'));
  const signed = readFileSync(join(dir, 'header-signed-request.txt'), 'utf8');
  const [head, body = ''] = signed.split(/\r?\n\r?\n/);
  const [requestLine, ...lines] = head.split(/\r?\n/);
  const [method, path] = requestLine.split(' ');
  const headers = {};
  let expected = '';
  for (const line of lines) {
    const at = line.indexOf(':');
    const key = line.slice(0, at).toLowerCase();
    const value = line.slice(at + 1);
    if (key === 'authorization') expected = value;
    else if (key !== 'x-amz-date' && key !== 'x-amz-security-token') headers[key] = value;
  }
  const ours = signRequest({
    method,
    path,
    headers,
    body: context.sign_body || body ? body : '',
    region: context.region,
    service: context.service,
    accessKeyId: context.credentials.access_key_id,
    secretAccessKey: context.credentials.secret_access_key,
    sessionToken: context.credentials.token,
    date: new Date(context.timestamp),
    ...extra,
  });
  return [ours.authorization, expected];
}

test("SigV4 Authorization headers equal AWS's test suite's", () => {
  for (const name of ['post-vanilla', 'post-x-www-form-urlencoded', 'post-header-key-sort', 'post-sts-header-before', 'get-vanilla']) {
    const [ours, theirs] = signSuiteCase(name);
    assert.equal(ours, theirs, name);
  }
});

test('SigV4 dates are basic ISO 8601 in UTC', () => {
  assert.equal(amzDate(new Date('2015-08-30T12:36:00.123Z')), '20150830T123600Z');
});

// The console against a server that requires SigV4 (`--auth sigv4`): the
// sign-in form first, a wrong secret refused, the right one signs every
// request in the browser; the credentials live in sessionStorage only and
// sign-out forgets them.
//
//   SLUICE_ENDPOINT=… SLUICE_AUTH_KEY=… SLUICE_AUTH_SECRET=… node --test console-signin.mjs

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch } from './console-browser.mjs';

const ENDPOINT = process.env.SLUICE_ENDPOINT;
const KEY = process.env.SLUICE_AUTH_KEY;
const SECRET = process.env.SLUICE_AUTH_SECRET;
assert.ok(ENDPOINT && KEY && SECRET, 'SLUICE_ENDPOINT, SLUICE_AUTH_KEY and SLUICE_AUTH_SECRET are required');
const SHOTS = resolve(process.env.SLUICE_CONSOLE_SCREENSHOTS || join(dirname(fileURLToPath(import.meta.url)), '../../../docs/console'));

let browser;
let page;

before(async () => {
  // The refused requests (unsigned, wrong secret) are the point here: the
  // browser reports each failed load as a console error.
  browser = await launch(ENDPOINT, { allowed: [/^Failed to load resource: the server responded with a status of 403/] });
  page = browser.page;
});

after(async () => {
  if (browser) await browser.close();
});

test('the console asks for credentials and refuses a wrong secret', async () => {
  await page.goto(`${ENDPOINT}/console/`);
  await page.locator('#signin').waitFor();
  await page.getByLabel('Access key ID').fill(KEY);
  await page.getByLabel('Secret access key').fill(`${SECRET}-wrong`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('#signin .status.error').waitFor();
  assert.match(await page.locator('#signin .status').textContent(), /^SignatureDoesNotMatch: /);
  assert.equal(await page.evaluate(() => sessionStorage.length), 0, 'refused credentials are not kept');
  await page.screenshot({ path: join(SHOTS, 'signin.png') });
});

test('signed in, every request is signed in the browser; sign-out forgets the key', async () => {
  await page.getByLabel('Secret access key').fill(SECRET);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('#queues[data-ready="true"]').waitFor();
  assert.match(await page.locator('#who').textContent(), new RegExp(`Signed in as ${KEY}`));
  const stored = await page.evaluate(() => ({ session: sessionStorage.length, local: localStorage.length, cookies: document.cookie }));
  assert.deepEqual(stored, { session: 1, local: 0, cookies: '' });
  // A signed request from the page reaches the server (the queue list refreshes).
  const signed = await page.waitForRequest((r) => r.method() === 'POST' && /AWS4-HMAC-SHA256 Credential=/.test(r.headers().authorization || ''), { timeout: 10000 });
  assert.match(signed.headers().authorization, new RegExp(`^AWS4-HMAC-SHA256 Credential=${KEY}/\\d{8}/us-east-1/sqs/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=[0-9a-f]{64}$`));
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.locator('#signin').waitFor();
  assert.equal(await page.evaluate(() => sessionStorage.length), 0);
});

test('no JavaScript error and no foreign request', () => {
  assert.deepEqual(browser.errors, []);
});

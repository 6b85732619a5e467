// The console's archive page against a server with an archive
// (`--archive-dir`): a DLQ that keeps what expires (SluiceArchiveExpired,
// a 60 s retention) gets four failed orders; once they expire the queue's
// page links to its archive, which lists them with their failure reasons
// and classes, filters by class, shows one's provenance and body, and
// restores the selected one to its source queue, where the API finds it
// with its message id and a replay mark; the archive then shows it
// restored. Any JavaScript error or foreign request fails the suite.
//
//   SLUICE_ENDPOINT=http://127.0.0.1:PORT node --test console-archive.mjs
//
// (the server started with --archive-dir; the test waits a minute for the
// retention).

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch } from './console-browser.mjs';

const ENDPOINT = process.env.SLUICE_ENDPOINT;
assert.ok(ENDPOINT, 'SLUICE_ENDPOINT must name a running sluice with an archive');
const SHOTS = resolve(process.env.SLUICE_CONSOLE_SCREENSHOTS || join(dirname(fileURLToPath(import.meta.url)), '../../../docs/console'));

async function api(target, body) {
  const resp = await fetch(`${ENDPOINT}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': target },
    body: JSON.stringify(body),
  });
  const data = await resp.json();
  if (!resp.ok) throw new Error(`${target}: ${data.__type}: ${data.message}`);
  return data;
}
const sqs = (action, body) => api(`AmazonSQS.${action}`, body);
const sluice = (action, body) => api(`Sluice.${action}`, body);

const RETENTION = 60;
const FAILURES = [
  ['invalid JSON in body', 'validation'],
  ['customer not found: c-4711', 'validation'],
  ['payment declined by the bank', 'payment'],
  ['timeout calling the inventory service', 'infra'],
];

let browser;
let page;
const q = {};
const ids = [];

before(async () => {
  q.dlq = (await sqs('CreateQueue', {
    QueueName: 'invoices-dlq',
    Attributes: { MessageRetentionPeriod: String(RETENTION), SluiceArchiveExpired: 'true' },
  })).QueueUrl;
  const dlqArn = (await sqs('GetQueueAttributes', { QueueUrl: q.dlq, AttributeNames: ['QueueArn'] })).Attributes.QueueArn;
  q.invoices = (await sqs('CreateQueue', {
    QueueName: 'invoices',
    Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 3 }) },
  })).QueueUrl;
  for (const [i, [reason, failureClass]] of FAILURES.entries()) {
    await sqs('SendMessage', {
      QueueUrl: q.invoices,
      MessageBody: JSON.stringify({ invoice: `i-${500 + i}`, amount: 100 + i }),
      MessageAttributes: { tenant: { DataType: 'String', StringValue: `t${i}` } },
    });
    const got = await sqs('ReceiveMessage', { QueueUrl: q.invoices, MaxNumberOfMessages: 1 });
    ids.push(got.Messages[0].MessageId);
    await sluice('NackMessage', {
      QueueUrl: q.invoices,
      ReceiptHandle: got.Messages[0].ReceiptHandle,
      Reason: reason,
      FailureClass: failureClass,
      Permanent: true,
    });
  }
  mkdirSync(SHOTS, { recursive: true });
  browser = await launch(ENDPOINT);
  page = browser.page;
});

after(async () => {
  if (browser) await browser.close();
});

test('expired DLQ messages are listed in the archive, filtered and shown', { timeout: 150000 }, async () => {
  // The retention runs from each message's send; the archiver then takes them.
  const deadline = Date.now() + (RETENTION + 60) * 1000;
  let archived = [];
  while (Date.now() < deadline) {
    archived = (await sluice('ListArchivedMessages', { QueueUrl: q.dlq })).Messages || [];
    if (archived.length === FAILURES.length) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  assert.equal(archived.length, FAILURES.length, 'every expired message is archived');

  await page.goto(`${ENDPOINT}/console/#/queues/invoices-dlq`);
  await page.getByRole('link', { name: 'Archive' }).click();
  await page.locator('#archived[data-ready="true"]').waitFor();
  assert.equal(await page.locator('#archived tbody tr').count(), FAILURES.length);
  await page.getByLabel('Failure class').fill('validation');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.waitForFunction(() => document.querySelectorAll('#archived tbody tr').length === 2);
  const reasons = await page.locator('#archived tbody tr [data-col="reason"]').allTextContents();
  assert.deepEqual(reasons.sort(), [FAILURES[0][0], FAILURES[1][0]].sort());

  const row = page.locator(`#archived tbody tr[data-message-id="${ids[1]}"]`);
  await row.getByRole('button').click();
  await page.locator('#archive-detail').waitFor();
  const provenance = await page.locator('#archive-provenance').textContent();
  assert.match(provenance, /Source queue\s*invoices/);
  assert.match(provenance, /Failure reason\s*customer not found: c-4711/);
  assert.match(provenance, /Failure class\s*validation/);
  assert.match(provenance, /Restored\s*not since it was archived/);
  assert.match(await page.locator('#archive-body-text').textContent(), /\n {2}"invoice": "i-501",\n/, 'pretty-printed JSON');
  assert.match(await page.locator('#archive-detail').textContent(), /tenant\s*String\s*t1/);
  await page.screenshot({ path: join(SHOTS, 'archive.png'), fullPage: true });
});

test('the selected archived message is restored to its source queue with its id', async () => {
  await page.getByLabel(`Select message ${ids[1]}`).check();
  await page.getByLabel('Restore to').selectOption('invoices');
  await page.getByRole('button', { name: 'Restore selected (1)' }).click();
  await page.locator('.status.ok').filter({ hasText: 'Restored 1 message to invoices.' }).waitFor();
  await page.waitForFunction(
    (id) => document.querySelector(`#archived tr[data-message-id="${id}"] [data-col="restored"]`)?.textContent !== '—',
    ids[1],
  );
  const got = await sqs('ReceiveMessage', { QueueUrl: q.invoices, MaxNumberOfMessages: 10, MessageAttributeNames: ['All'], WaitTimeSeconds: 1 });
  assert.equal(got.Messages.length, 1);
  const [m] = got.Messages;
  assert.equal(m.MessageId, ids[1], 'a restore keeps the message id');
  assert.equal(m.MessageAttributes['sluice.replay-count'].StringValue, '1');
  assert.equal(m.MessageAttributes.tenant.StringValue, 't1');
  // The archive keeps every message.
  assert.equal(((await sluice('ListArchivedMessages', { QueueUrl: q.dlq })).Messages || []).length, FAILURES.length);
});

test('no JavaScript error and no foreign request in the whole run', () => {
  assert.deepEqual(browser.errors, []);
});

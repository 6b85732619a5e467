// The web console driven in headless Chromium (Debian's /usr/bin/chromium,
// through playwright-core): queues and depths, a DLQ message found by its
// failure reason, a dry run then a selective redrive back to its source, a
// move task followed to completion, a purge refused until the queue's name
// is typed; any JavaScript console error or page error fails the suite.
// Screenshots of each page go to SLUICE_CONSOLE_SCREENSHOTS (scripts/client-smoke
// puts them under its logs), or to docs/console/ when it is not set.
//
//   SLUICE_ENDPOINT=http://127.0.0.1:PORT node --test console.mjs
//
// The server must be fresh (no other queues): the screenshots show it.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch } from './console-browser.mjs';

const ENDPOINT = process.env.SLUICE_ENDPOINT;
assert.ok(ENDPOINT, 'SLUICE_ENDPOINT must name a running sluice');
const HERE = dirname(fileURLToPath(import.meta.url));
const SHOTS = resolve(process.env.SLUICE_CONSOLE_SCREENSHOTS || join(HERE, '../../../docs/console'));

/** A JSON 1.0 call; throws with the error's shape on failure. */
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

async function depths(url) {
  const { Attributes: a } = await sqs('GetQueueAttributes', { QueueUrl: url, AttributeNames: ['All'] });
  return {
    visible: Number(a.ApproximateNumberOfMessages),
    inFlight: Number(a.ApproximateNumberOfMessagesNotVisible),
    delayed: Number(a.ApproximateNumberOfMessagesDelayed),
  };
}

const REASONS = [
  'invalid JSON in body',
  'customer not found: c-4711',
  'payment declined by the bank',
  'timeout calling the inventory service',
];
/** The failure class of each reason (NackMessage's FailureClass, rule X7). */
const CLASSES = ['validation', 'validation', 'payment', 'infra'];

let browser;
let page;
const q = {};

before(async () => {
  // Seed: orders → orders-dlq (maxReceiveCount 3), payments on its own.
  q.dlq = (await sqs('CreateQueue', { QueueName: 'orders-dlq' })).QueueUrl;
  const dlqArn = (await sqs('GetQueueAttributes', { QueueUrl: q.dlq, AttributeNames: ['QueueArn'] })).Attributes.QueueArn;
  q.orders = (
    await sqs('CreateQueue', {
      QueueName: 'orders',
      Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 3 }) },
      tags: { team: 'checkout', env: 'staging' },
    })
  ).QueueUrl;
  q.payments = (await sqs('CreateQueue', { QueueName: 'payments' })).QueueUrl;

  // Four orders fail for four different reasons: permanent nacks move
  // them to the DLQ at once, each with its reason.
  for (let i = 0; i < REASONS.length; i++) {
    await sqs('SendMessage', {
      QueueUrl: q.orders,
      MessageBody: JSON.stringify({ order: `o-${1000 + i}`, customer: `c-${4710 + i}`, lines: [{ sku: 'tea', qty: i + 1 }] }),
    });
    const got = await sqs('ReceiveMessage', { QueueUrl: q.orders, MaxNumberOfMessages: 1 });
    assert.equal(got.Messages.length, 1);
    await sluice('NackMessage', {
      QueueUrl: q.orders,
      ReceiptHandle: got.Messages[0].ReceiptHandle,
      Reason: REASONS[i],
      FailureClass: CLASSES[i],
      Permanent: true,
    });
  }
  // orders: 3 visible, 1 in flight; payments: 5 visible, 2 delayed.
  for (let i = 0; i < 4; i++) await sqs('SendMessage', { QueueUrl: q.orders, MessageBody: `{"order":"o-${2000 + i}"}` });
  const held = await sqs('ReceiveMessage', { QueueUrl: q.orders, MaxNumberOfMessages: 1, VisibilityTimeout: 600 });
  assert.equal(held.Messages.length, 1);
  for (let i = 0; i < 5; i++) await sqs('SendMessage', { QueueUrl: q.payments, MessageBody: `{"payment":${i}}` });
  for (let i = 0; i < 2; i++) await sqs('SendMessage', { QueueUrl: q.payments, MessageBody: `{"later":${i}}`, DelaySeconds: 900 });
  assert.deepEqual(await depths(q.orders), { visible: 3, inFlight: 1, delayed: 0 });
  assert.deepEqual(await depths(q.dlq), { visible: 4, inFlight: 0, delayed: 0 });
  // An alarm on the DLQ's depth, evaluated every 10 s: it has changes to show by the end.
  await sluice('PutAlarm', {
    AlarmName: 'orders-dlq-depth',
    QueueUrl: q.dlq,
    MetricName: 'ApproximateNumberOfMessagesVisible',
    Period: 10,
    Threshold: 1,
    ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    AlarmDescription: 'Orders are failing.',
  });

  mkdirSync(SHOTS, { recursive: true });
  browser = await launch(ENDPOINT);
  page = browser.page;
});

after(async () => {
  if (browser) await browser.close();
});

const shot = (name) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
const cell = (queue, col) => page.locator(`#queues tr[data-queue="${queue}"] [data-col="${col}"]`);

test('queues are listed with their depths, the DLQ marked with its source', async () => {
  await page.goto(`${ENDPOINT}/console`);
  assert.equal(new URL(page.url()).pathname, '/console/', '/console redirects to /console/');
  await page.locator('#queues[data-ready="true"]').waitFor();
  assert.equal(await cell('orders', 'visible').textContent(), '3');
  assert.equal(await cell('orders', 'inFlight').textContent(), '1');
  assert.equal(await cell('orders-dlq', 'visible').textContent(), '4');
  assert.equal(await cell('payments', 'visible').textContent(), '5');
  assert.equal(await cell('payments', 'delayed').textContent(), '2');
  assert.match(await cell('orders-dlq', 'role').textContent(), /DLQ of orders/);
  assert.match(await cell('orders', 'role').textContent(), /orders-dlq/);
  assert.notEqual(await cell('orders-dlq', 'oldest').textContent(), '—', 'oldest age read from /metrics');

  // Sort by visible (largest first), then search.
  await page.getByRole('button', { name: 'Visible' }).click();
  assert.equal(await page.locator('#queues tbody tr').first().getAttribute('data-queue'), 'payments');
  await page.getByLabel('Search').fill('dlq');
  await page.waitForFunction(() => document.querySelectorAll('#queues tbody tr').length === 1);
  assert.equal(await page.locator('#queues tbody tr').first().getAttribute('data-queue'), 'orders-dlq');
  await page.getByLabel('Search').fill('');

  // The refresh follows the server by itself, updating cells in place.
  const row = await page.locator('#queues tr[data-queue="payments"]').elementHandle();
  await sqs('SendMessage', { QueueUrl: q.payments, MessageBody: '{"payment":5}' });
  await page.waitForFunction(() => document.querySelector('#queues tr[data-queue="payments"] [data-col="visible"]').textContent === '6', null, { timeout: 15000 });
  assert.ok(await row.evaluate((r) => r.isConnected), 'the row was updated, not rebuilt');

  // Rates from successive /metrics scrapes; the depth's sparkline since the page opened.
  for (let i = 0; i < 6; i++) await sqs('SendMessage', { QueueUrl: q.payments, MessageBody: `{"burst":${i}}` });
  await page.waitForFunction(() => /^(?!0\/s)[0-9.]+\/s$/.test(document.querySelector('#queues tr[data-queue="payments"] [data-col="sent"]').textContent), null, { timeout: 15000 });
  await page.waitForFunction(() => document.querySelector('#queues tr[data-queue="payments"] [data-col="visible"]').textContent === '12', null, { timeout: 15000 });
  const spark = page.locator('#queues tr[data-queue="payments"] svg.spark');
  // From 5, or less if the server sampled the depth while the suite seeded it.
  await page.waitForFunction(() => /from [0-5] to 12, at most 12$/.test(document.querySelector('#queues tr[data-queue="payments"] svg.spark').getAttribute('aria-label')), null, { timeout: 15000 });
  assert.ok((await spark.locator('polyline').getAttribute('points')).split(' ').length >= 3, 'one point per refresh');
  assert.equal(await cell('orders-dlq', 'received').textContent(), '0/s');
  await page.getByRole('button', { name: 'Queue' }).click();
  await shot('queues');

  await page.emulateMedia({ colorScheme: 'dark' });
  await shot('queues-dark');
  await page.setViewportSize({ width: 390, height: 760 });
  await shot('queues-narrow');
  await page.setViewportSize({ width: 1280, height: 860 });
  await page.emulateMedia({ colorScheme: 'light' });
});

test("a queue's page shows attributes, redrive policy and tags, and sends a test message", async () => {
  await page.locator('#queues tr[data-queue="orders"] th a').click();
  await page.locator('#attributes').waitFor();
  assert.match(await page.locator('#h-redrive + p').textContent(), /After 3 receives a message moves to orders-dlq/);
  assert.match(await page.locator('#tags').textContent(), /team\s*checkout/);
  await page.getByLabel('Body').fill('{"order":"o-console","test":true}');
  await page.getByRole('button', { name: 'Send message' }).click();
  await page.locator('#send .status.ok').waitFor();
  assert.match(await page.locator('#send .status').textContent(), /Sent: message [0-9a-f-]{36}/);
  await page.waitForFunction(() => document.querySelector('#depth-visible').textContent === '4', null, { timeout: 15000 });
  await shot('queue');
});

test("a DLQ's message is found by its failure reason and shown with its provenance", async () => {
  await page.goto(`${ENDPOINT}/console/#/queues/orders-dlq/messages`);
  await page.locator('#messages[data-ready="true"]').waitFor();
  assert.equal(await page.locator('#messages tbody tr').count(), 4);
  await page.getByLabel('Failure class').fill('infra');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.waitForFunction(() => document.querySelectorAll('#messages tbody tr').length === 1);
  assert.equal(await page.locator('#messages tbody tr [data-col="reason"]').textContent(), REASONS[3]);
  await page.getByLabel('Failure class').fill('');
  await page.getByLabel('Failure reason contains').fill('customer not found');
  await page.getByRole('button', { name: 'Search' }).click();
  // The class search also showed one row: wait for the new one.
  await page.waitForFunction(
    (reason) => [...document.querySelectorAll('#messages tbody tr [data-col="reason"]')].map((c) => c.textContent).join() === reason,
    REASONS[1],
  );
  const row = page.locator('#messages tbody tr').first();
  assert.equal(await row.locator('[data-col="reason"]').textContent(), REASONS[1]);
  assert.equal(await row.locator('[data-col="class"]').textContent(), CLASSES[1]);
  await row.getByRole('button').click();
  await page.locator('#detail').waitFor();
  const provenance = await page.locator('#provenance').textContent();
  assert.match(provenance, /Source queue\s*orders/);
  assert.match(provenance, /Failure reason\s*customer not found: c-4711/);
  assert.match(provenance, /Failure class\s*validation/);
  assert.match(await page.locator('#detail-body').textContent(), /\n {2}"order": "o-1001",\n/, 'pretty-printed JSON');
  await shot('messages');
  // Nothing was received by looking.
  assert.deepEqual(await depths(q.dlq), { visible: 4, inFlight: 0, delayed: 0 });
});

test('a dry run, then a selective redrive, brings the message back to its source', async () => {
  const id = await page.locator('#messages tbody tr').first().getAttribute('data-message-id');
  await page.getByLabel(`Select message ${id}`).check();
  await page.getByRole('button', { name: 'Redrive selected (1)' }).click();
  await page.locator('#redrive').waitFor();
  assert.ok(await page.locator('#mode-selection').isChecked());
  const confirm = page.locator('#confirm-redrive');
  assert.ok(await confirm.isDisabled(), 'no redrive before a dry run');
  await page.getByRole('button', { name: 'Dry run' }).click();
  await page.locator('#would-move').waitFor();
  assert.equal(await page.locator('#would-move').textContent(), 'Would move: 1');
  assert.equal(await page.locator('#would-refuse').textContent(), 'Would not move: 0');
  assert.deepEqual(await depths(q.dlq), { visible: 4, inFlight: 0, delayed: 0 }, 'a dry run moves nothing');
  await shot('redrive');
  assert.equal(await confirm.textContent(), 'Redrive 1 message');
  await confirm.click();
  await page.locator('#moved').waitFor();
  assert.equal(await page.locator('#moved').textContent(), 'Moved: 1');

  // Through the API: gone from the DLQ, back in orders as a replay.
  const left = await sluice('PeekMessages', { QueueUrl: q.dlq, MaxResults: 10 });
  assert.equal(left.Messages.length, 3);
  assert.ok(!left.Messages.some((m) => m.MessageId === id));
  assert.ok(!left.Messages.some((m) => m.FailureReason === REASONS[1]));
  const back = await sluice('PeekMessages', { QueueUrl: q.orders, MaxResults: 10, BodyContains: '"o-1001"' });
  assert.equal(back.Messages.length, 1);
  assert.equal(back.Messages[0].MessageAttributes['sluice.replay-count'].StringValue, '1');
  assert.equal(back.Messages[0].MessageId, id, 'a replay keeps its message id');
});

test('a dry run says which messages would be refused and why; the filter redrive then moves them', async () => {
  // The replayed order fails again and is back in the DLQ with its replay count.
  const got = await sqs('ReceiveMessage', { QueueUrl: q.orders, MaxNumberOfMessages: 10 });
  let again = 0;
  for (const m of got.Messages) {
    if (m.Body.includes('"o-1001"')) {
      await sluice('NackMessage', { QueueUrl: q.orders, ReceiptHandle: m.ReceiptHandle, Reason: 'customer not found again', Permanent: true });
      again++;
    } else {
      await sqs('ChangeMessageVisibility', { QueueUrl: q.orders, ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0 });
    }
  }
  assert.equal(again, 1);
  await page.goto(`${ENDPOINT}/console/#/queues/orders-dlq/redrive?reason=again`);
  await page.locator('#redrive').waitFor();
  assert.ok(await page.locator('#mode-filter').isChecked());
  assert.equal(await page.getByLabel('Failure reason contains').inputValue(), 'again');
  await page.getByLabel('Refuse messages replayed this many times').fill('1');
  await page.getByRole('button', { name: 'Dry run' }).click();
  await page.locator('#would-move').waitFor();
  assert.equal(await page.locator('#would-move').textContent(), 'Would move: 0');
  assert.equal(await page.locator('#would-refuse').textContent(), 'Would not move: 1');
  assert.match(await page.locator('#refusals').textContent(), /\(refused\): \S/);
  assert.ok(await page.locator('#confirm-redrive').isDisabled(), 'nothing to confirm');
  await shot('redrive-refused');
  // With the default limit it may move: a new dry run, then the redrive.
  await page.getByLabel('Refuse messages replayed this many times').fill('3');
  assert.ok(await page.locator('#confirm-redrive').isDisabled(), 'a changed input asks for a new dry run');
  await page.getByRole('button', { name: 'Dry run' }).click();
  await page.waitForFunction(() => document.querySelector('#would-move')?.textContent === 'Would move: 1');
  await page.locator('#confirm-redrive').click();
  await page.locator('#moved').waitFor();
  assert.equal(await page.locator('#moved').textContent(), 'Moved: 1');
  const back = await sluice('PeekMessages', { QueueUrl: q.orders, MaxResults: 10, BodyContains: '"o-1001"' });
  assert.equal(back.Messages[0].MessageAttributes['sluice.replay-count'].StringValue, '2');
});

test('a move task is started and followed to completion', async () => {
  await page.goto(`${ENDPOINT}/console/#/queues/orders-dlq/tasks`);
  await page.locator('#tasks[data-ready="true"]').waitFor();
  await page.getByLabel('Messages per second (1–500, optional)').fill('1');
  await page.getByRole('button', { name: 'Start move task' }).click();
  await page.locator('#tasks tbody tr[data-status="RUNNING"]').waitFor();
  await shot('tasks-running');
  await page.locator('#tasks tbody tr[data-status="COMPLETED"]').waitFor({ timeout: 30000 });
  const row = page.locator('#tasks tbody tr').first();
  assert.equal(await row.locator('[data-col="progress"] span').textContent(), '3 of 3');
  assert.match(await row.locator('[data-col="rate"]').textContent(), /^[0-9]+\.[0-9]\/s · limit 1\/s$/, 'the rate it moved at, and its limit');
  assert.equal(await row.locator('progress').evaluate((p) => p.value === p.max), true);
  await shot('tasks');
  assert.deepEqual(await depths(q.dlq), { visible: 0, inFlight: 0, delayed: 0 });
  const orders = await depths(q.orders);
  assert.equal(orders.visible + orders.inFlight, 4 + 1 + 1 + 3, 'all back in orders');
});

test("a purge is refused until the queue's name is typed exactly", async () => {
  await page.goto(`${ENDPOINT}/console/#/queues/payments`);
  const button = page.locator('#purge-button');
  await button.waitFor();
  assert.ok(await button.isDisabled());
  const confirm = page.getByLabel('Type payments to confirm').first();
  await confirm.fill('payment');
  assert.ok(await button.isDisabled(), 'a prefix is not the name');
  await confirm.fill('Payments');
  assert.ok(await button.isDisabled(), 'case matters');
  await confirm.press('Enter');
  assert.equal((await depths(q.payments)).visible, 12, 'Enter does not purge either');
  await confirm.fill('payments');
  assert.ok(await button.isEnabled());
  await shot('queue-purge');
  await button.click();
  await page.locator('#purge .status.ok').waitFor();
  assert.equal(await page.locator('#purge .status').textContent(), 'Purged payments.');
  assert.deepEqual(await depths(q.payments), { visible: 0, inFlight: 0, delayed: 0 });
});

test('a running move task is cancelled from its row', async () => {
  // Messages sent straight to the DLQ have no source: this task names a destination.
  for (let i = 0; i < 6; i++) await sqs('SendMessage', { QueueUrl: q.dlq, MessageBody: `{"stray":${i}}` });
  q.straysAt = Date.now();
  const ordersArn = (await sqs('GetQueueAttributes', { QueueUrl: q.orders, AttributeNames: ['QueueArn'] })).Attributes.QueueArn;
  await page.goto(`${ENDPOINT}/console/#/queues/orders-dlq/tasks`);
  await page.locator('#tasks[data-ready="true"]').waitFor();
  await page.getByLabel('Destination queue ARN (optional)').fill(ordersArn);
  await page.getByLabel('Messages per second (1–500, optional)').fill('1');
  await page.getByRole('button', { name: 'Start move task' }).click();
  const running = page.locator('#tasks tbody tr[data-status="RUNNING"]');
  await running.waitFor();
  await running.getByRole('button', { name: 'Cancel' }).click();
  await page.locator('#tasks tbody tr[data-status="CANCELLED"]').waitFor({ timeout: 15000 });
  assert.match(await page.locator('#start-task + .status').textContent(), /^Cancelled: \d+ moved before the cancel\.$/);
  assert.ok(await page.locator('#tasks tbody tr[data-status="CANCELLED"] button').isHidden(), 'no cancel on an ended task');
  const { Results } = await sqs('ListMessageMoveTasks', { SourceArn: (await sqs('GetQueueAttributes', { QueueUrl: q.dlq, AttributeNames: ['QueueArn'] })).Attributes.QueueArn });
  assert.equal(Results[0].Status, 'CANCELLED');
  assert.ok((await depths(q.dlq)).visible > 0, 'cancelled before moving them all');
});

test('alarms are listed with state, metric, queue, threshold and history, and follow the server', async () => {
  await page.goto(`${ENDPOINT}/console/#/alarms`);
  await page.locator('#alarms[data-ready="true"]').waitFor();
  const row = page.locator('#alarms tr[data-alarm="orders-dlq-depth"]');
  assert.equal(await row.locator('[data-col="queue"]').textContent(), 'orders-dlq');
  assert.equal(await row.locator('[data-col="metric"]').textContent(), 'Maximum of ApproximateNumberOfMessagesVisible');
  assert.equal(await row.locator('[data-col="threshold"]').textContent(), '≥ 1 over 1 × 10 s');
  assert.equal(await row.locator('[data-col="source"]').textContent(), 'api');
  // A new alarm appears by itself; the DLQ's alarm reaches ALARM (the stray messages are there).
  await sluice('PutAlarm', {
    AlarmName: 'orders-backlog',
    QueueUrl: q.orders,
    MetricName: 'ApproximateAgeOfOldestMessage',
    Period: 60,
    EvaluationPeriods: 3,
    DatapointsToAlarm: 2,
    Threshold: 3600,
    ComparisonOperator: 'GreaterThanThreshold',
  });
  await page.locator('#alarms tr[data-alarm="orders-backlog"]').waitFor({ timeout: 15000 });
  assert.equal(await page.locator('#alarms tr[data-alarm="orders-backlog"] [data-col="threshold"]').textContent(), '> 3600 over 2 of 3 × 60 s');
  await page.waitForFunction(
    () => document.querySelector('#alarms tr[data-alarm="orders-dlq-depth"] [data-col="state"]').textContent === 'ALARM',
    null,
    { timeout: 45000 },
  );
  // The history opens from the keyboard and stays open across refreshes.
  const summary = page.locator('#alarms tr[data-history-of="orders-dlq-depth"] summary');
  await summary.focus();
  await page.keyboard.press('Enter');
  const history = page.locator('#alarms tr[data-history-of="orders-dlq-depth"] ol.history');
  await history.waitFor();
  assert.match(await history.textContent(), /→ ALARM: Threshold Crossed/);
  await page.waitForTimeout(3500);
  assert.ok(await history.isVisible(), 'an open history stays open on a refresh');
  await shot('alarms');
});

test("the queues page shows each queue's worst alarm state and the server's hour of depth samples", async () => {
  // The server samples every depth each 30 s: wait for a sample of the
  // DLQ taken well before the page opens.
  const deadline = Date.now() + 45000;
  for (;;) {
    const { Queues: queues = [] } = await sluice('GetDepthHistory', { QueueUrl: q.dlq });
    const samples = queues[0]?.Samples || [];
    if (samples.some((x) => x.Timestamp <= Date.now() - 2000)) break;
    assert.ok(Date.now() < deadline, 'the server sampled the DLQ within 45 s');
    await new Promise((r) => setTimeout(r, 500));
  }
  // The DLQ's alarm may still hold a datapoint of the moment the first move
  // task had emptied the queue: wait out two of its 10 s periods since the
  // strays arrived, then for the state the server evaluates from them.
  const settled = q.straysAt + 2 * 10000 + 1000;
  while (Date.now() < settled) await new Promise((r) => setTimeout(r, 500));
  for (const until = Date.now() + 30000; ; ) {
    const { Alarms: alarms = [] } = await sluice('DescribeAlarms', { AlarmNames: ['orders-dlq-depth'] });
    if (alarms[0]?.StateValue === 'ALARM') break;
    assert.ok(Date.now() < until, 'the DLQ alarm reached ALARM from the strays');
    await new Promise((r) => setTimeout(r, 500));
  }
  await page.goto(`${ENDPOINT}/console/#/queues`);
  await page.locator('#queues[data-ready="true"]').waitFor();
  // At the first refresh the page has one sample of its own: a span is the server's.
  const label = await page.locator('#queues tr[data-queue="orders-dlq"] svg.spark').getAttribute('aria-label');
  assert.match(label, /^Visible messages over the last [1-9][0-9]* (s|min):/, label);
  assert.equal(await cell('orders-dlq', 'alarm').textContent(), 'ALARM');
  assert.equal(await cell('orders-dlq', 'alarm').locator('a').getAttribute('href'), '#/alarms');
  assert.match(await cell('orders', 'alarm').textContent(), /^(OK|INSUFFICIENT_DATA)$/);
  assert.equal(await cell('payments', 'alarm').textContent(), '', 'no alarm, no state');
});

test("a queue's page lists the push consumers that read it", async () => {
  const invoices = (await sqs('CreateQueue', { QueueName: 'invoices' })).QueueUrl;
  // Nothing is sent to it: the handler (a closed port) is never called.
  await sluice('CreateConsumer', {
    Name: 'invoices-worker',
    QueueUrl: invoices,
    Url: 'http://127.0.0.1:9/invoke',
    BatchSize: 5,
    TimeoutSeconds: 10,
    ReportBatchItemFailures: true,
  });
  await page.goto(`${ENDPOINT}/console/#/queues/invoices`);
  const row = page.locator('#consumers tr[data-consumer="invoices-worker"]');
  await row.waitFor();
  const col = (c) => row.locator(`[data-col="${c}"]`).textContent();
  assert.equal(await col('url'), 'http://127.0.0.1:9/invoke');
  assert.equal(await col('state'), 'running');
  assert.equal(await col('batch'), '5');
  assert.equal(await col('timeout'), '10 s');
  assert.equal(await col('failures'), 'reported');
  assert.equal(await col('source'), 'api');
  // Paused through the API, the page follows.
  await sluice('PauseConsumer', { Name: 'invoices-worker' });
  await page.waitForFunction(() => document.querySelector('#consumers tr[data-consumer="invoices-worker"] [data-col="state"]')?.textContent === 'stopped', null, { timeout: 15000 });
  await page.locator('#h-consumers').scrollIntoViewIfNeeded();
  await shot('queue-consumers');
  await page.goto(`${ENDPOINT}/console/#/queues/payments`);
  await page.locator('#h-consumers').waitFor();
  assert.equal(await page.locator('#h-consumers + div').textContent(), 'No push consumer reads this queue.');
  await sluice('DeleteConsumer', { Name: 'invoices-worker' });
  await sqs('DeleteQueue', { QueueUrl: invoices });
});

test("a fair queue's page shows its noisy and quiet tenants (rule V10)", async () => {
  const tenants = (await sqs('CreateQueue', { QueueName: 'tenants' })).QueueUrl;
  // bulk floods the queue and holds 40 messages in flight: noisy while it
  // still has a backlog; small has one message waiting.
  for (let b = 0; b < 5; b++) {
    const Entries = Array.from({ length: 10 }, (_, i) => ({ Id: `m${i}`, MessageBody: `bulk ${b * 10 + i}`, MessageGroupId: 'bulk' }));
    await sqs('SendMessageBatch', { QueueUrl: tenants, Entries });
  }
  for (let i = 0; i < 4; i++) {
    const got = await sqs('ReceiveMessage', { QueueUrl: tenants, MaxNumberOfMessages: 10, VisibilityTimeout: 600 });
    assert.equal(got.Messages.length, 10);
  }
  await sqs('SendMessage', { QueueUrl: tenants, MessageBody: 'small 0', MessageGroupId: 'small' });
  await page.goto(`${ENDPOINT}/console/#/queues/tenants`);
  await page.locator('#fair:not([hidden])').waitFor({ timeout: 15000 });
  assert.equal(await page.locator('#fair-noisy').textContent(), '1');
  assert.equal(await page.locator('#fair-quiet-visible').textContent(), '1');
  assert.equal(await page.locator('#fair-quiet-in-flight').textContent(), '0');
  await page.goto(`${ENDPOINT}/console/#/queues/payments`);
  await page.locator('#depths').waitFor();
  assert.equal(await page.locator('#fair').getAttribute('hidden'), '', 'not a fair queue: no section');
  await sqs('DeleteQueue', { QueueUrl: tenants });
});

test('doctor findings are computed in the page with their fixes, and follow the queues', async () => {
  // emails: one receive before the DLQ, and a visibility timeout too short for its consumer.
  const dlqArn = (await sqs('GetQueueAttributes', { QueueUrl: q.dlq, AttributeNames: ['QueueArn'] })).Attributes.QueueArn;
  await sqs('CreateQueue', {
    QueueName: 'emails',
    Attributes: { VisibilityTimeout: '60', RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 1 }) },
    tags: { 'sluice:consumer-timeout-seconds': '30' },
  });
  await page.goto(`${ENDPOINT}/console/#/doctor`);
  await page.locator('#findings[data-ready="true"]').waitFor();
  const finding = (check, queue) => page.locator(`#findings [data-check="${check}"][data-queue="${queue}"]`);
  assert.equal(await finding('max-receive-count', 'emails').getAttribute('data-severity'), 'warning');
  assert.match(await finding('visibility-timeout', 'emails').textContent(), /Fix: set VisibilityTimeout to at least 180/);
  assert.equal(await finding('redrive-policy', 'payments').getAttribute('data-severity'), 'warning');
  assert.equal(await finding('dlq-retention', 'orders-dlq').count(), 2, 'one per source');
  assert.match(await finding('dlq-retention', 'orders-dlq').first().textContent(), /4d − 4d = 0s/);
  assert.match(await finding('dlq-alarm', 'orders-dlq').textContent(), /has no actions/);
  assert.equal(await page.locator('#findings [data-severity="critical"]').count(), 0);
  assert.match(await page.locator('#cli-only').textContent(), /dlq-expiring/);
  await shot('doctor');
  // Fixed through the API, the finding goes away by itself.
  await sqs('SetQueueAttributes', { QueueUrl: q.dlq, Attributes: { MessageRetentionPeriod: '1209600' } });
  await page.waitForFunction(() => !document.querySelector('#findings [data-check="dlq-retention"]'), null, { timeout: 15000 });
  assert.equal(await finding('max-receive-count', 'emails').count(), 1, 'the others stay');
});

test("a queue's attributes and redrive policies are edited, the server's refusals shown inline", async () => {
  // The two refusals below are 400s, which Chromium logs as errors: exactly those are expected.
  const errorsBefore = browser.errors.length;
  await page.goto(`${ENDPOINT}/console/#/queues/payments`);
  const attrsForm = page.locator('#edit-attributes');
  await attrsForm.waitFor();
  await page.getByLabel('Visibility timeout (seconds)').fill('50000');
  await attrsForm.getByRole('button', { name: 'Save' }).click();
  await attrsForm.locator('.status.error').waitFor();
  assert.match(await attrsForm.locator('.status').textContent(), /^InvalidAttributeValue: .*VisibilityTimeout/);
  await page.getByLabel('Visibility timeout (seconds)').fill('120');
  await attrsForm.getByRole('button', { name: 'Save' }).click();
  await attrsForm.locator('.status.ok').waitFor();
  assert.equal(await attrsForm.locator('.status').textContent(), 'Saved: VisibilityTimeout.');
  const get = async (name) => (await sqs('GetQueueAttributes', { QueueUrl: q.payments, AttributeNames: [name] })).Attributes?.[name];
  assert.equal(await get('VisibilityTimeout'), '120');
  assert.match(await page.locator('#attributes').textContent(), /VisibilityTimeout\s*120/);

  const redriveForm = page.locator('#edit-redrive');
  await page.getByLabel('Dead-letter queue').selectOption({ label: 'orders-dlq' });
  await page.getByLabel('Receives before it moves (maxReceiveCount)').fill('0');
  await redriveForm.getByRole('button', { name: 'Save' }).click();
  await redriveForm.locator('.status.error').waitFor();
  assert.match(await redriveForm.locator('.status').textContent(), /^InvalidParameterValue|^InvalidAttributeValue/);
  assert.equal(await get('RedrivePolicy'), undefined, 'refused: nothing set');
  await page.getByLabel('Receives before it moves (maxReceiveCount)').fill('4');
  await redriveForm.getByRole('button', { name: 'Save' }).click();
  await redriveForm.locator('.status.ok').waitFor();
  assert.match(await page.locator('#h-redrive + p').textContent(), /After 4 receives a message moves to orders-dlq/);
  assert.equal(JSON.parse(await get('RedrivePolicy')).maxReceiveCount, 4);

  const allowForm = page.locator('#edit-allow');
  await page.getByLabel('Permission').selectOption('denyAll');
  await allowForm.getByRole('button', { name: 'Save' }).click();
  await allowForm.locator('.status.ok').waitFor();
  assert.equal(JSON.parse(await get('RedriveAllowPolicy')).redrivePermission, 'denyAll');
  await page.locator('#h-edit').scrollIntoViewIfNeeded();
  await shot('queue-edit');
  const refusals = browser.errors.splice(errorsBefore);
  assert.deepEqual(refusals, Array(2).fill('console: Failed to load resource: the server responded with a status of 400 (Bad Request)'));
});

/** ms since the epoch as a `datetime-local` value, in this machine's time zone (the browser's). */
function localInput(ms) {
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60000);
  return d.toISOString().slice(0, 19);
}

test("a DLQ's messages are filtered by attribute, source and send time, and exported as JSON Lines", async () => {
  // Two new failures from orders, after the strays (sent straight to the DLQ, no source).
  await new Promise((r) => setTimeout(r, 1100));
  const since = Math.ceil(Date.now() / 1000) * 1000;
  while (Date.now() < since) await new Promise((r) => setTimeout(r, 50));
  await sqs('PurgeQueue', { QueueUrl: q.orders });
  for (const tenant of ['acme', 'globex']) {
    await sqs('SendMessage', {
      QueueUrl: q.orders,
      MessageBody: JSON.stringify({ order: `o-${tenant}` }),
      MessageAttributes: { tenant: { DataType: 'String', StringValue: tenant } },
    });
    const got = await sqs('ReceiveMessage', { QueueUrl: q.orders, MaxNumberOfMessages: 1, MessageAttributeNames: ['All'] });
    await sluice('NackMessage', { QueueUrl: q.orders, ReceiptHandle: got.Messages[0].ReceiptHandle, Reason: `${tenant} rejected`, Permanent: true });
  }
  const ordersArn = (await sqs('GetQueueAttributes', { QueueUrl: q.orders, AttributeNames: ['QueueArn'] })).Attributes.QueueArn;
  const rows = () => page.locator('#messages tbody tr').count();
  const search = async () => {
    await page.locator('#filter').getByRole('button', { name: 'Search' }).click();
    await page.locator('#filter ~ .status:not(:text("Loading…"))').waitFor();
  };
  await page.goto(`${ENDPOINT}/console/#/queues/orders-dlq/messages`);
  await page.locator('#messages[data-ready="true"]').waitFor();
  const all = await rows();
  assert.ok(all > 2, 'the strays and the two new failures');

  await page.getByLabel('Attribute name').fill('tenant');
  await page.getByLabel('Attribute value').fill('acme');
  await search();
  await page.waitForFunction(() => document.querySelectorAll('#messages tbody tr').length === 1);
  assert.equal(await page.locator('#messages tbody [data-col="reason"]').textContent(), 'acme rejected');
  await page.getByLabel('Attribute name').fill('');
  await page.getByLabel('Attribute value').fill('');

  await page.getByLabel('Source queue').selectOption({ label: 'orders' });
  await search();
  await page.waitForFunction(() => document.querySelectorAll('#messages tbody tr').length === 2);
  await page.getByLabel('Source queue').selectOption({ label: '(any)' });
  await page.getByLabel('Sent before').fill(localInput(since));
  await search();
  await page.waitForFunction((n) => document.querySelectorAll('#messages tbody tr').length === n, all - 2);
  await page.getByLabel('Sent before').fill('');
  await page.getByLabel('Sent from').fill(localInput(since));
  await page.getByLabel('Attribute name').fill('tenant');
  await page.getByLabel('Attribute value').fill('globex');
  await page.getByLabel('Source queue').selectOption({ label: 'orders' });
  await search();
  await page.waitForFunction(() => document.querySelectorAll('#messages tbody tr').length === 1);
  assert.equal(await page.locator('#messages tbody [data-col="reason"]').textContent(), 'globex rejected');
  await shot('messages-filtered');

  // Export: the filter's messages, each line as PeekMessages shows it (the CLI's format).
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export matching as JSON Lines' }).click()]);
  assert.match(download.suggestedFilename(), /^orders-dlq-\d{4}-\d{2}-\d{2}\.jsonl$/);
  const lines = readFileSync(await download.path(), 'utf8').split('\n');
  assert.equal(lines.pop(), '', 'every line ends with a newline');
  const peeked = await sluice('PeekMessages', {
    QueueUrl: q.dlq, MaxResults: 100, AttributeName: 'tenant', AttributeValue: 'globex', SourceQueueArn: ordersArn, SentAfter: since,
  });
  assert.deepEqual(lines.map((l) => JSON.parse(l)), peeked.Messages);
  assert.equal(peeked.Messages.length, 1);
  assert.match(await page.locator('#filter ~ .status').textContent(), /^Exported 1 message to orders-dlq-.*\.jsonl\.$/);

  // "Redrive all matching" carries every filter to the redrive page.
  await page.locator('#redrive-filter').click();
  await page.locator('#redrive').waitFor();
  assert.match(await page.locator('#redrive-extra').textContent(), /with the attribute tenant = "globex", dead-lettered from orders, sent at or after/);
  await page.getByRole('button', { name: 'Dry run' }).click();
  await page.locator('#would-move').waitFor();
  assert.equal(await page.locator('#would-move').textContent(), 'Would move: 1');
});

/** An SNS call (Query protocol, unsigned); the answer's XML text. */
async function sns(action, params) {
  const body = new URLSearchParams({ Action: action, Version: '2010-03-31', ...params });
  const resp = await fetch(`${ENDPOINT}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body,
  });
  const text = await resp.text();
  if (!resp.ok) throw new Error(`${action}: ${text}`);
  return text;
}

test("topics are listed with their subscriptions, their counts and a queue's two dead-letter queues apart", async () => {
  // order-events → orders (raw, a filter nothing published matches) and an
  // HTTPS endpoint that never confirmed; 2 published, both filtered out,
  // so the queues' depths stay as the other tests left them.
  const topicArn = /<TopicArn>([^<]+)<\/TopicArn>/.exec(await sns('CreateTopic', { Name: 'order-events' }))[1];
  const ordersArn = (await sqs('GetQueueAttributes', { QueueUrl: q.orders, AttributeNames: ['QueueArn'] })).Attributes.QueueArn;
  await sns('Subscribe', {
    TopicArn: topicArn, Protocol: 'sqs', Endpoint: ordersArn,
    'Attributes.entry.1.key': 'RawMessageDelivery', 'Attributes.entry.1.value': 'true',
    'Attributes.entry.2.key': 'FilterPolicy', 'Attributes.entry.2.value': '{"kind":["refund"]}',
  });
  await sns('Subscribe', { TopicArn: topicArn, Protocol: 'https', Endpoint: 'https://hooks.example.invalid/sns' });
  for (const kind of ['order', 'cancel']) {
    await sns('Publish', {
      TopicArn: topicArn, Message: `{"kind":"${kind}"}`,
      'MessageAttributes.entry.1.Name': 'kind',
      'MessageAttributes.entry.1.Value.DataType': 'String',
      'MessageAttributes.entry.1.Value.StringValue': kind,
    });
  }

  await page.goto(`${ENDPOINT}/console/#/topics`);
  await page.locator('#topics[data-ready="true"]').waitFor();
  assert.match(await page.locator('#topics tr[data-topic="order-events"]').textContent(), /order-events · 2 published · 2 subscriptions/);
  const rows = page.locator('#topics tr[data-subscription]');
  assert.equal(await rows.count(), 2);
  const queueRow = page.locator('#topics tr[data-subscription]', { has: page.locator('[data-col="protocol"]', { hasText: 'sqs' }) });
  const col = (row, name) => row.locator(`[data-col="${name}"]`).textContent();
  assert.equal(await col(queueRow, 'endpoint'), 'orders');
  assert.equal(await queueRow.locator('[data-col="endpoint"] a').getAttribute('href'), '#/queues/orders');
  assert.equal(await col(queueRow, 'delivery'), 'raw');
  assert.equal(await col(queueRow, 'filter'), 'on attributes');
  assert.equal(await col(queueRow, 'undeliverable'), 'dropped', 'no subscription DLQ');
  assert.equal(await col(queueRow, 'consumer-failures'), 'orders-dlq', "the queue's own DLQ");
  assert.equal(await col(queueRow, 'filtered'), '2');
  assert.equal(await col(queueRow, 'delivered'), '0');
  const hookRow = page.locator('#topics tr[data-subscription]', { has: page.locator('[data-col="protocol"]', { hasText: 'https' }) });
  assert.equal(await col(hookRow, 'status'), 'pending confirmation');
  assert.equal(await col(hookRow, 'consumer-failures'), 'n/a');
  await shot('topics');
});

test('no JavaScript error and no foreign request in the whole run', () => {
  assert.deepEqual(browser.errors, []);
});

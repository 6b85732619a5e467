// The sluice-sqs npm package as a user meets it: installed into a fresh
// prefix, its startSluice() helper used with the JS SDK v3, its `sluice`
// command run through npx. Run by scripts/package-smoke.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import {
  SQSClient,
  CreateQueueCommand,
  SendMessageCommand,
  ReceiveMessageCommand,
  ListQueuesCommand,
} from '@aws-sdk/client-sqs';
import { startSluice } from 'sluice-sqs';

test('startSluice serves the JS SDK and stops', async () => {
  const sluice = await startSluice();
  try {
    assert.match(sluice.endpoint, /^http:\/\/127\.0\.0\.1:\d+$/);
    const sqs = new SQSClient(sluice.clientConfig);
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'orders' }));
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'hello' }));
    const got = await sqs.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 1 }));
    assert.deepEqual(got.Messages.map((m) => m.Body), ['hello']);
  } finally {
    await sluice.stop();
  }
  assert.notEqual(sluice.process.exitCode ?? sluice.process.signalCode, null);
});

test('each server has its own queues', async () => {
  const [a, b] = await Promise.all([startSluice(), startSluice()]);
  try {
    await new SQSClient(a.clientConfig).send(new CreateQueueCommand({ QueueName: 'only-a' }));
    const listed = await new SQSClient(b.clientConfig).send(new ListQueuesCommand({}));
    assert.deepEqual(listed.QueueUrls ?? [], []);
  } finally {
    await Promise.all([a.stop(), b.stop()]);
  }
});

test('a bad argument rejects with the reason', async () => {
  await assert.rejects(startSluice({ args: ['--no-such-flag'] }), /did not start/);
});

test('npx sluice runs the bundled binary', () => {
  const out = execFileSync('npx', ['--no-install', 'sluice', '--version'], { encoding: 'utf8' });
  assert.match(out, /^sluice /);
});

test('npx sluice serve runs a server', async () => {
  // In a process group of its own: npm does not pass SIGTERM on to what
  // it runs, so the test stops the whole group, as a terminal's Ctrl-C does.
  const server = spawn('npx', ['--no-install', 'sluice', 'serve', '--bind', '127.0.0.1:0', '--in-memory'], {
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: true,
  });
  try {
    const [line] = await once(createInterface({ input: server.stdout }), 'line');
    const endpoint = line.match(/^sluice listening on (http:\/\/127\.0\.0\.1:\d+)$/)?.[1];
    assert.ok(endpoint, line);
    const health = await fetch(`${endpoint}/health`);
    assert.equal(health.status, 200);
    const sqs = new SQSClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'npx' }));
    assert.match(QueueUrl, /\/npx$/);
  } finally {
    const exited = once(server, 'exit');
    process.kill(-server.pid, 'SIGTERM');
    await exited;
  }
});

// Powertools for AWS Lambda (TypeScript)'s idempotency utility
// (@aws-lambda-powertools/idempotency, exact pin in package.json),
// unchanged, with its records in sluice (packaging/npm's
// sluice-sqs/powertools SluicePersistenceLayer), against a server that
// requires SigV4. Run by scripts/client-smoke, which starts that server and
// sets SLUICE_ENDPOINT, the credentials and NODE_PATH (so the package's
// file finds Powertools here). By hand:
//   SLUICE_ENDPOINT=http://127.0.0.1:PORT AWS_ACCESS_KEY_ID=... \
//   AWS_SECRET_ACCESS_KEY=... NODE_PATH=$PWD/node_modules \
//   node --test powertools-idempotency.mjs
//
// What it proves (rule I1), as the Python suite does for Powertools for
// Python: a message delivered twice (the same messageId, as a retry or a
// redrive delivers it) runs the handler once, the second call answered
// from sluice; a message whose work completed but which was never deleted
// reaches its DLQ, comes back by a selective redrive (Sluice.RedriveMessages
// keeps its id and marks the replay) and does not run the handler again;
// a handler that throws releases its key; while one
// invocation holds a key another is refused with
// IdempotencyAlreadyInProgressError; an unsigned layer is refused.

import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { randomUUID } from "node:crypto";
import {
  IdempotencyAlreadyInProgressError,
  IdempotencyConfig,
  IdempotencyPersistenceLayerError,
  makeIdempotent,
} from "@aws-lambda-powertools/idempotency";
import {
  SQSClient,
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
} from "@aws-sdk/client-sqs";

const require = createRequire(import.meta.url);
const { SluicePersistenceLayer } = require("../../../packaging/npm/powertools.js");

const endpoint = process.env.SLUICE_ENDPOINT;
if (!endpoint || !process.env.AWS_ACCESS_KEY_ID) {
  throw new Error("SLUICE_ENDPOINT and AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY must be set");
}
const RUN = randomUUID().slice(0, 12);
const config = () => new IdempotencyConfig({ eventKeyJmesPath: "messageId", expiresAfterSeconds: 600 });
// A persistence layer takes the config of its first use: one per handler,
// as with Powertools' own layers.
const store = (name) => new SluicePersistenceLayer({ endpoint, keyPrefix: `smoke-${RUN}-${name}/` });
const calls = { charge: 0, ship: 0, flaky: 0, slow: 0 };

// A signed call of one of sluice's own actions (JSON protocol), signed by
// the SDK's own signer.
async function sluiceAction(action, input) {
  const { SignatureV4 } = require("@smithy/signature-v4");
  const { Sha256 } = require("@aws-crypto/sha256-js");
  const url = new URL(endpoint);
  const body = JSON.stringify(input);
  const signer = new SignatureV4({
    service: "sqs",
    region: "us-east-1",
    sha256: Sha256,
    credentials: { accessKeyId: process.env.AWS_ACCESS_KEY_ID, secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY },
  });
  const signed = await signer.sign({
    method: "POST",
    protocol: url.protocol,
    hostname: url.hostname,
    port: Number(url.port),
    path: "/",
    headers: {
      host: url.host,
      "content-type": "application/x-amz-json-1.0",
      "x-amz-target": `Sluice.${action}`,
    },
    body,
  });
  const response = await fetch(`${endpoint}/`, { method: "POST", headers: signed.headers, body });
  const text = await response.text();
  assert.equal(response.status, 200, text);
  return JSON.parse(text);
}

test("a message delivered twice runs the handler once", async () => {
  const charge = makeIdempotent(
    async (event) => {
      calls.charge += 1;
      return { charged: event.body, call: calls.charge };
    },
    { persistenceStore: store("charge"), config: config() },
  );
  const sqs = new SQSClient({ endpoint, region: "us-east-1", maxAttempts: 1 });
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: `smoke-idem-js-${RUN}` }));
  await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: "order 42" }));
  const receive = (VisibilityTimeout) =>
    sqs.send(new ReceiveMessageCommand({ QueueUrl, VisibilityTimeout, WaitTimeSeconds: 1 }));
  const first = (await receive(0)).Messages[0];
  const second = (await receive(30)).Messages[0];
  assert.equal(first.MessageId, second.MessageId);
  assert.notEqual(first.ReceiptHandle, second.ReceiptHandle);
  const event = (m) => ({ messageId: m.MessageId, body: m.Body });
  const a = await charge(event(first), {});
  const b = await charge(event(second), {});
  assert.equal(calls.charge, 1);
  assert.deepEqual(a, { charged: "order 42", call: 1 });
  assert.deepEqual(b, a, "the second delivery is answered from sluice");
});

test("a redriven message whose work completed does not run again", async () => {
  const ship = makeIdempotent(
    async (event) => {
      calls.ship += 1;
      return { shipped: event.body };
    },
    { persistenceStore: store("ship"), config: config() },
  );
  const sqs = new SQSClient({ endpoint, region: "us-east-1", maxAttempts: 1 });
  const dlq = (await sqs.send(new CreateQueueCommand({ QueueName: `smoke-idem-js-dlq-${RUN}` }))).QueueUrl;
  const attrs = (url, name) =>
    sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: [name] })).then((a) => a.Attributes[name]);
  const policy = JSON.stringify({ deadLetterTargetArn: await attrs(dlq, "QueueArn"), maxReceiveCount: "1" });
  const src = (
    await sqs.send(
      new CreateQueueCommand({ QueueName: `smoke-idem-js-src-${RUN}`, Attributes: { RedrivePolicy: policy } }),
    )
  ).QueueUrl;
  await sqs.send(new SendMessageCommand({ QueueUrl: src, MessageBody: "order 77" }));
  const receive = (VisibilityTimeout) =>
    sqs.send(
      new ReceiveMessageCommand({ QueueUrl: src, VisibilityTimeout, WaitTimeSeconds: 1, MessageAttributeNames: ["All"] }),
    );
  const first = (await receive(0)).Messages[0];
  const event = (m) => ({ messageId: m.MessageId, body: m.Body });
  // The work completes; the consumer dies before its DeleteMessage.
  const done = await ship(event(first), {});
  // Its next receive finds it over maxReceiveCount: it goes to the DLQ.
  assert.equal((await receive(30)).Messages ?? undefined, undefined);
  for (let i = 0; i < 50 && (await attrs(dlq, "ApproximateNumberOfMessages")) !== "1"; i++) {
    await new Promise((r) => setTimeout(r, 200));
  }
  assert.equal(await attrs(dlq, "ApproximateNumberOfMessages"), "1", "the message reached its DLQ");
  const answer = await sluiceAction("RedriveMessages", { QueueUrl: dlq });
  assert.equal(answer.Moved, 1);
  assert.deepEqual(answer.MessageIds, [first.MessageId]);
  const again = (await receive(30)).Messages[0];
  assert.equal(again.MessageId, first.MessageId, "a selective redrive keeps the message id");
  assert.equal(again.MessageAttributes["sluice.replay-count"].StringValue, "1");
  assert.deepEqual(await ship(event(again), {}), done);
  assert.deepEqual(done, { shipped: "order 77" });
  assert.equal(calls.ship, 1, "the handler ran once");
});

test("a handler that throws releases its key", async () => {
  const flaky = makeIdempotent(
    async () => {
      calls.flaky += 1;
      if (calls.flaky === 1) throw new Error("the payment service timed out");
      return { ok: true };
    },
    { persistenceStore: store("flaky"), config: config() },
  );
  const event = { messageId: `flaky-${RUN}`, body: "x" };
  await assert.rejects(flaky(event, {}), /timed out/);
  assert.deepEqual(await flaky(event, {}), { ok: true });
  assert.deepEqual(await flaky(event, {}), { ok: true });
  assert.equal(calls.flaky, 2);
});

test("a key in progress refuses a second invocation", async () => {
  let release;
  const released = new Promise((r) => {
    release = r;
  });
  let started;
  const running = new Promise((r) => {
    started = r;
  });
  const slow = makeIdempotent(
    async () => {
      calls.slow += 1;
      started();
      await released;
      return { slow: true };
    },
    { persistenceStore: store("slow"), config: config() },
  );
  const event = { messageId: `slow-${RUN}`, body: "x" };
  const holder = slow(event, {});
  await running;
  await assert.rejects(slow(event, {}), (e) => e instanceof IdempotencyAlreadyInProgressError);
  release();
  assert.deepEqual(await holder, { slow: true });
  assert.deepEqual(await slow(event, {}), { slow: true });
  assert.equal(calls.slow, 1);
});

test("an unsigned persistence layer is refused by the server", async () => {
  const unsigned = new SluicePersistenceLayer({ endpoint, keyPrefix: `smoke-${RUN}-unsigned/`, credentials: null });
  const handler = makeIdempotent(async () => ({ never: true }), { persistenceStore: unsigned, config: config() });
  await assert.rejects(handler({ messageId: `unsigned-${RUN}` }, {}), (e) => {
    const cause = e instanceof IdempotencyPersistenceLayerError ? String(e.cause ?? e.message) : "";
    return /MissingAuthenticationToken|403/.test(cause + e.message);
  });
});

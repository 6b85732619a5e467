// Framework smoke test: sluice under bbc/sqs-consumer and bbc/sqs-producer,
// the most used SQS consumer/producer libraries for Node.js, run unchanged
// (exact pins in package.json). They drive the AWS SDK for JavaScript v3
// (AWS JSON 1.0): ReceiveMessage long polls, DeleteMessage,
// DeleteMessageBatch and SendMessageBatch, all issued by the libraries.
//
// Run by scripts/client-smoke, which starts sluice and sets SLUICE_ENDPOINT.
// By hand: SLUICE_ENDPOINT=http://127.0.0.1:PORT node --test frameworks.mjs
//
// Each test has its own queues, a short visibility timeout (1-2 s) and a
// deadline, so a message that is never handled (or handled twice) fails the
// test instead of hanging it. The whole file runs in about 20 s.

import { test, after } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import {
  SQSClient,
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
} from "@aws-sdk/client-sqs";
import { Consumer } from "sqs-consumer";
import { Producer } from "sqs-producer";

const endpoint = process.env.SLUICE_ENDPOINT;
if (!endpoint) {
  throw new Error("SLUICE_ENDPOINT is not set (e.g. http://127.0.0.1:9324)");
}

// One client for the test's own calls, the producer and the consumers, as an
// application would configure it for a custom endpoint.
const sqs = new SQSClient({
  endpoint,
  region: "us-east-1",
  credentials: { accessKeyId: "AKIDSLUICESMOKE", secretAccessKey: "sluice-smoke-secret" },
  maxAttempts: 1, // a retry would hide a server error
  requestHandler: { connectionTimeout: 5_000, requestTimeout: 30_000, throwOnRequestTimeout: true },
});

const suffix = `${process.pid}-${Date.now()}`;
const created = [];

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitFor(what, predicate, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await predicate()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
}

async function createQueue(name, attributes = {}) {
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
  created.push(QueueUrl);
  return QueueUrl;
}

async function queueCounts(url) {
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: [
        "ApproximateNumberOfMessages",
        "ApproximateNumberOfMessagesNotVisible",
        "ApproximateNumberOfMessagesDelayed",
      ],
    }),
  );
  return {
    visible: Number(Attributes.ApproximateNumberOfMessages),
    notVisible: Number(Attributes.ApproximateNumberOfMessagesNotVisible),
    delayed: Number(Attributes.ApproximateNumberOfMessagesDelayed),
  };
}

async function assertEmpty(url, what) {
  assert.deepEqual(await queueCounts(url), { visible: 0, notVisible: 0, delayed: 0 }, `${what} is empty`);
}

// W4: MD5 of message attributes, computed independently (neither library
// checks it; the SDK checks only the body digest).
function lengthPrefixed(buf) {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(buf.length, 0);
  return Buffer.concat([len, buf]);
}
function md5OfAttributes(attrs) {
  const parts = [];
  for (const name of Object.keys(attrs).sort()) {
    const a = attrs[name];
    parts.push(lengthPrefixed(Buffer.from(name, "utf8")), lengthPrefixed(Buffer.from(a.DataType, "utf8")));
    if (a.BinaryValue !== undefined) {
      parts.push(Buffer.from([2]), lengthPrefixed(Buffer.from(a.BinaryValue)));
    } else {
      parts.push(Buffer.from([1]), lengthPrefixed(Buffer.from(a.StringValue, "utf8")));
    }
  }
  return createHash("md5").update(Buffer.concat(parts)).digest("hex");
}

function attributesFor(i) {
  return {
    seq: { DataType: "Number", StringValue: String(i) },
    kind: { DataType: "String", StringValue: i % 2 === 0 ? "even" : "odd" },
    blob: { DataType: "Binary", BinaryValue: Uint8Array.from([0, 255, i & 0xff]) },
  };
}

function checkAttributes(message, i) {
  const a = message.MessageAttributes ?? {};
  assert.equal(a.seq?.DataType, "Number");
  assert.equal(a.seq?.StringValue, String(i));
  assert.equal(a.kind?.StringValue, i % 2 === 0 ? "even" : "odd");
  assert.equal(a.blob?.DataType, "Binary");
  assert.deepEqual([...a.blob.BinaryValue], [0, 255, i & 0xff]);
  assert.equal(message.MD5OfMessageAttributes, md5OfAttributes(a), "MD5OfMessageAttributes (W4)");
}

// A consumer with the library's events recorded. `stop()` resolves on the
// library's own `stopped` event.
function startConsumer(options) {
  const events = { error: [], processing_error: [], timeout_error: [], processed: [], empty: 0, receives: 0 };
  const consumer = Consumer.create({
    sqs,
    waitTimeSeconds: 1,
    pollingCompleteWaitTimeMs: 5_000,
    messageAttributeNames: ["All"],
    messageSystemAttributeNames: ["ApproximateReceiveCount"],
    strictReturn: true,
    preReceiveMessageCallback: async () => {
      events.receives += 1;
    },
    ...options,
  });
  consumer.on("error", (err, msg) => events.error.push({ err, msg }));
  consumer.on("processing_error", (err, msg) => events.processing_error.push({ err, msg }));
  consumer.on("timeout_error", (err, msg) => events.timeout_error.push({ err, msg }));
  consumer.on("message_processed", (msg) => events.processed.push(msg));
  consumer.on("empty", () => {
    events.empty += 1;
  });
  consumer.start();
  const stop = () =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("consumer did not emit `stopped` within 10 s")), 10_000);
      consumer.once("stopped", () => {
        clearTimeout(timer);
        resolve();
      });
      consumer.stop();
    });
  return { consumer, events, stop };
}

function assertNoErrorEvents(events) {
  const describe = (list) => list.map(({ err }) => `${err.name}: ${err.message}`);
  assert.deepEqual(describe(events.error), [], "no `error` events");
  assert.deepEqual(describe(events.timeout_error), [], "no `timeout_error` events");
}

after(async () => {
  for (const url of created) {
    try {
      await sqs.send(new DeleteQueueCommand({ QueueUrl: url }));
    } catch {
      // best effort; the in-memory server goes away anyway
    }
  }
});

test("sqs-producer sends a batch with message attributes; sqs-consumer handles each message once and deletes it", async () => {
  const N = 25;
  const url = await createQueue(`fw-js-each-${suffix}`, { VisibilityTimeout: "2" });
  const producer = Producer.create({ queueUrl: url, sqs });
  const sent = await producer.send(
    Array.from({ length: N }, (_, i) => ({ id: `m${i}`, body: `each-${i}`, messageAttributes: attributesFor(i) })),
  );
  assert.equal(sent.length, N, "SendMessageBatch (3 batches) reports every entry Successful");
  for (const s of sent) assert.ok(s.MessageId && s.MD5OfMessageBody, "each entry has a MessageId and body MD5");
  assert.equal(await producer.queueSize(), N, "Producer.queueSize() (ApproximateNumberOfMessages)");

  const handled = new Map();
  const { consumer, events, stop } = startConsumer({
    queueUrl: url,
    batchSize: 10,
    handleMessage: async (message) => {
      const i = Number(message.Body.slice("each-".length));
      checkAttributes(message, i);
      assert.equal(message.Attributes?.ApproximateReceiveCount, "1");
      handled.set(message.Body, (handled.get(message.Body) ?? 0) + 1);
      return message; // acknowledge: the library deletes it
    },
  });
  try {
    await waitFor(`${N} messages handled and deleted`, () => events.processed.length >= N, 15_000);
    // Past the 2 s visibility timeout: a message that was not really deleted
    // would be received again and handled a second time.
    await sleep(2_500);
  } finally {
    await stop();
  }
  assert.equal(consumer.status.isRunning, false);
  assert.equal(handled.size, N, "every message handled");
  assert.deepEqual([...handled.values()].filter((c) => c !== 1), [], "each handled exactly once");
  assert.equal(events.processed.length, N, "`message_processed` once per message");
  assert.deepEqual(events.processing_error.map(({ err }) => err.message), [], "no `processing_error` events");
  assertNoErrorEvents(events);
  assert.ok(events.empty >= 1, "the consumer saw the queue empty (long poll returned no messages)");
  await assertEmpty(url, "the queue after consumption");
});

test("handleMessageBatch: batches of up to 10; acknowledged messages are deleted in a batch, the rest come back", async () => {
  const N = 20;
  const url = await createQueue(`fw-js-batch-${suffix}`, { VisibilityTimeout: "1" });
  const producer = Producer.create({ queueUrl: url, sqs, batchSize: 10 });
  assert.equal((await producer.send(Array.from({ length: N }, (_, i) => `batch-${i}`))).length, N);

  const batchSizes = [];
  const seen = new Map(); // body -> [receive counts]
  const { events, stop } = startConsumer({
    queueUrl: url,
    batchSize: 10,
    handleMessageBatch: async (messages) => {
      batchSizes.push(messages.length);
      for (const m of messages) {
        seen.set(m.Body, [...(seen.get(m.Body) ?? []), Number(m.Attributes.ApproximateReceiveCount)]);
      }
      // First delivery: acknowledge the even-numbered messages only, so the
      // odd ones stay in flight and come back after the 1 s visibility timeout.
      return messages.filter(
        (m) => Number(m.Attributes.ApproximateReceiveCount) > 1 || Number(m.Body.slice("batch-".length)) % 2 === 0,
      );
    },
  });
  try {
    await waitFor(`${N} messages acknowledged`, () => events.processed.length >= N, 15_000);
    await sleep(1_500); // past the visibility timeout: nothing may come back now
  } finally {
    await stop();
  }
  assert.ok(Math.max(...batchSizes) > 1, `messages arrive in batches (sizes ${batchSizes})`);
  assert.ok(Math.max(...batchSizes) <= 10, "no batch above MaxNumberOfMessages=10");
  assert.equal(seen.size, N, "every message handled");
  for (const [body, counts] of seen) {
    const expected = Number(body.slice("batch-".length)) % 2 === 0 ? [1] : [1, 2];
    assert.deepEqual(counts, expected, `${body}: receive counts`);
  }
  assert.equal(events.processed.length, N, "`message_processed` once per message");
  assert.deepEqual(events.processing_error.map(({ err }) => err.message), [], "no `processing_error` events");
  assertNoErrorEvents(events);
  await assertEmpty(url, "the queue after consumption");
});

test("a handler that throws: the message comes back after its visibility timeout, then goes to the DLQ (maxReceiveCount 2)", async () => {
  const dlqUrl = await createQueue(`fw-js-dlq-${suffix}`);
  const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ["QueueArn"] }));
  const url = await createQueue(`fw-js-poison-${suffix}`, {
    VisibilityTimeout: "1",
    RedrivePolicy: JSON.stringify({ deadLetterTargetArn: Attributes.QueueArn, maxReceiveCount: 2 }),
  });
  const producer = Producer.create({ queueUrl: url, sqs });
  const sent = await producer.send(
    Array.from({ length: 6 }, (_, i) => ({
      id: `p${i}`,
      body: i === 3 ? "poison" : `ok-${i}`,
      messageAttributes: attributesFor(i),
    })),
  );
  const poisonId = sent.find((s) => s.Id === "p3").MessageId;

  const healthy = new Map();
  const poisonAttempts = []; // [receive count, time handled]
  const { events, stop } = startConsumer({
    queueUrl: url,
    batchSize: 10,
    handleMessage: async (message) => {
      if (message.Body === "poison") {
        poisonAttempts.push([Number(message.Attributes.ApproximateReceiveCount), Date.now()]);
        throw new Error("poison message");
      }
      healthy.set(message.Body, (healthy.get(message.Body) ?? 0) + 1);
      return message;
    },
  });
  try {
    await waitFor("the poison message in the DLQ", async () => (await queueCounts(dlqUrl)).visible === 1, 15_000);
    await sleep(1_200); // one more visibility timeout: nothing else may arrive
  } finally {
    await stop();
  }
  assert.deepEqual(
    [...healthy.entries()].sort(),
    [0, 1, 2, 4, 5].map((i) => [`ok-${i}`, 1]),
    "each healthy message handled exactly once",
  );
  assert.deepEqual(
    poisonAttempts.map(([count]) => count),
    [1, 2],
    "the poison message is received twice (ApproximateReceiveCount 1, 2), then not again",
  );
  const gap = poisonAttempts[1][1] - poisonAttempts[0][1];
  assert.ok(gap >= 900, `second delivery only after the 1 s visibility timeout (came after ${gap} ms)`);
  assert.equal(events.processing_error.length, 2, "`processing_error` once per failed attempt");
  for (const { err, msg } of events.processing_error) {
    assert.equal(msg.Body, "poison", "`processing_error` carries the failing message");
    assert.match(err.message, /poison message/);
  }
  assertNoErrorEvents(events);
  await assertEmpty(url, "the source queue");

  const dead = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: dlqUrl,
      MaxNumberOfMessages: 10,
      MessageAttributeNames: ["All"],
      WaitTimeSeconds: 1,
    }),
  );
  assert.equal(dead.Messages?.length, 1, "one message in the DLQ");
  assert.equal(dead.Messages[0].Body, "poison");
  assert.equal(dead.Messages[0].MessageId, poisonId, "the DLQ keeps the MessageId (R4)");
  checkAttributes(dead.Messages[0], 3);
});

test("FIFO queue: per-group order preserved, deduplicated sends delivered once", async () => {
  const url = await createQueue(`fw-js-fifo-${suffix}.fifo`, { FifoQueue: "true", VisibilityTimeout: "2" });
  const producer = Producer.create({ queueUrl: url, sqs });
  const groups = ["g-a", "g-b", "g-c"];
  const PER_GROUP = 6;
  const messages = [];
  for (let i = 0; i < PER_GROUP; i++) {
    for (const g of groups) {
      messages.push({ id: `${g}-${i}`, body: `${g}:${i}`, groupId: g, deduplicationId: `${g}-${i}-${suffix}` });
    }
  }
  const sent = await producer.send(messages);
  assert.equal(sent.length, messages.length);
  // A retried send (same deduplication id) is accepted again, not delivered again (F2).
  const again = await producer.send([{ id: "dup", body: "g-a:0", groupId: "g-a", deduplicationId: `g-a-0-${suffix}` }]);
  assert.equal(again[0].MessageId, sent[0].MessageId, "the duplicate answers the first send's MessageId");

  const order = new Map(groups.map((g) => [g, []]));
  const sequenceNumbers = [];
  const { events, stop } = startConsumer({
    queueUrl: url,
    batchSize: 10,
    suppressFifoWarning: true,
    messageSystemAttributeNames: ["MessageGroupId", "SequenceNumber", "ApproximateReceiveCount"],
    // One batch at a time, handled in the order received, as FIFO needs.
    handleMessageBatch: async (batch) => {
      for (const m of batch) {
        const [g, i] = m.Body.split(":");
        assert.equal(m.Attributes.MessageGroupId, g);
        order.get(g).push(Number(i));
        sequenceNumbers.push(m.Attributes.SequenceNumber);
      }
      return batch;
    },
  });
  try {
    await waitFor("all FIFO messages handled", () => events.processed.length >= messages.length, 15_000);
    await sleep(2_500); // past the visibility timeout: no redelivery, no duplicate
  } finally {
    await stop();
  }
  for (const g of groups) {
    assert.deepEqual(order.get(g), [...Array(PER_GROUP).keys()], `group ${g} handled once each, in send order`);
  }
  assert.equal(new Set(sequenceNumbers).size, messages.length, "distinct SequenceNumbers");
  assert.deepEqual(events.processing_error.map(({ err }) => err.message), [], "no `processing_error` events");
  assertNoErrorEvents(events);
  await assertEmpty(url, "the FIFO queue after consumption");
});

test("stop(): the consumer finishes its long poll, emits `stopped`, and polls no more", async () => {
  const url = await createQueue(`fw-js-stop-${suffix}`, { VisibilityTimeout: "1" });
  let handled = 0;
  const { consumer, events, stop } = startConsumer({
    queueUrl: url,
    handleMessage: async (message) => {
      handled += 1;
      return message;
    },
  });
  await waitFor("an empty long poll", () => events.empty >= 1, 10_000);
  assert.equal(consumer.status.isRunning, true);
  await stop();
  assert.deepEqual(consumer.status, { isRunning: false, isPolling: false });
  const receivesAtStop = events.receives;
  const producer = Producer.create({ queueUrl: url, sqs });
  await producer.send(["after-stop"]);
  await sleep(1_500);
  assert.equal(events.receives, receivesAtStop, "no ReceiveMessage after `stopped`");
  assert.equal(handled, 0, "a message sent after stop() is not consumed");
  assert.deepEqual(await queueCounts(url), { visible: 1, notVisible: 0, delayed: 0 }, "it stays in the queue");
  assert.deepEqual(events.processing_error, []);
  assertNoErrorEvents(events);
});

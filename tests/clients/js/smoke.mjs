// Client smoke test: sluice through the AWS SDK for JavaScript v3
// (@aws-sdk/client-sqs, AWS JSON 1.0 protocol).
//
// Run by scripts/client-smoke, which starts sluice and sets SLUICE_ENDPOINT.
// By hand: SLUICE_ENDPOINT=http://127.0.0.1:PORT node --test smoke.mjs
//
// The SDK itself verifies MD5OfBody / MD5OfMessageBody on SendMessage,
// SendMessageBatch and ReceiveMessage (it throws on a mismatch), and needs the
// `x-amzn-query-error` header to report the SQS error code (W2). It does not
// verify MD5OfMessageAttributes, so this file checks that digest itself,
// computed independently as W4 describes.
//
// Tests run in order and share state (one queue), like a real consumer would.

import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import {
  SQSClient,
  CreateQueueCommand,
  GetQueueUrlCommand,
  SendMessageCommand,
  SendMessageBatchCommand,
  ReceiveMessageCommand,
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ListQueuesCommand,
  DeleteQueueCommand,
  QueueDoesNotExist,
} from "@aws-sdk/client-sqs";

const endpoint = process.env.SLUICE_ENDPOINT;
if (!endpoint) {
  throw new Error("SLUICE_ENDPOINT is not set (e.g. http://127.0.0.1:9324)");
}

const sqs = new SQSClient({
  endpoint,
  region: "us-east-1",
  credentials: { accessKeyId: "AKIDSLUICESMOKE", secretAccessKey: "sluice-smoke-secret" },
  maxAttempts: 1, // a retry would hide a server error
  // A hung server fails the test instead of hanging it.
  requestHandler: { connectionTimeout: 5_000, requestTimeout: 30_000, throwOnRequestTimeout: true },
});

const ACCOUNT = process.env.SLUICE_ACCOUNT ?? "000000000000"; // sluice's default account (W3)
const suffix = `${process.pid}-${Date.now()}`;
const queueName = `smoke-js-${suffix}`;

// ---- W4: MD5 of message attributes, computed independently -------------------
function lengthPrefixed(buf) {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(buf.length, 0);
  return Buffer.concat([len, buf]);
}

function md5OfAttributes(attrs) {
  const names = Object.keys(attrs).sort();
  const parts = [];
  for (const name of names) {
    const a = attrs[name];
    parts.push(lengthPrefixed(Buffer.from(name, "utf8")));
    parts.push(lengthPrefixed(Buffer.from(a.DataType, "utf8")));
    if (a.DataType.startsWith("Binary")) {
      parts.push(Buffer.from([2]));
      parts.push(lengthPrefixed(Buffer.from(a.BinaryValue)));
    } else {
      parts.push(Buffer.from([1]));
      parts.push(lengthPrefixed(Buffer.from(a.StringValue, "utf8")));
    }
  }
  return createHash("md5").update(Buffer.concat(parts)).digest("hex");
}

const md5 = (s) => createHash("md5").update(Buffer.from(s, "utf8")).digest("hex");

// Check of the helper itself, so a wrong helper cannot make a wrong server
// pass: the W4 layout of one String attribute {"a": "b"} is
// 00000001 'a' | 00000006 'String' | 01 | 00000001 'b', whose MD5 is the
// constant below (the Python smoke test asserts the same constant).
test("W4 helper: attribute digest of a known input", () => {
  assert.equal(md5OfAttributes({ a: { DataType: "String", StringValue: "b" } }), "bef8bf215374a0a228d67533b1a488be");
});

const BINARY = Uint8Array.from([0x00, 0x01, 0xfe, 0xff, 0x80, 0x7f, 0x0a]);
const ATTRS = {
  "attr.string": { DataType: "String", StringValue: "héllo wörld ✓" },
  "attr.number": { DataType: "Number", StringValue: "-12.5e3" },
  "attr.binary": { DataType: "Binary", BinaryValue: BINARY },
  "other.custom": { DataType: "String.custom", StringValue: "x" },
};

const state = {};

async function receiveOne(extra = {}) {
  const out = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: state.queueUrl,
      MaxNumberOfMessages: 1,
      WaitTimeSeconds: 1,
      ...extra,
    }),
  );
  assert.ok(out.Messages && out.Messages.length === 1, `expected 1 message, got ${JSON.stringify(out.Messages)}`);
  return out.Messages[0];
}

function assertSameAttrs(got, want) {
  assert.deepEqual(Object.keys(got ?? {}).sort(), Object.keys(want).sort());
  for (const [name, w] of Object.entries(want)) {
    const g = got[name];
    assert.equal(g.DataType, w.DataType, `DataType of ${name}`);
    if (w.DataType.startsWith("Binary")) {
      assert.deepEqual(Buffer.from(g.BinaryValue), Buffer.from(w.BinaryValue), `BinaryValue of ${name}`);
    } else {
      assert.equal(g.StringValue, w.StringValue, `StringValue of ${name}`);
    }
  }
}

test("CreateQueue returns a queue URL for the account and name (W3)", async () => {
  const out = await sqs.send(
    new CreateQueueCommand({ QueueName: queueName, Attributes: { VisibilityTimeout: "45" } }),
  );
  state.queueUrl = out.QueueUrl; // first, so that later tests can still run
  assert.match(out.QueueUrl, new RegExp(`/${ACCOUNT}/${queueName}$`));
  // Same name, same attributes: same URL (V9).
  const again = await sqs.send(
    new CreateQueueCommand({ QueueName: queueName, Attributes: { VisibilityTimeout: "45" } }),
  );
  assert.equal(again.QueueUrl, out.QueueUrl);
});

test("GetQueueUrl finds the queue", async () => {
  const out = await sqs.send(new GetQueueUrlCommand({ QueueName: queueName }));
  assert.equal(out.QueueUrl, state.queueUrl);
});

test("SendMessage with String, Number and Binary attributes: digests (W4)", async () => {
  const body = "smoke body ✓ — ünïcode";
  const out = await sqs.send(
    new SendMessageCommand({ QueueUrl: state.queueUrl, MessageBody: body, MessageAttributes: ATTRS }),
  );
  // The SDK has already checked MD5OfMessageBody (it throws otherwise); check again.
  assert.equal(out.MD5OfMessageBody, md5(body));
  assert.equal(out.MD5OfMessageAttributes, md5OfAttributes(ATTRS));
  assert.match(out.MessageId, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
  state.sent = { body, id: out.MessageId, md5Attrs: out.MD5OfMessageAttributes };
});

test("ReceiveMessage with a prefix filter [\"attr.*\"]: only matching attributes, digest of those", async () => {
  const msg = await receiveOne({ MessageAttributeNames: ["attr.*"], VisibilityTimeout: 0 });
  assert.equal(msg.MessageId, state.sent.id);
  assert.equal(msg.Body, state.sent.body);
  assert.equal(msg.MD5OfBody, md5(state.sent.body));
  const want = { ...ATTRS };
  delete want["other.custom"];
  assertSameAttrs(msg.MessageAttributes, want);
  assert.equal(msg.MD5OfMessageAttributes, md5OfAttributes(want));
});

test("ReceiveMessage with [\"All\"] attributes and MessageSystemAttributeNames [\"All\"]", async () => {
  const before = Date.now();
  const msg = await receiveOne({
    MessageAttributeNames: ["All"],
    MessageSystemAttributeNames: ["All"],
  });
  assert.equal(msg.MessageId, state.sent.id);
  assertSameAttrs(msg.MessageAttributes, ATTRS);
  assert.equal(msg.MD5OfMessageAttributes, md5OfAttributes(ATTRS));
  const sys = msg.Attributes ?? {};
  // Received twice now (the prefix receive above counted too) (V2).
  assert.equal(sys.ApproximateReceiveCount, "2", `system attributes: ${JSON.stringify(sys)}`);
  assert.match(sys.SentTimestamp ?? "", /^\d{13}$/, `SentTimestamp in ${JSON.stringify(sys)}`);
  assert.match(sys.ApproximateFirstReceiveTimestamp ?? "", /^\d{13}$/);
  assert.ok(Number(sys.SentTimestamp) <= before + 5000);
  assert.ok(typeof sys.SenderId === "string" && sys.SenderId.length > 0, `SenderId in ${JSON.stringify(sys)}`);
  state.receiptHandle = msg.ReceiptHandle;
});

test("ChangeMessageVisibility to 0 makes the message receivable at once (V5)", async () => {
  await sqs.send(
    new ChangeMessageVisibilityCommand({
      QueueUrl: state.queueUrl,
      ReceiptHandle: state.receiptHandle,
      VisibilityTimeout: 0,
    }),
  );
  // Without MessageAttributeNames: no attributes and no attribute digest.
  const msg = await receiveOne({ WaitTimeSeconds: 0 });
  assert.equal(msg.MessageId, state.sent.id);
  assert.equal(msg.MessageAttributes, undefined);
  assert.equal(msg.MD5OfMessageAttributes, undefined);
  state.receiptHandle = msg.ReceiptHandle;
  // Heartbeat: extend the in-flight message.
  await sqs.send(
    new ChangeMessageVisibilityCommand({
      QueueUrl: state.queueUrl,
      ReceiptHandle: state.receiptHandle,
      VisibilityTimeout: 120,
    }),
  );
});

test("DeleteMessage removes it; the queue is then empty", async () => {
  await sqs.send(new DeleteMessageCommand({ QueueUrl: state.queueUrl, ReceiptHandle: state.receiptHandle }));
  const out = await sqs.send(
    new ReceiveMessageCommand({ QueueUrl: state.queueUrl, WaitTimeSeconds: 0, VisibilityTimeout: 0 }),
  );
  assert.equal((out.Messages ?? []).length, 0);
});

test("SendMessageBatch with attributes: per-entry digests", async () => {
  const entries = [0, 1, 2].map((i) => ({
    Id: `e${i}`,
    MessageBody: `batch body ${i} ✓`,
    MessageAttributes: {
      "attr.index": { DataType: "Number", StringValue: String(i) },
      "attr.bin": { DataType: "Binary", BinaryValue: Uint8Array.from([i, 0xff, 0x00]) },
      "attr.s": { DataType: "String", StringValue: `v${i}` },
    },
  }));
  const out = await sqs.send(new SendMessageBatchCommand({ QueueUrl: state.queueUrl, Entries: entries }));
  assert.equal((out.Failed ?? []).length, 0, JSON.stringify(out.Failed));
  assert.equal(out.Successful.length, 3);
  for (const s of out.Successful) {
    const e = entries.find((x) => x.Id === s.Id);
    assert.ok(e, `unknown entry id ${s.Id}`);
    assert.equal(s.MD5OfMessageBody, md5(e.MessageBody));
    assert.equal(s.MD5OfMessageAttributes, md5OfAttributes(e.MessageAttributes), `entry ${s.Id}`);
  }
  state.batch = entries;
});

test("GetQueueAttributes [\"All\"]: counts, ARN, configured visibility (V11)", async () => {
  const out = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: state.queueUrl, AttributeNames: ["All"] }),
  );
  const a = out.Attributes ?? {};
  assert.equal(a.QueueArn, `arn:aws:sqs:us-east-1:${ACCOUNT}:${queueName}`);
  assert.equal(a.VisibilityTimeout, "45");
  assert.equal(a.ApproximateNumberOfMessages, "3");
  assert.equal(a.ApproximateNumberOfMessagesNotVisible, "0");
  assert.match(a.CreatedTimestamp ?? "", /^\d+$/);
  const one = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: state.queueUrl, AttributeNames: ["MessageRetentionPeriod"] }),
  );
  assert.deepEqual(one.Attributes, { MessageRetentionPeriod: "345600" });
});

test("ReceiveMessage of a batch (10 max, attributes All) then DeleteMessageBatch", async () => {
  const got = new Map();
  for (let i = 0; i < 5 && got.size < 3; i++) {
    const out = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: state.queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 1,
        MessageAttributeNames: ["All"],
      }),
    );
    for (const m of out.Messages ?? []) got.set(m.Body, m);
  }
  assert.equal(got.size, 3);
  for (const e of state.batch) {
    const m = got.get(e.MessageBody);
    assert.ok(m, `missing ${e.MessageBody}`);
    assertSameAttrs(m.MessageAttributes, e.MessageAttributes);
    assert.equal(m.MD5OfMessageAttributes, md5OfAttributes(e.MessageAttributes));
  }
  const handles = [...got.values()].map((m, i) => ({ Id: `d${i}`, ReceiptHandle: m.ReceiptHandle }));
  handles.push({ Id: "bogus", ReceiptHandle: "not-a-receipt-handle" });
  const del = await sqs.send(new DeleteMessageBatchCommand({ QueueUrl: state.queueUrl, Entries: handles }));
  assert.deepEqual((del.Successful ?? []).map((s) => s.Id).sort(), ["d0", "d1", "d2"]);
  assert.equal((del.Failed ?? []).length, 1, JSON.stringify(del.Failed));
  assert.equal(del.Failed[0].Id, "bogus");
  assert.equal(del.Failed[0].Code, "ReceiptHandleIsInvalid");
  assert.equal(del.Failed[0].SenderFault, true);
  const attrs = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: state.queueUrl,
      AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    }),
  );
  assert.deepEqual(attrs.Attributes, {
    ApproximateNumberOfMessages: "0",
    ApproximateNumberOfMessagesNotVisible: "0",
  });
});

test("GetQueueUrl of a missing queue: QueueDoesNotExist (W2, x-amzn-query-error)", async () => {
  // What the SDK reports (checked against @aws-sdk/client-sqs 3.1175.0): the
  // modeled exception class QueueDoesNotExist (name "QueueDoesNotExist"), and,
  // because SQS is awsQueryCompatible, `Code` taken from the
  // x-amzn-query-error header: "AWS.SimpleQueueService.NonExistentQueue".
  // Without that header `Code` would be missing.
  let err;
  try {
    await sqs.send(new GetQueueUrlCommand({ QueueName: `missing-${suffix}` }));
  } catch (e) {
    err = e;
  }
  assert.ok(err, "GetQueueUrl of a missing queue succeeded");
  assert.ok(err instanceof QueueDoesNotExist, `error is ${err?.name}: ${err?.message}`);
  assert.equal(err.name, "QueueDoesNotExist");
  assert.equal(err.$metadata.httpStatusCode, 400);
  assert.equal(err.$fault, "client");
  assert.equal(err.Code, "AWS.SimpleQueueService.NonExistentQueue", `Code=${err.Code}`);
  assert.equal(err.Type, "Sender", `Type=${err.Type}`);
});

test("ListQueues with a prefix", async () => {
  const out = await sqs.send(new ListQueuesCommand({ QueueNamePrefix: "smoke-js-" }));
  assert.ok((out.QueueUrls ?? []).includes(state.queueUrl), JSON.stringify(out.QueueUrls));
  const none = await sqs.send(new ListQueuesCommand({ QueueNamePrefix: `nothing-${suffix}` }));
  assert.equal((none.QueueUrls ?? []).length, 0);
});

test("DeleteQueue, after which the queue does not exist (V9)", async () => {
  await sqs.send(new DeleteQueueCommand({ QueueUrl: state.queueUrl }));
  await assert.rejects(
    sqs.send(new GetQueueUrlCommand({ QueueName: queueName })),
    (e) => e instanceof QueueDoesNotExist,
  );
});

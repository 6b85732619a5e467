// Client smoke test: sluice through the AWS SDK for JavaScript v3
// (@aws-sdk/client-sqs), in either of SQS's wire protocols:
//
//   * AWS JSON 1.0: the current @aws-sdk/client-sqs (the default);
//   * AWS Query (form-encoded request, XML answer): SMOKE_SQS_MODULE=client-sqs-query,
//     an npm alias of @aws-sdk/client-sqs 3.445.0, the last release whose SQS
//     client speaks Query (the next published one, 3.447.0, speaks JSON).
//
// SMOKE_EXPECT_PROTOCOL (json or query, default json) is the protocol the
// module must speak: every request the SDK sends must carry that protocol's
// Content-Type, and the server's own count of requests by protocol (/metrics,
// sluice_requests_total{protocol=...}) must grow by exactly the number of
// requests the SDK sent, in that protocol only. So the suite needs the
// server to itself while it runs.
//
// Run by scripts/client-smoke, which starts sluice and sets SLUICE_ENDPOINT.
// By hand: SLUICE_ENDPOINT=http://127.0.0.1:PORT node --test smoke.mjs
//   SLUICE_ENDPOINT=... SMOKE_SQS_MODULE=client-sqs-query SMOKE_EXPECT_PROTOCOL=query node --test smoke.mjs
//
// The SDK itself verifies MD5OfBody / MD5OfMessageBody on SendMessage,
// SendMessageBatch and ReceiveMessage (it throws on a mismatch), and reports
// the SQS error code from the `x-amzn-query-error` header (JSON) or the XML
// error's <Code> (Query) (W2). It does not verify MD5OfMessageAttributes, so
// this file checks that digest itself, computed independently as W4 describes.
//
// Tests run in order and share state (one queue), like a real consumer would.

import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { createRequire } from "node:module";

const endpoint = process.env.SLUICE_ENDPOINT;
if (!endpoint) {
  throw new Error("SLUICE_ENDPOINT is not set (e.g. http://127.0.0.1:9324)");
}
const SDK_MODULE = process.env.SMOKE_SQS_MODULE ?? "@aws-sdk/client-sqs";
const PROTOCOL = process.env.SMOKE_EXPECT_PROTOCOL ?? "json";
// What each protocol's requests carry (the server tells them apart by it).
const CONTENT_TYPES = { json: "application/x-amz-json-1.0", query: "application/x-www-form-urlencoded" };
if (!(PROTOCOL in CONTENT_TYPES)) {
  throw new Error(`SMOKE_EXPECT_PROTOCOL must be json or query, not ${PROTOCOL}`);
}

const {
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
} = await import(SDK_MODULE);

// The HTTP handler of the SDK's own dependency tree (an old client cannot
// take a newer handler, nor, before 3.5xx, a plain options object).
const localRequire = createRequire(import.meta.url);
const sdkRequire = createRequire(localRequire.resolve(SDK_MODULE));
const { NodeHttpHandler } = sdkRequire("@smithy/node-http-handler");
const sdkVersion = localRequire(`${SDK_MODULE}/package.json`).version;
console.log(`${SDK_MODULE} = @aws-sdk/client-sqs ${sdkVersion}, expected protocol ${PROTOCOL}`);

const sqs = new SQSClient({
  endpoint,
  region: "us-east-1",
  credentials: { accessKeyId: "AKIDSLUICESMOKE", secretAccessKey: "sluice-smoke-secret" },
  maxAttempts: 1, // a retry would hide a server error
  // A hung server fails the test instead of hanging it.
  requestHandler: new NodeHttpHandler({
    connectionTimeout: 5_000,
    requestTimeout: 30_000,
    throwOnRequestTimeout: true,
  }),
});

// Every request as it goes on the wire (after signing, once per attempt):
// its Content-Type tells the protocol the SDK chose.
const sent = [];
sqs.middlewareStack.add(
  (next) => async (args) => {
    const headers = args.request?.headers ?? {};
    const ct = Object.entries(headers).find(([k]) => k.toLowerCase() === "content-type")?.[1];
    sent.push(String(ct ?? "(none)"));
    return next(args);
  },
  { step: "finalizeRequest", priority: "low", name: "smokeProtocolProbe" },
);

// The server's count of SQS requests by protocol, from /metrics.
async function requestsByProtocol() {
  const res = await fetch(new URL("/metrics", endpoint));
  assert.equal(res.status, 200, "GET /metrics");
  const counts = {};
  for (const line of (await res.text()).split("\n")) {
    const m = line.match(/^sluice_requests_total\{(.*)\} (\d+)$/);
    const protocol = m?.[1].match(/protocol="([^"]*)"/)?.[1];
    if (protocol) counts[protocol] = (counts[protocol] ?? 0) + Number(m[2]);
  }
  return counts;
}

const ACCOUNT = process.env.SLUICE_ACCOUNT ?? "000000000000"; // sluice's default account (W3)
const suffix = `${process.pid}-${Date.now()}`;
const queueName = `smoke-js-${suffix}`;

const baseline = {};
test("the server's request counts by protocol before the run (/metrics)", async () => {
  Object.assign(baseline, await requestsByProtocol());
});

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

// The current SDK names system attributes MessageSystemAttributeNames; the
// Query-era one (3.445.0) only knows the older AttributeNames and would drop
// the newer member unsent.
const SYSTEM_ATTRIBUTES_ALL =
  PROTOCOL === "query" ? { AttributeNames: ["All"] } : { MessageSystemAttributeNames: ["All"] };

test(`ReceiveMessage with ["All"] attributes and ${Object.keys(SYSTEM_ATTRIBUTES_ALL)[0]} ["All"]`, async () => {
  const before = Date.now();
  const msg = await receiveOne({
    MessageAttributeNames: ["All"],
    ...SYSTEM_ATTRIBUTES_ALL,
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

test("GetQueueUrl of a missing queue: QueueDoesNotExist, AWS.SimpleQueueService.NonExistentQueue (W2)", async () => {
  // What the SDK reports, read from each version's deserializer and checked
  // against it: both map the code AWS.SimpleQueueService.NonExistentQueue to
  // the modeled exception class QueueDoesNotExist (name "QueueDoesNotExist").
  //  * JSON (3.1175.0): SQS is awsQueryCompatible, so `Code` and `Type` come
  //    from the x-amzn-query-error header; without that header `Code` would
  //    be missing.
  //  * Query (3.445.0): the XML <ErrorResponse>'s <Error> element is copied
  //    onto the exception as `Error` ({Type, Code, Message, Detail}) and its
  //    <RequestId> as `RequestId`; `message` stays "UnknownError" (the SDK
  //    looks for a top-level Message), so it is not asserted.
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
  if (PROTOCOL === "query") {
    const e = err.Error ?? {};
    assert.equal(e.Code, "AWS.SimpleQueueService.NonExistentQueue", `Error=${JSON.stringify(err.Error)}`);
    assert.equal(e.Type, "Sender", `Error=${JSON.stringify(err.Error)}`);
    assert.match(e.Message ?? "", /queue does not exist/, `Error=${JSON.stringify(err.Error)}`);
    assert.equal(err.RequestId, err.$metadata.requestId);
  } else {
    assert.equal(err.Code, "AWS.SimpleQueueService.NonExistentQueue", `Code=${err.Code}`);
    assert.equal(err.Type, "Sender", `Type=${err.Type}`);
  }
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

test(`every request went out in ${PROTOCOL}, and the server counted each as ${PROTOCOL} (W1)`, async () => {
  assert.ok(sent.length > 10, `only ${sent.length} requests seen`);
  const other = sent.filter((ct) => !ct.startsWith(CONTENT_TYPES[PROTOCOL]));
  assert.deepEqual(other, [], `requests not in ${PROTOCOL}: ${JSON.stringify(other)}`);
  const now = await requestsByProtocol();
  const delta = {};
  for (const p of new Set([...Object.keys(now), ...Object.keys(baseline)])) {
    const d = (now[p] ?? 0) - (baseline[p] ?? 0);
    if (d !== 0) delta[p] = d;
  }
  assert.deepEqual(delta, { [PROTOCOL]: sent.length }, `server's count of this run's requests by protocol`);
});

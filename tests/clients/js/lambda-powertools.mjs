// Lambda smoke test: Powertools' batch processor for TypeScript
// (@aws-lambda-powertools/batch, exact pin in package.json), unchanged,
// behind the Node shim of docs/consumers.md, fed by a sluice push consumer.
//
// The function (lambda/powertools-batch.mjs) is written for Lambda with
// BatchProcessor and processPartialResponse (EventType.SQS); the shim
// (packaging/shims/lambda-shim.mjs, the file the docs show) serves it over
// HTTP; a consumer created with CreateConsumer (ReportBatchItemFailures)
// delivers a queue to it (rules C1, C2, C11). Run by scripts/client-smoke,
// which starts sluice and sets SLUICE_ENDPOINT. By hand:
// SLUICE_ENDPOINT=http://127.0.0.1:PORT node --test lambda-powertools.mjs

import { test, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync, openSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
  SQSClient,
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
} from "@aws-sdk/client-sqs";

const endpoint = process.env.SLUICE_ENDPOINT;
if (!endpoint) throw new Error("SLUICE_ENDPOINT is not set (e.g. http://127.0.0.1:9324)");
const here = dirname(fileURLToPath(import.meta.url));
const shimFile = resolve(here, "../../../packaging/shims/lambda-shim.mjs");
const VISIBILITY = 2; // seconds: the failed records come back quickly
const MESSAGES = 10;
const FAILING = new Set([2, 5, 7]);

const sqs = new SQSClient({
  endpoint,
  region: "us-east-1",
  credentials: { accessKeyId: "AKIDSLUICESMOKE", secretAccessKey: "sluice-smoke-secret" },
  maxAttempts: 1,
});
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// A sluice action (AWS JSON 1.0, unsigned: the smoke server has no auth).
async function sluice(action, body) {
  const res = await fetch(`${endpoint}/`, {
    method: "POST",
    headers: { "X-Amz-Target": `Sluice.${action}`, "Content-Type": "application/x-amz-json-1.0" },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  assert.equal(res.status, 200, `${action}: ${text}`);
  return text ? JSON.parse(text) : {};
}

async function metric(name, consumer, kind) {
  const text = await (await fetch(`${endpoint}/metrics`)).text();
  const line = text.split("\n").find((l) =>
    l.startsWith(`${name}{`) && l.includes(`consumer="${consumer}"`) && (!kind || l.includes(`kind="${kind}"`)));
  return line ? Number(line.split(" ").pop()) : 0;
}

async function startShim(log) {
  const out = openSync(log, "w");
  const shim = spawn(process.execPath, [shimFile, "./powertools-batch.mjs", "handler"], {
    cwd: join(here, "lambda"),
    env: { ...process.env, PORT: "0", AWS_LAMBDA_FUNCTION_NAME: "powertools-batch",
      AWS_LAMBDA_FUNCTION_TIMEOUT: String(VISIBILITY), POWERTOOLS_DEV: "" },
    stdio: ["ignore", out, out],
  });
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const first = readFileSync(log, "utf8").split("\n")[0];
    if (first.startsWith("lambda shim listening on ")) return { shim, url: first.split(" ").pop() };
    if (shim.exitCode !== null) break;
    await sleep(100);
  }
  shim.kill("SIGKILL");
  throw new Error(`the shim did not start:\n${readFileSync(log, "utf8")}`);
}

const logged = (log) => readFileSync(log, "utf8").split("\n").filter((l) => l.startsWith("{")).map((l) => {
  try { return JSON.parse(l); } catch { return null; }
}).filter(Boolean);

const prefix = `lambda-pt-js-${process.pid}-${Date.now()}`;
const log = join(mkdtempSync(join(tmpdir(), "lambda-shim-")), "shim.log");
let shim;
const consumer = `${prefix}-consumer`;
after(async () => {
  await sluice("DeleteConsumer", { Name: consumer }).catch(() => {});
  shim?.kill("SIGKILL");
});

test("docs/consumers.md shows the shim this suite runs, verbatim", () => {
  const docs = readFileSync(resolve(here, "../../../docs/consumers.md"), "utf8");
  assert.ok(docs.includes(readFileSync(shimFile, "utf8")));
});

test("Powertools' BatchProcessor behind the Node shim: only failed records come back, then reach the DLQ", async () => {
  const dlqUrl = (await sqs.send(new CreateQueueCommand({ QueueName: `${prefix}-dlq` }))).QueueUrl;
  const dlqArn = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ["QueueArn"] })))
    .Attributes.QueueArn;
  const url = (await sqs.send(new CreateQueueCommand({
    QueueName: prefix,
    Attributes: {
      VisibilityTimeout: String(VISIBILITY),
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 2 }),
    },
  }))).QueueUrl;
  const entries = [...Array(MESSAGES).keys()].map((n) => ({
    Id: String(n), MessageBody: JSON.stringify({ n, fail: FAILING.has(n) }),
  }));
  const sent = await sqs.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: entries }));
  assert.equal(sent.Successful.length, MESSAGES);
  const ids = Object.fromEntries(sent.Successful.map((e) => [Number(e.Id), e.MessageId]));

  let started;
  ({ shim, url: started } = await startShim(log));
  await sluice("CreateConsumer", {
    Name: consumer, QueueUrl: url, Url: `${started}/2015-03-31/functions/function/invocations`,
    BatchSize: 10, TimeoutSeconds: VISIBILITY, ReportBatchItemFailures: true,
  });

  // Two rounds for the failed records (receive counts 1 and 2); the third
  // receive moves them to the DLQ.
  const deadline = Date.now() + 30_000;
  for (;;) {
    const a = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ["ApproximateNumberOfMessages"] }));
    if (Number(a.Attributes.ApproximateNumberOfMessages) >= FAILING.size) break;
    assert.ok(Date.now() < deadline, `the failed records did not reach the DLQ:\n${readFileSync(log, "utf8")}`);
    await sleep(200);
  }
  await sleep(1000); // nothing more may arrive

  const seen = logged(log);
  const byN = new Map();
  for (const r of seen) byN.set(r.n, [...(byN.get(r.n) ?? []), r.receiveCount].sort());
  assert.deepEqual([...byN.keys()].sort((a, b) => a - b), [...Array(MESSAGES).keys()], "every record reached recordHandler");
  for (const r of seen) assert.equal(r.messageId, ids[r.n], "with its messageId");
  for (let n = 0; n < MESSAGES; n++) {
    assert.deepEqual(byN.get(n), FAILING.has(n) ? [1, 2] : [1],
      `record ${n}: ${FAILING.has(n) ? "failed, so delivered again once" : "handled once, never again"}`);
  }

  const src = await sqs.send(new GetQueueAttributesCommand({
    QueueUrl: url, AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
  }));
  assert.deepEqual(src.Attributes, { ApproximateNumberOfMessages: "0", ApproximateNumberOfMessagesNotVisible: "0" });
  const dead = await sqs.send(new ReceiveMessageCommand({ QueueUrl: dlqUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }));
  assert.deepEqual(
    Object.fromEntries((dead.Messages ?? []).map((m) => [JSON.parse(m.Body).n, m.MessageId])),
    Object.fromEntries([...FAILING].map((n) => [n, ids[n]])),
    "the DLQ holds exactly the failed records, ids kept");
  // The last round failed every record: Powertools threw, the shim answered
  // a function error, and that is the reason kept (C11).
  const peeked = (await sluice("PeekMessages", { QueueUrl: dlqUrl, MaxResults: 10 })).Messages ?? [];
  assert.equal(peeked.length, FAILING.size);
  for (const m of peeked) {
    assert.match(m.FailureReason ?? "", new RegExp(`^consumer ${consumer}: function error \\(HTTP 200\\): FullBatchFailureError`));
  }
  assert.equal(await metric("sluice_consumer_deleted_messages_total", consumer), MESSAGES - FAILING.size);
  assert.ok(await metric("sluice_consumer_failures_total", consumer, "partial") >= 1, "a partial failure");
  assert.ok(await metric("sluice_consumer_failures_total", consumer, "function_error") >= 1, "a function error");
});

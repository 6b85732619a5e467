// Client smoke test: sluice's SNS through the AWS SDK for JavaScript v3
// (@aws-sdk/client-sns, AWS Query, rule N1), unchanged, on the same port as
// @aws-sdk/client-sqs; the envelope a queue gets is verified with
// sns-validator, the SNS message validator AWS publishes for Node.js,
// unchanged, as are the confirmation and the notification an HTTP endpoint
// in this process gets (rule N6); raw delivery through a filter policy and a
// FIFO topic run too.
//
// sns-validator fetches the signing certificate with `https.get` and takes
// only `https:` URLs whose host matches its host pattern (SNS's own hosts by
// default). So this suite runs against a server with [tls]: the certificate
// URL in sluice's envelopes is then https://127.0.0.1:PORT/…pem, the pattern
// given to the validator is that host and port, and NODE_EXTRA_CA_CERTS makes
// Node trust the server's CA. The queue's policy lets the topic send, as a
// server with authentication on requires (rule N8).
//
// Run by scripts/client-smoke, which starts sluice with TLS, sets
// SLUICE_ENDPOINT and NODE_EXTRA_CA_CERTS. By hand:
//   SLUICE_ENDPOINT=https://127.0.0.1:PORT NODE_EXTRA_CA_CERTS=…/ca.pem node --test smoke_sns.mjs
//
// Tests run in order and share state (one topic, one queue).

import { test } from "node:test";
import assert from "node:assert/strict";
import {
  SNSClient,
  CreateTopicCommand,
  SubscribeCommand,
  PublishCommand,
  SetTopicAttributesCommand,
  ListSubscriptionsByTopicCommand,
  DeleteTopicCommand,
  GetTopicAttributesCommand,
  ConfirmSubscriptionCommand,
  NotFoundException,
} from "@aws-sdk/client-sns";
import http from "node:http";
import {
  SQSClient,
  CreateQueueCommand,
  GetQueueAttributesCommand,
  SetQueueAttributesCommand,
  ReceiveMessageCommand,
  DeleteMessageCommand,
  DeleteQueueCommand,
} from "@aws-sdk/client-sqs";
import MessageValidator from "sns-validator";

const endpoint = process.env.SLUICE_ENDPOINT;
if (!endpoint) {
  throw new Error("SLUICE_ENDPOINT is not set (e.g. https://127.0.0.1:9324)");
}
const config = {
  endpoint,
  region: "us-east-1",
  credentials: { accessKeyId: "AKIDSLUICESMOKE", secretAccessKey: "sluice-smoke-secret" },
  maxAttempts: 1, // a retry would hide a server error
};
const sns = new SNSClient(config);
const sqs = new SQSClient(config);

const ACCOUNT = process.env.SLUICE_ACCOUNT ?? "000000000000"; // sluice's default account
const suffix = `${process.pid}-${Date.now()}`;
const topicName = `smoke-js-sns-${suffix}`;
const state = {};

// The validator's host pattern: this server's host and port, exactly.
const certHost = new URL(endpoint).host;
const hostPattern = new RegExp(`^${certHost.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`);
const validator = new MessageValidator(hostPattern);
const validate = (message) =>
  new Promise((resolve, reject) => validator.validate(message, (err, msg) => (err ? reject(err) : resolve(msg))));

async function receiveOne() {
  const out = await sqs.send(
    new ReceiveMessageCommand({ QueueUrl: state.queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
  );
  const msgs = out.Messages ?? [];
  assert.equal(msgs.length, 1, `expected one message, got ${JSON.stringify(msgs)}`);
  await sqs.send(new DeleteMessageCommand({ QueueUrl: state.queueUrl, ReceiptHandle: msgs[0].ReceiptHandle }));
  return JSON.parse(msgs[0].Body);
}

test("the server speaks https (sns-validator fetches certificates over https only)", () => {
  assert.equal(new URL(endpoint).protocol, "https:");
});

test("[N1] create a topic with SNSClient, twice: the same ARN", async () => {
  const out = await sns.send(new CreateTopicCommand({ Name: topicName }));
  assert.equal(out.TopicArn, `arn:aws:sns:us-east-1:${ACCOUNT}:${topicName}`);
  const again = await sns.send(new CreateTopicCommand({ Name: topicName }));
  assert.equal(again.TopicArn, out.TopicArn);
  state.topicArn = out.TopicArn;
});

// A queue whose policy lets `topicArn` send (rule N8), and its ARN.
async function queueFor(topicArn, name, fifo = false) {
  const q = await sqs.send(
    new CreateQueueCommand({ QueueName: name, Attributes: fifo ? { FifoQueue: "true" } : undefined }),
  );
  const arn = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: q.QueueUrl, AttributeNames: ["QueueArn"] })))
    .Attributes.QueueArn;
  const policy = {
    Version: "2012-10-17",
    Statement: [
      {
        Effect: "Allow",
        Principal: { Service: "sns.amazonaws.com" },
        Action: "sqs:SendMessage",
        Resource: arn,
        Condition: { ArnEquals: { "aws:SourceArn": topicArn } },
      },
    ],
  };
  await sqs.send(new SetQueueAttributesCommand({ QueueUrl: q.QueueUrl, Attributes: { Policy: JSON.stringify(policy) } }));
  return { url: q.QueueUrl, arn };
}

async function bodies(url) {
  const out = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
  return (out.Messages ?? []).map((m) => m.Body);
}

test("[N8] a queue whose policy lets the topic send, subscribed with envelopes", async () => {
  const q = await queueFor(state.topicArn, `${topicName}-q`);
  state.queueUrl = q.url;
  const queueArn = q.arn;
  const sub = await sns.send(
    new SubscribeCommand({ TopicArn: state.topicArn, Protocol: "sqs", Endpoint: queueArn, ReturnSubscriptionArn: true }),
  );
  assert.ok(sub.SubscriptionArn.startsWith(`${state.topicArn}:`), sub.SubscriptionArn);
  const subs = await sns.send(new ListSubscriptionsByTopicCommand({ TopicArn: state.topicArn }));
  assert.deepEqual(
    subs.Subscriptions.map((s) => [s.SubscriptionArn, s.Protocol, s.Endpoint]),
    [[sub.SubscriptionArn, "sqs", queueArn]],
  );
});

test("[N2][N3] publish; the queue holds the envelope, read with SQSClient", async () => {
  const out = await sns.send(
    new PublishCommand({
      TopicArn: state.topicArn,
      Subject: "Greeting",
      Message: "hello from JS v3 ✓ <&>",
      MessageAttributes: { colour: { DataType: "String", StringValue: "blue" } },
    }),
  );
  const env = await receiveOne();
  assert.equal(env.Type, "Notification");
  assert.equal(env.MessageId, out.MessageId);
  assert.equal(env.TopicArn, state.topicArn);
  assert.equal(env.Subject, "Greeting");
  assert.equal(env.Message, "hello from JS v3 ✓ <&>");
  assert.equal(env.SignatureVersion, "1");
  assert.deepEqual(env.MessageAttributes, { colour: { Type: "String", Value: "blue" } });
  assert.ok(env.SigningCertURL.startsWith(`https://${certHost}/SimpleNotificationService-`), env.SigningCertURL);
  state.envelope = env;
});

test("[N3] sns-validator verifies the envelope's SignatureVersion 1 signature", async () => {
  await validate(state.envelope);
});

test("[N3] sns-validator refuses a changed envelope, and sluice's host under its default pattern", async () => {
  await assert.rejects(validate({ ...state.envelope, Message: `${state.envelope.Message}!` }), /signature is invalid/);
  const strict = new MessageValidator();
  await assert.rejects(
    new Promise((resolve, reject) => strict.validate(state.envelope, (err, msg) => (err ? reject(err) : resolve(msg)))),
    /invalid domain/,
  );
});

test("[N3] SignatureVersion 2 (SHA256withRSA) verifies with sns-validator", async () => {
  await sns.send(
    new SetTopicAttributesCommand({ TopicArn: state.topicArn, AttributeName: "SignatureVersion", AttributeValue: "2" }),
  );
  await sns.send(new PublishCommand({ TopicArn: state.topicArn, Message: "signed with SHA256" }));
  const env = await receiveOne();
  assert.equal(env.SignatureVersion, "2");
  assert.equal(env.Subject, undefined);
  await validate(env);
});

test("[N3][N4] raw delivery through a filter policy: only the matching message, as published", async () => {
  const q = await queueFor(state.topicArn, `${topicName}-raw`);
  await sns.send(
    new SubscribeCommand({
      TopicArn: state.topicArn,
      Protocol: "sqs",
      Endpoint: q.arn,
      Attributes: { RawMessageDelivery: "true", FilterPolicy: JSON.stringify({ colour: ["red"] }) },
    }),
  );
  for (const colour of ["blue", "red"]) {
    await sns.send(
      new PublishCommand({
        TopicArn: state.topicArn,
        Message: `a ${colour} one`,
        MessageAttributes: { colour: { DataType: "String", StringValue: colour } },
      }),
    );
  }
  assert.deepEqual(await bodies(q.url), ["a red one"]);
  // The enveloped queue subscribed earlier has no filter: both.
  const out = await sqs.send(
    new ReceiveMessageCommand({ QueueUrl: state.queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
  );
  const msgs = out.Messages ?? [];
  assert.deepEqual(msgs.map((m) => JSON.parse(m.Body).Message).sort(), ["a blue one", "a red one"]);
  for (const m of msgs) {
    await sqs.send(new DeleteMessageCommand({ QueueUrl: state.queueUrl, ReceiptHandle: m.ReceiptHandle }));
  }
  await sqs.send(new DeleteQueueCommand({ QueueUrl: q.url }));
});

test("[N7] a FIFO topic into a FIFO queue: the group's order, the duplicate dropped", async () => {
  const fifo = await sns.send(
    new CreateTopicCommand({
      Name: `${topicName}.fifo`,
      Attributes: { FifoTopic: "true", ContentBasedDeduplication: "true" },
    }),
  );
  const q = await queueFor(fifo.TopicArn, `${topicName}-q.fifo`, true);
  await sns.send(
    new SubscribeCommand({
      TopicArn: fifo.TopicArn,
      Protocol: "sqs",
      Endpoint: q.arn,
      Attributes: { RawMessageDelivery: "true" },
    }),
  );
  const sequence = [];
  for (const message of ["one", "two", "one"]) {
    const out = await sns.send(new PublishCommand({ TopicArn: fifo.TopicArn, Message: message, MessageGroupId: "g" }));
    sequence.push(out.SequenceNumber);
  }
  assert.equal(sequence[2], sequence[0], "the duplicate answered with the first one's number");
  assert.deepEqual(await bodies(q.url), ["one", "two"]);
  await sns.send(new DeleteTopicCommand({ TopicArn: fifo.TopicArn }));
  await sqs.send(new DeleteQueueCommand({ QueueUrl: q.url }));
});

// An HTTP endpoint on a free loopback port: records each POST, answers 200.
function startEndpoint() {
  const got = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      got.push({ headers: req.headers, body });
      res.writeHead(200).end();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const url = `http://127.0.0.1:${server.address().port}/sns`;
      const wait = async (n) => {
        for (let i = 0; i < 200 && got.length < n; i++) await new Promise((r) => setTimeout(r, 50));
        assert.ok(got.length >= n, `expected ${n} requests, got ${JSON.stringify(got)}`);
        return got[n - 1];
      };
      resolve({ url, wait, close: () => server.close() });
    }),
  );
}

test("[N6] an HTTP endpoint gets a confirmation, is confirmed by its token, then notified; both verify", async () => {
  const endpoint = await startEndpoint();
  try {
    const sub = await sns.send(new SubscribeCommand({ TopicArn: state.topicArn, Protocol: "http", Endpoint: endpoint.url }));
    assert.equal(sub.SubscriptionArn, "pending confirmation");
    const confirmation = await endpoint.wait(1);
    assert.equal(confirmation.headers["x-amz-sns-message-type"], "SubscriptionConfirmation");
    const doc = JSON.parse(confirmation.body);
    assert.equal(doc.Type, "SubscriptionConfirmation");
    await validate(doc);
    const confirmed = await sns.send(new ConfirmSubscriptionCommand({ TopicArn: state.topicArn, Token: doc.Token }));
    assert.ok(confirmed.SubscriptionArn.startsWith(`${state.topicArn}:`), confirmed.SubscriptionArn);
    await sns.send(new PublishCommand({ TopicArn: state.topicArn, Message: "to the web too" }));
    const notification = await endpoint.wait(2);
    assert.equal(notification.headers["x-amz-sns-message-type"], "Notification");
    assert.equal(notification.headers["x-amz-sns-subscription-arn"], confirmed.SubscriptionArn);
    const env = JSON.parse(notification.body);
    assert.equal(env.Message, "to the web too");
    await validate(env);
    // The queue subscribed earlier got its copy too.
    assert.equal((await receiveOne()).Message, "to the web too");
  } finally {
    endpoint.close();
  }
});

test("[N1] delete the topic; GetTopicAttributes is NotFoundException", async () => {
  await sns.send(new DeleteTopicCommand({ TopicArn: state.topicArn }));
  await assert.rejects(sns.send(new GetTopicAttributesCommand({ TopicArn: state.topicArn })), (err) => {
    assert.ok(err instanceof NotFoundException, `${err.name}: ${err.message}`);
    assert.equal(err.$metadata.httpStatusCode, 404);
    return true;
  });
  await sqs.send(new DeleteQueueCommand({ QueueUrl: state.queueUrl }));
});

// Serves an unchanged Lambda handler(event, context) to a sluice push consumer:
// node lambda-shim.mjs ./app.mjs handler   (listens on $HOST:$PORT, default 127.0.0.1:9000)
import { createServer } from "node:http";
import { randomUUID } from "node:crypto";
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";

const [file, name = "handler"] = process.argv.slice(2);
const handler = (await import(pathToFileURL(resolve(file)).href))[name];
const NAME = process.env.AWS_LAMBDA_FUNCTION_NAME ?? "function";
const TIMEOUT = Number(process.env.AWS_LAMBDA_FUNCTION_TIMEOUT ?? 30); // the consumer's timeout_seconds

const context = () => { // what handlers read of Lambda's context object
  const deadline = Date.now() + TIMEOUT * 1000;
  return { functionName: NAME, functionVersion: "$LATEST", memoryLimitInMB: "128",
    invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${NAME}`,
    awsRequestId: randomUUID(), logGroupName: `/aws/lambda/${NAME}`, logStreamName: NAME,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()) };
};
let last = Promise.resolve(); // one event at a time, as a Lambda execution environment runs them
const invoke = (event, ctx) => (last = last.catch(() => {}).then(() => handler(event, ctx)));

const server = createServer(async (req, res) => {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const headers = { "Content-Type": "application/json" };
  let body;
  try {
    body = JSON.stringify((await invoke(JSON.parse(Buffer.concat(chunks)), context())) ?? null);
  } catch (e) { // answered as Lambda's Invoke answers a function error
    console.error(e);
    headers["X-Amz-Function-Error"] = "Unhandled";
    body = JSON.stringify({ errorMessage: String(e?.message ?? e), errorType: e?.name ?? "Error" });
  }
  res.writeHead(200, headers).end(body);
});
server.keepAliveTimeout = 120_000; // beyond the 90 s sluice keeps an idle connection
server.listen(Number(process.env.PORT ?? 9000), process.env.HOST ?? "127.0.0.1", () => {
  const { address, port } = server.address();
  console.log(`lambda shim listening on http://${address}:${port}`);
});

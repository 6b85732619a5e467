// A Lambda function written for SQS with Powertools' batch processor, as
// AWS documents it (Powertools for AWS Lambda (TypeScript), "Batch
// Processing", SQS standard queue): nothing in it knows about sluice. Each
// record's body is JSON; a record whose body has "fail": true throws, so
// Powertools names it in batchItemFailures (and throws
// FullBatchFailureError when every record of the event failed). It logs one
// JSON line per record to stdout, as a function logs to CloudWatch, for the
// test to read.
import { BatchProcessor, EventType, processPartialResponse } from "@aws-lambda-powertools/batch";

const processor = new BatchProcessor(EventType.SQS);

const recordHandler = async (record) => {
  const payload = JSON.parse(record.body);
  console.log(JSON.stringify({
    messageId: record.messageId,
    n: payload.n,
    receiveCount: Number(record.attributes.ApproximateReceiveCount),
    failed: Boolean(payload.fail),
  }));
  if (payload.fail) throw new Error(`record ${payload.n} cannot be processed`);
};

export const handler = async (event, context) =>
  processPartialResponse(event, recordHandler, processor, { context });

"""A Lambda function written for SQS with Powertools' batch processor, as
AWS documents it (Powertools for AWS Lambda (Python), "Batch Processing",
SQS standard queue): nothing in it knows about sluice. Each record's body
is JSON; a record whose body has "fail": true raises, so Powertools names
it in batchItemFailures (and raises BatchProcessingError when every
record of the event failed). It logs one JSON line per record to stdout,
as a function logs to CloudWatch, for the test to read.
"""

import json

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

processor = BatchProcessor(event_type=EventType.SQS)


def record_handler(record: SQSRecord):
    payload = record.json_body
    print(json.dumps({
        "messageId": record.message_id,
        "n": payload["n"],
        "receiveCount": int(record.attributes.approximate_receive_count),
        "failed": bool(payload.get("fail")),
    }), flush=True)
    if payload.get("fail"):
        raise ValueError(f"record {payload['n']} cannot be processed")


def lambda_handler(event, context):
    return process_partial_response(event=event, record_handler=record_handler, processor=processor, context=context)

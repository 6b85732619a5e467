#!/usr/bin/env python3
"""Lambda smoke test: Powertools' batch processor, unchanged, behind the
Python shim of docs/consumers.md, fed by a sluice push consumer.

The function (lambda/powertools_batch.py) is written for Lambda with
aws-lambda-powertools' BatchProcessor and process_partial_response
(EventType.SQS); the shim (packaging/shims/lambda_shim.py, the file the docs
show) serves it over HTTP; a consumer created with CreateConsumer
(ReportBatchItemFailures) delivers a queue to it. Run by
scripts/client-smoke, which starts sluice and sets SLUICE_ENDPOINT. By hand:

    SLUICE_ENDPOINT=http://127.0.0.1:PORT python lambda_powertools.py

What it proves (rules C1, C2, C11):
  * the shim run is the one docs/consumers.md shows, character for character;
  * the event sluice POSTs is one Powertools parses: every record reaches
    record_handler with its messageId, JSON body and receive count;
  * the records the function fails, and only those, come back: Powertools'
    batchItemFailures answer makes sluice delete the others at once (each
    handled exactly once, receive count 1) and keep the failed ones;
  * a failed record is delivered again after the visibility timeout with
    ApproximateReceiveCount 2; when every record of an event fails,
    Powertools raises BatchProcessingError, which the shim answers as a
    function error (X-Amz-Function-Error), failing that batch;
  * after maxReceiveCount (2) the failed records are in the dead-letter
    queue, with their ids and bodies, and the reason of their last failure
    names BatchProcessingError; the source queue ends empty;
  * the consumer's metrics count the deletes, a partial failure and a
    function error.

Output: one `ok - NAME` / `not ok - NAME` line per check, then
`smoke-result: suite=NAME passed=N failed=M`; exit status 1 if any failed.
"""

import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import boto3
from botocore.config import Config

ENDPOINT = os.environ.get("SLUICE_ENDPOINT")
if not ENDPOINT:
    sys.exit("SLUICE_ENDPOINT is not set (e.g. http://127.0.0.1:9324)")
HERE = Path(__file__).resolve().parent
SHIM = HERE.parents[2] / "packaging" / "shims" / "lambda_shim.py"
FUNCTION_DIR = HERE / "lambda"
PREFIX = f"lambda-pt-{os.getpid()}-{int(time.time())}"
VISIBILITY = 2  # seconds: the failed records come back quickly
MESSAGES = 10
FAILING = {2, 5, 7}

passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok - {name}")
    else:
        failed += 1
        print(f"not ok - {name}" + (f": {detail}" if detail else ""))


def sluice(action, body):
    """A sluice action (AWS JSON 1.0, unsigned: the smoke server has no auth)."""
    req = urllib.request.Request(
        ENDPOINT + "/",
        data=json.dumps(body).encode(),
        headers={"X-Amz-Target": f"Sluice.{action}", "Content-Type": "application/x-amz-json-1.0"},
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read() or b"{}")


def metric(name, consumer, kind=None):
    text = urllib.request.urlopen(ENDPOINT + "/metrics", timeout=10).read().decode()
    labels = f'consumer="{consumer}"'
    for line in text.splitlines():
        if line.startswith(name + "{") and labels in line and (kind is None or f'kind="{kind}"' in line):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def start_shim(log):
    env = {**os.environ, "PORT": "0", "AWS_LAMBDA_FUNCTION_NAME": "powertools-batch",
           "AWS_LAMBDA_FUNCTION_TIMEOUT": str(VISIBILITY), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, str(SHIM), "powertools_batch.lambda_handler"],
                            cwd=FUNCTION_DIR, env=env, stdout=open(log, "w"), stderr=subprocess.STDOUT)
    deadline = time.time() + 20
    while time.time() < deadline:
        first = Path(log).read_text().splitlines()[:1]
        if first and first[0].startswith("lambda shim listening on "):
            return proc, first[0].rsplit(" ", 1)[1]
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"the shim did not start:\n{Path(log).read_text()}")


def records_logged(log):
    """The JSON lines record_handler printed."""
    out = []
    for line in Path(log).read_text().splitlines():
        if line.startswith("{"):
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    return out


def main():
    from importlib.metadata import version

    docs = (HERE.parents[2] / "docs" / "consumers.md").read_text()
    check("docs/consumers.md shows the shim this suite runs, verbatim", SHIM.read_text() in docs)

    sqs = boto3.client("sqs", endpoint_url=ENDPOINT, region_name="us-east-1",
                       aws_access_key_id="AKIDSLUICESMOKE", aws_secret_access_key="sluice-smoke-secret",
                       config=Config(retries={"total_max_attempts": 1}))
    dlq_url = sqs.create_queue(QueueName=f"{PREFIX}-dlq")["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    url = sqs.create_queue(QueueName=PREFIX, Attributes={
        "VisibilityTimeout": str(VISIBILITY),
        "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 2}),
    })["QueueUrl"]
    sent = {}
    entries = [{"Id": str(n), "MessageBody": json.dumps({"n": n, "fail": n in FAILING})} for n in range(MESSAGES)]
    for entry in sqs.send_message_batch(QueueUrl=url, Entries=entries)["Successful"]:
        sent[int(entry["Id"])] = entry["MessageId"]
    check("the batch is sent", len(sent) == MESSAGES, str(sent))

    log = tempfile.mktemp(prefix="lambda-shim-", suffix=".log")
    shim, shim_url = start_shim(log)
    consumer = f"{PREFIX}-consumer"
    try:
        sluice("CreateConsumer", {"Name": consumer, "QueueUrl": url, "Url": shim_url + "/2015-03-31/functions/function/invocations",
                                  "BatchSize": 10, "TimeoutSeconds": VISIBILITY, "ReportBatchItemFailures": True})
        # Two rounds for the failed records (receive counts 1 and 2), then the
        # third receive moves them to the DLQ: about 2 visibility timeouts.
        deadline = time.time() + 30
        dlq_count = 0
        while time.time() < deadline:
            attrs = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["ApproximateNumberOfMessages"])
            dlq_count = int(attrs["Attributes"]["ApproximateNumberOfMessages"])
            if dlq_count >= len(FAILING):
                break
            time.sleep(0.2)
        time.sleep(1)  # nothing more may arrive
        seen = records_logged(log)
        by_n = {}
        for r in seen:
            by_n.setdefault(r["n"], []).append(r)

        check("every record reached record_handler with its messageId",
              set(by_n) == set(range(MESSAGES)) and all(r["messageId"] == sent[r["n"]] for r in seen),
              json.dumps(seen))
        ok_once = all([r["receiveCount"] for r in by_n.get(n, [])] == [1] for n in range(MESSAGES) if n not in FAILING)
        check("records that succeeded were handled exactly once (receive count 1), not redelivered", ok_once,
              json.dumps({n: by_n.get(n) for n in range(MESSAGES) if n not in FAILING}))
        counts = {n: sorted(r["receiveCount"] for r in by_n.get(n, [])) for n in FAILING}
        check("only the failed records came back, with receive counts 1 then 2",
              all(c == [1, 2] for c in counts.values()), json.dumps(counts))

        src = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=[
            "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"])["Attributes"]
        check("the source queue is empty", src == {"ApproximateNumberOfMessages": "0",
                                                   "ApproximateNumberOfMessagesNotVisible": "0"}, json.dumps(src))
        got = sqs.receive_message(QueueUrl=dlq_url, MaxNumberOfMessages=10, WaitTimeSeconds=1)
        dead = {json.loads(m["Body"])["n"]: m["MessageId"] for m in got.get("Messages", [])}
        check("the dead-letter queue holds exactly the failed records, ids kept",
              dead == {n: sent[n] for n in FAILING}, json.dumps(dead))
        peeked = sluice("PeekMessages", {"QueueUrl": dlq_url, "MaxResults": 10}).get("Messages", [])
        reasons = [m.get("FailureReason", "") for m in peeked]
        check("their last failure reason is the function error Powertools raised (C11)",
              len(reasons) == len(FAILING) and all(
                  f"consumer {consumer}: function error (HTTP 200): BatchProcessingError" in r for r in reasons),
              json.dumps(reasons))

        deleted = metric("sluice_consumer_deleted_messages_total", consumer)
        partial = metric("sluice_consumer_failures_total", consumer, "partial")
        function_error = metric("sluice_consumer_failures_total", consumer, "function_error")
        check("metrics: 7 deleted, a partial failure, a function error",
              deleted == MESSAGES - len(FAILING) and partial >= 1 and function_error >= 1,
              f"deleted={deleted} partial={partial} function_error={function_error}")
    finally:
        try:
            sluice("DeleteConsumer", {"Name": consumer})
        except Exception as e:  # the checks above already failed or passed
            print(f"# DeleteConsumer: {e}")
        shim.kill()
        shim.wait()
    if failed:
        print("# the shim's output:")
        print("".join("#   " + line + "\n" for line in Path(log).read_text().splitlines()[-40:]))

    suite = f"lambda-powertools-python (aws-lambda-powertools {version('aws-lambda-powertools')})"
    print(f"smoke-result: suite={suite} passed={passed} failed={failed}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # a crash is a failure, never a skip
        import traceback
        traceback.print_exc()
        print(f"smoke-result: suite=lambda-powertools-python passed={passed} failed={failed + 1}")
        sys.exit(1)

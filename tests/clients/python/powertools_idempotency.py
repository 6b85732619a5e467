#!/usr/bin/env python3
"""Powertools' idempotency utility, unchanged, with its records in sluice
(sluice.powertools.SluicePersistenceLayer, packaging/python), against a
server that requires SigV4. Run by scripts/client-smoke, which starts the
server and sets SLUICE_ENDPOINT and the credentials. By hand:

    SLUICE_ENDPOINT=http://127.0.0.1:PORT AWS_ACCESS_KEY_ID=... \
    AWS_SECRET_ACCESS_KEY=... PYTHONPATH=packaging/python/python \
    python powertools_idempotency.py

What it proves (rule I1):
  * an SQS message handled by an @idempotent handler, then delivered again
    (its receipt let go, as a redrive or a retry delivers it, with the same
    messageId), runs the handler once: the second call returns the first
    call's response from sluice;
  * a message whose work completed but which was never deleted reaches its
    DLQ, is brought back by a selective redrive (Sluice.RedriveMessages,
    which keeps the message id and marks the replay), and the handler does
    not run again: Powertools answers the stored response;
  * a handler that raises releases its key: the next delivery runs it again;
  * while one invocation holds a key, another is refused with Powertools'
    IdempotencyAlreadyInProgressError;
  * @idempotent_function keyed by a field of a body works the same;
  * the records are kept under the caller's account, by signed requests: an
    unsigned persistence layer is refused by the server.

Output: one `ok - NAME` / `not ok - NAME` line per check, then
`smoke-result: suite=NAME passed=N failed=M`; exit status 1 if any failed.
"""

import json
import os
import sys
import threading
import time
import urllib.request
import uuid

import boto3
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from aws_lambda_powertools.utilities.idempotency import (
    IdempotencyConfig,
    idempotent,
    idempotent_function,
)
from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyAlreadyInProgressError,
    IdempotencyPersistenceLayerError,
)
from botocore.session import Session

from sluice.powertools import SluicePersistenceLayer
from smoke_checks import check, finish

ENDPOINT = os.environ.get("SLUICE_ENDPOINT")
if not ENDPOINT or not os.environ.get("AWS_ACCESS_KEY_ID"):
    sys.exit("SLUICE_ENDPOINT and AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY must be set")

RUN = uuid.uuid4().hex[:12]
persistence = SluicePersistenceLayer(endpoint_url=ENDPOINT, key_prefix=f"smoke-{RUN}/")
config = IdempotencyConfig(event_key_jmespath="messageId", expires_after_seconds=600)
sqs = boto3.client("sqs", endpoint_url=ENDPOINT, region_name="us-east-1")
calls = {"charge": 0, "ship": 0, "flaky": 0, "slow": 0, "function": 0}


def sluice_action(action, body):
    """A signed call of one of sluice's own actions (JSON protocol)."""
    data = json.dumps(body).encode()
    headers = {"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": f"Sluice.{action}"}
    request = AWSRequest(method="POST", url=ENDPOINT + "/", data=data, headers=headers)
    SigV4Auth(boto3.Session().get_credentials(), "sqs", "us-east-1").add_auth(request)
    signed = urllib.request.Request(ENDPOINT + "/", data=data, headers=dict(request.headers), method="POST")
    with urllib.request.urlopen(signed, timeout=30) as answer:
        return json.loads(answer.read())


@idempotent(persistence_store=persistence, config=config)
def charge(event, context):
    calls["charge"] += 1
    return {"charged": event["body"], "call": calls["charge"]}


@idempotent(persistence_store=persistence, config=config)
def ship(event, context):
    calls["ship"] += 1
    return {"shipped": event["body"]}


@idempotent(persistence_store=persistence, config=config)
def flaky(event, context):
    calls["flaky"] += 1
    if calls["flaky"] == 1:
        raise RuntimeError("the payment service timed out")
    return {"ok": True}


started = threading.Event()
release = threading.Event()


@idempotent(persistence_store=persistence, config=config)
def slow(event, context):
    calls["slow"] += 1
    started.set()
    release.wait(10)
    return {"slow": True}


# A persistence layer takes the config of its first use: one per config,
# as with Powertools' own layers.
@idempotent_function(
    data_keyword_argument="order",
    persistence_store=SluicePersistenceLayer(endpoint_url=ENDPOINT, key_prefix=f"smoke-{RUN}-fn/"),
    config=IdempotencyConfig(event_key_jmespath="order_id", expires_after_seconds=600),
)
def fulfil(order):
    calls["function"] += 1
    return {"shipped": order["order_id"]}


def delivered_twice():
    """A message received, not deleted, and received again: the same
    messageId, as a retry or a redrive delivers it."""
    url = sqs.create_queue(QueueName=f"smoke-idem-{RUN}")["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="order 42")
    first = sqs.receive_message(QueueUrl=url, VisibilityTimeout=0, WaitTimeSeconds=1)["Messages"][0]
    second = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1)["Messages"][0]
    assert first["MessageId"] == second["MessageId"], (first, second)
    assert first["ReceiptHandle"] != second["ReceiptHandle"]
    event = lambda m: {"messageId": m["MessageId"], "body": m["Body"]}  # noqa: E731
    a = charge(event(first), None)
    b = charge(event(second), None)
    assert calls["charge"] == 1, calls
    assert a == b == {"charged": "order 42", "call": 1}, (a, b)


def redriven_after_completion_is_skipped():
    """The handler completed, the consumer died before its DeleteMessage:
    the message reaches its DLQ on its next receive, and a selective
    redrive brings it back with its id."""
    dlq = sqs.create_queue(QueueName=f"smoke-idem-dlq-{RUN}")["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    policy = json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": "1"})
    src = sqs.create_queue(QueueName=f"smoke-idem-src-{RUN}", Attributes={"RedrivePolicy": policy})["QueueUrl"]
    sqs.send_message(QueueUrl=src, MessageBody="order 77")
    first = sqs.receive_message(QueueUrl=src, VisibilityTimeout=0, WaitTimeSeconds=1)["Messages"][0]
    event = lambda m: {"messageId": m["MessageId"], "body": m["Body"]}  # noqa: E731
    done = ship(event(first), None)
    assert sqs.receive_message(QueueUrl=src, WaitTimeSeconds=1).get("Messages", []) == []
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        attrs = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["ApproximateNumberOfMessages"])
        if attrs["Attributes"]["ApproximateNumberOfMessages"] == "1":
            break
        time.sleep(0.2)
    else:
        raise AssertionError("the message never reached its DLQ")
    answer = sluice_action("RedriveMessages", {"QueueUrl": dlq})
    assert answer["Moved"] == 1 and answer["MessageIds"] == [first["MessageId"]], answer
    again = sqs.receive_message(QueueUrl=src, WaitTimeSeconds=5, MessageAttributeNames=["All"])["Messages"][0]
    assert again["MessageId"] == first["MessageId"], (first, again)
    assert again["MessageAttributes"]["sluice.replay-count"]["StringValue"] == "1", again
    assert ship(event(again), None) == done == {"shipped": "order 77"}
    assert calls["ship"] == 1, calls


def released_after_a_failure():
    event = {"messageId": f"flaky-{RUN}", "body": "x"}
    try:
        flaky(event, None)
        raise AssertionError("the first call should raise")
    except RuntimeError:
        pass
    assert flaky(event, None) == {"ok": True}
    assert flaky(event, None) == {"ok": True}
    assert calls["flaky"] == 2, calls


def in_progress_elsewhere():
    event = {"messageId": f"slow-{RUN}", "body": "x"}
    holder = threading.Thread(target=slow, args=(event, None))
    holder.start()
    assert started.wait(10), "the first invocation did not start"
    try:
        slow(event, None)
        raise AssertionError("a second invocation should be refused while the first runs")
    except IdempotencyAlreadyInProgressError:
        pass
    finally:
        release.set()
        holder.join(10)
    assert slow(event, None) == {"slow": True}
    assert calls["slow"] == 1, calls


def function_keyed_by_a_field():
    order = {"order_id": f"o-{RUN}", "items": 3}
    assert fulfil(order=order) == {"shipped": f"o-{RUN}"}
    assert fulfil(order=dict(order)) == {"shipped": f"o-{RUN}"}
    assert calls["function"] == 1, calls


def unsigned_is_refused():
    anonymous = Session()
    anonymous.set_credentials(None, None)
    anonymous.get_credentials = lambda: None
    unsigned = SluicePersistenceLayer(endpoint_url=ENDPOINT, botocore_session=anonymous)

    @idempotent(persistence_store=unsigned, config=config)
    def handler(event, context):
        return {}

    try:
        handler({"messageId": f"unsigned-{RUN}"}, None)
        raise AssertionError("an unsigned claim should be refused")
    except IdempotencyPersistenceLayerError as e:
        assert "MissingAuthenticationToken" in str(e) or "403" in str(e), e


check("a message delivered twice runs the handler once", delivered_twice)
check("a redriven message whose work completed does not run again", redriven_after_completion_is_skipped)
check("a failed handler releases its key for the next delivery", released_after_a_failure)
check("an invocation holding a key refuses another", in_progress_elsewhere)
check("idempotent_function keyed by a field of its argument", function_keyed_by_a_field)
check("the server refuses an unsigned persistence layer", unsigned_is_refused)
finish("idempotency-powertools-python")

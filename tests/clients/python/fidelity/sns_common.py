"""Shared helpers for the SNS fidelity cases (cases_sns_*.py).

SNS speaks only the AWS Query protocol, whatever botocore speaks for SQS, so
the SNS cases run once per engine: in the JSON pass (current botocore), and
are skipped, counted apart, in the Query pass. Their expected answers are
AWS's own, recorded from real SNS by LocalStack's test suite
(tests/aws/services/sns/test_sns.snapshot.json and
test_sns_filter_policy.snapshot.json); each case names the recorded test it
restates, in this project's words."""

import json
import time

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

from fidelity import ENDPOINT, JSON, REGION, Skip, _created, case, eq, new_queue, queue_arn, sqs, unique

RECORDED = "AWS recorded answer, LocalStack test_sns.py::"
RECORDED_FILTER = "AWS recorded answer, LocalStack test_sns_filter_policy.py::"


def make_sns(region=REGION):
    """A boto3 SNS client for `region` (Query protocol), no retries."""
    return boto3.client(
        "sns",
        endpoint_url=ENDPOINT,
        region_name=region,
        aws_access_key_id="AKIDSLUICEFIDELITY",
        aws_secret_access_key="sluice-fidelity-secret",
        config=Config(retries={"total_max_attempts": 1}, connect_timeout=5, read_timeout=40),
    )


sns = make_sns()
_topics = []


def sns_case(category, rule, source):
    """Registers an SNS case: runs in the JSON pass only (SNS is Query
    whatever the pass, so the Query pass would only repeat it)."""

    def register(fn):
        def wrapper():
            if not JSON:
                raise Skip("SNS speaks Query in every pass: runs in the JSON pass only")
            fn()

        wrapper.__name__ = fn.__name__
        return case(category, rule, source)(wrapper)

    return register


def new_topic(prefix="t", fifo=False, attributes=None, client=None, **kwargs):
    """Creates a fresh topic and returns its ARN; deleted when the suite ends."""
    c = client or sns
    name = unique(prefix) + (".fifo" if fifo else "")
    attrs = dict(attributes or {})
    if fifo:
        attrs.setdefault("FifoTopic", "true")
    arn = c.create_topic(Name=name, Attributes=attrs, **kwargs)["TopicArn"]
    _topics.append((c, arn))
    return arn


def track_topic(arn, client=None):
    _topics.append((client or sns, arn))
    return arn


def sns_error(fn, *args, **kwargs):
    """Calls fn, which must fail; returns {"Code", "Message", "Type", "Status"}."""
    try:
        out = fn(*args, **kwargs)
    except ClientError as e:
        err = dict(e.response.get("Error", {}))
        err["Status"] = e.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        return err
    raise AssertionError(f"expected an error, got {out!r}")


def expect_sns_error(fn, *args, code, message=None, status=None, sender="Sender", **kwargs):
    """Asserts fn fails with SNS's code, and (when given) its exact message,
    its HTTP status and its fault type."""
    err = sns_error(fn, *args, **kwargs)
    problems = []
    if err.get("Code") != code:
        problems.append(f"code {err.get('Code')!r} != {code!r}")
    if message is not None and err.get("Message") != message:
        problems.append(f"message {err.get('Message')!r} != {message!r}")
    if status is not None and err.get("Status") != status:
        problems.append(f"status {err.get('Status')!r} != {status!r}")
    if sender is not None and err.get("Type") != sender:
        problems.append(f"type {err.get('Type')!r} != {sender!r}")
    assert not problems, "; ".join(problems) + f" (whole error: {err!r})"
    return err


def sqs_target(fifo=False, policy_for=None, attributes=None):
    """A fresh queue that topics may send to; returns (url, arn)."""
    url = new_queue("snsq", fifo=fifo, attributes=attributes)
    return url, queue_arn(url)


def subscribe_queue(topic_arn, queue_arn_, raw=False, attributes=None, client=None):
    """Subscribes a queue to a topic; returns the subscription ARN."""
    attrs = dict(attributes or {})
    if raw:
        attrs["RawMessageDelivery"] = "true"
    return (client or sns).subscribe(
        TopicArn=topic_arn, Protocol="sqs", Endpoint=queue_arn_, Attributes=attrs, ReturnSubscriptionArn=True
    )["SubscriptionArn"]


def drain(url, expect, wait=2, max_rounds=10, **kwargs):
    """Receives (and deletes) until `expect` messages came or a round brings
    none; returns them in arrival order."""
    got = []
    for _ in range(max_rounds):
        if len(got) >= expect:
            break
        msgs = sqs.receive_message(
            QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=wait, MessageAttributeNames=["All"],
            AttributeNames=["All"], **kwargs
        ).get("Messages", [])
        if not msgs:
            break
        for m in msgs:
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
        got.extend(msgs)
    return got


def nothing_more(url):
    """Asserts the queue holds no visible message now (deliveries happen
    before the publish is answered, rule N2, so no wait is needed)."""
    msgs = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=0).get("Messages", [])
    eq([m["Body"] for m in msgs], [], "messages that should not have been delivered")


def envelope(msg):
    return json.loads(msg["Body"])


def cleanup():
    for c, arn in _topics:
        try:
            c.delete_topic(TopicArn=arn)
        except Exception:  # noqa: BLE001  (cleanup only)
            pass
    _topics.clear()

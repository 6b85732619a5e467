#!/usr/bin/env python3
"""Client smoke test: sluice through boto3/botocore.

Run by scripts/client-smoke, which starts sluice and sets SLUICE_ENDPOINT.
By hand:  SLUICE_ENDPOINT=http://127.0.0.1:PORT python smoke_boto3.py

The same flow runs against whichever botocore is importable:
  * current botocore (requirements.txt) speaks AWS JSON 1.0 to SQS;
  * botocore 1.31.80 (requirements-query.txt, the last release whose SQS model
    is `query`) speaks the old AWS Query protocol (form-encoded request, XML
    response) — the runner puts it first on PYTHONPATH for a second pass.
The protocol in use is read from the client's service model, and the few
expectations that differ between the two are spelled out where they differ.

botocore verifies no digest, so MD5OfBody / MD5OfMessageBody and
MD5OfMessageAttributes are checked here, computed independently per W4.

Output: one `ok - NAME` / `not ok - NAME` line per check, then a final line
`smoke-result: suite=NAME passed=N failed=M`; exit status 1 if any failed.
"""

import hashlib
import os
import struct
import sys
import time
import traceback

import boto3
import botocore
from botocore.config import Config
from botocore.exceptions import ClientError

ENDPOINT = os.environ.get("SLUICE_ENDPOINT")
if not ENDPOINT:
    sys.exit("SLUICE_ENDPOINT is not set (e.g. http://127.0.0.1:9324)")

ACCOUNT = os.environ.get("SLUICE_ACCOUNT", "000000000000")  # sluice's default account (W3)
REGION = "us-east-1"

sqs = boto3.client(
    "sqs",
    endpoint_url=ENDPOINT,
    region_name=REGION,
    aws_access_key_id="AKIDSLUICESMOKE",
    aws_secret_access_key="sluice-smoke-secret",
    # No retries: a retry would hide a server error.
    config=Config(retries={"total_max_attempts": 1}, connect_timeout=5, read_timeout=30),
)
PROTOCOL = sqs.meta.service_model.protocol  # "json" or "query"
SUITE = f"boto3-{PROTOCOL} (botocore {botocore.__version__})"
RECEIVE_INPUT = sqs.meta.service_model.operation_model("ReceiveMessage").input_shape.members
# Newer models name the system-attribute list MessageSystemAttributeNames;
# older ones only have AttributeNames (the same thing, now deprecated).
SYSTEM_ATTRS_PARAM = (
    "MessageSystemAttributeNames" if "MessageSystemAttributeNames" in RECEIVE_INPUT else "AttributeNames"
)

# The runner sets SMOKE_EXPECT_PROTOCOL so that a wrong PYTHONPATH cannot
# silently run the JSON flow twice instead of the query one.
EXPECTED = os.environ.get("SMOKE_EXPECT_PROTOCOL")
if EXPECTED and EXPECTED != PROTOCOL:
    sys.exit(f"botocore {botocore.__version__} from {botocore.__file__} speaks {PROTOCOL}, expected {EXPECTED}")

SUFFIX = f"{PROTOCOL}-{os.getpid()}-{int(time.time())}"
QUEUE_NAME = f"smoke-py-{SUFFIX}"
state = {}


# ---- W4 digests, computed independently ------------------------------------
from sqs_digests import md5_hex, md5_of_attributes  # noqa: E402  (W4, computed independently)


ATTRS = {
    "attr.string": {"DataType": "String", "StringValue": "héllo wörld ✓ <&>"},
    "attr.number": {"DataType": "Number", "StringValue": "-12.5e3"},
    "attr.binary": {"DataType": "Binary", "BinaryValue": bytes([0x00, 0x01, 0xFE, 0xFF, 0x80, 0x7F, 0x0A])},
    "other.custom": {"DataType": "Number.float", "StringValue": "3.25"},
}
# Characters that stress both wire formats: XML specials, CR (which an XML
# parser normalises unless the server escapes it), tab, a non-BMP character.
BODY = 'smoke body ✓ — ünïcode 😀 <tag attr="v">&amp;</tag> \'q\'\r\nline2\ttab'


def assert_same_attrs(got, want):
    got = got or {}
    assert sorted(got) == sorted(want), f"attribute names {sorted(got)} != {sorted(want)}"
    for name, w in want.items():
        g = got[name]
        assert g["DataType"] == w["DataType"], f"DataType of {name}: {g!r}"
        if w["DataType"].startswith("Binary"):
            assert bytes(g["BinaryValue"]) == w["BinaryValue"], f"BinaryValue of {name}: {g!r}"
        else:
            assert g["StringValue"] == w["StringValue"], f"StringValue of {name}: {g!r}"


def receive_one(**extra):
    params = {"QueueUrl": state["url"], "MaxNumberOfMessages": 1, "WaitTimeSeconds": 1}
    params.update(extra)
    out = sqs.receive_message(**params)
    msgs = out.get("Messages", [])
    assert len(msgs) == 1, f"expected 1 message, got {msgs!r}"
    return msgs[0]


# ---- the flow ----------------------------------------------------------------
TESTS = []


def check(fn):
    TESTS.append(fn)
    return fn


@check
def w4_helper_known_answer():
    # Same constant as the JS smoke test: {"a": String "b"} laid out per W4.
    got = md5_of_attributes({"a": {"DataType": "String", "StringValue": "b"}})
    assert got == "bef8bf215374a0a228d67533b1a488be", got


@check
def create_queue_and_get_url():
    out = sqs.create_queue(QueueName=QUEUE_NAME, Attributes={"VisibilityTimeout": "45"})
    url = state["url"] = out["QueueUrl"]  # first, so that later checks can still run
    assert url.endswith(f"/{ACCOUNT}/{QUEUE_NAME}"), url
    again = sqs.create_queue(QueueName=QUEUE_NAME, Attributes={"VisibilityTimeout": "45"})
    assert again["QueueUrl"] == url, again
    assert sqs.get_queue_url(QueueName=QUEUE_NAME)["QueueUrl"] == url


@check
def send_message_with_string_number_binary_attributes():
    out = sqs.send_message(QueueUrl=state["url"], MessageBody=BODY, MessageAttributes=ATTRS)
    assert out["MD5OfMessageBody"] == md5_hex(BODY.encode("utf-8")), out
    assert out["MD5OfMessageAttributes"] == md5_of_attributes(ATTRS), out
    state["id"] = out["MessageId"]


@check
def receive_all_attributes_and_system_attributes():
    msg = receive_one(MessageAttributeNames=["All"], **{SYSTEM_ATTRS_PARAM: ["All"]})
    assert msg["MessageId"] == state["id"], msg
    assert msg["Body"] == BODY, f"body {msg['Body']!r} != {BODY!r}"
    assert msg["MD5OfBody"] == md5_hex(BODY.encode("utf-8")), msg
    assert_same_attrs(msg.get("MessageAttributes"), ATTRS)
    assert msg.get("MD5OfMessageAttributes") == md5_of_attributes(ATTRS), msg
    sys_attrs = msg.get("Attributes", {})
    assert sys_attrs.get("ApproximateReceiveCount") == "1", sys_attrs
    assert sys_attrs.get("SentTimestamp", "").isdigit(), sys_attrs
    assert sys_attrs.get("ApproximateFirstReceiveTimestamp", "").isdigit(), sys_attrs
    assert sys_attrs.get("SenderId"), sys_attrs
    state["rh"] = msg["ReceiptHandle"]


@check
def change_visibility_zero_then_prefix_filtered_receive():
    sqs.change_message_visibility(QueueUrl=state["url"], ReceiptHandle=state["rh"], VisibilityTimeout=0)
    msg = receive_one(MessageAttributeNames=["attr.*"], WaitTimeSeconds=0)
    assert msg["MessageId"] == state["id"], msg
    want = {k: v for k, v in ATTRS.items() if k.startswith("attr.")}
    assert_same_attrs(msg.get("MessageAttributes"), want)
    assert msg.get("MD5OfMessageAttributes") == md5_of_attributes(want), msg
    # A heartbeat on the new handle, then delete with it (V4, V5).
    sqs.change_message_visibility(QueueUrl=state["url"], ReceiptHandle=msg["ReceiptHandle"], VisibilityTimeout=60)
    sqs.delete_message(QueueUrl=state["url"], ReceiptHandle=msg["ReceiptHandle"])


@check
def long_poll_on_empty_queue_returns_nothing_after_wait():
    t0 = time.monotonic()
    out = sqs.receive_message(QueueUrl=state["url"], WaitTimeSeconds=1, MaxNumberOfMessages=10)
    elapsed = time.monotonic() - t0
    assert out.get("Messages", []) == [], out
    assert 0.8 <= elapsed < 5, f"long poll of 1 s took {elapsed:.2f} s (V6)"


@check
def send_message_batch_with_attributes():
    entries = [
        {
            "Id": f"e{i}",
            "MessageBody": f"batch body {i} ✓",
            "MessageAttributes": {
                "attr.index": {"DataType": "Number", "StringValue": str(i)},
                "attr.bin": {"DataType": "Binary", "BinaryValue": bytes([i, 0xFF, 0x00])},
                "attr.s": {"DataType": "String", "StringValue": f"v{i}"},
            },
        }
        for i in range(3)
    ]
    out = sqs.send_message_batch(QueueUrl=state["url"], Entries=entries)
    assert not out.get("Failed"), out.get("Failed")
    assert sorted(s["Id"] for s in out["Successful"]) == ["e0", "e1", "e2"], out
    by_id = {e["Id"]: e for e in entries}
    for s in out["Successful"]:
        e = by_id[s["Id"]]
        assert s["MD5OfMessageBody"] == md5_hex(e["MessageBody"].encode("utf-8")), s
        assert s["MD5OfMessageAttributes"] == md5_of_attributes(e["MessageAttributes"]), s
    state["batch"] = entries


@check
def get_queue_attributes():
    a = sqs.get_queue_attributes(QueueUrl=state["url"], AttributeNames=["All"])["Attributes"]
    assert a.get("QueueArn") == f"arn:aws:sqs:{REGION}:{ACCOUNT}:{QUEUE_NAME}", a
    assert a.get("VisibilityTimeout") == "45", a
    assert a.get("ApproximateNumberOfMessages") == "3", a
    assert a.get("ApproximateNumberOfMessagesNotVisible") == "0", a
    assert a.get("DelaySeconds") == "0", a
    one = sqs.get_queue_attributes(QueueUrl=state["url"], AttributeNames=["MessageRetentionPeriod"])
    assert one["Attributes"] == {"MessageRetentionPeriod": "345600"}, one


@check
def receive_batch_then_delete_message_batch():
    got = {}
    for _ in range(5):
        out = sqs.receive_message(
            QueueUrl=state["url"], MaxNumberOfMessages=10, WaitTimeSeconds=1, MessageAttributeNames=["All"]
        )
        for m in out.get("Messages", []):
            got[m["Body"]] = m
        if len(got) == 3:
            break
    assert len(got) == 3, sorted(got)
    for e in state["batch"]:
        m = got[e["MessageBody"]]
        assert_same_attrs(m.get("MessageAttributes"), e["MessageAttributes"])
        assert m.get("MD5OfMessageAttributes") == md5_of_attributes(e["MessageAttributes"]), m
    entries = [{"Id": f"d{i}", "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(got.values())]
    entries.append({"Id": "bogus", "ReceiptHandle": "not-a-receipt-handle"})
    out = sqs.delete_message_batch(QueueUrl=state["url"], Entries=entries)
    assert sorted(s["Id"] for s in out.get("Successful", [])) == ["d0", "d1", "d2"], out
    failed = out.get("Failed", [])
    assert len(failed) == 1 and failed[0]["Id"] == "bogus", out
    assert failed[0]["Code"] == "ReceiptHandleIsInvalid", failed
    assert failed[0]["SenderFault"] is True, failed
    a = sqs.get_queue_attributes(
        QueueUrl=state["url"],
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    assert a == {"ApproximateNumberOfMessages": "0", "ApproximateNumberOfMessagesNotVisible": "0"}, a


@check
def error_missing_queue_code():
    # What botocore reports for GetQueueUrl of a missing queue:
    #  * JSON protocol: the body's __type is "com.amazonaws.sqs#QueueDoesNotExist",
    #    but the SQS model is awsQueryCompatible, so botocore replaces the code
    #    with the first part of the `x-amzn-query-error` header
    #    ("AWS.SimpleQueueService.NonExistentQueue;Sender"), keeps the JSON
    #    shape name in Error.QueryErrorCode and sets Error.Type = "Sender".
    #  * Query protocol: <Code> of the XML error is the same legacy code.
    # So on both protocols Error.Code is "AWS.SimpleQueueService.NonExistentQueue",
    # which is what code written against real SQS compares with (W2).
    try:
        sqs.get_queue_url(QueueName=f"missing-{SUFFIX}")
    except ClientError as e:
        err = e.response["Error"]
        assert err["Code"] == "AWS.SimpleQueueService.NonExistentQueue", e.response
        assert err.get("Type") == "Sender", e.response
        assert e.response["ResponseMetadata"]["HTTPStatusCode"] == 400, e.response
        if PROTOCOL == "json":
            assert err.get("QueryErrorCode") == "QueueDoesNotExist", e.response
        # The modeled exception class catches it too.
        assert isinstance(e, sqs.exceptions.QueueDoesNotExist), type(e)
    else:
        raise AssertionError("get_queue_url of a missing queue succeeded")


@check
def error_invalid_attribute_name():
    try:
        sqs.get_queue_attributes(QueueUrl=state["url"], AttributeNames=["NoSuchAttribute"])
    except ClientError as e:
        assert e.response["Error"]["Code"] == "InvalidAttributeName", e.response
    else:
        raise AssertionError("unknown attribute name was accepted (V11)")


@check
def list_queues_with_prefix():
    urls = sqs.list_queues(QueueNamePrefix="smoke-py-").get("QueueUrls", [])
    assert state["url"] in urls, urls
    none = sqs.list_queues(QueueNamePrefix=f"nothing-{SUFFIX}").get("QueueUrls", [])
    assert none == [], none


@check
def delete_queue():
    sqs.delete_queue(QueueUrl=state["url"])
    try:
        sqs.get_queue_url(QueueName=QUEUE_NAME)
    except ClientError as e:
        assert e.response["Error"]["Code"] == "AWS.SimpleQueueService.NonExistentQueue", e.response
    else:
        raise AssertionError("queue still exists after delete_queue (V9)")


def main():
    print(f"# suite {SUITE}, endpoint {ENDPOINT}, system attributes via {SYSTEM_ATTRS_PARAM}")
    passed = failed = 0
    for fn in TESTS:
        try:
            fn()
        except Exception:  # noqa: BLE001 - report every failure and go on
            failed += 1
            print(f"not ok - {fn.__name__}")
            for line in traceback.format_exc().rstrip().splitlines():
                print(f"#   {line}")
        else:
            passed += 1
            print(f"ok - {fn.__name__}")
    print(f"smoke-result: suite={SUITE.split()[0]} passed={passed} failed={failed}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

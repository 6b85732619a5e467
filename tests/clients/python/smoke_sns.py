#!/usr/bin/env python3
"""Client smoke test: sluice's SNS through boto3, unchanged.

Run by scripts/client-smoke on each engine (in-memory, PostgreSQL), which
starts sluice and sets SLUICE_ENDPOINT. By hand:
  SLUICE_ENDPOINT=http://127.0.0.1:PORT python smoke_sns.py

boto3's `sns` client speaks AWS Query (`Version=2010-03-31`) to the same port
as its `sqs` client (rule N1). Topics fan out to queues of the same server;
the queues are read with boto3's `sqs` client. The envelope a queue gets is
verified with a standard SNS message verifier from PyPI
(aws-sns-message-validator), unchanged: its certificate-URL pattern is
pointed at the server's address, the one thing it lets a caller change.

Each check names the rule it proves (docs/rules.md, N1-N8). With
authentication on (SLUICE_AUTH_KEY / SLUICE_AUTH_SECRET), the same flow
runs signed, over HTTPS when SLUICE_ENDPOINT is https (AWS_CA_BUNDLE for
boto3, REQUESTS_CA_BUNDLE for the verifier's certificate fetch).

Output: one `ok - NAME` / `not ok - NAME` line per check, then a final line
`smoke-result: suite=boto3-sns passed=N failed=M`; exit status 1 if any failed.
"""

import base64
import copy
import json
import os
import re
import sys
import time
import traceback
from urllib.parse import urlsplit

import boto3
import botocore
from botocore.config import Config
from botocore.exceptions import ClientError
from sns_message_validator import SNSMessageValidator
from sns_message_validator.exceptions import (
    InvalidCertURLException,
    SignatureVerificationFailureException,
)

ENDPOINT = os.environ.get("SLUICE_ENDPOINT")
if not ENDPOINT:
    sys.exit("SLUICE_ENDPOINT is not set (e.g. http://127.0.0.1:9324)")

ACCOUNT = os.environ.get("SLUICE_ACCOUNT", "000000000000")  # sluice's default account
REGION = "us-east-1"
CONFIG = Config(retries={"total_max_attempts": 1}, connect_timeout=5, read_timeout=30)


def client(service):
    return boto3.client(
        service,
        endpoint_url=ENDPOINT,
        region_name=REGION,
        aws_access_key_id=os.environ.get("SLUICE_AUTH_KEY", "AKIDSLUICESMOKE"),
        aws_secret_access_key=os.environ.get("SLUICE_AUTH_SECRET", "sluice-smoke-secret"),
        config=CONFIG,
    )


sns = client("sns")
sqs = client("sqs")
SUFFIX = f"{os.getpid()}-{int(time.time())}"
TOPIC = f"smoke-sns-{SUFFIX}"
state = {}

# Message attributes of each SNS data type a queue can carry.
ATTRS = {
    "colour": {"DataType": "String", "StringValue": "blue ✓ <&>"},
    "count": {"DataType": "Number", "StringValue": "42"},
    "blob": {"DataType": "Binary", "BinaryValue": bytes([0x00, 0x01, 0xFE, 0xFF])},
}
BODY = 'order placed ✓ — <tag attr="v">&amp;</tag>'

# The verifier accepts certificates only from URLs its pattern matches; by
# default SNS's own hosts. Here: this server's address, exactly.
_cert_base = urlsplit(ENDPOINT)
CERT_URL_REGEX = "^" + re.escape(f"{_cert_base.scheme}://{_cert_base.netloc}/")


def queue(name, **attrs):
    """A queue whose policy lets this account's topics send to it, as a
    server with authentication on requires (N8)."""
    url = sqs.create_queue(QueueName=name, Attributes=attrs)["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    policy = {
        "Version": "2012-10-17",
        "Statement": [{
            "Effect": "Allow",
            "Principal": {"Service": "sns.amazonaws.com"},
            "Action": "sqs:SendMessage",
            "Resource": arn,
            "Condition": {"StringEquals": {"aws:SourceAccount": ACCOUNT}},
        }],
    }
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": json.dumps(policy)})
    state.setdefault("queues", []).append(url)
    return url, arn


def receive_all(url, want, wait=1):
    """Up to `want` messages from the queue, deleting them; stops at an empty poll."""
    got = []
    while len(got) < want:
        out = sqs.receive_message(
            QueueUrl=url,
            MaxNumberOfMessages=10,
            WaitTimeSeconds=wait,
            MessageAttributeNames=["All"],
            AttributeNames=["All"],
        )
        msgs = out.get("Messages", [])
        if not msgs:
            break
        for m in msgs:
            got.append(m)
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
    return got


def expect_error(code, fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except ClientError as e:
        assert e.response["Error"]["Code"] == code, e.response
        return e
    raise AssertionError(f"{fn.__name__} succeeded, expected {code}")


# ---- the flow ----------------------------------------------------------------
TESTS = []


def check(fn):
    TESTS.append(fn)
    return fn


@check
def n1_create_topic_is_idempotent():
    out = sns.create_topic(Name=TOPIC, Attributes={"DisplayName": "Orders"}, Tags=[{"Key": "team", "Value": "a"}])
    arn = state["topic"] = out["TopicArn"]
    assert arn == f"arn:aws:sns:{REGION}:{ACCOUNT}:{TOPIC}", arn
    again = sns.create_topic(Name=TOPIC, Attributes={"DisplayName": "Orders"}, Tags=[{"Key": "team", "Value": "a"}])
    assert again["TopicArn"] == arn, again
    # Different attributes for the same name: refused (N1).
    e = expect_error("InvalidParameter", sns.create_topic, Name=TOPIC, Attributes={"DisplayName": "Other"})
    assert e.response["ResponseMetadata"]["HTTPStatusCode"] == 400, e.response


@check
def n1_topic_attributes():
    a = sns.get_topic_attributes(TopicArn=state["topic"])["Attributes"]
    assert a["TopicArn"] == state["topic"], a
    assert a["Owner"] == ACCOUNT, a
    assert a["DisplayName"] == "Orders", a
    assert a["SubscriptionsConfirmed"] == "0", a
    assert "Policy" in a and json.loads(a["Policy"])["Statement"], a
    sns.set_topic_attributes(TopicArn=state["topic"], AttributeName="DisplayName", AttributeValue="Orders ✓")
    a = sns.get_topic_attributes(TopicArn=state["topic"])["Attributes"]
    assert a["DisplayName"] == "Orders ✓", a
    expect_error("InvalidParameter", sns.set_topic_attributes, TopicArn=state["topic"], AttributeName="NoSuch",
                 AttributeValue="x")


@check
def n1_tags():
    sns.tag_resource(ResourceArn=state["topic"], Tags=[{"Key": "env", "Value": "smoke"}])
    tags = sns.list_tags_for_resource(ResourceArn=state["topic"])["Tags"]
    assert sorted((t["Key"], t["Value"]) for t in tags) == [("env", "smoke"), ("team", "a")], tags
    sns.untag_resource(ResourceArn=state["topic"], TagKeys=["team"])
    tags = sns.list_tags_for_resource(ResourceArn=state["topic"])["Tags"]
    assert tags == [{"Key": "env", "Value": "smoke"}], tags


@check
def n1_subscribe_queues_raw_and_envelope():
    raw_url, raw_arn = queue(f"smoke-sns-raw-{SUFFIX}")
    env_url, env_arn = queue(f"smoke-sns-env-{SUFFIX}")
    state["raw_url"], state["env_url"] = raw_url, env_url
    # The raw subscription takes only blue messages (N4).
    raw = sns.subscribe(
        TopicArn=state["topic"],
        Protocol="sqs",
        Endpoint=raw_arn,
        Attributes={"RawMessageDelivery": "true", "FilterPolicy": json.dumps({"colour": [{"prefix": "blue"}]})},
        ReturnSubscriptionArn=True,
    )["SubscriptionArn"]
    env = sns.subscribe(TopicArn=state["topic"], Protocol="sqs", Endpoint=env_arn,
                        ReturnSubscriptionArn=True)["SubscriptionArn"]
    state["raw_sub"], state["env_sub"] = raw, env
    assert raw.startswith(state["topic"] + ":") and env.startswith(state["topic"] + ":"), (raw, env)
    # Subscribe is idempotent for the same attributes (N1).
    again = sns.subscribe(
        TopicArn=state["topic"],
        Protocol="sqs",
        Endpoint=raw_arn,
        Attributes={"RawMessageDelivery": "true", "FilterPolicy": json.dumps({"colour": [{"prefix": "blue"}]})},
        ReturnSubscriptionArn=True,
    )["SubscriptionArn"]
    assert again == raw, (again, raw)
    a = sns.get_subscription_attributes(SubscriptionArn=raw)["Attributes"]
    assert a["RawMessageDelivery"] == "true", a
    assert a["Protocol"] == "sqs" and a["Endpoint"] == raw_arn, a
    assert a["PendingConfirmation"] == "false", a
    assert json.loads(a["FilterPolicy"]) == {"colour": [{"prefix": "blue"}]}, a
    subs = sns.list_subscriptions_by_topic(TopicArn=state["topic"])["Subscriptions"]
    assert sorted(s["SubscriptionArn"] for s in subs) == sorted([raw, env]), subs
    t = sns.get_topic_attributes(TopicArn=state["topic"])["Attributes"]
    assert t["SubscriptionsConfirmed"] == "2", t


@check
def n2_n3_publish_reaches_raw_queue_as_published():
    out = sns.publish(TopicArn=state["topic"], Message=BODY, Subject="Order", MessageAttributes=ATTRS)
    state["published_id"] = out["MessageId"]
    # N2: delivered before the publish was answered.
    msgs = receive_all(state["raw_url"], 1, wait=0)
    assert len(msgs) == 1, msgs
    m = msgs[0]
    assert m["Body"] == BODY, m
    got = m.get("MessageAttributes", {})
    assert sorted(got) == sorted(ATTRS), got
    assert got["colour"] == {"DataType": "String", "StringValue": "blue ✓ <&>"}, got
    assert got["count"] == {"DataType": "Number", "StringValue": "42"}, got
    assert got["blob"]["DataType"] == "Binary" and bytes(got["blob"]["BinaryValue"]) == ATTRS["blob"]["BinaryValue"], got


@check
def n3_envelope_reaches_the_other_queue():
    msgs = receive_all(state["env_url"], 1, wait=0)
    assert len(msgs) == 1, msgs
    env = json.loads(msgs[0]["Body"])
    state["envelope"] = env
    assert env["Type"] == "Notification", env
    assert env["MessageId"] == state["published_id"], env
    assert env["TopicArn"] == state["topic"], env
    assert env["Subject"] == "Order", env
    assert env["Message"] == BODY, env
    assert env["SignatureVersion"] == "1", env
    assert env["SigningCertURL"].startswith(ENDPOINT.rstrip("/") + "/SimpleNotificationService-"), env
    assert env["SigningCertURL"].endswith(".pem"), env
    assert env["UnsubscribeURL"].startswith(ENDPOINT.rstrip("/") + "/"), env
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", env["Timestamp"]), env
    attrs = env["MessageAttributes"]
    assert attrs["colour"] == {"Type": "String", "Value": "blue ✓ <&>"}, attrs
    assert attrs["count"] == {"Type": "Number", "Value": "42"}, attrs
    assert attrs["blob"] == {"Type": "Binary", "Value": base64.b64encode(ATTRS["blob"]["BinaryValue"]).decode()}, attrs
    # No message attributes on the envelope's SQS message itself.
    assert not msgs[0].get("MessageAttributes"), msgs[0]


@check
def n3_envelope_signature_verifies_with_aws_sns_message_validator():
    validator = SNSMessageValidator(cert_url_regex=CERT_URL_REGEX)
    validator.validate_message(state["envelope"])  # raises on any failure


@check
def n3_verifier_refuses_a_tampered_envelope():
    validator = SNSMessageValidator(cert_url_regex=CERT_URL_REGEX)
    tampered = copy.deepcopy(state["envelope"])
    tampered["Message"] += "!"
    try:
        validator.validate_message(tampered)
    except SignatureVerificationFailureException:
        pass
    else:
        raise AssertionError("a changed Message still verified")
    # And its default pattern (SNS's own hosts) refuses sluice's address.
    try:
        SNSMessageValidator().validate_message(state["envelope"])
    except InvalidCertURLException:
        pass
    else:
        raise AssertionError("the default certificate-URL pattern accepted a non-SNS host")


@check
def n4_publish_batch_filtered_per_subscription():
    out = sns.publish_batch(
        TopicArn=state["topic"],
        PublishBatchRequestEntries=[
            {"Id": "blue", "Message": "batch blue",
             "MessageAttributes": {"colour": {"DataType": "String", "StringValue": "blue-ish"}}},
            {"Id": "red", "Message": "batch red",
             "MessageAttributes": {"colour": {"DataType": "String", "StringValue": "red"}}},
            {"Id": "none", "Message": "batch without attributes"},
        ],
    )
    assert not out.get("Failed"), out
    ids = {s["Id"]: s["MessageId"] for s in out["Successful"]}
    assert sorted(ids) == ["blue", "none", "red"], out
    raw = receive_all(state["raw_url"], 3, wait=0)
    assert [m["Body"] for m in raw] == ["batch blue"], [m["Body"] for m in raw]
    assert raw[0]["MessageAttributes"]["colour"]["StringValue"] == "blue-ish", raw[0]
    env = [json.loads(m["Body"]) for m in receive_all(state["env_url"], 3, wait=0)]
    assert sorted(e["Message"] for e in env) == ["batch blue", "batch red", "batch without attributes"], env
    assert sorted(e["MessageId"] for e in env) == sorted(ids.values()), (env, ids)
    validator = SNSMessageValidator(cert_url_regex=CERT_URL_REGEX)
    for e in env:
        validator.validate_message(e)


@check
def n7_fifo_topic_keeps_each_groups_order():
    topic = sns.create_topic(Name=f"smoke-sns-{SUFFIX}.fifo",
                             Attributes={"FifoTopic": "true", "ContentBasedDeduplication": "true"})["TopicArn"]
    state["fifo_topic"] = topic
    url, arn = queue(f"smoke-sns-fifo-{SUFFIX}.fifo", FifoQueue="true")
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=arn, Attributes={"RawMessageDelivery": "true"})
    # A FIFO topic needs a group (N7).
    expect_error("InvalidParameter", sns.publish, TopicArn=topic, Message="no group")
    order = [("a", "a1"), ("b", "b1"), ("a", "a2"), ("b", "b2"), ("a", "a3")]
    seqs = []
    for group, body in order:
        out = sns.publish(TopicArn=topic, Message=body, MessageGroupId=group)
        seqs.append(int(out["SequenceNumber"]))
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs), seqs
    # The same body again within 5 minutes is a duplicate (content-based).
    sns.publish(TopicArn=topic, Message="a1", MessageGroupId="a")
    bodies = [m["Body"] for m in receive_all(url, 10)]
    assert sorted(bodies) == ["a1", "a2", "a3", "b1", "b2"], bodies
    assert [b for b in bodies if b[0] == "a"] == ["a1", "a2", "a3"], bodies
    assert [b for b in bodies if b[0] == "b"] == ["b1", "b2"], bodies
    # Only FIFO topics feed FIFO queues (N7): a standard topic refuses one.
    expect_error("InvalidParameter", sns.subscribe, TopicArn=state["topic"], Protocol="sqs", Endpoint=arn)


@check
def n1_list_topics_pages_by_100():
    names = [f"smoke-sns-page-{SUFFIX}-{i:03}" for i in range(105)]
    arns = [sns.create_topic(Name=n)["TopicArn"] for n in names]
    state["page_topics"] = arns
    first = sns.list_topics()
    assert len(first["Topics"]) == 100 and first.get("NextToken"), (len(first["Topics"]), first.get("NextToken"))
    seen = []
    for page in sns.get_paginator("list_topics").paginate():
        assert len(page["Topics"]) <= 100, len(page["Topics"])
        seen += [t["TopicArn"] for t in page["Topics"]]
    assert len(seen) == len(set(seen)), "a topic listed twice"
    assert set(arns) | {state["topic"], state["fifo_topic"]} <= set(seen), "a topic missing from the pages"
    subs = []
    for page in sns.get_paginator("list_subscriptions").paginate():
        subs += [s["SubscriptionArn"] for s in page["Subscriptions"]]
    assert {state["raw_sub"], state["env_sub"]} <= set(subs), subs
    for arn in arns:
        sns.delete_topic(TopicArn=arn)


@check
def n1_unsubscribe_stops_delivery():
    sns.unsubscribe(SubscriptionArn=state["env_sub"])
    sns.unsubscribe(SubscriptionArn=state["env_sub"])  # gone already: succeeds (N1)
    subs = sns.list_subscriptions_by_topic(TopicArn=state["topic"])["Subscriptions"]
    assert [s["SubscriptionArn"] for s in subs] == [state["raw_sub"]], subs
    expect_error("NotFound", sns.get_subscription_attributes, SubscriptionArn=state["env_sub"])
    sns.publish(TopicArn=state["topic"], Message="after unsubscribe",
                MessageAttributes={"colour": {"DataType": "String", "StringValue": "blue"}})
    assert [m["Body"] for m in receive_all(state["raw_url"], 2, wait=0)] == ["after unsubscribe"]
    assert receive_all(state["env_url"], 1) == [], "the unsubscribed queue still got a message"


@check
def n1_delete_topic_then_not_found():
    sns.delete_topic(TopicArn=state["topic"])
    sns.delete_topic(TopicArn=state["topic"])  # gone already: succeeds (N1)
    e = expect_error("NotFound", sns.get_topic_attributes, TopicArn=state["topic"])
    assert e.response["ResponseMetadata"]["HTTPStatusCode"] == 404, e.response
    assert isinstance(e, sns.exceptions.NotFoundException), type(e)
    expect_error("NotFound", sns.publish, TopicArn=state["topic"], Message="to nowhere")
    # Its subscriptions went with it.
    expect_error("NotFound", sns.get_subscription_attributes, SubscriptionArn=state["raw_sub"])
    sns.delete_topic(TopicArn=state["fifo_topic"])


def cleanup():
    for url in state.get("queues", []):
        try:
            sqs.delete_queue(QueueUrl=url)
        except ClientError:
            pass


def main():
    print(f"# suite boto3-sns (botocore {botocore.__version__}), endpoint {ENDPOINT}, "
          f"certificate URLs accepted: {CERT_URL_REGEX}")
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
    cleanup()
    print(f"smoke-result: suite=boto3-sns passed={passed} failed={failed}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Client smoke test: encryption at rest through boto3/botocore.

Run by scripts/client-smoke against a durable server started with a keyring
(`sluice serve --data-dir DIR --encryption-key-file KEYRING`, the keyring
made by `sluice keys new` outside DIR) on a fresh data directory, given here
as SLUICE_DATA_DIR. By hand:

  SLUICE_ENDPOINT=http://127.0.0.1:PORT SLUICE_DATA_DIR=DIR python smoke_encryption.py

As smoke_boto3.py, it runs with whichever botocore is importable: current
botocore speaks AWS JSON 1.0, botocore 1.31.80 (PYTHONPATH=query-sdk) the
AWS Query protocol. Checks (rules E1–E3, docs/rules.md):
  * a queue created with no attributes reports SqsManagedSseEnabled "true",
    over plain HTTP (E2);
  * a marker body and a marker message attribute, sent by send_message and
    by send_message_batch, come back from receive_message unchanged, with
    the MD5s of body and attributes computed here (botocore verifies none);
  * neither marker is in any file under the data directory (E1), while a
    marker sent to a queue with SqsManagedSseEnabled "false" is found there
    (the search itself works);
  * a queue with KmsMasterKeyId "alias/not-in-keyring" is created, and a
    send to it is refused: KMS.NotFoundException, 400 (E3).

Output: `ok - NAME` / `not ok - NAME` per check, then
`smoke-result: suite=NAME passed=N failed=M`; exit status 1 if any failed.
"""

import os
import sys
import time
import uuid

import boto3
import botocore
from botocore.config import Config
from botocore.exceptions import ClientError

from sqs_digests import md5_hex, md5_of_attributes
from smoke_checks import check, finish


ENDPOINT = os.environ.get("SLUICE_ENDPOINT")
DATA_DIR = os.environ.get("SLUICE_DATA_DIR")
if not (ENDPOINT and DATA_DIR):
    sys.exit("SLUICE_ENDPOINT and SLUICE_DATA_DIR must be set")
if not os.path.isdir(DATA_DIR):
    sys.exit(f"SLUICE_DATA_DIR={DATA_DIR} is not a directory")

sqs = boto3.client(
    "sqs",
    endpoint_url=ENDPOINT,
    region_name="us-east-1",
    aws_access_key_id="AKIDSLUICESMOKE",
    aws_secret_access_key="sluice-smoke-secret",
    # No retries: a retry would hide the first answer.
    config=Config(retries={"total_max_attempts": 1}, connect_timeout=5, read_timeout=30),
)
PROTOCOL = sqs.meta.service_model.protocol  # "json" or "query"
SUITE = f"encryption-boto3-{PROTOCOL} (botocore {botocore.__version__})"
EXPECTED = os.environ.get("SMOKE_EXPECT_PROTOCOL")
if EXPECTED and EXPECTED != PROTOCOL:
    sys.exit(f"botocore {botocore.__version__} speaks {PROTOCOL}, expected {EXPECTED}")

SUFFIX = f"{PROTOCOL}-{os.getpid()}-{int(time.time())}"
# Markers unique to this run, so that nothing else on the disk matches.
RUN = uuid.uuid4().hex
MARKERS = {
    "single body": f"sealed-body-{RUN}-single",
    "single attribute": f"sealed-attr-{RUN}-single",
    "batch body": f"sealed-body-{RUN}-batch",
    "batch attribute": f"sealed-attr-{RUN}-batch",
}
CLEAR_MARKER = f"clear-body-{RUN}"
state = {}


def attrs_of(marker):
    return {
        "marker": {"DataType": "String", "StringValue": marker},
        "n": {"DataType": "Number", "StringValue": "42"},
    }


def files_holding(marker):
    """The files under the data directory whose bytes contain the marker."""
    needle = marker.encode("utf-8")
    found = []
    for root, _dirs, files in os.walk(DATA_DIR):
        for name in files:
            path = os.path.join(root, name)
            try:
                with open(path, "rb") as f:
                    data = f.read()
            except OSError:
                continue  # removed while walking (a log segment recycled)
            if needle in data:
                found.append(os.path.relpath(path, DATA_DIR))
    return found


def default_queue_is_encrypted():
    assert ENDPOINT.startswith("http://"), f"expected plain HTTP: {ENDPOINT}"
    url = state["url"] = sqs.create_queue(QueueName=f"smoke-sse-{SUFFIX}")["QueueUrl"]
    got = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert got.get("SqsManagedSseEnabled") == "true", got


def send_and_receive_unchanged():
    url = state["url"]
    body, attr = MARKERS["single body"], MARKERS["single attribute"]
    out = sqs.send_message(QueueUrl=url, MessageBody=body, MessageAttributes=attrs_of(attr))
    assert out["MD5OfMessageBody"] == md5_hex(body.encode("utf-8")), out
    assert out["MD5OfMessageAttributes"] == md5_of_attributes(attrs_of(attr)), out
    body, attr = MARKERS["batch body"], MARKERS["batch attribute"]
    out = sqs.send_message_batch(
        QueueUrl=url, Entries=[{"Id": "b1", "MessageBody": body, "MessageAttributes": attrs_of(attr)}]
    )
    assert not out.get("Failed"), out
    [ok] = out["Successful"]
    assert ok["MD5OfMessageBody"] == md5_hex(body.encode("utf-8")), ok
    assert ok["MD5OfMessageAttributes"] == md5_of_attributes(attrs_of(attr)), ok

    want = {MARKERS["single body"]: MARKERS["single attribute"], MARKERS["batch body"]: MARKERS["batch attribute"]}
    got = {}
    deadline = time.time() + 10
    while len(got) < len(want) and time.time() < deadline:
        msgs = sqs.receive_message(
            QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1, MessageAttributeNames=["All"]
        ).get("Messages", [])
        for m in msgs:
            got[m["Body"]] = m
    assert sorted(got) == sorted(want), f"received {sorted(got)}"
    for body, attr in want.items():
        m = got[body]
        assert m["MD5OfBody"] == md5_hex(body.encode("utf-8")), m
        assert m["MessageAttributes"] == attrs_of(attr), m
        assert m["MD5OfMessageAttributes"] == md5_of_attributes(attrs_of(attr)), m


def clear_queue_marker_is_on_disk():
    # The control: the search finds what a queue without encryption stores.
    url = sqs.create_queue(QueueName=f"smoke-clear-{SUFFIX}", Attributes={"SqsManagedSseEnabled": "false"})[
        "QueueUrl"
    ]
    got = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["SqsManagedSseEnabled"])["Attributes"]
    assert got.get("SqsManagedSseEnabled") == "false", got
    sqs.send_message(QueueUrl=url, MessageBody=CLEAR_MARKER)
    assert files_holding(CLEAR_MARKER), f"the clear marker is in no file under {DATA_DIR}"


def markers_are_not_on_disk():
    for what, marker in MARKERS.items():
        found = files_holding(marker)
        assert not found, f"the {what} marker is in the clear in {found}"


def unknown_kms_key_is_refused():
    name = f"smoke-kms-{SUFFIX}"
    url = sqs.create_queue(QueueName=name, Attributes={"KmsMasterKeyId": "alias/not-in-keyring"})["QueueUrl"]
    try:
        sqs.send_message(QueueUrl=url, MessageBody=f"refused-{RUN}")
    except ClientError as e:
        got = (e.response["Error"]["Code"], e.response["ResponseMetadata"]["HTTPStatusCode"])
        assert got == ("KMS.NotFoundException", 400), f"{got}: {e.response}"
    else:
        raise AssertionError("the send to a queue whose key the keyring does not hold was accepted")


check("a queue created with no attributes: SqsManagedSseEnabled true over plain HTTP", default_queue_is_encrypted)
check("send_message and send_message_batch markers received unchanged (body, attribute, MD5s)", send_and_receive_unchanged)
check("a queue with SqsManagedSseEnabled false: its marker is found in the data directory", clear_queue_marker_is_on_disk)
check("no marker of the encrypted queue in any file of the data directory", markers_are_not_on_disk)
check("KmsMasterKeyId alias/not-in-keyring: created, a send is KMS.NotFoundException 400", unknown_kms_key_is_refused)

finish(SUITE)

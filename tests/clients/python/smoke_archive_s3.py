#!/usr/bin/env python3
"""Client smoke test: the archive of expired messages copied to an
S3-compatible bucket (rule X8), read back with boto3's S3 client.

Run by scripts/client-smoke against moto's S3 server and a sluice started
with `--archive-dir DIR --archive-rotate-secs 1 --archive-s3-bucket BUCKET
--archive-s3-endpoint S3 --archive-s3-prefix PREFIX`, the bucket not yet
created. By hand:

  SLUICE_ENDPOINT=http://127.0.0.1:PORT S3_ENDPOINT=http://127.0.0.1:PORT2 \\
  ARCHIVE_BUCKET=sluice-archive ARCHIVE_PREFIX=archive/ python smoke_archive_s3.py

Checks:
  * a queue with SluiceArchiveExpired and a 60 s retention takes three
    messages, and after the retention holds none;
  * while the bucket does not exist, the copy of the rotated segment fails:
    `sluice_archive_upload_failures_total` counts it and
    `sluice_archive_segments_awaiting_upload` shows the segment waiting;
  * once the bucket exists the segment is copied as
    `<prefix><queue-dir>/<16-digit start>-<node>.jsonl.gz`, and nothing
    waits any more;
  * the object is gzip JSON Lines holding each message once, with its id,
    body and message attribute.

Output: `ok - NAME` / `not ok - NAME` per check, then
`smoke-result: suite=NAME passed=N failed=M`; exit status 1 if any failed.
"""

import gzip
import json
import os
import re
import sys
import time
import urllib.request

import boto3
from botocore.config import Config

from smoke_checks import check, finish

ENDPOINT = os.environ.get("SLUICE_ENDPOINT")
S3_ENDPOINT = os.environ.get("S3_ENDPOINT")
BUCKET = os.environ.get("ARCHIVE_BUCKET")
PREFIX = os.environ.get("ARCHIVE_PREFIX", "")
if not (ENDPOINT and S3_ENDPOINT and BUCKET):
    sys.exit("SLUICE_ENDPOINT, S3_ENDPOINT and ARCHIVE_BUCKET must be set")

CREDS = dict(
    region_name="us-east-1",
    aws_access_key_id="AKIDSLUICESMOKE",
    aws_secret_access_key="sluice-smoke-secret",
    config=Config(retries={"total_max_attempts": 1}, connect_timeout=5, read_timeout=30),
)
sqs = boto3.client("sqs", endpoint_url=ENDPOINT, **CREDS)
s3 = boto3.client("s3", endpoint_url=S3_ENDPOINT, **CREDS)
SUITE = "archive-s3"

RETENTION = 60
OBJECT_NAME = re.compile(
    "^" + re.escape(PREFIX) + r"(?P<dir>[A-Za-z0-9_.%-]+)/\d{16}-[A-Za-z0-9_-]+\.jsonl\.gz$"
)


def metric(name):
    """The value of an unlabelled sample of /metrics, None when absent."""
    with urllib.request.urlopen(ENDPOINT + "/metrics", timeout=10) as r:
        text = r.read().decode()
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


def until(seconds, fn):
    """Polls fn until it is truthy or the time is up; its last value."""
    deadline = time.monotonic() + seconds
    while True:
        value = fn()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.5)


def archived_objects():
    """The archive's objects in the bucket, [] while it does not exist."""
    try:
        page = s3.list_objects_v2(Bucket=BUCKET, Prefix=PREFIX)
    except s3.exceptions.NoSuchBucket:
        return []
    return [o["Key"] for o in page.get("Contents", [])]


url = sqs.create_queue(
    QueueName="kept",
    Attributes={"MessageRetentionPeriod": str(RETENTION), "SluiceArchiveExpired": "true"},
)["QueueUrl"]
sent = {}
for i in range(3):
    body = f"order {i} that nobody read"
    out = sqs.send_message(
        QueueUrl=url,
        MessageBody=body,
        MessageAttributes={"tenant": {"DataType": "String", "StringValue": f"t{i}"}},
    )
    sent[out["MessageId"]] = (body, f"t{i}")
started = time.monotonic()


def expired_and_gone():
    time.sleep(max(0.0, RETENTION + 1 - (time.monotonic() - started)))

    def empty():
        attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
        counts = [
            attrs["ApproximateNumberOfMessages"],
            attrs["ApproximateNumberOfMessagesNotVisible"],
            attrs["ApproximateNumberOfMessagesDelayed"],
        ]
        return counts == ["0", "0", "0"]

    assert until(30, empty), "the queue still counts the expired messages"


check("expired messages leave the queue after its retention", expired_and_gone)


def missing_bucket_counted():
    def failing():
        failures = metric("sluice_archive_upload_failures_total") or 0
        waiting = metric("sluice_archive_segments_awaiting_upload") or 0
        return failures >= 1 and waiting >= 1

    assert until(30, failing), (
        "no failed copy counted: failures="
        f"{metric('sluice_archive_upload_failures_total')} "
        f"awaiting={metric('sluice_archive_segments_awaiting_upload')}"
    )
    assert archived_objects() == []


check("a copy to a bucket that does not exist fails, is counted and waits", missing_bucket_counted)

s3.create_bucket(Bucket=BUCKET)
found = {}


def copied_once_the_bucket_exists():
    keys = until(30, archived_objects)
    assert len(keys) == 1, f"objects under {PREFIX!r}: {keys}"
    match = OBJECT_NAME.match(keys[0])
    assert match, f"object name {keys[0]!r}"
    assert "kept" in match.group("dir"), keys[0]
    found["key"] = keys[0]
    assert until(10, lambda: metric("sluice_archive_segments_awaiting_upload") == 0)
    assert metric("sluice_archive_uploaded_segments_total") >= 1


check("the rotated segment is copied once the bucket exists", copied_once_the_bucket_exists)


def copy_holds_every_message():
    body = s3.get_object(Bucket=BUCKET, Key=found["key"])["Body"].read()
    lines = [json.loads(line) for line in gzip.decompress(body).decode().splitlines() if line]
    by_id = {r["messageId"]: r for r in lines}
    assert len(lines) == len(sent) and set(by_id) == set(sent), lines
    for message_id, (text, tenant) in sent.items():
        record = by_id[message_id]
        assert record["body"] == text, record
        assert tenant in json.dumps(record["attributes"]), record
        assert record["archivedAt"] >= record["sentAt"] + RETENTION * 1000, record


check("the object is gzip JSON Lines holding each expired message once", copy_holds_every_message)

finish(SUITE)

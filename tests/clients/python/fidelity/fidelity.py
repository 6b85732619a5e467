#!/usr/bin/env python3
"""Fidelity suite: request sequences whose answers were recorded from real
Amazon SQS, replayed against sluice through boto3 in either wire protocol.

Run by scripts/client-smoke (which starts sluice and sets SLUICE_ENDPOINT).
By hand:
    SLUICE_ENDPOINT=http://127.0.0.1:PORT python fidelity.py            # JSON 1.0
    PYTHONPATH=target/client-venv/query-sdk SLUICE_ENDPOINT=... python fidelity.py   # Query
    ... python fidelity.py -k fifo        # only cases whose name contains "fifo"

Every case names the rule it proves (ids from docs/rules.md) and where its
expected answer comes from. The recorded answers are AWS's own, as public
test suites captured them from real SQS (for instance LocalStack's snapshot
files, which store the raw answer of AWS for each request); the expectations
here restate those facts, in this project's words.

The SNS cases (cases_sns_*.py, helpers in sns_common.py) replay answers
recorded from real SNS; SNS speaks Query whatever botocore speaks to SQS,
so they run in the JSON pass only and are skipped in the Query pass.

Output: one `ok - CATEGORY/NAME` or `not ok - CATEGORY/NAME: why` line per
case, one `category: NAME passed=N failed=M` line per category, then
`sns-recorded: N of M ...` when SNS cases ran, then
`smoke-result: suite=NAME passed=N failed=M`; exit status 1 if any failed.
"""

import base64
import hashlib
import json
import os
import struct
import sys
import time
import traceback
import uuid

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import boto3  # noqa: E402
import botocore
from botocore.config import Config
from botocore.exceptions import ClientError  # noqa: E402
from sqs_digests import md5_hex, md5_of_attributes  # noqa: E402,F401  (cases use them)

ENDPOINT = os.environ.get("SLUICE_ENDPOINT")
if not ENDPOINT:
    sys.exit("SLUICE_ENDPOINT is not set (e.g. http://127.0.0.1:9324)")

ACCOUNT = os.environ.get("SLUICE_ACCOUNT", "000000000000")
# The engine behind the server (`memory` or `postgres`), for the few
# documented differences between engines; scripts/client-smoke sets it.
ENGINE = os.environ.get("SLUICE_ENGINE", "memory")
REGION = "us-east-1"
# SqsManagedSseEnabled of a queue created without it (rule V14): the
# recordings, made over HTTPS, say "true"; a queue created over the non-TLS
# endpoint is not encrypted by default (AWS Compute Blog, "Announcing
# server-side encryption with SSE-SQS by default", 2022).
SSE_DEFAULT = "true" if ENDPOINT.startswith("https://") else "false"


def make_client(region=REGION):
    """A boto3 SQS client for `region`, with no retries (a retry would hide an error)."""
    return boto3.client(
        "sqs",
        endpoint_url=ENDPOINT,
        region_name=region,
        aws_access_key_id="AKIDSLUICEFIDELITY",
        aws_secret_access_key="sluice-fidelity-secret",
        config=Config(retries={"total_max_attempts": 1}, connect_timeout=5, read_timeout=40),
    )


sqs = make_client()
PROTOCOL = sqs.meta.service_model.protocol  # "json" or "query"
JSON = PROTOCOL == "json"
QUERY = PROTOCOL == "query"
EXPECTED = os.environ.get("SMOKE_EXPECT_PROTOCOL")
if EXPECTED and EXPECTED != PROTOCOL:
    sys.exit(f"botocore {botocore.__version__} speaks {PROTOCOL}, expected {EXPECTED}")
RECEIVE_INPUT = sqs.meta.service_model.operation_model("ReceiveMessage").input_shape.members
SYSTEM_ATTRS_PARAM = "MessageSystemAttributeNames" if "MessageSystemAttributeNames" in RECEIVE_INPUT else "AttributeNames"

RUN_ID = f"{PROTOCOL[0]}{os.getpid() % 100000}{int(time.time()) % 100000}"


# ---- registry -----------------------------------------------------------------
CASES = []


def case(category, rule, source):
    """Registers a case: `category` is core, fifo or dlq; `rule` the rule id(s)
    it proves; `source` where its expected answer was recorded."""

    def register(fn):
        CASES.append((category, fn.__name__, rule, source, fn))
        return fn

    return register


# ---- helpers ------------------------------------------------------------------
_created = []


def unique(prefix):
    """A queue name unique to this run (LocalStack-style tests make one per case)."""
    return f"{prefix}-{RUN_ID}-{uuid.uuid4().hex[:6]}"


def new_queue(prefix="q", attributes=None, fifo=False, client=None, **kwargs):
    """Creates a fresh queue and returns its URL; removed when the suite ends."""
    c = client or sqs
    name = unique(prefix) + (".fifo" if fifo else "")
    attrs = dict(attributes or {})
    if fifo:
        attrs.setdefault("FifoQueue", "true")
    url = c.create_queue(QueueName=name, Attributes=attrs, **kwargs)["QueueUrl"]
    _created.append((c, url))
    return url


def queue_arn(url, client=None):
    return (client or sqs).get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]


def name_of(url):
    return url.rstrip("/").rsplit("/", 1)[-1]


def error_of(fn, *args, **kwargs):
    """Calls fn, which must fail; returns botocore's view of the error:
    {"Code", "Message", "Type", "QueryErrorCode" (JSON only), "Status"}."""
    try:
        out = fn(*args, **kwargs)
    except ClientError as e:
        err = dict(e.response.get("Error", {}))
        err["Status"] = e.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        return err
    raise AssertionError(f"expected an error, got {out!r}")


def expect_error(fn, *args, code, message=None, status=400, json_type=None, sender="Sender", **kwargs):
    """Asserts that fn fails as AWS answers: the Query code (botocore's Code in
    both protocols), the exact message when given, the HTTP status, and in
    JSON the `__type` short name (botocore's QueryErrorCode)."""
    err = error_of(fn, *args, **kwargs)
    problems = []
    if err.get("Code") != code:
        problems.append(f"code {err.get('Code')!r} != {code!r}")
    if message is not None and err.get("Message") != message:
        problems.append(f"message {err.get('Message')!r} != {message!r}")
    if status is not None and err.get("Status") != status:
        problems.append(f"status {err.get('Status')!r} != {status!r}")
    if sender is not None and err.get("Type") != sender:
        problems.append(f"type {err.get('Type')!r} != {sender!r}")
    if JSON and json_type is not None and err.get("QueryErrorCode") != json_type:
        problems.append(f"__type {err.get('QueryErrorCode')!r} != {json_type!r}")
    assert not problems, "; ".join(problems) + f" (whole error: {err!r})"
    return err


def receive(url, client=None, **kwargs):
    """ReceiveMessage; returns the list of messages (empty when none)."""
    params = {"QueueUrl": url}
    params.update(kwargs)
    return (client or sqs).receive_message(**params).get("Messages", [])




def eq(got, want, what="value"):
    assert got == want, f"{what}: got {got!r}, want {want!r}"


def cleanup():
    """Deletes every queue the cases created."""
    for c, url in _created:
        try:
            c.delete_queue(QueueUrl=url)
        except Exception:  # noqa: BLE001  (cleanup only)
            pass
    _created.clear()


class Skip(Exception):
    """Raised by a case that does not apply to this pass (e.g. a case that
    builds its own HTTP requests runs in one pass only); counted apart."""

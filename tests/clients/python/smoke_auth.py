#!/usr/bin/env python3
"""Client smoke test: SigV4 authentication through boto3/botocore.

Run by scripts/client-smoke against a server started with a config file
that requires SigV4 (`[auth] mode = "sigv4"`) and two credentials: one
that may do anything, given here as SLUICE_AUTH_KEY / SLUICE_AUTH_SECRET,
and one limited to `allow = ["sqs:GetQueueUrl", "sqs:ReceiveMessage"]` on
`queues = ["smoke-auth-*"]`, as SLUICE_AUTH_LIMITED_KEY /
SLUICE_AUTH_LIMITED_SECRET (its check is skipped without them), and a
key of another account, SLUICE_AUTH_OTHER_KEY / SLUICE_AUTH_OTHER_SECRET
(its queue policy checks are skipped without them). By hand:

  SLUICE_ENDPOINT=http://127.0.0.1:PORT SLUICE_AUTH_KEY=... SLUICE_AUTH_SECRET=... \\
      SLUICE_AUTH_LIMITED_KEY=... SLUICE_AUTH_LIMITED_SECRET=... python smoke_auth.py

As smoke_boto3.py, it runs with whichever botocore is importable: current
botocore speaks AWS JSON 1.0, botocore 1.31.80 (PYTHONPATH=query-sdk) the
AWS Query protocol. Checks, with AWS's codes and HTTP statuses
(docs/security.md gives their sources):
  * signed by the configured key: create, send, receive, delete work;
  * a wrong secret: SignatureDoesNotMatch, 403, AWS's message;
  * an unknown access key: InvalidClientTokenId, 403;
  * unsigned (botocore's UNSIGNED): MissingAuthenticationToken, 403;
  * the limited key sending: AccessDenied, 403, "User: arn:aws:iam::…
    is not authorized to perform: sqs:sendmessage on resource: …" (SQS's
    recorded wording: aws/serverless-application-model#3633);
  * another account (rule A6): AccessDenied without a policy; after
    AddPermission(SendMessage) it sends but may not receive; a policy
    allowing everyone but one account (NotPrincipal in an Allow) is
    refused at SetQueueAttributes (rule A7: InvalidAttributeValue, "Invalid
    value for the parameter Policy." and the reason);
  * Query only: a presigned GET URL from generate_presigned_url works, and
    one past its ExpiresIn is RequestExpired, 400.

Over HTTPS (SLUICE_ENDPOINT=https://…, the server's CA in AWS_CA_BUNDLE,
which botocore reads), the same checks run over TLS, and the queue URLs
must be https:// ones.

Output: `ok - NAME` / `not ok - NAME` per check, then
`smoke-result: suite=NAME passed=N failed=M`; exit status 1 if any failed.
"""

import json
import os
import ssl
import sys
import time
import urllib.error
import urllib.request

import boto3
import botocore
from botocore import UNSIGNED
from botocore.config import Config
from botocore.exceptions import ClientError

from smoke_checks import check, finish


ENDPOINT = os.environ.get("SLUICE_ENDPOINT")
KEY = os.environ.get("SLUICE_AUTH_KEY")
SECRET = os.environ.get("SLUICE_AUTH_SECRET")
LIMITED_KEY = os.environ.get("SLUICE_AUTH_LIMITED_KEY")
LIMITED_SECRET = os.environ.get("SLUICE_AUTH_LIMITED_SECRET")
OTHER_KEY = os.environ.get("SLUICE_AUTH_OTHER_KEY")
OTHER_SECRET = os.environ.get("SLUICE_AUTH_OTHER_SECRET")
if not (ENDPOINT and KEY and SECRET):
    sys.exit("SLUICE_ENDPOINT, SLUICE_AUTH_KEY and SLUICE_AUTH_SECRET must be set")

SIGNATURE_MISMATCH = (
    "The request signature we calculated does not match the signature you provided. "
    "Check your AWS Secret Access Key and signing method. Consult the service documentation for details."
)


def client(key=KEY, secret=SECRET, unsigned=False):
    extra = {"signature_version": UNSIGNED} if unsigned else {}
    return boto3.client(
        "sqs",
        endpoint_url=ENDPOINT,
        region_name="us-east-1",
        aws_access_key_id=key,
        aws_secret_access_key=secret,
        # No retries: a retry would hide the first answer.
        config=Config(retries={"total_max_attempts": 1}, connect_timeout=5, read_timeout=30, **extra),
    )


sqs = client()
PROTOCOL = sqs.meta.service_model.protocol  # "json" or "query"
HTTPS = ENDPOINT.startswith("https://")
SUITE = f"auth-{PROTOCOL}{'-https' if HTTPS else ''} (botocore {botocore.__version__})"
EXPECTED = os.environ.get("SMOKE_EXPECT_PROTOCOL")
if EXPECTED and EXPECTED != PROTOCOL:
    sys.exit(f"botocore {botocore.__version__} speaks {PROTOCOL}, expected {EXPECTED}")

QUEUE = f"smoke-auth-{PROTOCOL}-{os.getpid()}-{int(time.time())}"


def refused(call):
    """The ClientError a call raises (it must raise one)."""
    try:
        call()
    except ClientError as e:
        return e
    raise AssertionError("the request was accepted")


def expect_error(e, code, status):
    got = (e.response["Error"]["Code"], e.response["ResponseMetadata"]["HTTPStatusCode"])
    assert got == (code, status), f"{got} != {(code, status)}: {e.response}"


def signed_round_trip():
    url = sqs.create_queue(QueueName=QUEUE)["QueueUrl"]
    assert url.startswith(ENDPOINT.split("://")[0] + "://"), url
    sqs.send_message(QueueUrl=url, MessageBody="signed hello")
    msgs = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1).get("Messages", [])
    assert [m["Body"] for m in msgs] == ["signed hello"], msgs
    sqs.delete_message(QueueUrl=url, ReceiptHandle=msgs[0]["ReceiptHandle"])


def wrong_secret():
    e = refused(lambda: client(secret="not-the-secret").list_queues())
    expect_error(e, "SignatureDoesNotMatch", 403)
    message = e.response["Error"]["Message"]
    assert message.startswith(SIGNATURE_MISMATCH), message


def unknown_key():
    e = refused(lambda: client(key="AKIDNOTCONFIGURED").list_queues())
    expect_error(e, "InvalidClientTokenId", 403)
    message = e.response["Error"]["Message"]
    assert message == "The security token included in the request is invalid.", message


def unsigned():
    e = refused(lambda: client(unsigned=True).list_queues())
    expect_error(e, "MissingAuthenticationToken", 403)
    message = e.response["Error"]["Message"]
    assert message == "Request is missing Authentication Token", message


def limited_key_cannot_send():
    url = sqs.get_queue_url(QueueName=QUEUE)["QueueUrl"]
    limited = client(key=LIMITED_KEY, secret=LIMITED_SECRET)
    # What it may do, it does.
    limited.receive_message(QueueUrl=url, WaitTimeSeconds=0)
    e = refused(lambda: limited.send_message(QueueUrl=url, MessageBody="not allowed"))
    expect_error(e, "AccessDenied", 403)
    message = e.response["Error"]["Message"]
    expected = (
        f"User: arn:aws:iam::000000000000:user/{LIMITED_KEY} is not authorized to perform: "
        f"sqs:sendmessage on resource: arn:aws:sqs:us-east-1:000000000000:{QUEUE} "
        "because no identity-based policy allows the sqs:sendmessage action"
    )
    assert message == expected, message


def other_account_needs_a_policy():
    url = sqs.get_queue_url(QueueName=QUEUE)["QueueUrl"]
    other = client(key=OTHER_KEY, secret=OTHER_SECRET)
    e = refused(lambda: other.send_message(QueueUrl=url, MessageBody="not yet"))
    expect_error(e, "AccessDenied", 403)
    account = url.rstrip("/").split("/")[-2]
    other_account = "444455556666"
    sqs.add_permission(QueueUrl=url, Label="other-sends", AWSAccountIds=[other_account], Actions=["SendMessage"])
    other.send_message(QueueUrl=url, MessageBody="granted")
    e = refused(lambda: other.receive_message(QueueUrl=url))
    expect_error(e, "AccessDenied", 403)
    bad = (
        '{"Statement": [{"Effect": "Allow", "NotPrincipal": {"AWS": "%s"}, '
        '"Action": "sqs:*", "Resource": "arn:aws:sqs:us-east-1:%s:%s"}]}' % (other_account, account, QUEUE)
    )
    e = refused(lambda: sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": bad}))
    expect_error(e, "InvalidAttributeValue", 400)
    message = e.response["Error"]["Message"]
    assert message.startswith("Invalid value for the parameter Policy. Reason: sluice does not enforce NotPrincipal"), e.response
    sqs.remove_permission(QueueUrl=url, Label="other-sends")
    e = refused(lambda: other.send_message(QueueUrl=url, MessageBody="revoked"))
    expect_error(e, "AccessDenied", 403)


def policies_as_stacks_write_them():
    # Rule A6: the conditions of real stacks' policies, evaluated for the
    # other account's requests; this client connects from loopback, and
    # the server's config puts its accounts in o-sluicesmoke1.
    other = client(key=OTHER_KEY, secret=OTHER_SECRET)
    url = sqs.create_queue(QueueName=QUEUE + "-stacks")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]

    def allow_other_when(condition):
        statement = {"Effect": "Allow", "Principal": {"AWS": "444455556666"},
                     "Action": "sqs:SendMessage", "Resource": arn, "Condition": condition}
        policy = json.dumps({"Version": "2012-10-17", "Statement": [statement]})
        sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": policy})

    allow_other_when({"IpAddress": {"aws:SourceIp": ["127.0.0.0/8", "::1/128"]}})
    other.send_message(QueueUrl=url, MessageBody="from loopback")
    allow_other_when({"IpAddress": {"aws:SourceIp": "10.0.0.0/8"}})
    expect_error(refused(lambda: other.send_message(QueueUrl=url, MessageBody="x")), "AccessDenied", 403)
    allow_other_when({"StringEquals": {"aws:PrincipalOrgID": "o-sluicesmoke1"},
                      "StringNotEqualsIfExists": {"aws:SourceAccount": "999999999999"}})
    other.send_message(QueueUrl=url, MessageBody="same organisation")
    allow_other_when({"StringEquals": {"aws:ResourceTag/team": "payments"}})
    expect_error(refused(lambda: other.send_message(QueueUrl=url, MessageBody="x")), "AccessDenied", 403)
    sqs.tag_queue(QueueUrl=url, Tags={"team": "payments"})
    other.send_message(QueueUrl=url, MessageBody="tagged")
    vpce = json.dumps({"Statement": [{"Effect": "Allow", "Principal": "*", "Action": "sqs:*",
                                      "Condition": {"StringEquals": {"aws:SourceVpce": "vpce-1"}}}]})
    e = refused(lambda: sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": vpce}))
    expect_error(e, "InvalidAttributeValue", 400)
    assert "sluice does not enforce the condition key aws:SourceVpce" in e.response["Error"]["Message"], e.response
    sqs.delete_queue(QueueUrl=url)


def fetch(url):
    # Over HTTPS, trust the server's CA as botocore does (AWS_CA_BUNDLE).
    context = ssl.create_default_context(cafile=os.environ.get("AWS_CA_BUNDLE")) if HTTPS else None
    try:
        with urllib.request.urlopen(url, timeout=10, context=context) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def presigned_get():
    # HttpMethod: a query-protocol operation is a POST unless told otherwise.
    url = sqs.generate_presigned_url(
        "get_queue_url", Params={"QueueName": QUEUE}, ExpiresIn=300, HttpMethod="GET"
    )
    assert "X-Amz-Signature=" in url, url
    status, body = fetch(url)
    assert status == 200 and f"/{QUEUE}</QueueUrl>" in body, (status, body)


def presigned_get_expired():
    url = sqs.generate_presigned_url("list_queues", ExpiresIn=1, HttpMethod="GET")
    time.sleep(2.1)
    status, body = fetch(url)
    assert status == 400 and "<Code>RequestExpired</Code>" in body, (status, body)


check("signed by the configured key: create, send, receive, delete", signed_round_trip)
check("wrong secret: SignatureDoesNotMatch 403", wrong_secret)
check("unknown access key: InvalidClientTokenId 403", unknown_key)
check("unsigned: MissingAuthenticationToken 403", unsigned)
if LIMITED_KEY and LIMITED_SECRET:
    check("a key limited to receiving sends: AccessDenied 403", limited_key_cannot_send)
else:
    print("# skipped the AccessDenied check: SLUICE_AUTH_LIMITED_KEY/SECRET not set")
if OTHER_KEY and OTHER_SECRET:
    check("another account: AccessDenied until AddPermission grants it; NotPrincipal refused", other_account_needs_a_policy)
    check("policies as stacks write them: SourceIp, PrincipalOrgID, IfExists, ResourceTag", policies_as_stacks_write_them)
else:
    print("# skipped the queue policy checks: SLUICE_AUTH_OTHER_KEY/SECRET not set")
if PROTOCOL == "query":
    check("presigned GET works", presigned_get)
    check("presigned GET past ExpiresIn: RequestExpired 400", presigned_get_expired)

finish(SUITE)

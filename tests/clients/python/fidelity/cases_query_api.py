"""Fidelity cases: the Query API spoken by hand, over GET to queue URLs
(signed with SigV4 as AWS's own HTTP clients sign), as SQS documents it for
"making Query API requests". These run once whatever botocore speaks, since
they build their requests themselves."""

import json
import urllib.error
import urllib.parse
import urllib.request

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from fidelity import JSON, REGION, Skip, case, eq, name_of, new_queue, sqs, unique

SOURCE = "AWS recorded answer, LocalStack test_sqs.py::TestSqsQueryApi::"
_CREDS = Credentials("AKIDSLUICEFIDELITY", "sluice-fidelity-secret")


def get(url, params=None, headers=None, region=REGION):
    """A SigV4-signed GET; returns (status, text)."""
    if params:
        url = url + "?" + urllib.parse.urlencode(params)
    req = AWSRequest(method="GET", url=url, headers=dict(headers or {}))
    SigV4Auth(_CREDS, "sqs", region).add_auth(req)
    prepared = req.prepare()
    r = urllib.request.Request(prepared.url, headers=dict(prepared.headers), method="GET")
    try:
        with urllib.request.urlopen(r, timeout=30) as resp:
            return resp.status, resp.read().decode("utf-8")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8")


def once(fn):
    """Query-API cases build their own requests: run them in the JSON pass only."""

    def wrapper():
        if not JSON:
            raise Skip("built by hand: runs in the JSON pass only")
        fn()

    wrapper.__name__ = fn.__name__
    return wrapper


@case("core", "W1", SOURCE + "test_get_queue_attributes_all")
@once
def query_get_queue_attributes_all():
    url = new_queue("qa")
    status, text = get(url, {"Action": "GetQueueAttributes", "AttributeName.1": "All"})
    eq(status, 200, "status")
    assert "<GetQueueAttributesResponse" in text, text
    assert "<Attribute><Name>QueueArn</Name><Value>arn:aws:sqs:" in text, text
    assert "<Attribute><Name>VisibilityTimeout</Name><Value>30" in text, text


@case("core", "W1", SOURCE + "test_get_queue_attributes_with_query_args")
@once
def query_get_one_queue_attribute():
    url = new_queue("qa")
    status, text = get(url, {"Action": "GetQueueAttributes", "AttributeName.1": "QueueArn"})
    eq(status, 200, "status")
    assert "<Attribute><Name>QueueArn</Name><Value>arn:aws:sqs:" in text, text
    assert "<Name>VisibilityTimeout</Name>" not in text, text


@case("core", "W7", SOURCE + "test_invalid_action_raises_exception")
@once
def query_unknown_action():
    url = new_queue("qa")
    status, text = get(url, {"Action": "FooBar", "Version": "2012-11-05"})
    eq(status, 400, "status")
    assert "<Code>InvalidAction</Code>" in text, text
    assert "<Type>Sender</Type>" in text, text
    assert "<Message>The action FooBar is not valid for this endpoint.</Message>" in text, text


@case("core", "W7", SOURCE + "test_valid_action_with_missing_parameter_raises_exception")
@once
def query_missing_parameter():
    url = new_queue("qa")
    status, text = get(url, {"Action": "SendMessage"})
    eq(status, 400, "status")
    assert "<Code>MissingParameter</Code>" in text, text
    assert "<Message>The request must contain the parameter MessageBody.</Message>" in text, text


@case("core", "W1", SOURCE + "test_get_queue_attributes_of_fifo_queue")
@once
def query_fifo_queue_attributes():
    url = new_queue("qa", fifo=True)
    status, text = get(url, {"Action": "GetQueueAttributes", "AttributeName.1": "All"})
    eq(status, 200, "status")
    assert "<Name>FifoQueue</Name><Value>true</Value>" in text, text


@case("core", "V11", SOURCE + "test_get_queue_attributes_with_invalid_arg_returns_error")
@once
def query_unknown_attribute():
    url = new_queue("qa")
    status, text = get(url, {"Action": "GetQueueAttributes", "AttributeName.1": "Foobar"})
    eq(status, 400, "status")
    assert "<Code>InvalidAttributeName</Code>" in text, text
    assert "<Message>Unknown Attribute Foobar.</Message>" in text, text


@case("core", "V9", SOURCE + "test_get_delete_queue")
@once
def query_delete_queue_by_its_url():
    url = new_queue("qa")
    status, text = get(url, {"Action": "DeleteQueue"})
    eq(status, 200, "status")
    assert "<DeleteQueueResponse " in text, text
    status, text = get(url, {"Action": "GetQueueAttributes", "AttributeName.1": "QueueArn"})
    eq(status, 400, "status after delete")


@case("core", "W7", SOURCE + "test_get_send_and_receive_messages")
@once
def query_send_and_receive_by_url():
    q1, q2 = new_queue("qa"), new_queue("qa")
    status, _ = get(q1, {"Action": "SendMessage", "MessageBody": "foobar"})
    eq(status, 200, "send status")
    status, text = get(q2, {"Action": "ReceiveMessage"})
    eq(status, 200, "empty receive status")
    assert "<ReceiveMessageResult/>" in text.replace(" />", "/>"), text
    status, text = get(q1, {"Action": "ReceiveMessage"})
    assert "<Body>foobar</Body>" in text and "<MD5OfBody>" in text, text


@case("core", "W2", SOURCE + "test_get_on_deleted_queue_fails")
@once
def query_deleted_queue_is_gone_for_this_wsdl_version():
    url = new_queue("qa")
    sqs.delete_queue(QueueUrl=url)
    status, text = get(url, {"Action": "GetQueueAttributes", "AttributeName.1": "QueueArn"})
    eq(status, 400, "status")
    assert "<Code>AWS.SimpleQueueService.NonExistentQueue</Code>" in text, text
    assert "<Message>The specified queue does not exist for this wsdl version" in text, text


@case("core", "W7", SOURCE + "test_get_without_query_returns_unknown_operation")
@once
def query_without_action_is_unknown_operation():
    url = new_queue("qa")
    status, text = get(url)
    eq(status, 404, "status")
    assert "<UnknownOperationException" in text, text


@case("core", "W7", SOURCE + "test_get_without_query_json_format_returns_returns_xml")
@once
def query_without_action_is_xml_even_for_json_clients():
    url = new_queue("qa")
    status, text = get(url, headers={"Accept": "application/json"})
    eq(status, 404, "status")
    assert "<UnknownOperationException" in text, text


@case("core", "W7", SOURCE + "test_get_create_queue_fails")
@once
def query_create_queue_on_a_queue_url_is_invalid():
    url = new_queue("qa")
    status, text = get(url, {"Action": "CreateQueue", "QueueName": unique("qa")})
    eq(status, 400, "status")
    assert "<Code>InvalidAction</Code>" in text, text
    assert "<Message>The action CreateQueue is not valid for this endpoint" in text, text


@case("core", "W7", SOURCE + "test_get_list_queues_fails")
@once
def query_list_queues_on_a_queue_url_is_invalid():
    url = new_queue("qa")
    status, text = get(url, {"Action": "ListQueues"})
    eq(status, 400, "status")
    assert "<Code>InvalidAction</Code>" in text, text
    assert "<Message>The action ListQueues is not valid for this endpoint" in text, text


@case("core", "W7", SOURCE + "test_get_queue_url_works_for_same_queue")
@once
def query_get_queue_url_on_its_own_url():
    url = new_queue("qa")
    status, text = get(url, {"Action": "GetQueueUrl", "QueueName": url.split("/")[-1]})
    eq(status, 200, "status")
    assert f"<QueueUrl>{url}</QueueUrl>" in text, text


@case("core", "W7", SOURCE + "test_get_queue_url_work_for_different_queue")
@once
def query_get_queue_url_on_another_queues_url():
    q1, q2 = new_queue("qa"), new_queue("qa")
    status, text = get(q1, {"Action": "GetQueueUrl", "QueueName": q2.split("/")[-1]})
    eq(status, 200, "status")
    assert f"<QueueUrl>{q2}</QueueUrl>" in text and q1 not in text, text


@case("core", "W7", SOURCE + "test_overwrite_queue_url_in_params")
@once
def query_queue_url_parameter_wins_over_the_path():
    q1, q2 = new_queue("qa"), new_queue("qa")
    status, text = get(q1, {"Action": "GetQueueAttributes", "QueueUrl": q2, "AttributeName.1": "QueueArn"})
    eq(status, 200, "status")
    assert "<Attribute><Name>QueueArn</Name><Value>arn:aws:sqs:" in text, text
    assert q1.split("/")[-1] not in text and q2.split("/")[-1] in text, text


@case("core", "W7", SOURCE + "test_get_list_queues_fails_json_format")
@once
def query_json_error_for_list_queues_on_a_queue_url():
    url = new_queue("qa")
    status, text = get(url, {"Action": "ListQueues"}, headers={"Accept": "application/json"})
    eq(status, 400, "status")
    doc = json.loads(text)
    eq(doc["Error"]["Code"], "InvalidAction", "code")
    eq(doc["Error"]["Message"], "The action ListQueues is not valid for this endpoint.", "message")


@case("core", "W7", SOURCE + "test_get_queue_attributes_json_format")
@once
def query_json_queue_attributes():
    url = new_queue("qa")
    status, text = get(url, {"Action": "GetQueueAttributes", "AttributeName.1": "All"}, headers={"Accept": "application/json"})
    eq(status, 200, "status")
    doc = json.loads(text)
    attributes = doc["GetQueueAttributesResponse"]["GetQueueAttributesResult"]["Attributes"]
    arns = [a["Value"] for a in attributes if a["Name"] == "QueueArn"]
    assert arns and arns[0].startswith("arn:aws:sqs") and url.split("/")[-1] in arns[0], attributes


@case("core", "W3", SOURCE + "test_endpoint_strategy_with_multi_region")
@once
def query_queues_are_regional():
    name = unique("qa")
    from fidelity import make_client, _created

    west, north = make_client("us-west-1"), make_client("eu-north-1")
    q1 = west.create_queue(QueueName=name)["QueueUrl"]
    _created.append((west, q1))
    q2 = north.create_queue(QueueName=name)["QueueUrl"]
    _created.append((north, q2))
    assert q1 != q2, f"one queue for two regions: {q1}"
    assert "eu-north-1" in q2, q2
    status, _ = get(q1, {"Action": "SendMessage", "MessageBody": "foobar"}, region="us-west-1")
    eq(status, 200, "send status")
    status, text = get(q2, {"Action": "ReceiveMessage", "VisibilityTimeout": "0"}, region="eu-north-1")
    assert status == 200 and "foobar" not in text, text
    status, text = get(q1, {"Action": "ReceiveMessage", "VisibilityTimeout": "0"}, region="us-west-1")
    assert status == 200 and "foobar" in text, text


@case("core", "W7,W9", "AWS-validated assertion, LocalStack test_sqs.py::test_get_list_queues_with_query_auth")
@once
def query_list_queues_at_the_root_negotiates_json():
    from fidelity import ENDPOINT

    root = ENDPOINT.rstrip("/") + "/"
    params = {"Action": "ListQueues", "Version": "2012-11-05"}
    status, text = get(root, params, headers={"Accept": "application/json"})
    eq(status, 200, "status with Accept: application/json")
    assert "ListQueuesResponse" in json.loads(text), text
    status, text = get(root, params)
    eq(status, 200, "status without Accept")
    assert "<ListQueuesResponse" in text, text


@case("core", "W7,W9", "AWS-validated assertion, LocalStack test_sqs.py::test_marker_serialization_json_protocol")
@once
def query_receive_as_json_keeps_the_body_exact():
    from fidelity import ENDPOINT

    for body in ['{"foo": "ba\\rr", "foo2": "ba&quot;r&quot;"}', json.dumps('{"foo": "ba\\rr"}')]:
        url = new_queue("marker")
        sqs.send_message(QueueUrl=name_of(url), MessageBody=body)
        params = {"Action": "ReceiveMessage", "QueueUrl": url, "Version": "2012-11-05", "VisibilityTimeout": "0"}
        status, text = get(ENDPOINT.rstrip("/") + "/", params, headers={"Accept": "application/json"})
        eq(status, 200, "status")
        doc = json.loads(text)
        # AWS's JSON rendering of a Query answer names the list "messages".
        eq(doc["ReceiveMessageResponse"]["ReceiveMessageResult"]["messages"][0]["Body"], body, "body over Query JSON")
        eq(sqs.receive_message(QueueUrl=url)["Messages"][0]["Body"], body, "body through the SDK")


@case("core", "W1", SOURCE + "test_send_message_via_queue_url_with_json_protocol")
@once
def json_protocol_sent_to_a_queue_url():
    import boto3

    url = new_queue("jsonurl")
    client = boto3.client(
        "sqs",
        endpoint_url=url,
        region_name=REGION,
        aws_access_key_id="AKIDSLUICEFIDELITY",
        aws_secret_access_key="sluice-fidelity-secret",
    )
    out = client.receive_message(QueueUrl=url, WaitTimeSeconds=1)
    meta = out.pop("ResponseMetadata")
    eq(meta["HTTPStatusCode"], 200, "status")
    eq(meta["HTTPHeaders"]["content-type"], "application/x-amz-json-1.0", "content type")
    eq(out, {}, "an empty receive")

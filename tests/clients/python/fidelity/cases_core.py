"""Fidelity cases: core (queue-level actions of standard queues).

See fidelity.py for the conventions. The expected answers restate what AWS
answered in LocalStack's recorded test suite (tests/aws/services/sqs/
test_sqs.py and its snapshot file); each case names the test it comes from.
"""

import json
import time

import fidelity
from fidelity import *  # noqa: F401,F403

SRC = "AWS recorded answer, LocalStack snapshot test_sqs.py::"
VALIDATED = "AWS-validated assertion, LocalStack test_sqs.py::"

NO_QUEUE_JSON = "The specified queue does not exist."
NO_QUEUE_QUERY = "The specified queue does not exist for this wsdl version."


def expect_no_queue(fn, *args, **kwargs):
    """A missing queue, as AWS answers it in each protocol (rule W7)."""
    return expect_error(
        fn,
        *args,
        code="AWS.SimpleQueueService.NonExistentQueue",
        message=NO_QUEUE_JSON if JSON else NO_QUEUE_QUERY,
        json_type="QueueDoesNotExist",
        **kwargs,
    )


def track(url):
    """Has the suite delete `url` at its end."""
    fidelity._created.append((sqs, url))


def attributes_of(url, *names):
    """GetQueueAttributes' whole answer minus its metadata."""
    out = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=list(names))
    out.pop("ResponseMetadata", None)
    return out


# ---- missing queues -------------------------------------------------------------
@case("core", "W7", SRC + "test_non_existent_queue")
def missing_queue_by_name_and_by_url():
    name = unique("never-created")
    expect_no_queue(sqs.get_queue_url, QueueName=name)
    gone = unique("gone")
    url = sqs.create_queue(QueueName=gone)["QueueUrl"]
    sqs.delete_queue(QueueUrl=url)
    expect_no_queue(sqs.get_queue_attributes, QueueUrl=url)
    expect_no_queue(sqs.get_queue_attributes, QueueUrl=url, AttributeNames=["All"])
    # The SDK's modelled exception class is raised (the recorded test catches
    # QueueDoesNotExist for GetQueueUrl).
    try:
        sqs.get_queue_url(QueueName=gone)
    except sqs.exceptions.QueueDoesNotExist:
        pass
    else:
        raise AssertionError("GetQueueUrl of a deleted queue succeeded")


@case("core", "W7", VALIDATED + "TestSqsQueryApi::test_get_on_deleted_queue_fails")
def every_queue_action_on_a_deleted_queue():
    url = sqs.create_queue(QueueName=unique("deleted"))["QueueUrl"]
    sqs.delete_queue(QueueUrl=url)
    expect_no_queue(sqs.get_queue_attributes, QueueUrl=url, AttributeNames=["QueueArn"])
    expect_no_queue(sqs.set_queue_attributes, QueueUrl=url, Attributes={"DelaySeconds": "1"})
    expect_no_queue(sqs.delete_queue, QueueUrl=url)
    expect_no_queue(sqs.purge_queue, QueueUrl=url)
    expect_no_queue(sqs.tag_queue, QueueUrl=url, Tags={"a": "b"})
    expect_no_queue(sqs.untag_queue, QueueUrl=url, TagKeys=["a"])
    expect_no_queue(sqs.list_queue_tags, QueueUrl=url)
    expect_no_queue(
        sqs.add_permission, QueueUrl=url, Label="l", AWSAccountIds=[ACCOUNT], Actions=["SendMessage"]
    )
    expect_no_queue(sqs.remove_permission, QueueUrl=url, Label="l")


# ---- CreateQueue --------------------------------------------------------------
@case("core", "V9,V13", SRC + "test_create_queue_with_different_attributes_raises_exception")
def create_again_with_a_different_attribute_names_it():
    name = unique("again")
    url = sqs.create_queue(
        QueueName=name, Attributes={"ReceiveMessageWaitTimeSeconds": "1", "DelaySeconds": "1"}
    )["QueueUrl"]
    track(url)
    eq(sqs.create_queue(QueueName=name)["QueueUrl"], url, "no attributes")
    eq(sqs.create_queue(QueueName=name, Attributes={"DelaySeconds": "1"})["QueueUrl"], url, "one equal attribute")
    differs = "A queue already exists with the same name and a different value for attribute DelaySeconds"
    expect_error(
        sqs.create_queue,
        QueueName=name,
        Attributes={"ReceiveMessageWaitTimeSeconds": "1", "DelaySeconds": "2"},
        code="QueueAlreadyExists",
        message=differs,
        json_type="QueueNameExists",
    )
    # CreateQueue compares with the queue's current values, not its first ones.
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"DelaySeconds": "2"})
    eq(
        sqs.create_queue(QueueName=name, Attributes={"ReceiveMessageWaitTimeSeconds": "1", "DelaySeconds": "2"})[
            "QueueUrl"
        ],
        url,
        "after the change",
    )
    expect_error(
        sqs.create_queue,
        QueueName=name,
        Attributes={"ReceiveMessageWaitTimeSeconds": "1", "DelaySeconds": "1"},
        code="QueueAlreadyExists",
        message=differs,
        json_type="QueueNameExists",
    )


@case("core", "V9", VALIDATED + "test_create_queue_with_default_attributes_is_idempotent")
def create_again_is_idempotent():
    name = unique("idem")
    attrs = {"VisibilityTimeout": "69", "ReceiveMessageWaitTimeSeconds": "1"}
    url = sqs.create_queue(QueueName=name, Attributes=attrs)["QueueUrl"]
    track(url)
    eq(sqs.create_queue(QueueName=name)["QueueUrl"], url, "without attributes")
    eq(sqs.create_queue(QueueName=name, Attributes=attrs)["QueueUrl"], url, "same attributes")
    eq(sqs.create_queue(QueueName=name, Attributes={"VisibilityTimeout": "69"})["QueueUrl"], url, "subset")
    # Messages change the counters, never the comparison.
    sqs.send_message(QueueUrl=url, MessageBody="foobar-1", DelaySeconds=1)
    sqs.send_message(QueueUrl=url, MessageBody="foobar-2")
    eq(sqs.create_queue(QueueName=name)["QueueUrl"], url, "after sends")


@case("core", "V9", VALIDATED + "test_create_queue_with_default_arguments_works_with_modified_attributes "
     "/ test_create_queue_after_modified_attributes")
def create_again_compares_with_the_modified_attributes():
    for first in ({}, {"VisibilityTimeout": "1", "ReceiveMessageWaitTimeSeconds": "1"}):
        name = unique("modified")
        url = sqs.create_queue(QueueName=name, Attributes=first)["QueueUrl"]
        track(url)
        sqs.set_queue_attributes(QueueUrl=url, Attributes={"VisibilityTimeout": "2",
                                                           "ReceiveMessageWaitTimeSeconds": "2"})
        expect_error(sqs.create_queue, QueueName=name,
                     Attributes={"VisibilityTimeout": "1", "ReceiveMessageWaitTimeSeconds": "1"},
                     code="QueueAlreadyExists", json_type="QueueNameExists")
        eq(sqs.create_queue(QueueName=name, Attributes={"VisibilityTimeout": "2",
                                                        "ReceiveMessageWaitTimeSeconds": "2"})["QueueUrl"],
           url, "the modified attributes")
        eq(sqs.create_queue(QueueName=name)["QueueUrl"], url, "no attributes")


@case("core", "L5", VALIDATED + "test_disallow_queue_name_with_slashes")
def queue_names_are_validated():
    for bad in [f"queue/{RUN_ID}/", "x" * 81, "with space", "dot.name"]:
        expect_error(sqs.create_queue, QueueName=bad, code="InvalidParameterValue",
                     json_type="InvalidParameterValueException")
    # A standard queue cannot take the .fifo suffix, nor FifoQueue a plain name.
    expect_error(sqs.create_queue, QueueName=unique("std") + ".fifo", code="InvalidParameterValue",
                 json_type="InvalidParameterValueException")
    expect_error(sqs.create_queue, QueueName=unique("plain"), Attributes={"FifoQueue": "true"},
                 code="InvalidParameterValue", json_type="InvalidParameterValueException")


# ---- GetQueueUrl / ListQueues / DeleteQueue ---------------------------------------
@case("core", "W3", VALIDATED + "test_list_queues")
def list_queues_by_prefix():
    stem = unique("lq")
    urls = []
    for name in [f"a{stem}-1", f"a{stem}-2", f"b{stem}-1"]:
        sqs.create_queue(QueueName=name)
        url = sqs.get_queue_url(QueueName=name)["QueueUrl"]
        track(url)
        assert url.endswith("/" + name), url
        urls.append(url)
    got = sqs.list_queues(QueueNamePrefix=f"a{stem}")
    eq(sorted(got["QueueUrls"]), sorted(urls[:2]), "prefix a")
    got = sqs.list_queues(QueueNamePrefix=f"b{stem}")
    eq(got["QueueUrls"], urls[2:], "prefix b")
    everything = sqs.list_queues().get("QueueUrls", [])
    for url in urls:
        assert url in everything, url
    # No match: the member is left out, not an empty list.
    got = sqs.list_queues(QueueNamePrefix=unique("nonexisting"))
    got.pop("ResponseMetadata", None)
    eq(got, {}, "no queue with that prefix")


@case("core", "W8", SRC + "test_list_queues_pagination")
def list_queues_pages_in_name_order():
    stem = unique("page")
    urls = []
    for i in range(10):
        name = f"{stem}-test-queue-{i}"
        sqs.create_queue(QueueName=name)
        url = sqs.get_queue_url(QueueName=name)["QueueUrl"]
        track(url)
        assert url.endswith("/" + name), url
        urls.append(url)
    whole = sqs.list_queues(QueueNamePrefix=stem)
    whole.pop("ResponseMetadata", None)
    eq(whole, {"QueueUrls": urls}, "one page without MaxResults (in name order, no NextToken)")
    first = sqs.list_queues(QueueNamePrefix=stem, MaxResults=2)
    eq(first["QueueUrls"], urls[:2], "first page of two")
    assert first.get("NextToken"), first
    rest = sqs.list_queues(QueueNamePrefix=stem, MaxResults=10, NextToken=first["NextToken"])
    rest.pop("ResponseMetadata", None)
    eq(rest, {"QueueUrls": urls[2:]}, "the remaining eight, no NextToken")


@case("core", "V9", VALIDATED + "TestSqsQueryApi::test_get_delete_queue")
def delete_queue_removes_it():
    name = unique("del")
    url = sqs.create_queue(QueueName=name)["QueueUrl"]
    out = sqs.delete_queue(QueueUrl=url)
    eq(out["ResponseMetadata"]["HTTPStatusCode"], 200, "status")
    assert set(out) == {"ResponseMetadata"}, out
    assert url not in sqs.list_queues(QueueNamePrefix=name).get("QueueUrls", [])
    expect_no_queue(sqs.get_queue_url, QueueName=name)


@case("core", "V19", VALIDATED + "test_create_queue_recently_deleted")
def a_deleted_name_waits_a_minute():
    name = unique("recent")
    url = sqs.create_queue(QueueName=name)["QueueUrl"]
    sqs.delete_queue(QueueUrl=url)
    expect_error(
        sqs.create_queue,
        QueueName=name,
        code="AWS.SimpleQueueService.QueueDeletedRecently",
        message="You must wait 60 seconds after deleting a queue before you can create another with the same name.",
        json_type="QueueDeletedRecently",
    )
    expect_no_queue(sqs.get_queue_url, QueueName=name)


@case("core", "W3", VALIDATED + "test_posting_to_queue_via_queue_name")
def a_queue_name_is_accepted_as_its_url():
    url = new_queue("byname")
    out = sqs.send_message(QueueUrl=name_of(url), MessageBody="Using name instead of URL")
    eq(out["MD5OfMessageBody"], "86a83f96652a1bfad3891e7d523750cb", "MD5OfMessageBody")


# ---- GetQueueAttributes / SetQueueAttributes -------------------------------------
STANDARD_ALL = {
    "ApproximateNumberOfMessages",
    "ApproximateNumberOfMessagesDelayed",
    "ApproximateNumberOfMessagesNotVisible",
    "CreatedTimestamp",
    "DelaySeconds",
    "LastModifiedTimestamp",
    "MaximumMessageSize",
    "MessageRetentionPeriod",
    "QueueArn",
    "ReceiveMessageWaitTimeSeconds",
    "SqsManagedSseEnabled",
    "VisibilityTimeout",
}


@case("core", "V11,V14", SRC + "test_create_and_update_queue_attributes")
def all_attributes_of_a_standard_queue():
    url = new_queue(
        "attrs",
        {"MessageRetentionPeriod": "604800", "ReceiveMessageWaitTimeSeconds": "10", "VisibilityTimeout": "20"},
    )
    got = attributes_of(url, "All")["Attributes"]
    eq(set(got), STANDARD_ALL, "attribute names")
    want = {
        "ApproximateNumberOfMessages": "0",
        "ApproximateNumberOfMessagesDelayed": "0",
        "ApproximateNumberOfMessagesNotVisible": "0",
        "DelaySeconds": "0",
        # The 2025 recording: the default (and largest) size is now 1 MiB.
        "MaximumMessageSize": "1048576",
        "MessageRetentionPeriod": "604800",
        "QueueArn": f"arn:aws:sqs:{REGION}:{ACCOUNT}:{name_of(url)}",
        "ReceiveMessageWaitTimeSeconds": "10",
        "SqsManagedSseEnabled": SSE_DEFAULT,
        "VisibilityTimeout": "20",
    }
    for k, v in want.items():
        eq(got[k], v, k)
    sqs.set_queue_attributes(
        QueueUrl=url, Attributes={"MaximumMessageSize": "2048", "VisibilityTimeout": "69", "DelaySeconds": "420"}
    )
    got = attributes_of(url, "All")["Attributes"]
    eq(set(got), STANDARD_ALL, "attribute names after the change")
    for k, v in {"MaximumMessageSize": "2048", "VisibilityTimeout": "69", "DelaySeconds": "420",
                 "MessageRetentionPeriod": "604800", "ReceiveMessageWaitTimeSeconds": "10"}.items():
        eq(got[k], v, k)


def expect_timestamps(attrs):
    """CreatedTimestamp and LastModifiedTimestamp are whole epoch seconds."""
    for k in ("CreatedTimestamp", "LastModifiedTimestamp"):
        assert attrs[k].isdigit() and abs(int(attrs[k]) - time.time()) < 120, (k, attrs[k])


@case("core", "V11,V14,V25", SRC + "test_set_queue_attributes_default_values")
def defaults_and_resetting_kms_attributes():
    url = new_queue("defaults")
    arn = queue_arn(url)
    base = {
        "ApproximateNumberOfMessages": "0",
        "ApproximateNumberOfMessagesDelayed": "0",
        "ApproximateNumberOfMessagesNotVisible": "0",
        "DelaySeconds": "0",
        "MaximumMessageSize": "1048576",
        "MessageRetentionPeriod": "345600",
        "QueueArn": arn,
        "ReceiveMessageWaitTimeSeconds": "0",
        "SqsManagedSseEnabled": SSE_DEFAULT,
        "VisibilityTimeout": "30",
    }

    def check(want, what):
        got = attributes_of(url, "All")["Attributes"]
        expect_timestamps(got)
        got.pop("CreatedTimestamp")
        got.pop("LastModifiedTimestamp")
        eq(got, want, what)

    check(base, "initial values")
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"KmsMasterKeyId": "testKeyId",
                                                       "KmsDataKeyReusePeriodSeconds": "6000"})
    check(dict(base, KmsMasterKeyId="testKeyId", KmsDataKeyReusePeriodSeconds="6000",
               SqsManagedSseEnabled="false"), "after setting a KMS key")
    # Setting the KMS attributes back to their defaults removes them; SSE-SQS
    # stays off until it is set again.
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"KmsMasterKeyId": "",
                                                       "KmsDataKeyReusePeriodSeconds": "300"})
    check(dict(base, SqsManagedSseEnabled="false"), "after setting them to their defaults")


@case("core", "V11", VALIDATED + "test_create_queue_and_get_attributes")
def named_attributes_only():
    url = new_queue("named")
    got = attributes_of(url, "QueueArn", "CreatedTimestamp", "VisibilityTimeout")["Attributes"]
    eq(set(got), {"QueueArn", "CreatedTimestamp", "VisibilityTimeout"}, "names")
    eq(got["VisibilityTimeout"], "30", "default VisibilityTimeout")
    created = int(got["CreatedTimestamp"])
    assert abs(created - time.time()) < 60, got


@case("core", "V11", VALIDATED + "TestSqsQueryApi::test_get_queue_attributes_with_invalid_arg_returns_error")
def unknown_attribute_name_is_refused():
    url = new_queue("unknown")
    expect_error(sqs.get_queue_attributes, QueueUrl=url, AttributeNames=["Foobar"],
                 code="InvalidAttributeName", message="Unknown Attribute Foobar.", json_type="InvalidAttributeName")


@case("core", "V11,L3", "AWS answer quoted in apache/airflow#65592 (CreateQueue, InvalidAttributeValue)")
def attribute_values_out_of_range_are_refused():
    want = dict(code="InvalidAttributeValue", json_type="InvalidAttributeValue")
    expect_error(sqs.create_queue, QueueName=unique("vt"), Attributes={"VisibilityTimeout": "43201"},
                 message="Invalid value for the parameter VisibilityTimeout.", **want)
    url = new_queue("range")
    for name, value in [("VisibilityTimeout", "-1"), ("DelaySeconds", "901"), ("MessageRetentionPeriod", "59"),
                        ("ReceiveMessageWaitTimeSeconds", "21"), ("MaximumMessageSize", "1023"),
                        ("MaximumMessageSize", "1048577")]:
        expect_error(sqs.set_queue_attributes, QueueUrl=url, Attributes={name: value},
                     message=f"Invalid value for the parameter {name}.", **want)
    expect_error(sqs.set_queue_attributes, QueueUrl=url, Attributes={"Foo": "1"}, code="InvalidAttributeName",
                 message="Unknown Attribute Foo.", json_type="InvalidAttributeName")
    eq(attributes_of(url, "VisibilityTimeout", "DelaySeconds"),
       {"Attributes": {"VisibilityTimeout": "30", "DelaySeconds": "0"}}, "nothing changed")
    # 1 MiB is now both the default and the largest size (2025 recordings;
    # AWS API reference: MaximumMessageSize 1,024 to 1,048,576).
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"MaximumMessageSize": "1048576"})
    eq(attributes_of(url, "MaximumMessageSize"), {"Attributes": {"MaximumMessageSize": "1048576"}}, "largest size")


@case("core", "V17", SRC + "test_set_unsupported_attribute_standard")
def fifo_queue_attribute_is_unknown_to_a_standard_queue():
    url = new_queue("stdfifo")
    for value in ("true", "false"):
        expect_error(sqs.set_queue_attributes, QueueUrl=url, Attributes={"FifoQueue": value},
                     code="InvalidAttributeName", message="Unknown Attribute FifoQueue.",
                     json_type="InvalidAttributeName")


@case("core", "V11,R1", VALIDATED + "test_get_specific_queue_attribute_response")
def named_attributes_with_a_redrive_policy():
    dlq = new_queue("dead_letter_queue")
    dlq_arn = attributes_of(dlq, "QueueArn")["Attributes"]["QueueArn"]
    url = new_queue("specific", {"MessageRetentionPeriod": "604800", "DelaySeconds": "10",
                                 "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn,
                                                              "maxReceiveCount": 10})})
    two = attributes_of(url, "MessageRetentionPeriod", "RedrivePolicy")["Attributes"]
    eq(set(two), {"MessageRetentionPeriod", "RedrivePolicy"}, "two named attributes")
    eq(two["MessageRetentionPeriod"], "604800", "MessageRetentionPeriod")
    eq(json.loads(two["RedrivePolicy"])["maxReceiveCount"], 10, "maxReceiveCount (a number)")
    eq(attributes_of(url, "QueueArn"), {"Attributes": {"QueueArn": f"arn:aws:sqs:{REGION}:{ACCOUNT}:{name_of(url)}"}},
       "the ARN alone")


@case("core", "V17", SRC + "test_set_unsupported_attribute_fifo")
def fifo_queue_attribute_cannot_be_changed():
    url = new_queue("tofifo")
    expect_error(sqs.set_queue_attributes, QueueUrl=url, Attributes={"FifoQueue": "true"},
                 code="InvalidAttributeName", message="Unknown Attribute FifoQueue.",
                 json_type="InvalidAttributeName")
    fifo_url = new_queue("isfifo", fifo=True)
    sqs.set_queue_attributes(QueueUrl=fifo_url, Attributes={"FifoQueue": "true"})
    expect_error(sqs.set_queue_attributes, QueueUrl=fifo_url, Attributes={"FifoQueue": "false"},
                 code="InvalidAttributeValue",
                 message="Invalid value for the parameter FifoQueue. Reason: Modifying queue type is not supported.",
                 json_type="InvalidAttributeValue")


TEST_POLICY = {
    "Version": "2012-10-17",
    "Statement": [
        {"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sqs:SendMessage", "Resource": "*"}
    ],
}


@case("core", "V11", VALIDATED + "test_set_empty_queue_policy")
def an_empty_policy_removes_it():
    url = new_queue("policy")
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": ""})
    assert "Policy" not in attributes_of(url, "All")["Attributes"]
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": json.dumps(TEST_POLICY)})
    for names in (["All"], ["Policy"]):
        policy = json.loads(attributes_of(url, *names)["Attributes"]["Policy"])
        eq(policy["Statement"][0]["Action"], "sqs:SendMessage", "policy action")
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": ""})
    assert "Policy" not in attributes_of(url, "All")["Attributes"]


@case("core", "V14", SRC + "test_sse_queue_attributes")
def sse_attributes():
    url = new_queue("ssekms")
    sqs.set_queue_attributes(
        QueueUrl=url,
        Attributes={"KmsMasterKeyId": "testKeyId", "KmsDataKeyReusePeriodSeconds": "6000",
                    "SqsManagedSseEnabled": "false"},
    )
    names = ("KmsMasterKeyId", "KmsDataKeyReusePeriodSeconds", "SqsManagedSseEnabled")
    eq(attributes_of(url, *names),
       {"Attributes": {"KmsMasterKeyId": "testKeyId", "KmsDataKeyReusePeriodSeconds": "6000",
                       "SqsManagedSseEnabled": "false"}}, "SSE-KMS")
    url = new_queue("ssesqs")
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"SqsManagedSseEnabled": "true"})
    eq(attributes_of(url, *names), {"Attributes": {"SqsManagedSseEnabled": "true"}}, "SSE-SQS")


@case("core", "V14", SRC + "test_sse_kms_and_sqs_are_mutually_exclusive")
def sse_kms_and_sqs_are_exclusive():
    url = new_queue("sseboth")
    expect_error(
        sqs.set_queue_attributes,
        QueueUrl=url,
        Attributes={"KmsMasterKeyId": "testKeyId", "SqsManagedSseEnabled": "true"},
        code="InvalidAttributeName",
        message="You can use one type of server-side encryption (SSE) at one time. "
        "You can either enable KMS SSE or SQS SSE.",
        json_type="InvalidAttributeName",
    )
    # Nothing was applied.
    assert "KmsMasterKeyId" not in attributes_of(url, "All")["Attributes"]


COUNTERS = ("ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible",
            "ApproximateNumberOfMessagesDelayed")


@case("core", "V11", VALIDATED + "test_approximate_number_of_messages_not_visible")
def message_counters_follow_visibility():
    url = new_queue("counters", {"VisibilityTimeout": "2"})
    for i in range(6):
        sqs.send_message(QueueUrl=url, MessageBody=f"message-{i + 1}")
    eq(len(receive(url, MaxNumberOfMessages=1)), 1, "one received")
    eq(attributes_of(url, *COUNTERS)["Attributes"],
       {"ApproximateNumberOfMessages": "5", "ApproximateNumberOfMessagesNotVisible": "1",
        "ApproximateNumberOfMessagesDelayed": "0"}, "while one is in flight")
    time.sleep(2.5)
    eq(attributes_of(url, *COUNTERS)["Attributes"],
       {"ApproximateNumberOfMessages": "6", "ApproximateNumberOfMessagesNotVisible": "0",
        "ApproximateNumberOfMessagesDelayed": "0"}, "after its visibility timeout")


# ---- PurgeQueue -----------------------------------------------------------------
@case("core", "V8", SRC + "test_successive_purge_calls_fail")
def a_second_purge_within_60s_is_refused():
    url = new_queue("purge")
    sqs.send_message(QueueUrl=url, MessageBody="m")
    out = sqs.purge_queue(QueueUrl=url)
    assert set(out) == {"ResponseMetadata"}, out
    expect_error(
        sqs.purge_queue,
        QueueUrl=url,
        code="AWS.SimpleQueueService.PurgeQueueInProgress",
        message=f"Only one PurgeQueue operation on {name_of(url)} is allowed every 60 seconds.",
        status=403,
        json_type="PurgeQueueInProgress",
    )


@case("core", "V8", VALIDATED + "test_purge_queue")
def purge_removes_visible_in_flight_and_delayed_messages():
    url = new_queue("purgeall")
    for i in range(3):
        sqs.send_message(QueueUrl=url, MessageBody=f"visible-{i}")
    sqs.send_message(QueueUrl=url, MessageBody="delayed", DelaySeconds=2)
    assert receive(url, MaxNumberOfMessages=1, VisibilityTimeout=2)
    sqs.purge_queue(QueueUrl=url)
    eq(receive(url), [], "right after the purge")
    for i in range(3):
        sqs.send_message(QueueUrl=url, MessageBody=f"after-{i}")
    time.sleep(2.5)
    bodies = set()
    for _ in range(5):
        bodies |= {m["Body"] for m in receive(url, MaxNumberOfMessages=10, WaitTimeSeconds=1)}
        if len(bodies) == 3:
            break
    eq(bodies, {"after-0", "after-1", "after-2"}, "bodies after the purge")


# ---- tags -----------------------------------------------------------------------
def expect_no_tags(url):
    """No tags: the member is left out in both protocols (AWS recorded
    answer of 2024, "get-tag-after-untag" in test_tag_untag_queue[sqs] and
    [sqs_query]; the 2023 recording had an empty map in JSON)."""
    got = sqs.list_queue_tags(QueueUrl=url)
    got.pop("ResponseMetadata", None)
    eq(got, {}, "tags of an untagged queue")


@case("core", "V18", SRC + "test_tag_untag_queue")
def tag_untag_and_list():
    url = new_queue("tags")
    expect_no_tags(url)
    sqs.tag_queue(QueueUrl=url, Tags={"tag1": "value1", "tag2": "value2", "tag3": ""})
    eq(sqs.list_queue_tags(QueueUrl=url)["Tags"], {"tag1": "value1", "tag2": "value2", "tag3": ""}, "tags")
    sqs.untag_queue(QueueUrl=url, TagKeys=["tag1", "tag3"])
    eq(sqs.list_queue_tags(QueueUrl=url)["Tags"], {"tag2": "value2"}, "after untag")
    sqs.untag_queue(QueueUrl=url, TagKeys=["tag2"])
    expect_no_tags(url)


@case("core", "V18", VALIDATED + "test_tag_queue_overwrites_existing_tag")
def tags_overwrite_are_case_sensitive_and_untag_ignores_unknown():
    url = new_queue("tags2", tags={"tag1": "value1", "tag2": "value2"})
    eq(sqs.list_queue_tags(QueueUrl=url)["Tags"], {"tag1": "value1", "tag2": "value2"}, "at creation")
    sqs.tag_queue(QueueUrl=url, Tags={"tag1": "VALUE1", "tag3": "value3", "Tag3": "other"})
    eq(sqs.list_queue_tags(QueueUrl=url)["Tags"],
       {"tag1": "VALUE1", "tag2": "value2", "tag3": "value3", "Tag3": "other"}, "after overwrite")
    sqs.untag_queue(QueueUrl=url, TagKeys=["tag1", "tag4"])
    eq(sqs.list_queue_tags(QueueUrl=url)["Tags"], {"tag2": "value2", "tag3": "value3", "Tag3": "other"},
       "after untag")


# ---- AddPermission / RemovePermission ---------------------------------------------
OTHER_ACCOUNT = "668614515564"
# Named attributes the queue does not have: the member is left out in both
# protocols (AWS recorded answer of 2024, "get-queue-policy-attribute-after-
# removal" in test_sqs_permission_lifecycle[sqs] and [sqs_query]).
NO_ATTRIBUTES = {}


def policy_of(url):
    attrs = attributes_of(url, "Policy")
    if "Attributes" not in attrs or "Policy" not in attrs["Attributes"]:
        return None
    return json.loads(attrs["Attributes"]["Policy"])


def statement(url, sid, principal):
    return {
        "Sid": sid,
        "Effect": "Allow",
        "Principal": {"AWS": principal},
        "Action": "SQS:ReceiveMessage",
        "Resource": queue_arn(url),
    }


def expect_policy(url, statements, what):
    got = policy_of(url)
    want = {"Version": "2008-10-17", "Id": f"{queue_arn(url)}/SQSDefaultPolicy", "Statement": statements}
    eq(got, want, what)
    # The document is written in AWS's member order.
    eq(list(got), ["Version", "Id", "Statement"], what + " (member order)")
    for s in got["Statement"]:
        eq(list(s), ["Sid", "Effect", "Principal", "Action", "Resource"], what + " (statement order)")


@case("core", "V15,V16", SRC + "test_sqs_permission_lifecycle")
def permission_lifecycle():
    url = new_queue("perm")
    root = f"arn:aws:iam::{ACCOUNT}:root"
    out = sqs.add_permission(QueueUrl=url, AWSAccountIds=[ACCOUNT, OTHER_ACCOUNT], Actions=["ReceiveMessage"],
                             Label="crossaccountpermission")
    assert set(out) == {"ResponseMetadata"}, out
    expect_policy(url, [statement(url, "crossaccountpermission", [f"arn:aws:iam::{OTHER_ACCOUNT}:root", root])],
                  "two accounts")
    sqs.remove_permission(QueueUrl=url, Label="crossaccountpermission")
    eq(attributes_of(url, "Policy"), NO_ATTRIBUTES, "after removing the only statement")

    sqs.add_permission(QueueUrl=url, AWSAccountIds=[ACCOUNT], Actions=["ReceiveMessage"],
                       Label="crossaccountpermission")
    expect_policy(url, [statement(url, "crossaccountpermission", root)], "one account")
    expect_error(sqs.add_permission, QueueUrl=url, AWSAccountIds=[OTHER_ACCOUNT], Actions=["ReceiveMessage"],
                 Label="crossaccountpermission", code="InvalidParameterValue",
                 message="Value crossaccountpermission for parameter Label is invalid. Reason: Already exists.",
                 json_type="InvalidParameterValueException")
    sqs.add_permission(QueueUrl=url, AWSAccountIds=[ACCOUNT], Actions=["ReceiveMessage"],
                       Label="crossaccountpermission2")
    expect_policy(url, [statement(url, "crossaccountpermission", root),
                        statement(url, "crossaccountpermission2", root)], "two statements")
    sqs.remove_permission(QueueUrl=url, Label="crossaccountpermission")
    expect_policy(url, [statement(url, "crossaccountpermission2", root)], "first removed")
    sqs.remove_permission(QueueUrl=url, Label="crossaccountpermission2")
    eq(attributes_of(url, "Policy"), NO_ATTRIBUTES, "both removed")
    expect_error(sqs.remove_permission, QueueUrl=url, Label="crossaccountpermission2",
                 code="InvalidParameterValue",
                 message="Value crossaccountpermission2 for parameter Label is invalid. Reason: can't find label.",
                 json_type="InvalidParameterValueException")

"""Fidelity cases for SNS publishing into queues: Publish and PublishBatch
refusals, the envelope and raw delivery, message attributes, message
structure, FIFO topics. Expected answers are AWS's, as recorded by
LocalStack's test_sns.py (see sns_common)."""

import base64
import hashlib
import json

from botocore.config import Config

from fidelity import ACCOUNT, ENDPOINT, REGION, eq, md5_of_attributes, sqs
from sns_common import (
    RECORDED,
    drain,
    envelope,
    expect_sns_error,
    make_sns,
    new_topic,
    nothing_more,
    sns,
    sns_case,
    sqs_target,
    subscribe_queue,
)

ENVELOPE_KEYS = ["Type", "MessageId", "TopicArn", "Message", "Timestamp", "SignatureVersion", "Signature",
                 "SigningCertURL", "UnsubscribeURL"]
# A FIFO topic's envelope carries its SequenceNumber and is not signed.
FIFO_ENVELOPE_KEYS = ["Type", "MessageId", "SequenceNumber", "TopicArn", "Message", "Timestamp", "UnsubscribeURL"]


def topic_to_queue(raw=False, fifo_topic=False, fifo_queue=False, topic_attrs=None, queue_attrs=None):
    topic = new_topic("pt", fifo=fifo_topic, attributes=topic_attrs)
    url, q_arn = sqs_target(fifo=fifo_queue, attributes=queue_attrs)
    sub = subscribe_queue(topic, q_arn, raw=raw)
    return topic, url, sub


def check_envelope(body, topic, sub, message, message_id=None, subject=None, attrs=None, fifo=False):
    keys = list(FIFO_ENVELOPE_KEYS if fifo else ENVELOPE_KEYS)
    if subject is not None:
        keys.append("Subject")
    if attrs is not None:
        keys.append("MessageAttributes")
    eq(sorted(body), sorted(keys), "envelope fields")
    eq(body["Type"], "Notification", "Type")
    eq(body["TopicArn"], topic, "TopicArn")
    eq(body["Message"], message, "Message")
    if message_id is not None:
        eq(body["MessageId"], message_id, "MessageId (the publish's)")
    if subject is not None:
        eq(body["Subject"], subject, "Subject")
    if attrs is not None:
        eq(body["MessageAttributes"], attrs, "MessageAttributes")
    if not fifo:
        eq(body["SignatureVersion"], "1", "SignatureVersion")
        assert "/SimpleNotificationService-" in body["SigningCertURL"], body["SigningCertURL"]
    assert body["UnsubscribeURL"].endswith(f"/?Action=Unsubscribe&SubscriptionArn={sub}"), body["UnsubscribeURL"]


def no_validation_client():
    import boto3

    return boto3.client(
        "sns", endpoint_url=ENDPOINT, region_name=REGION, aws_access_key_id="AKIDSLUICEFIDELITY",
        aws_secret_access_key="sluice-fidelity-secret",
        config=Config(retries={"total_max_attempts": 1}, parameter_validation=False),
    )


# ---- refusals -------------------------------------------------------------------

@sns_case("sns-publish", "N1", RECORDED + "TestSNSPublishCrud::test_publish_wrong_arn_format")
def sns_publish_malformed_topic_arn():
    loose = no_validation_client()
    for arn, n in [("randomstring", 1), ("randomstring:1", 2), ("", 1)]:
        expect_sns_error(loose.publish, Message="Good news everyone!", TopicArn=arn, code="InvalidParameter",
                         message=f"Invalid parameter: TopicArn Reason: An ARN must have at least 6 elements, not {n}")


@sns_case("sns-publish", "N1", RECORDED + "TestSNSPublishCrud::test_unknown_topic_publish")
def sns_publish_unknown_topic():
    topic = new_topic("pt")
    assert sns.publish(TopicArn=topic, Message="This is a test message")["MessageId"]
    expect_sns_error(sns.publish, TopicArn=topic + "-fake", Message="This is a test message", code="NotFound",
                     message="Topic does not exist", status=404)


@sns_case("sns-publish", "N1", RECORDED + "TestSNSPublishCrud::test_publish_with_empty_subject")
def sns_publish_empty_subject():
    topic = new_topic("pt")
    assert sns.publish(TopicArn=topic, Message=json.dumps({"message": "test_publish"}))["MessageId"]
    expect_sns_error(sns.publish, TopicArn=topic, Subject="", Message=json.dumps({"message": "test_publish"}),
                     code="InvalidParameter", message="Invalid parameter: Subject")


@sns_case("sns-publish", "N1, N2", RECORDED + "TestSNSPublishCrud::test_empty_sns_message")
def sns_publish_empty_message():
    topic, url, _ = topic_to_queue()
    expect_sns_error(sns.publish, Message="", TopicArn=topic, code="InvalidParameter",
                     message="Invalid parameter: Empty message")
    n = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])["Attributes"]
    eq(n, {"ApproximateNumberOfMessages": "0"}, "queue after the refused publish")


@sns_case("sns-publish", "N1", RECORDED + "TestSNSPublishCrud::test_publish_too_long_message")
def sns_publish_too_long():
    topic = new_topic("pt")
    too_long = "Invalid parameter: Message too long"
    expect_sns_error(sns.publish, TopicArn=topic, Message="This is a test message" * 12000,
                     code="InvalidParameter", message=too_long)
    attrs = {"attr1": {"DataType": "Number", "StringValue": "1"}}
    attrs_len = len("attr1") + len("Number") + len("1")
    body = "a" * (262144 - attrs_len + 1)
    expect_sns_error(sns.publish, TopicArn=topic, Message=body, MessageAttributes=attrs,
                     code="InvalidParameter", message=too_long)
    assert sns.publish(TopicArn=topic, Message=body[:-1], MessageAttributes=attrs)["MessageId"]


@sns_case("sns-publish", "N1", RECORDED + "TestSNSPublishCrud::test_message_structure_json_exc")
def sns_publish_message_structure_refusals():
    topic = new_topic("pt")
    no_default = "Invalid parameter: Message Structure - No default entry in JSON message body"
    expect_sns_error(sns.publish, TopicArn=topic, Message=json.dumps({"sqs": "Test message"}),
                     MessageStructure="json", code="InvalidParameter", message=no_default)
    expect_sns_error(sns.publish, TopicArn=topic, Message='{"default": "This is a default message"} }',
                     MessageStructure="json", code="InvalidParameter",
                     message="Invalid parameter: Message Structure - JSON message body failed to parse")
    assert sns.publish(TopicArn=topic, MessageStructure="json",
                       Message='{"default": "This is a default message", "default": "Duplicate"}')["MessageId"]
    expect_sns_error(sns.publish, TopicArn=topic, Message=json.dumps({"default": {"object": "test"}}),
                     MessageStructure="json", code="InvalidParameter", message=no_default)


@sns_case("sns-publish", "N1", RECORDED + "TestSNSPublishCrud::test_topic_publish_another_region")
def sns_publish_to_topic_of_another_region():
    topic = new_topic("pt")
    assert sns.publish(TopicArn=topic, Message="This is a test message")["MessageId"]
    west = make_sns("us-west-2")
    expect_sns_error(west.publish, TopicArn=topic, Message="This is a test message", code="InvalidParameter",
                     message="Invalid parameter: TopicArn")
    expect_sns_error(west.publish_batch, TopicArn=topic,
                     PublishBatchRequestEntries=[{"Id": "1", "Message": "This is a test message"}],
                     code="InvalidParameter", message="Invalid parameter: TopicArn")


@sns_case("sns-publish", "N1", RECORDED + "TestSNSPublishCrud::test_publish_batch_too_long_message")
def sns_publish_batch_too_long():
    topic = new_topic("pt")
    max_size = 262144
    msg = "The length of all the messages put together is more than the limit."
    expect_sns_error(sns.publish_batch, TopicArn=topic, PublishBatchRequestEntries=[
        {"Id": "1", "Message": "a" * (max_size // 2)}, {"Id": "2", "Message": "b" * (1 + max_size // 2)}],
        code="BatchRequestTooLong", message=msg)
    attrs = {"attr1": {"DataType": "Number", "StringValue": "1"}}
    body = "a" * (max_size - len("attr1") - len("Number") - len("1"))
    expect_sns_error(sns.publish_batch, TopicArn=topic, PublishBatchRequestEntries=[
        {"Id": "1", "Message": body, "MessageAttributes": attrs}, {"Id": "2", "Message": "b"}],
        code="BatchRequestTooLong", message=msg)
    out = sns.publish_batch(TopicArn=topic, PublishBatchRequestEntries=[
        {"Id": "1", "Message": body[:-1], "MessageAttributes": attrs}, {"Id": "2", "Message": "b"}])
    eq(sorted(s["Id"] for s in out["Successful"]), ["1", "2"], "Successful ids")


@sns_case("sns-publish", "N1", RECORDED + "TestSNSPublishCrud::test_publish_batch_invalid_entry_id")
def sns_publish_batch_entry_ids():
    topic = new_topic("pt")

    def batch(entry_id):
        return sns.publish_batch(TopicArn=topic, PublishBatchRequestEntries=[{"Id": entry_id, "Message": "test message"}])

    for bad in ("message.id", "msg@123#test"):
        expect_sns_error(batch, bad, code="InvalidBatchEntryId",
                         message=f"The Id of a batch entry in the batch request contains an impermissible character: {bad}")
    for bad in ("a" * 81, "my" + "really" * 13 + "longid"):
        expect_sns_error(batch, bad, code="InvalidBatchEntryId",
                         message=f"The Id of a batch entry in the batch request is too long: {bad}")
    for good in ("a" * 80, "valid-message_123"):
        out = batch(good)
        eq(out["Failed"], [], "Failed")
        eq([s["Id"] for s in out["Successful"]], [good], "Successful")


@sns_case("sns-publish", "N1", RECORDED + "TestSNSSubscriptionSQS::test_publish_batch_messages_without_topic")
def sns_publish_batch_unknown_topic():
    topic = new_topic("pt")
    expect_sns_error(sns.publish_batch, TopicArn=topic + "-gone",
                     PublishBatchRequestEntries=[{"Id": "1", "Message": "Test Message"}],
                     code="NotFound", message="Topic does not exist", status=404)


@sns_case("sns-publish", "N1, N7", RECORDED + "TestSNSSubscriptionSQS::test_publish_batch_exceptions")
def sns_publish_batch_refusals():
    topic = new_topic("pf", fifo=True)

    def batch(entries):
        return sns.publish_batch(TopicArn=topic, PublishBatchRequestEntries=entries)

    expect_sns_error(batch, [{"Id": "1", "Message": "Test message without Group ID"}], code="InvalidParameter",
                     message="Invalid parameter: The MessageGroupId parameter is required for FIFO topics")
    expect_sns_error(batch, [{"Id": f"Id_{i}", "Message": "Too many messages"} for i in range(11)],
                     code="TooManyEntriesInBatchRequest",
                     message="The batch request contains more entries than permissible.")
    expect_sns_error(batch, [{"Id": "1", "Message": "Messages with the same ID"} for _ in range(2)],
                     code="BatchEntryIdsNotDistinct", message="Two or more batch entries in the request have the same Id.")
    expect_sns_error(batch, [{"Id": "1", "Message": "Test message without MessageDeduplicationId",
                              "MessageGroupId": "msg1"}], code="InvalidParameter",
                     message="Invalid parameter: The topic should either have ContentBasedDeduplication enabled or "
                             "MessageDeduplicationId provided explicitly")
    expect_sns_error(batch, [{"Id": "1", "Message": json.dumps({"sqs": "test sqs"}), "MessageStructure": "json"}],
                     code="InvalidParameter",
                     message="Invalid parameter: Message Structure - No default entry in JSON message body")


WRONG_ATTRIBUTES = [
    ({"attr1": {"DataType": "String", "StringValue": ""}},
     "The message attribute 'attr1' must contain non-empty message attribute value for message attribute type 'String'."),
    ({"attr1": {"DataType": "String"}},
     "The message attribute 'attr1' must contain non-empty message attribute value for message attribute type 'String'."),
    ({"attr1": {"DataType": "Binary", "BinaryValue": b""}},
     "The message attribute 'attr1' must contain non-empty message attribute value for message attribute type 'Binary'."),
    ({"attr1": {"DataType": "String", "BinaryValue": b"123"}},
     "The message attribute 'attr1' with type 'String' must use field 'String'."),
    ({"attr1": {"DataType": "Number", "BinaryValue": b"123"}},
     "The message attribute 'attr1' with type 'Number' must use field 'String'."),
    ({"attr1": {"DataType": "Binary", "StringValue": "123"}},
     "The message attribute 'attr1' with type 'Binary' must use field 'Binary'."),
    ({"attr1": {"DataType": "InvalidType", "StringValue": "123"}},
     "The message attribute 'attr1' has an invalid message attribute type, the set of supported type prefixes is "
     "Binary, Number, and String."),
    ({"a" * 257: {"DataType": "String", "StringValue": "123"}},
     "Length of message attribute name must be less than 256 bytes."),
    ({"a^*?": {"DataType": "String", "StringValue": "123"}},
     "Invalid non-alphanumeric character '#x5E' was found in the message attribute name. Can only include "
     "alphanumeric characters, hyphens, underscores, or dots."),
    ({".abc": {"DataType": "String", "StringValue": "123"}},
     "Invalid message attribute name starting with character '.' was found."),
    ({"abc.": {"DataType": "String", "StringValue": "123"}},
     "Invalid message attribute name ending with character '.' was found."),
    ({"a..bc": {"DataType": "String", "StringValue": "123"}},
     "Message attribute name can not have successive '.' character."),
]


@sns_case("sns-publish", "N1, N3", RECORDED + "TestSNSSubscriptionSQS::test_empty_or_wrong_message_attributes")
def sns_publish_wrong_message_attributes():
    topic, _, _ = topic_to_queue()
    loose = no_validation_client()
    problems = []
    for attrs, message in WRONG_ATTRIBUTES:
        for how, call in [
            ("Publish", lambda: loose.publish(TopicArn=topic, Message="test message", MessageAttributes=attrs)),
            ("PublishBatch", lambda: loose.publish_batch(TopicArn=topic, PublishBatchRequestEntries=[
                {"Id": "1", "Message": "test message", "MessageAttributes": attrs}])),
        ]:
            try:
                expect_sns_error(call, code="ParameterValueInvalid", message=message)
            except AssertionError as e:
                problems.append(f"{how} {list(attrs)[0][:10]}: {e}")
    assert not problems, "; ".join(problems)


@sns_case("sns-publish", "N1, N3", RECORDED + "TestSNSSubscriptionSQS::test_empty_or_wrong_message_attributes")
def sns_publish_attribute_without_data_type():
    topic, _, _ = topic_to_queue()
    loose = no_validation_client()
    attrs = {"attr1": {"StringValue": "value"}}
    expect_sns_error(loose.publish, TopicArn=topic, Message="test message", MessageAttributes=attrs,
                     code="ValidationError",
                     message="1 validation error detected: Value null at 'messageAttributes.attr1.member.dataType' "
                             "failed to satisfy constraint: Member must not be null")
    expect_sns_error(loose.publish_batch, TopicArn=topic,
                     PublishBatchRequestEntries=[{"Id": "1", "Message": "test message", "MessageAttributes": attrs}],
                     code="ValidationError",
                     message="1 validation error detected: Value null at "
                             "'publishBatchRequestEntries.1.member.messageAttributes.attr1.member.dataType' failed to "
                             "satisfy constraint: Member must not be null")


@sns_case("sns-publish", "N1, N3", RECORDED + "TestSNSSubscriptionSQS::test_message_attributes_prefixes")
def sns_publish_attribute_type_prefixes():
    topic, _, _ = topic_to_queue()
    bad = ("The message attribute 'attr1' has an invalid message attribute type, the set of supported type prefixes "
           "is Binary, Number, and String.")
    for dt in ("String.", "Stringprefixed"):
        expect_sns_error(sns.publish, TopicArn=topic, Message="test message",
                         MessageAttributes={"attr1": {"DataType": dt, "StringValue": "prefixed-1"}},
                         code="ParameterValueInvalid", message=bad)
    for dt in ("String.prefixed", "String.  prefixed."):
        assert sns.publish(TopicArn=topic, Message="test message",
                           MessageAttributes={"attr1": {"DataType": dt, "StringValue": "prefixed-1"}})["MessageId"]


# ---- delivery into queues ---------------------------------------------------------

@sns_case("sns-publish", "N2, N3", RECORDED + "TestSNSPublishCrud::test_publish_message_by_target_arn")
def sns_publish_by_topic_or_target_arn():
    topic, url, sub = topic_to_queue()
    for n, kw in enumerate([{"TopicArn": topic}, {"TargetArn": topic}], start=1):
        mid = sns.publish(Message=f"test-msg-{n}", **kw)["MessageId"]
        (msg,) = drain(url, 1)
        check_envelope(envelope(msg), topic, sub, f"test-msg-{n}", message_id=mid)


@sns_case("sns-publish", "N2", RECORDED + "TestSNSPublishCrud::test_publish_message_before_subscribe_topic")
def sns_publish_before_subscribing_reaches_nobody():
    topic = new_topic("pt")
    url, q_arn = sqs_target()
    assert sns.publish(TopicArn=topic, Subject="test-subject-before-sub", Message="test_message_before")["MessageId"]
    sub = subscribe_queue(topic, q_arn)
    mid = sns.publish(TopicArn=topic, Subject="test-subject-after-sub", Message="test_message_after")["MessageId"]
    msgs = drain(url, 2, wait=1)
    eq(len(msgs), 1, "messages in the queue")
    check_envelope(envelope(msgs[0]), topic, sub, "test_message_after", message_id=mid,
                   subject="test-subject-after-sub")


@sns_case("sns-publish", "N3, N4", RECORDED + "TestSNSSubscriptionSQS::test_subscribe_sqs_queue")
def sns_envelope_carries_message_attributes():
    topic, url, sub = topic_to_queue()
    policy = {"attr1": [{"numeric": [">", 0, "<=", 100]}]}
    sns.set_subscription_attributes(SubscriptionArn=sub, AttributeName="FilterPolicy", AttributeValue=json.dumps(policy))
    attrs = sns.get_subscription_attributes(SubscriptionArn=sub)["Attributes"]
    eq(json.loads(attrs["FilterPolicy"]), policy, "FilterPolicy")
    eq(attrs.get("FilterPolicyScope"), "MessageAttributes", "FilterPolicyScope")
    sns.publish(TopicArn=topic, Message="This is a test message",
                MessageAttributes={"attr1": {"DataType": "Number", "StringValue": "99.12"}})
    (msg,) = drain(url, 1)
    check_envelope(envelope(msg), topic, sub, "This is a test message",
                   attrs={"attr1": {"Type": "Number", "Value": "99.12"}})
    eq(msg.get("MessageAttributes"), None, "SQS message attributes of an enveloped delivery")


@sns_case("sns-publish", "N3", RECORDED + "TestSNSSubscriptionSQS::test_publish_unicode_chars")
def sns_unicode_message_in_envelope():
    topic, url, sub = topic_to_queue()
    text = 'ö§a1"_!?,. £$-'
    sns.publish(TopicArn=topic, Message=text)
    (msg,) = drain(url, 1)
    check_envelope(envelope(msg), topic, sub, text)


@sns_case("sns-publish", "N3", RECORDED + "TestSNSSubscriptionSQS::test_attribute_raw_subscribe")
def sns_raw_delivery_binary_attribute():
    topic, url, _ = topic_to_queue(raw=True)
    sns.publish(TopicArn=topic, Message="This is a test message",
                MessageAttributes={"store": {"DataType": "Binary", "BinaryValue": b"\x02\x03\x04"}})
    (msg,) = drain(url, 1)
    eq(msg["Body"], "This is a test message", "Body")
    eq(msg["MessageAttributes"], {"store": {"DataType": "Binary", "BinaryValue": b"\x02\x03\x04"}}, "MessageAttributes")
    eq(msg["MD5OfMessageAttributes"], md5_of_attributes(msg["MessageAttributes"]), "MD5OfMessageAttributes")


@sns_case("sns-publish", "N3", RECORDED + "TestSNSSubscriptionSQS::test_publish_sqs_from_sns")
def sns_raw_then_enveloped_delivery():
    topic, url, sub = topic_to_queue()
    sns.set_subscription_attributes(SubscriptionArn=sub, AttributeName="RawMessageDelivery", AttributeValue="true")
    sns.publish(TopicArn=topic, Message="Test msg",
                MessageAttributes={"attr1": {"DataType": "Number", "StringValue": "99.12"}})
    (msg,) = drain(url, 1)
    eq(msg["Body"], "Test msg", "raw Body")
    eq(msg["MessageAttributes"], {"attr1": {"DataType": "Number", "StringValue": "99.12"}}, "raw MessageAttributes")
    eq(msg["MD5OfMessageAttributes"], "d302007e9aa062660afc85fd0a482472", "MD5OfMessageAttributes (recorded)")
    sns.set_subscription_attributes(SubscriptionArn=sub, AttributeName="RawMessageDelivery", AttributeValue="false")
    sns.publish(TargetArn=topic, Message="Test msg",
                MessageAttributes={"attr1": {"DataType": "Number", "StringValue": "100.12"}})
    (msg,) = drain(url, 1)
    check_envelope(envelope(msg), topic, sub, "Test msg", attrs={"attr1": {"Type": "Number", "Value": "100.12"}})


@sns_case("sns-publish", "N2, N3", RECORDED + "TestSNSSubscriptionSQS::test_publish_batch_messages_from_sns_to_sqs")
def sns_publish_batch_raw_delivery():
    topic, url, _ = topic_to_queue(raw=True)
    out = sns.publish_batch(TopicArn=topic, PublishBatchRequestEntries=[
        {"Id": "1", "Message": "Test Message with two attributes", "Subject": "Subject",
         "MessageAttributes": {"attr1": {"DataType": "Number", "StringValue": "99.12"},
                               "attr2": {"DataType": "Number", "StringValue": "109.12"}}},
        {"Id": "2", "Message": "Test Message with one attribute", "Subject": "Subject",
         "MessageAttributes": {"attr1": {"DataType": "Number", "StringValue": "19.12"}}},
        {"Id": "3", "Message": "Test Message without attribute", "Subject": "Subject"},
        {"Id": "4", "Message": "Test Message without subject"},
        {"Id": "5", "Message": json.dumps({"default": "test default", "sqs": "test sqs"}), "MessageStructure": "json"},
    ])
    eq(out["Failed"], [], "Failed")
    eq([s["Id"] for s in out["Successful"]], ["1", "2", "3", "4", "5"], "Successful ids")
    msgs = sorted(drain(url, 5), key=lambda m: m["Body"])
    eq([m["Body"] for m in msgs], ["Test Message with one attribute", "Test Message with two attributes",
                                   "Test Message without attribute", "Test Message without subject", "test sqs"],
       "bodies")
    eq(msgs[0].get("MD5OfMessageAttributes"), "1f07082409022a373fa2a2601f82b3cb", "MD5OfMessageAttributes, one attr")
    eq(msgs[1].get("MD5OfMessageAttributes"), "9b720b3af309c1c4b0d395c53b08c502", "MD5OfMessageAttributes, two attrs")
    for m in msgs[2:]:
        eq(m.get("MessageAttributes"), None, f"attributes of {m['Body']!r}")


@sns_case("sns-publish", "N3", RECORDED + "TestSNSSubscriptionSQS::test_message_attributes_not_missing")
def sns_attributes_in_raw_and_enveloped_delivery():
    attrs = {"an-attribute-key": {"DataType": "String", "StringValue": "an-attribute-value"},
             "binary-attribute": {"DataType": "Binary", "BinaryValue": b"\x02\x03\x04"}}
    topic, url, _ = topic_to_queue(raw=True)
    sns.publish(TopicArn=topic, Message="text", MessageAttributes=attrs)
    (msg,) = drain(url, 1)
    eq(msg["Body"], "text", "raw Body")
    eq(msg["MessageAttributes"], attrs, "raw MessageAttributes")
    topic, url, sub = topic_to_queue()
    sns.publish(TopicArn=topic, Message="text", MessageAttributes=attrs)
    (msg,) = drain(url, 1)
    check_envelope(envelope(msg), topic, sub, "text", attrs={
        "an-attribute-key": {"Type": "String", "Value": "an-attribute-value"},
        "binary-attribute": {"Type": "Binary", "Value": base64.b64encode(b"\x02\x03\x04").decode()}})


@sns_case("sns-publish", "N3", RECORDED + "TestSNSSubscriptionSQS::test_message_structure_json_to_sqs")
def sns_message_structure_picks_the_sqs_entry():
    topic, url, sub = topic_to_queue()
    sns.publish(TopicArn=topic, MessageStructure="json",
                Message=json.dumps({"default": "default field", "sqs": json.dumps({"field": "value"})}))
    (msg,) = drain(url, 1)
    check_envelope(envelope(msg), topic, sub, '{"field": "value"}')
    sns.publish(TopicArn=topic, MessageStructure="json",
                Message=json.dumps({"default": "default field", "sqs": {"field": "value"}}))
    (msg,) = drain(url, 1)
    check_envelope(envelope(msg), topic, sub, "default field")


@sns_case("sns-publish", "N3", RECORDED + "TestSNSSubscriptionSQS::test_publish_message_group_id")
def sns_standard_topic_passes_group_id_to_standard_queue():
    topic, url, sub = topic_to_queue()
    sns.publish(TopicArn=topic, Message="test signature value with attributes", MessageGroupId="my-group-id-1",
                MessageAttributes={"attr1": {"DataType": "Number", "StringValue": "1"}})
    (msg,) = drain(url, 1)
    eq(msg["Attributes"].get("MessageGroupId"), "my-group-id-1", "MessageGroupId of the queue's message")
    check_envelope(envelope(msg), topic, sub, "test signature value with attributes",
                   attrs={"attr1": {"Type": "Number", "Value": "1"}})


# ---- FIFO topics --------------------------------------------------------------------

def fifo_pair(content_dedup, raw=False, fifo_queue=True):
    tattrs = {"ContentBasedDeduplication": "true"} if content_dedup else {}
    qattrs = {"ContentBasedDeduplication": "true"} if content_dedup and fifo_queue else {}
    return topic_to_queue(raw=raw, fifo_topic=True, fifo_queue=fifo_queue, topic_attrs=tattrs, queue_attrs=qattrs)


def sns_fifo_to_fifo_queue(content_dedup):
    topic, url, sub = fifo_pair(content_dedup)
    kw = {"MessageGroupId": "message-group-id-1"}
    if not content_dedup:
        kw["MessageDeduplicationId"] = "message-deduplication-id-1"
    out = sns.publish(TopicArn=topic, Message="Test", **kw)
    assert out.get("SequenceNumber"), out
    (msg,) = drain(url, 1)
    want_dedup = hashlib.sha256(b"Test").hexdigest() if content_dedup else "message-deduplication-id-1"
    eq(msg["Attributes"].get("MessageDeduplicationId"), want_dedup, "MessageDeduplicationId in the queue")
    eq(msg["Attributes"].get("MessageGroupId"), "message-group-id-1", "MessageGroupId in the queue")
    assert msg["Attributes"].get("SequenceNumber"), msg["Attributes"]
    body = envelope(msg)
    check_envelope(body, topic, sub, "Test", message_id=out["MessageId"], fifo=True)
    eq(body["SequenceNumber"], out["SequenceNumber"], "envelope SequenceNumber")
    sns.publish(TopicArn=topic, Message="Test", **kw)
    nothing_more(url)


@sns_case("sns-publish", "N7", RECORDED + "TestSNSSubscriptionSQSFifo::test_message_to_fifo_sqs[True]")
def sns_fifo_topic_to_fifo_queue_content_dedup():
    sns_fifo_to_fifo_queue(True)


@sns_case("sns-publish", "N7", RECORDED + "TestSNSSubscriptionSQSFifo::test_message_to_fifo_sqs[False]")
def sns_fifo_topic_to_fifo_queue_explicit_dedup():
    sns_fifo_to_fifo_queue(False)


def sns_fifo_to_standard_queue(content_dedup):
    topic, url, sub = fifo_pair(content_dedup, fifo_queue=False)
    kw = {"MessageGroupId": "message-group-id-1"}
    if not content_dedup:
        kw["MessageDeduplicationId"] = "message-deduplication-id-1"
    sns.publish(TopicArn=topic, Message="Test", **kw)
    (msg,) = drain(url, 1)
    check_envelope(envelope(msg), topic, sub, "Test", fifo=True)
    eq(sorted(k for k in msg["Attributes"] if k.startswith("Message")), [], "FIFO attributes in a standard queue")
    sns.publish(TopicArn=topic, Message="Test", **kw)
    nothing_more(url)


@sns_case("sns-publish", "N7", RECORDED + "TestSNSSubscriptionSQSFifo::test_fifo_topic_to_regular_sqs[True]")
def sns_fifo_topic_to_standard_queue_content_dedup():
    sns_fifo_to_standard_queue(True)


@sns_case("sns-publish", "N7", RECORDED + "TestSNSSubscriptionSQSFifo::test_fifo_topic_to_regular_sqs[False]")
def sns_fifo_topic_to_standard_queue_explicit_dedup():
    sns_fifo_to_standard_queue(False)


@sns_case("sns-publish", "N7", RECORDED + "TestSNSSubscriptionSQSFifo::test_validations_for_fifo")
def sns_fifo_validations():
    std_topic = new_topic("pt")
    fifo_topic = new_topic("pf", fifo=True)
    _, fifo_q = sqs_target(fifo=True)
    _, std_q = sqs_target()
    _, std_dlq = sqs_target()
    expect_sns_error(sns.subscribe, TopicArn=std_topic, Protocol="sqs", Endpoint=fifo_q, code="InvalidParameter",
                     message="Invalid parameter: Invalid parameter: Endpoint Reason: FIFO SQS Queues can not be "
                             "subscribed to standard SNS topics")
    sub_std = subscribe_queue(fifo_topic, std_q)
    attrs = sns.get_subscription_attributes(SubscriptionArn=sub_std)["Attributes"]
    eq(attrs["PendingConfirmation"], "false", "a standard queue on a FIFO topic")
    sns.set_subscription_attributes(SubscriptionArn=sub_std, AttributeName="RedrivePolicy",
                                    AttributeValue=json.dumps({"deadLetterTargetArn": std_dlq}))
    sub_fifo = subscribe_queue(fifo_topic, fifo_q)
    expect_sns_error(sns.set_subscription_attributes, SubscriptionArn=sub_fifo, AttributeName="RedrivePolicy",
                     AttributeValue=json.dumps({"deadLetterTargetArn": std_q}), code="InvalidParameter",
                     message="Invalid parameter: RedrivePolicy: must use a FIFO queue as DLQ for a FIFO Subscription "
                             "to a FIFO Topic.")
    expect_sns_error(sns.publish, TopicArn=fifo_topic, Message="test", code="InvalidParameter",
                     message="Invalid parameter: The MessageGroupId parameter is required for FIFO topics")
    expect_sns_error(sns.publish, TopicArn=fifo_topic, Message="test", MessageGroupId="g1", code="InvalidParameter",
                     message="Invalid parameter: The topic should either have ContentBasedDeduplication enabled or "
                             "MessageDeduplicationId provided explicitly")
    expect_sns_error(sns.publish, TopicArn=std_topic, Message="test", MessageDeduplicationId="d1",
                     code="InvalidParameter",
                     message="Invalid parameter: MessageDeduplicationId Reason: The request includes "
                             "MessageDeduplicationId parameter that is not valid for this topic type")


def sns_fifo_batch_to_fifo_queue(content_dedup):
    topic, url, _ = fifo_pair(content_dedup, raw=True)
    eq(sns.get_topic_attributes(TopicArn=topic)["Attributes"]["ContentBasedDeduplication"],
       "true" if content_dedup else "false", "ContentBasedDeduplication")
    entries = [
        {"Id": "1", "MessageGroupId": "complexMessageGroupId", "Message": "Test Message with two attributes",
         "Subject": "Subject", "MessageAttributes": {"attr1": {"DataType": "Number", "StringValue": "99.12"},
                                                     "attr2": {"DataType": "Number", "StringValue": "109.12"}}},
        {"Id": "2", "MessageGroupId": "complexMessageGroupId", "Message": "Test Message with one attribute",
         "Subject": "Subject", "MessageAttributes": {"attr1": {"DataType": "Number", "StringValue": "19.12"}}},
        {"Id": "3", "MessageGroupId": "complexMessageGroupId", "Message": "Test Message without attribute",
         "Subject": "Subject"},
    ]
    if not content_dedup:
        for i, e in enumerate(entries):
            e["MessageDeduplicationId"] = f"MessageDeduplicationId-{i}"
    out = sns.publish_batch(TopicArn=topic, PublishBatchRequestEntries=entries)
    eq(out["Failed"], [], "Failed")
    eq([s["Id"] for s in out["Successful"]], ["1", "2", "3"], "Successful ids")
    assert all(s.get("SequenceNumber") for s in out["Successful"]), out["Successful"]
    msgs = drain(url, 3)
    eq([m["Body"] for m in msgs], [e["Message"] for e in entries], "bodies, in the group's order")
    for m, e in zip(msgs, entries):
        want = (hashlib.sha256(e["Message"].encode()).hexdigest() if content_dedup
                else e["MessageDeduplicationId"])
        eq(m["Attributes"].get("MessageDeduplicationId"), want, "MessageDeduplicationId")
        eq(m["Attributes"].get("MessageGroupId"), "complexMessageGroupId", "MessageGroupId")
    eq(msgs[0]["MD5OfMessageAttributes"], "9b720b3af309c1c4b0d395c53b08c502", "MD5OfMessageAttributes")
    again = sns.publish_batch(TopicArn=topic, PublishBatchRequestEntries=entries)
    eq([s["Id"] for s in again["Successful"]], ["1", "2", "3"], "republished ids (answered as successes)")
    nothing_more(url)


@sns_case("sns-publish", "N7", RECORDED + "TestSNSSubscriptionSQSFifo::test_publish_batch_messages_from_fifo_topic_to_fifo_queue[True]")
def sns_fifo_batch_content_dedup():
    sns_fifo_batch_to_fifo_queue(True)


@sns_case("sns-publish", "N7", RECORDED + "TestSNSSubscriptionSQSFifo::test_publish_batch_messages_from_fifo_topic_to_fifo_queue[False]")
def sns_fifo_batch_explicit_dedup():
    sns_fifo_batch_to_fifo_queue(False)


def sns_fifo_topic_dedup_over_plain_queue(raw):
    topic, url, _ = topic_to_queue(raw=raw, fifo_topic=True, fifo_queue=True,
                                   topic_attrs={"ContentBasedDeduplication": "true"})
    for _ in range(2):
        sns.publish(TopicArn=topic, Message="Test single", MessageGroupId="message-group-id-1")
        sns.publish_batch(TopicArn=topic, PublishBatchRequestEntries=[
            {"Id": "1", "MessageGroupId": "message-group-id-1", "Message": "Test batched"}])
    msgs = sorted(drain(url, 3, wait=1), key=lambda m: m["Attributes"]["MessageDeduplicationId"])
    eq([m["Attributes"]["MessageDeduplicationId"] for m in msgs],
       [hashlib.sha256(b"Test single").hexdigest(), hashlib.sha256(b"Test batched").hexdigest()],
       "dedup ids the topic gave a queue without content-based deduplication")
    bodies = [m["Body"] if raw else envelope(m)["Message"] for m in msgs]
    eq(bodies, ["Test single", "Test batched"], "messages")


@sns_case("sns-publish", "N7", RECORDED + "TestSNSSubscriptionSQSFifo::test_publish_to_fifo_topic_to_sqs_queue_no_content_dedup[True]")
def sns_fifo_topic_dedups_for_plain_fifo_queue_raw():
    sns_fifo_topic_dedup_over_plain_queue(True)


@sns_case("sns-publish", "N7", RECORDED + "TestSNSSubscriptionSQSFifo::test_publish_to_fifo_topic_to_sqs_queue_no_content_dedup[False]")
def sns_fifo_topic_dedups_for_plain_fifo_queue_envelope():
    sns_fifo_topic_dedup_over_plain_queue(False)


@sns_case("sns-publish", "N7", RECORDED + "TestSNSSubscriptionSQSFifo::test_publish_to_fifo_topic_deduplication_on_topic_level")
def sns_fifo_topic_dedup_is_topic_wide():
    topic, url, sub = topic_to_queue(fifo_topic=True, fifo_queue=True,
                                     topic_attrs={"ContentBasedDeduplication": "true"})
    sns.publish(TopicArn=topic, Message="Test", MessageGroupId="message-group-id-1")
    sns.publish(TopicArn=topic, Message="Test", MessageGroupId="message-group-id-2")
    msgs = drain(url, 2, wait=1)
    eq(len(msgs), 1, "deliveries of one body published in two groups")
    eq(msgs[0]["Attributes"]["MessageGroupId"], "message-group-id-1", "MessageGroupId")
    eq(msgs[0]["Attributes"]["MessageDeduplicationId"], hashlib.sha256(b"Test").hexdigest(), "MessageDeduplicationId")
    check_envelope(envelope(msgs[0]), topic, sub, "Test", fifo=True)


# ---- subscription dead-letter queues (N5) -------------------------------------------

def sns_dlq_catches_delivery_to_deleted_queue(raw):
    topic, url, sub = topic_to_queue()
    dlq_url, dlq_arn = sqs_target()
    sns.set_subscription_attributes(SubscriptionArn=sub, AttributeName="RedrivePolicy",
                                    AttributeValue=json.dumps({"deadLetterTargetArn": dlq_arn}))
    if raw:
        sns.set_subscription_attributes(SubscriptionArn=sub, AttributeName="RawMessageDelivery", AttributeValue="true")
    sqs.delete_queue(QueueUrl=url)
    attrs = {"attr1": {"DataType": "Number", "StringValue": "111"},
             "attr2": {"DataType": "Binary", "BinaryValue": b"\x02\x03\x04"}}
    assert sns.publish(TopicArn=topic, Message="test_dlq_after_sqs_endpoint_deleted", MessageAttributes=attrs)["MessageId"]
    (msg,) = drain(dlq_url, 1)
    if raw:
        eq(msg["Body"], "test_dlq_after_sqs_endpoint_deleted", "Body in the DLQ")
        eq(msg["MessageAttributes"], attrs, "MessageAttributes in the DLQ")
    else:
        check_envelope(envelope(msg), topic, sub, "test_dlq_after_sqs_endpoint_deleted", attrs={
            "attr1": {"Type": "Number", "Value": "111"}, "attr2": {"Type": "Binary", "Value": "AgME"}})


@sns_case("sns-publish", "N5", RECORDED + "TestSNSSubscriptionSQS::test_redrive_policy_sqs_queue_subscription[True]")
def sns_dlq_raw_delivery_to_deleted_queue():
    sns_dlq_catches_delivery_to_deleted_queue(True)


@sns_case("sns-publish", "N5", RECORDED + "TestSNSSubscriptionSQS::test_redrive_policy_sqs_queue_subscription[False]")
def sns_dlq_enveloped_delivery_to_deleted_queue():
    sns_dlq_catches_delivery_to_deleted_queue(False)


@sns_case("sns-publish", "N5", RECORDED + "TestSNSSubscriptionSQS::test_subscription_after_failure_to_deliver")
def sns_subscription_outlives_its_deleted_queue():
    topic, url, sub = topic_to_queue()
    dlq_url, dlq_arn = sqs_target()
    sns.publish(TopicArn=topic, Message="test_dlq_before_sqs_endpoint_deleted")
    (msg,) = drain(url, 1)
    check_envelope(envelope(msg), topic, sub, "test_dlq_before_sqs_endpoint_deleted")
    sqs.delete_queue(QueueUrl=url)
    sns.publish(TopicArn=topic, Message="test_dlq_after_sqs_endpoint_deleted")
    subs = sns.list_subscriptions_by_topic(TopicArn=topic)["Subscriptions"]
    eq([s["SubscriptionArn"] for s in subs], [sub], "the subscription is still listed")
    sns.set_subscription_attributes(SubscriptionArn=sub, AttributeName="RedrivePolicy",
                                    AttributeValue=json.dumps({"deadLetterTargetArn": dlq_arn}))
    attrs = sns.get_subscription_attributes(SubscriptionArn=sub)["Attributes"]
    eq(json.loads(attrs["RedrivePolicy"]), {"deadLetterTargetArn": dlq_arn}, "RedrivePolicy")
    for i in range(2):
        sns.publish(TopicArn=topic, Message=f"test_dlq_after_sqs_endpoint_deleted_{i}")
        (msg,) = drain(dlq_url, 1)
        check_envelope(envelope(msg), topic, sub, f"test_dlq_after_sqs_endpoint_deleted_{i}")


def sns_fifo_dlq(raw):
    topic, url, sub = topic_to_queue(raw=raw, fifo_topic=True, fifo_queue=True)
    dlq_url, dlq_arn = sqs_target(fifo=True)
    sns.set_subscription_attributes(SubscriptionArn=sub, AttributeName="RedrivePolicy",
                                    AttributeValue=json.dumps({"deadLetterTargetArn": dlq_arn}))
    sqs.delete_queue(QueueUrl=url)
    entries = [
        {"Id": "1", "MessageGroupId": "complexMessageGroupId", "Message": "Test Message with two attributes",
         "Subject": "Subject", "MessageDeduplicationId": "MessageDeduplicationId-1",
         "MessageAttributes": {"attr1": {"DataType": "Number", "StringValue": "99.12"},
                               "attr2": {"DataType": "Number", "StringValue": "109.12"}}},
        {"Id": "2", "MessageGroupId": "complexMessageGroupId", "Message": "Test Message with one attribute",
         "Subject": "Subject", "MessageDeduplicationId": "MessageDeduplicationId-2",
         "MessageAttributes": {"attr1": {"DataType": "Number", "StringValue": "19.12"}}},
        {"Id": "3", "MessageGroupId": "complexMessageGroupId", "Message": "Test Message without attribute",
         "Subject": "Subject", "MessageDeduplicationId": "MessageDeduplicationId-3"},
    ]
    out = sns.publish_batch(TopicArn=topic, PublishBatchRequestEntries=entries)
    eq(out["Failed"], [], "Failed")
    msgs = drain(dlq_url, 3)
    eq([m["Attributes"].get("MessageDeduplicationId") for m in msgs],
       [e["MessageDeduplicationId"] for e in entries], "dedup ids in the DLQ, in order")
    eq({m["Attributes"].get("MessageGroupId") for m in msgs}, {"complexMessageGroupId"}, "group in the DLQ")
    bodies = [m["Body"] if raw else envelope(m)["Message"] for m in msgs]
    eq(bodies, [e["Message"] for e in entries], "messages in the DLQ")
    if not raw:
        check_envelope(envelope(msgs[0]), topic, sub, entries[0]["Message"], subject="Subject", fifo=True,
                       attrs={"attr1": {"Type": "Number", "Value": "99.12"},
                              "attr2": {"Type": "Number", "Value": "109.12"}})
    out = sns.publish(TopicArn=topic, Message="test-message", MessageGroupId="message-group-id-1",
                      MessageDeduplicationId="message-deduplication-id-1")
    assert out.get("SequenceNumber"), out
    (msg,) = drain(dlq_url, 1)
    eq(msg["Attributes"].get("MessageDeduplicationId"), "message-deduplication-id-1", "dedup id in the DLQ")
    eq(msg["Attributes"].get("MessageGroupId"), "message-group-id-1", "group in the DLQ")


@sns_case("sns-publish", "N5, N7", RECORDED + "TestSNSSubscriptionSQSFifo::test_publish_fifo_messages_to_dlq[True]")
def sns_fifo_dlq_raw():
    sns_fifo_dlq(True)


@sns_case("sns-publish", "N5, N7", RECORDED + "TestSNSSubscriptionSQSFifo::test_publish_fifo_messages_to_dlq[False]")
def sns_fifo_dlq_envelope():
    sns_fifo_dlq(False)


# ---- signatures and the bare Query API ----------------------------------------------

def verify_signature(body):
    """Verifies an envelope's signature with the certificate at its
    SigningCertURL, over the fields SNS signs for a notification."""
    import urllib.request

    import rsa
    from pyasn1.codec.der import decoder, encoder

    with urllib.request.urlopen(body["SigningCertURL"], timeout=10) as resp:
        pem = resp.read()
    der = base64.b64decode(b"".join(line for line in pem.splitlines() if not line.startswith(b"-----")))
    cert, _ = decoder.decode(der)
    public_key = rsa.PublicKey.load_pkcs1_openssl_der(encoder.encode(cert[0][6]))  # tbsCertificate.subjectPublicKeyInfo
    fields = ["Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"]
    signed = "".join(f"{f}\n{body[f]}\n" for f in fields if f in body).encode()
    return rsa.verify(signed, base64.b64decode(body["Signature"]), public_key)


def sns_signature(version):
    topic = new_topic("sg", attributes={"DisplayName": "TestTopicSignature", "SignatureVersion": version})
    url, q_arn = sqs_target()
    sub = subscribe_queue(topic, q_arn)
    sns.publish(TopicArn=topic, Message="test signature value with attributes",
                MessageAttributes={"attr1": {"DataType": "Number", "StringValue": "1"}})
    (msg,) = drain(url, 1)
    body = envelope(msg)
    eq(body["SignatureVersion"], version, "SignatureVersion")
    body_v1 = dict(body, SignatureVersion="1")
    check_envelope(body_v1, topic, sub, "test signature value with attributes",
                   attrs={"attr1": {"Type": "Number", "Value": "1"}})
    eq(verify_signature(body), "SHA-1" if version == "1" else "SHA-256", "signature's hash")


@sns_case("sns-publish", "N3", RECORDED + "TestSNSSubscriptionSQS::test_publish_sqs_verify_signature[1]")
def sns_envelope_signature_v1_verifies():
    sns_signature("1")


@sns_case("sns-publish", "N3", RECORDED + "TestSNSSubscriptionSQS::test_publish_sqs_verify_signature[2]")
def sns_envelope_signature_v2_verifies():
    sns_signature("2")


@sns_case("sns-publish", "N1, N3", RECORDED + "TestSNSPublishCrud::test_publish_by_path_parameters")
def sns_publish_by_bare_signed_post():
    import urllib.parse
    import urllib.request

    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    topic, url, sub = topic_to_queue()
    params = {"Action": "Publish", "Version": "2010-03-31", "TopicArn": topic,
              "Message": "test message direct post request"}
    req = AWSRequest(method="POST", url=ENDPOINT + "/", params=params)
    SigV4Auth(Credentials("AKIDSLUICEFIDELITY", "sluice-fidelity-secret"), "sns", REGION).add_auth(req)
    prepared = req.prepare()
    r = urllib.request.Request(prepared.url, headers=dict(prepared.headers), method="POST")
    with urllib.request.urlopen(r, timeout=30) as resp:
        status, text = resp.status, resp.read().decode()
    eq(status, 200, "status")
    assert "<PublishResponse" in text and "<MessageId>" in text, text
    (msg,) = drain(url, 1)
    check_envelope(envelope(msg), topic, sub, "test message direct post request")


@sns_case("sns-publish", "N1, N2", RECORDED + "TestSNSMultiRegions::test_cross_region_delivery_sqs")
def sns_topic_delivers_to_queue_of_another_region():
    from fidelity import _created, make_client, unique

    topic = new_topic("pt")
    west_sqs = make_client("us-west-2")
    url = west_sqs.create_queue(QueueName=unique("west"))["QueueUrl"]
    _created.append((west_sqs, url))
    q_arn = west_sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    west_sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": json.dumps({"Statement": [{
        "Effect": "Allow", "Principal": {"Service": "sns.amazonaws.com"}, "Action": "sqs:SendMessage",
        "Resource": q_arn, "Condition": {"ArnEquals": {"aws:SourceArn": topic}}}]})})
    expect_sns_error(make_sns("us-west-2").subscribe, TopicArn=topic, Protocol="sqs", Endpoint=q_arn,
                     code="InvalidParameter", message="Invalid parameter: TopicArn")
    sub = sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=q_arn)["SubscriptionArn"]
    assert sub.startswith(topic + ":"), sub
    sns.publish(TopicArn=topic, Message="This is a test message",
                MessageAttributes={"attr1": {"DataType": "Number", "StringValue": "99.12"}})
    msgs = west_sqs.receive_message(QueueUrl=url, WaitTimeSeconds=2, MessageAttributeNames=["All"]).get("Messages", [])
    eq(len(msgs), 1, "messages in the other region's queue")
    check_envelope(envelope(msgs[0]), topic, sub, "This is a test message",
                   attrs={"attr1": {"Type": "Number", "Value": "99.12"}})


@sns_case("sns-publish", "N3", RECORDED + "TestSNSSubscriptionSQS::test_publish_sqs_from_sns_with_xray_propagation")
def sns_trace_header_reaches_the_queue():
    trace = "Root=1-3152b799-8954dae64eda91bc9a23a7e8;Parent=7fa8c0f79203be72;Sampled=1"
    topic, url, sub = topic_to_queue()
    traced = make_sns()

    def add_trace(request, **_):
        request.headers["X-Amzn-Trace-Id"] = trace

    traced.meta.events.register("before-send.sns.Publish", add_trace)
    traced.publish(TargetArn=topic, Message="X-Ray propagation test msg")
    msgs = sqs.receive_message(QueueUrl=url, AttributeNames=["SentTimestamp", "AWSTraceHeader"],
                               WaitTimeSeconds=2).get("Messages", [])
    eq(len(msgs), 1, "messages")
    eq(msgs[0]["Attributes"].get("AWSTraceHeader"), trace, "AWSTraceHeader")
    check_envelope(envelope(msgs[0]), topic, sub, "X-Ray propagation test msg")


@sns_case("sns-publish", "N7", RECORDED + "TestSNSSubscriptionSQSFifo::test_message_to_fifo_sqs_ordering "
          "(validated against AWS; its answer is an assertion, not a snapshot)")
def sns_fifo_topic_keeps_group_order_in_every_queue():
    topic = new_topic("po", fifo=True, attributes={"ContentBasedDeduplication": "true"})
    urls = []
    for _ in range(5):
        url, q_arn = sqs_target(fifo=True, attributes={"ContentBasedDeduplication": "true"})
        subscribe_queue(topic, q_arn, raw=True)
        urls.append(url)
    for i in range(10):
        sns.publish(TopicArn=topic, Message=str(i), MessageGroupId="message-group-id-1")
    for url in urls:
        eq([m["Body"] for m in drain(url, 10)], [str(i) for i in range(10)], "order in a queue")

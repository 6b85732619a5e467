"""Fidelity cases: message-level actions of standard queues. See fidelity.py for the conventions."""

import time

import fidelity

from fidelity import *  # noqa: F401,F403
from fidelity import case, eq, expect_error, md5_of_attributes, name_of, new_queue, receive, sqs

SNAP = "AWS recorded answer, LocalStack snapshot test_sqs.py::"
# Snapshots recorded in 2024-2025, in both protocols ([sqs] and [sqs_query]).
IPV = "InvalidParameterValue"
IPV_JSON = "InvalidParameterValueException"


def _one(url, **kwargs):
    """Receives exactly one message (long-polling a little) and returns it."""
    kwargs.setdefault("WaitTimeSeconds", 2)
    msgs = receive(url, **kwargs)
    eq(len(msgs), 1, "messages received")
    return msgs[0]


# ---- receive parameters -------------------------------------------------------
@case("core", "L3, L7", SNAP + "test_send_receive_max_number_of_messages")
def receive_max_number_of_messages_out_of_range():
    url = new_queue("msg-max")
    sqs.send_message(QueueUrl=url, MessageBody="message")
    expect_error(
        sqs.receive_message, QueueUrl=url, MaxNumberOfMessages=11, code=IPV, json_type=IPV_JSON,
        message="Value 11 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided.",
    )
    expect_error(
        sqs.receive_message, QueueUrl=url, MaxNumberOfMessages=0, code=IPV, json_type=IPV_JSON,
        message="Value 0 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided.",
    )


@case("core", "L3, L7", SNAP + "test_send_receive_wait_time_seconds")
def receive_wait_time_seconds_out_of_range():
    url = new_queue("msg-wait")
    for value in (-1, 21):
        expect_error(
            sqs.receive_message, QueueUrl=url, WaitTimeSeconds=value, code=IPV, json_type=IPV_JSON,
            message=f"Value {value} for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20, if provided.",
        )


@case("core", "L3, L7", "not recorded by LocalStack: AWS's wording as other SQS emulators' tests record it, the same as WaitTimeSeconds'")
def receive_visibility_timeout_out_of_range():
    url = new_queue("msg-vis")
    for value in (-1, 43201):
        expect_error(
            sqs.receive_message, QueueUrl=url, VisibilityTimeout=value, code=IPV, json_type=IPV_JSON,
            message=f"Value {value} for parameter VisibilityTimeout is invalid. Reason: Must be >= 0 and <= 43200, if provided.",
        )


# ---- sizes and contents -------------------------------------------------------
ATTR_K = {"k": {"DataType": "String", "StringValue": "x"}}
ATTR_K_SIZE = len("k") + len("String") + len("x")


@case("core", "L1", SNAP + "test_send_oversized_message")
def send_oversized_message():
    url = new_queue("msg-big")
    expect_error(
        sqs.send_message, QueueUrl=url, MessageBody="a" * (1048576 - ATTR_K_SIZE + 1), MessageAttributes=ATTR_K,
        code=IPV, json_type=IPV_JSON,
        message="One or more parameters are invalid. Reason: Message must be shorter than 1048576 bytes.",
    )


@case("core", "L1", SNAP + "test_send_message_with_updated_maximum_message_size")
def send_message_over_updated_maximum_size():
    url = new_queue("msg-max-size")
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"MaximumMessageSize": "1024"})
    sqs.send_message(QueueUrl=url, MessageBody="a" * 1024)
    expect_error(
        sqs.send_message, QueueUrl=url, MessageBody="a" * (1024 - ATTR_K_SIZE + 1), MessageAttributes=ATTR_K,
        code=IPV, json_type=IPV_JSON,
        message="One or more parameters are invalid. Reason: Message must be shorter than 1024 bytes.",
    )


@case("core", "L2", SNAP + "test_send_message_batch_with_oversized_contents")
def send_batch_oversized():
    limit = 1048576
    url = new_queue("msg-batch-big")
    expect_error(
        sqs.send_message_batch, QueueUrl=url,
        Entries=[
            {"Id": "1", "MessageBody": "a" * (limit - ATTR_K_SIZE), "MessageAttributes": ATTR_K},
            {"Id": "2", "MessageBody": "a"},
        ],
        code="AWS.SimpleQueueService.BatchRequestTooLong", json_type="BatchRequestTooLong",
        message=f"Batch requests cannot be longer than {limit} bytes. You have sent {limit + 1} bytes.",
    )


@case("core", "L2, V23", SNAP + "test_send_message_batch_with_oversized_contents_with_updated_maximum_message_size")
def send_batch_all_successful():
    url = new_queue("msg-batch-ok")
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"MaximumMessageSize": "2048"})
    out = sqs.send_message_batch(
        QueueUrl=url,
        Entries=[
            {"Id": "1", "MessageBody": "a" * (2048 - ATTR_K_SIZE), "MessageAttributes": ATTR_K},
            {"Id": "2", "MessageBody": "a"},
        ],
    )
    ok = sorted(out["Successful"], key=lambda e: e["Id"])
    eq([e["Id"] for e in ok], ["1", "2"], "successful ids")
    eq(ok[0]["MD5OfMessageAttributes"], "a45daa70926828a2f0a1db3418e6feb4", "MD5OfMessageAttributes")
    eq(ok[0]["MD5OfMessageBody"], "f44facf5a7ee0af446ecf3e0f854441e", "MD5OfMessageBody 1")
    eq(ok[1]["MD5OfMessageBody"], "0cc175b9c0f1b6a831c399e269772661", "MD5OfMessageBody 2")
    assert "MD5OfMessageAttributes" not in ok[1], ok[1]
    assert "Failed" not in out, out


@case("core", "L1, L7, V23", "AWS recorded answer, LocalStack snapshot test_sqs.py::test_send_batch_message_size")
def send_batch_entry_over_the_size_limit():
    url = new_queue("msg-batch-size", attributes={"MaximumMessageSize": "1024"})
    out = sqs.send_message_batch(
        QueueUrl=url,
        Entries=[{"Id": "fits", "MessageBody": "a" * 1024}, {"Id": "too-big", "MessageBody": "a" * 1025}],
    )
    eq([e["Id"] for e in out["Successful"]], ["fits"], "successful")
    eq(out["Successful"][0]["MD5OfMessageBody"], "c9a34cfc85d982698c6ac89f76071abd", "MD5OfMessageBody")
    eq(out["Failed"], [{
        "Id": "too-big", "SenderFault": True, "Code": IPV,
        "Message": "One or more parameters cannot be validated. Reason: Message must be shorter than 1024 bytes.",
    }], "failed")


@case("core", "V23", "AWS answers of batches, LocalStack snapshots (a list with no entry is left out)")
def batch_with_only_failures_has_no_successful_member():
    url = new_queue("msg-batch-fail")
    out = sqs.delete_message_batch(QueueUrl=url, Entries=[{"Id": "a", "ReceiptHandle": "garbage"}])
    assert "Successful" not in out, out
    eq([(f["Id"], f["Code"], f["SenderFault"]) for f in out["Failed"]], [("a", "ReceiptHandleIsInvalid", True)], "failed")


@case("core", "L2", SNAP + "test_too_many_entries_in_batch_request")
def batch_too_many_entries():
    url = new_queue("msg-batch-many")
    entries = [{"Id": f"message-{i}", "MessageBody": f"messageBody-{i}"} for i in range(20)]
    expect_error(
        sqs.send_message_batch, QueueUrl=url, Entries=entries,
        code="AWS.SimpleQueueService.TooManyEntriesInBatchRequest", json_type="TooManyEntriesInBatchRequest",
        message="Maximum number of entries per request are 10. You have sent 20.",
    )
    handles = [{"Id": str(i), "ReceiptHandle": "h"} for i in range(20)]
    expect_error(
        sqs.delete_message_batch, QueueUrl=url, Entries=handles,
        code="AWS.SimpleQueueService.TooManyEntriesInBatchRequest", json_type="TooManyEntriesInBatchRequest",
        message="Maximum number of entries per request are 10. You have sent 20.",
    )
    changes = [{"Id": str(i), "ReceiptHandle": "h", "VisibilityTimeout": 123} for i in range(20)]
    expect_error(
        sqs.change_message_visibility_batch, QueueUrl=url, Entries=changes,
        code="AWS.SimpleQueueService.TooManyEntriesInBatchRequest", json_type="TooManyEntriesInBatchRequest",
        message="Maximum number of entries per request are 10. You have sent 20.",
    )


@case("core", "L2", SNAP + "test_invalid_batch_id, test_delete_message_batch_invalid_msg_id")
def batch_invalid_entry_ids():
    url = new_queue("msg-batch-id")
    msg = "A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long."
    expect_error(
        sqs.send_message_batch, QueueUrl=url, Entries=[{"Id": "message:abc", "MessageBody": "b"}],
        code="AWS.SimpleQueueService.InvalidBatchEntryId", json_type="InvalidBatchEntryId", message=msg,
    )
    for bad in ("", "testLongId" * 10, "invalid:id"):
        expect_error(
            sqs.delete_message_batch, QueueUrl=url, Entries=[{"Id": bad, "ReceiptHandle": "testHandle1"}],
            code="AWS.SimpleQueueService.InvalidBatchEntryId", json_type="InvalidBatchEntryId", message=msg,
        )


@case("core", "L1", "AWS recorded answer, LocalStack test_sqs.py::test_batch_send_with_invalid_char_should_succeed")
def batch_entry_with_invalid_characters_fails_alone():
    url = new_queue("msg-batch-char")
    entries = [{"Id": str(i), "MessageBody": str(i)} for i in range(9)] + [{"Id": "9", "MessageBody": "\x01"}]
    out = sqs.send_message_batch(QueueUrl=url, Entries=entries)
    eq(len(out["Successful"]), 9, "successful")
    eq([(f["Id"], f["Code"]) for f in out["Failed"]], [("9", "InvalidMessageContents")], "failed")


# ---- message attributes -------------------------------------------------------
@case("core", "L3", SNAP + "test_send_message_with_empty_string_attribute")
def send_empty_string_attribute():
    url = new_queue("msg-empty-attr")
    expect_error(
        sqs.send_message, QueueUrl=url, MessageBody="test",
        MessageAttributes={"ErrorDetails": {"StringValue": "", "DataType": "String"}},
        code=IPV, json_type=IPV_JSON,
        message="Message (user) attribute 'ErrorDetails' must contain a non-empty value of type 'String'.",
    )


@case("core", "L6", "AWS recorded answer, LocalStack test_sqs.py::test_send_message_with_invalid_string_attributes")
def attribute_names_accept_any_letters_refuse_reserved():
    url = new_queue("msg-attr-names")
    valid = {"attr.1øßä": {"StringValue": "Valida", "DataType": "String"}}
    out = sqs.send_message(QueueUrl=url, MessageBody="test", MessageAttributes=valid)
    eq(out["MD5OfMessageAttributes"], md5_of_attributes(valid), "MD5OfMessageAttributes")
    got = _one(url, MessageAttributeNames=["All"])
    eq(got["MessageAttributes"], valid, "attributes received")
    invalid_names = [f"{p}-Invalid-attr" for p in ("aWs.", "AMAZON.", ".")]
    invalid_names += [f"Invalid-{c}-attr" for c in ("!", '"', "§", "(", "?")]
    invalid_names += ["L" * 257, "Invalid."]
    for name in invalid_names:
        expect_error(
            sqs.send_message, QueueUrl=url, MessageBody="test",
            MessageAttributes={name: {"StringValue": "Valid", "DataType": "String"}},
            code=IPV, json_type=IPV_JSON,
        )
    for data_type in ("Invalid", "Number." + "L" * 256):
        expect_error(
            sqs.send_message, QueueUrl=url, MessageBody="test",
            MessageAttributes={"Attribute_name": {"StringValue": "Valid", "DataType": data_type}},
            code=IPV, json_type=IPV_JSON,
        )
    expect_error(
        sqs.send_message, QueueUrl=url, MessageBody="test",
        MessageAttributes={"attr1": {"StringValue": f"Invalid-{chr(8)},{chr(11)}", "DataType": "String"}},
        code=IPV, json_type=IPV_JSON,
    )


@case("core", "W4", SNAP + "test_send_message_with_binary_attributes")
def binary_attribute_round_trip():
    url = new_queue("msg-bin")
    attrs = {"attr1": {"BinaryValue": b"traceparent\x1e00-774062d6c37081a5a0b9b5b88e30627c-2d2482211f6489da-01", "DataType": "Binary"}}
    sent = sqs.send_message(QueueUrl=url, MessageBody="test", MessageAttributes=attrs)
    got = _one(url, MessageAttributeNames=["All"])
    eq(got["MD5OfMessageAttributes"], "8cbe4db156db8a94db8b801b7addb984", "MD5OfMessageAttributes")
    eq(sent["MD5OfMessageAttributes"], "8cbe4db156db8a94db8b801b7addb984", "sent MD5OfMessageAttributes")
    eq(got["MessageAttributes"], attrs, "attributes")
    eq(got["MD5OfBody"], "098f6bcd4621d373cade4e832627b4f6", "MD5OfBody")


HELLO_ATTRS = {
    "Help.Me": {"DataType": "String", "StringValue": "Me"},
    "Hello": {"DataType": "String", "StringValue": "There"},
    "General": {"DataType": "String", "StringValue": "Kenobi"},
}


@case("core", "V21", SNAP + "test_receive_message_message_attribute_names_filters")
def receive_message_attribute_name_filters():
    url = new_queue("msg-filter", attributes={"VisibilityTimeout": "0"})
    sent = sqs.send_message(QueueUrl=url, MessageBody="msg", MessageAttributes=HELLO_ATTRS)
    eq(sent["MD5OfMessageAttributes"], "4c360f3fdafd970e05fae2f149d997f5", "sent digest")
    eq(sent["MD5OfMessageBody"], "6e2baaf3b97dbeef01c0043275f9a0e7", "body digest")

    def get(names):
        return _one(url, MessageAttributeNames=names)

    m = get([])
    assert "MessageAttributes" not in m and "MD5OfMessageAttributes" not in m, m
    for names in (["All"], ["*"], [".*"]):
        m = get(names)
        eq(m.get("MessageAttributes"), HELLO_ATTRS, f"attributes for {names}")
        eq(m.get("MD5OfMessageAttributes"), "4c360f3fdafd970e05fae2f149d997f5", f"digest for {names}")
    m = get(["Foo", "Help"])
    assert "MessageAttributes" not in m and "MD5OfMessageAttributes" not in m, m
    expected = {
        ("Hello", "General"): (["General", "Hello"], "fca026605781cb4126a1e9044df24232"),
        ("Foo", "Hello"): (["Hello"], "a311262e065454b75da111d535b8dacd"),
        ("Hel.*",): (["Hello", "Help.Me"], "83fee93c1bcd8b9a5a923ffacdc636c7"),
    }
    for names, (keys, digest) in expected.items():
        m = get(list(names))
        eq(sorted(m.get("MessageAttributes", {})), keys, f"attribute names for {names}")
        eq(m.get("MD5OfMessageAttributes"), digest, f"digest for {names}")
    for names in (["AWS."], ["..foo"]):
        m = get(names)
        assert "MessageAttributes" not in m and "MD5OfMessageAttributes" not in m, (names, m)


@case("core", "V2, V21", SNAP + "test_receive_message_attribute_names_filters")
def receive_system_attribute_name_filters():
    url = new_queue("msg-sysfilter", attributes={"VisibilityTimeout": "0"})
    sqs.send_message(
        QueueUrl=url, MessageBody="msg", MessageAttributes={"Foo": {"DataType": "String", "StringValue": "Bar"}}
    )

    def get(names, user=None):
        params = {"AttributeNames": names, "MessageAttributeNames": user or []}
        return _one(url, **params)

    m = get(["All"])
    eq(sorted(m["Attributes"]), ["ApproximateFirstReceiveTimestamp", "ApproximateReceiveCount", "SenderId", "SentTimestamp"], "All")
    eq(m["Attributes"]["ApproximateReceiveCount"], "1", "receive count")
    assert "MessageAttributes" not in m and "MD5OfMessageAttributes" not in m, m
    m = get(["All"], ["All"])
    eq(m["Attributes"]["ApproximateReceiveCount"], "2", "receive count")
    eq(m["MD5OfMessageAttributes"], "ae7155c6026991b6d54b11589678bf9c", "digest")
    eq(m["MessageAttributes"], {"Foo": {"DataType": "String", "StringValue": "Bar"}}, "attributes")
    eq(sorted(get(["SenderId"])["Attributes"]), ["SenderId"], "single")
    eq(sorted(get(["SenderId", "SequenceNumber"])["Attributes"]), ["SenderId"], "multiple on a standard queue")


@case("core", "W4, V22", "AWS recorded answer, LocalStack test_sqs.py::test_system_attributes_have_no_effect_on_attr_md5")
def system_attributes_digest():
    url = new_queue("msg-sysmd5")
    attrs = {"timestamp": {"StringValue": "1493147359900", "DataType": "Number"}}
    trace = {"AWSTraceHeader": {
        "StringValue": "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1",
        "DataType": "String",
    }}
    plain = sqs.send_message(QueueUrl=url, MessageBody="test", MessageAttributes=attrs)
    traced = sqs.send_message(QueueUrl=url, MessageBody="test", MessageAttributes=attrs, MessageSystemAttributes=trace)
    eq(plain["MD5OfMessageAttributes"], traced["MD5OfMessageAttributes"], "MD5OfMessageAttributes")
    assert "MD5OfMessageSystemAttributes" not in plain, plain
    eq(traced.get("MD5OfMessageSystemAttributes"), "5ae4d5d7636402d80f4eb6d213245a88", "MD5OfMessageSystemAttributes")


@case("core", "V22", SNAP + "test_aws_trace_header_propagation (AWSTraceHeader from the send's X-Amzn-Trace-Id header)")
def trace_header_becomes_system_attribute():
    url = new_queue("msg-trace")
    value = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"

    def add_header(request, **_):
        request.headers["X-Amzn-Trace-Id"] = value

    sqs.meta.events.register_first("before-sign.sqs.SendMessage", add_header)
    try:
        sqs.send_message(QueueUrl=url, MessageBody="traced")
    finally:
        sqs.meta.events.unregister("before-sign.sqs.SendMessage", add_header)
    m = _one(url, **{SYSTEM_ATTRS_PARAM: ["AWSTraceHeader"]})
    eq(m.get("Attributes"), {"AWSTraceHeader": value}, "Attributes")
    sqs.send_message(QueueUrl=url, MessageBody="untraced")
    m = _one(url, **{SYSTEM_ATTRS_PARAM: ["All"]})
    assert "AWSTraceHeader" not in m.get("Attributes", {}), m


# ---- receipt handles ------------------------------------------------------------
@case("core", "V4", "AWS recorded answer, LocalStack test_sqs.py::test_delete_message_with_illegal_receipt_handle")
def delete_with_illegal_handle():
    url = new_queue("msg-del-bad")
    expect_error(
        sqs.delete_message, QueueUrl=url, ReceiptHandle="garbage",
        code="ReceiptHandleIsInvalid", json_type="ReceiptHandleIsInvalid",
        message='The input receipt handle "garbage" is not a valid receipt handle.',
    )


@case("core", "V4", "AWS recorded answer, LocalStack test_sqs.py::test_delete_message_with_deleted_receipt_handle, test_remove_message_with_old_receipt_handle")
def delete_twice_and_after_expiry():
    url = new_queue("msg-del-twice")
    sqs.send_message(QueueUrl=url, MessageBody="foo")
    handle = _one(url)["ReceiptHandle"]
    for _ in range(3):
        sqs.delete_message(QueueUrl=url, ReceiptHandle=handle)
    sqs.send_message(QueueUrl=url, MessageBody="test")
    handle = _one(url, VisibilityTimeout=1)["ReceiptHandle"]
    time.sleep(1.5)
    sqs.delete_message(QueueUrl=url, ReceiptHandle=handle)
    eq(receive(url), [], "queue after delete with an expired handle")


@case("core", "V5", "AWS recorded answer, LocalStack test_sqs.py::test_change_visibility_on_deleted_message_raises_invalid_parameter_value, test_invalid_receipt_handle_should_return_error_message")
def change_visibility_of_deleted_message():
    url = new_queue("msg-cmv-del")
    sqs.send_message(QueueUrl=url, MessageBody="foo")
    handle = _one(url)["ReceiptHandle"]
    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=42)
    sqs.delete_message(QueueUrl=url, ReceiptHandle=handle)
    expect_error(
        sqs.change_message_visibility, QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=42,
        code=IPV, json_type=IPV_JSON,
        message=f"Value {handle} for parameter ReceiptHandle is invalid. Reason: Message does not exist or is not available for visibility timeout change.",
    )
    expect_error(
        sqs.change_message_visibility, QueueUrl=url, ReceiptHandle="INVALID", VisibilityTimeout=60,
        code="ReceiptHandleIsInvalid", json_type="ReceiptHandleIsInvalid",
    )


@case("core", "V20", SNAP + "test_change_message_visibility_after_visibility_timeout_expiration")
def change_visibility_after_expiry():
    url = new_queue("msg-cmv-exp", attributes={"VisibilityTimeout": "1"})
    sqs.send_message(QueueUrl=url, MessageBody="test")
    handle = _one(url)["ReceiptHandle"]
    time.sleep(1.5)
    out = sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=30)
    eq(out["ResponseMetadata"]["HTTPStatusCode"], 200, "status")
    # The change hides it again, as for a message in flight.
    eq(receive(url), [], "after the change")


@case("core", "V20", "AWS recorded answer (ChangeMessageVisibility after a receive with VisibilityTimeout=0), lead's brief; LocalStack test_sqs.py::test_terminate_visibility_timeout_after_receive")
def change_visibility_after_zero_timeout_receive():
    url = new_queue("msg-cmv-zero")
    sqs.send_message(QueueUrl=url, MessageBody="test")
    handle = _one(url, VisibilityTimeout=0)["ReceiptHandle"]
    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=30)
    eq(receive(url), [], "after the change")
    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=0)
    eq(len(receive(url)), 1, "after making it visible again")


@case("core", "V5", "AWS recorded answer, LocalStack test_sqs.py::test_terminate_visibility_timeout_after_receive")
def change_visibility_with_older_handle():
    url = new_queue("msg-cmv-old")
    sqs.send_message(QueueUrl=url, MessageBody="test")
    first = _one(url, VisibilityTimeout=0)["ReceiptHandle"]
    eq(len(receive(url, VisibilityTimeout=3)), 1, "second receive")
    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=first, VisibilityTimeout=0)
    eq(len(receive(url, WaitTimeSeconds=1)), 1, "visible again through the first handle")


@case("core", "V2", "AWS recorded answer, LocalStack test_sqs.py::test_receive_terminate_visibility_timeout")
def receive_with_zero_visibility():
    url = new_queue("msg-vt0")
    sqs.send_message(QueueUrl=url, MessageBody="foobar")
    h0 = _one(url, VisibilityTimeout=0)["ReceiptHandle"]
    h1 = _one(url)["ReceiptHandle"]
    assert h0 != h1, "receipt handles should differ"
    eq(receive(url), [], "third receive")


# ---- bodies and round trips -------------------------------------------------------
@case("core", "L1", "AWS recorded answer, LocalStack test_sqs.py::test_send_message_with_invalid_payload_characters")
def send_invalid_body_characters():
    url = new_queue("msg-badbody")
    expect_error(
        sqs.send_message, QueueUrl=url, MessageBody=f"Invalid-{chr(0)}-{chr(8)}-{chr(19)}-{chr(65535)}",
        code="InvalidMessageContents", json_type="InvalidMessageContents",
    )


@case("core", "L1", SNAP + "test_send_empty_message")
def send_empty_message():
    url = new_queue("msg-empty")
    expect_error(
        sqs.send_message, QueueUrl=url, MessageBody="", code="MissingParameter",
        json_type="MissingRequiredParameterException",
        message="The request must contain the parameter MessageBody.",
    )


@case("core", "F1", SNAP + "test_send_message_to_standard_queue_with_invalid_message_group_id")
def standard_send_with_invalid_message_group_id():
    url = new_queue("msg-badgroup")
    for group in ("", "a" * 129, "group 123"):
        expect_error(
            sqs.send_message, QueueUrl=url, MessageBody="m", MessageGroupId=group, code=IPV, json_type=IPV_JSON,
            message=f"Value {group} for parameter MessageGroupId is invalid. Reason: MessageGroupId can only include alphanumeric and punctuation characters. 1 to 128 in length.",
        )


@case("core", "L2", "AWS recorded answer, LocalStack test_sqs.py::test_send_message_batch_with_empty_list")
def send_batch_with_no_entries():
    url = new_queue("msg-batch-empty")
    expect_error(
        sqs.send_message_batch, QueueUrl=url, Entries=[],
        code="AWS.SimpleQueueService.EmptyBatchRequest", json_type="EmptyBatchRequest",
    )


@case("core", "V1, W4", "AWS recorded answer, LocalStack test_sqs.py::test_send_receive_message, test_sequence_number, test_receive_message_attributes_timestamp_types")
def send_receive_digests_and_timestamps():
    url = new_queue("msg-basic")
    sent = sqs.send_message(QueueUrl=url, MessageBody="message")
    eq(sent["MD5OfMessageBody"], "78e731027d8fd50ed642340b7c9a63b3", "MD5OfMessageBody")
    assert "SequenceNumber" not in sent and "MD5OfMessageAttributes" not in sent, sent
    m = _one(url, VisibilityTimeout=0, **{SYSTEM_ATTRS_PARAM: ["All"]})
    eq(m["MessageId"], sent["MessageId"], "MessageId")
    eq(m["MD5OfBody"], sent["MD5OfMessageBody"], "MD5OfBody")
    attrs = m["Attributes"]
    for name in ("SentTimestamp", "ApproximateFirstReceiveTimestamp"):
        assert attrs[name].isdigit(), (name, attrs[name])
    assert abs(int(attrs["SentTimestamp"]) - int(attrs["ApproximateFirstReceiveTimestamp"])) < 5000, attrs


@case("core", "W1", "AWS recorded answer, LocalStack test_sqs.py::test_send_receive_message_encoded_content, test_message_with_carriage_return")
def body_with_markup_and_carriage_returns_round_trips():
    url = new_queue("msg-enc")
    for body in ('"&quot;&quot;\r', "{\r\n" + '"machineID" : "d357006e26ff47439e1ef894225d4307"' + "}"):
        sent = sqs.send_message(QueueUrl=url, MessageBody=body)
        m = _one(url)
        eq(m["Body"], body, "Body")
        eq(m["MD5OfBody"], sent["MD5OfMessageBody"], "MD5OfBody")
        sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])


@case("core", "L3", "AWS recorded answer, LocalStack test_sqs.py::test_message_with_attributes_should_be_enqueued, test_send_message_with_attributes")
def number_and_string_attributes_round_trip():
    url = new_queue("msg-num")
    attrs = {
        "timestamp": {"DataType": "Number", "StringValue": "1614717034367"},
        "attr1": {"StringValue": "test1", "DataType": "String"},
    }
    sent = sqs.send_message(QueueUrl=url, MessageBody="test", MessageAttributes=attrs)
    m = _one(url, MessageAttributeNames=["All"])
    eq(m["MessageAttributes"], attrs, "attributes")
    eq(m["MD5OfMessageAttributes"], sent["MD5OfMessageAttributes"], "digest")


@case("core", "V1", "AWS recorded answer, LocalStack test_sqs.py::test_posting_to_queue_via_queue_name")
def send_with_queue_name_as_url():
    url = new_queue("msg-byname")
    out = sqs.send_message(QueueUrl=name_of(url), MessageBody="Using name instead of URL")
    eq(out["MD5OfMessageBody"], "86a83f96652a1bfad3891e7d523750cb", "MD5OfMessageBody")
    eq(len(receive(url, WaitTimeSeconds=1)), 1, "message in the queue")


@case("core", "V6", SNAP + "test_receive_empty_queue")
def receive_from_an_empty_queue_has_no_messages_member():
    url = new_queue("msg-empty-recv")
    for params in ({}, {"WaitTimeSeconds": 0}, {"WaitTimeSeconds": 1}):
        out = sqs.receive_message(QueueUrl=url, **params)
        assert "Messages" not in out, (params, out)


@case("core", "V2, V10", SNAP + "test_fair_queue_with_message_group_id")
def standard_queue_message_group_id_is_a_system_attribute():
    url = new_queue("msg-fair")
    sent = sqs.send_message(QueueUrl=url, MessageBody="message", MessageGroupId="test")
    eq(sent["MD5OfMessageBody"], "78e731027d8fd50ed642340b7c9a63b3", "MD5OfMessageBody")
    assert "SequenceNumber" not in sent, sent
    m = _one(url, AttributeNames=["All"])
    eq(sorted(m["Attributes"]), ["ApproximateFirstReceiveTimestamp", "ApproximateReceiveCount", "MessageGroupId", "SenderId", "SentTimestamp"], "Attributes")
    eq(m["Attributes"]["MessageGroupId"], "test", "MessageGroupId")


# ---- round 2: the rest of the newest recordings (localemu/localemu@3098669, localstack@e9660e2) ----
VALIDATED = "AWS-validated test (asserts recorded against AWS), test_sqs.py::"


def _bodies(msgs):
    return sorted(m["Body"] for m in msgs)


def _receive_raw(url, **kwargs):
    """ReceiveMessage returning the whole answer (to see which members are present)."""
    return sqs.receive_message(QueueUrl=url, **kwargs)


@case("core", "V6", SNAP + "test_send_receive_wait_time_seconds (the two short polls after the refused ones)")
def short_polls_each_return_one_message():
    url = new_queue("msg-short")
    for _ in range(2):
        sqs.send_message(QueueUrl=url, MessageBody="message")
    expect_error(sqs.receive_message, QueueUrl=url, WaitTimeSeconds=21, code=IPV, json_type=IPV_JSON)
    expect_error(sqs.receive_message, QueueUrl=url, WaitTimeSeconds=-1, code=IPV, json_type=IPV_JSON)
    for params in ({"MaxNumberOfMessages": 1}, {"MaxNumberOfMessages": 1, "WaitTimeSeconds": 0}):
        out = _receive_raw(url, **params)
        eq(len(out.get("Messages", [])), 1, f"messages for {params}")
        m = out["Messages"][0]
        eq(sorted(m), ["Body", "MD5OfBody", "MessageId", "ReceiptHandle"], "members of the message")
        eq((m["Body"], m["MD5OfBody"]), ("message", "78e731027d8fd50ed642340b7c9a63b3"), "body and digest")


@case("core", "V1", VALIDATED + "test_send_receive_message_multiple_queues")
def a_message_is_received_only_from_its_queue():
    q0, q1 = new_queue("msg-q0"), new_queue("msg-q1")
    sqs.send_message(QueueUrl=q0, MessageBody="message")
    assert "Messages" not in _receive_raw(q1), "the other queue is empty"
    eq(_bodies(receive(q0)), ["message"], "the queue sent to")


@case("core", "V1", VALIDATED + "test_send_message_batch, test_send_batch_receive_multiple")
def batch_messages_are_received_like_single_ones():
    url = new_queue("msg-batch-recv")
    sqs.send_message_batch(QueueUrl=url, Entries=[{"Id": "1", "MessageBody": "message-0"}, {"Id": "2", "MessageBody": "message-1"}])
    first, second = receive(url), receive(url)
    eq((len(first), len(second)), (1, 1), "one message per receive by default")
    eq(_bodies(first + second), ["message-0", "message-1"], "bodies")
    eq(receive(url), [], "third receive")
    url = new_queue("msg-batch-recv3")
    sqs.send_message_batch(QueueUrl=url, Entries=[{"Id": "1", "MessageBody": "message-0"}, {"Id": "2", "MessageBody": "message-1"}])
    sqs.send_message(QueueUrl=url, MessageBody="message-2")
    got = []
    for _ in range(3):
        if len(got) < 3:
            got += receive(url, MaxNumberOfMessages=3)
    eq(_bodies(got), ["message-0", "message-1", "message-2"], "bodies")


@case("core", "V6", VALIDATED + "test_receive_message_wait_time_seconds_and_max_number_of_messages_does_not_block")
def long_poll_answers_at_once_when_messages_wait():
    url = new_queue("msg-lp-now")
    sqs.send_message(QueueUrl=url, MessageBody="foobar1")
    sqs.send_message(QueueUrl=url, MessageBody="foobar2")
    started = time.time()
    msgs = receive(url, MaxNumberOfMessages=3, WaitTimeSeconds=5)
    took = time.time() - started
    assert took < 2, f"took {took:.1f} s"
    assert len(msgs) >= 1, msgs


def _send_later(url, body, delay=1.0):
    import threading

    t = threading.Timer(delay, lambda: sqs.send_message(QueueUrl=url, MessageBody=body))
    t.start()
    return t


@case("core", "V6", VALIDATED + "test_wait_time_seconds_waits_correctly, test_wait_time_seconds_queue_attribute_waits_correctly")
def long_poll_wakes_up_on_a_send():
    url = new_queue("msg-lp-wake")
    t = _send_later(url, "foobared")
    eq(_bodies(receive(url, WaitTimeSeconds=10)), ["foobared"], "long poll with WaitTimeSeconds")
    t.join()
    url = new_queue("msg-lp-attr", attributes={"ReceiveMessageWaitTimeSeconds": "10"})
    t = _send_later(url, "foobared")
    eq(_bodies(receive(url)), ["foobared"], "long poll from the queue's ReceiveMessageWaitTimeSeconds")
    t.join()


@case("core", "V3", VALIDATED + "test_send_delay_and_wait_time")
def delayed_message_arrives_during_a_long_poll():
    url = new_queue("msg-delay-lp")
    sqs.send_message(QueueUrl=url, MessageBody="foobar", DelaySeconds=1)
    assert "Messages" not in _receive_raw(url), "still delayed"
    eq(_bodies(receive(url, WaitTimeSeconds=2)), ["foobar"], "after the delay")


@case("core", "V7", VALIDATED + "test_approximate_number_of_messages_not_visible")
def approximate_counts_follow_visibility():
    url = new_queue("msg-counts", attributes={"VisibilityTimeout": "2"})
    for i in range(1, 7):
        sqs.send_message(QueueUrl=url, MessageBody=f"message-{i}")
    eq(len(receive(url, MaxNumberOfMessages=1)), 1, "one received")
    names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed"]

    def counts():
        return sqs.get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"]

    eq(counts(), dict(zip(names, ["5", "1", "0"])), "while in flight")
    time.sleep(2.5)
    eq(counts(), dict(zip(names, ["6", "0", "0"])), "after the visibility timeout")


@case("core", "V2", VALIDATED + "test_receive_after_visibility_timeout")
def message_comes_back_after_its_visibility_timeout():
    url = new_queue("msg-vt-back", attributes={"VisibilityTimeout": "1"})
    sqs.send_message(QueueUrl=url, MessageBody="foobar")
    h0 = _one(url)["ReceiptHandle"]
    assert "Messages" not in _receive_raw(url), "hidden while in flight"
    h1 = _one(url, WaitTimeSeconds=5)["ReceiptHandle"]
    assert h0 != h1, "receipt handles should differ"


@case("core", "V4", SNAP + "test_delete_after_visibility_timeout")
def delete_with_a_handle_whose_timeout_ended():
    url = new_queue("msg-del-late", attributes={"VisibilityTimeout": "1"})
    sqs.send_message(QueueUrl=url, MessageBody="foobar")
    handle = _one(url, WaitTimeSeconds=5)["ReceiptHandle"]
    time.sleep(1)
    out = sqs.delete_message(QueueUrl=url, ReceiptHandle=handle)
    eq(out["ResponseMetadata"]["HTTPStatusCode"], 200, "status")
    out = _receive_raw(url)
    assert "Messages" not in out, out


@case("core", "V20", VALIDATED + "test_extend_message_visibility_timeout_set_in_queue")
def visibility_can_be_extended_again_and_again():
    url = new_queue("msg-extend", attributes={"VisibilityTimeout": "2"})
    sqs.send_message(QueueUrl=url, MessageBody="test")
    handle = _one(url, WaitTimeSeconds=5)["ReceiptHandle"]
    for _ in range(4):
        time.sleep(1)
        sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=2)
        eq(receive(url), [], "still hidden")
    eq(_bodies(receive(url, WaitTimeSeconds=5)), ["test"], "visible once the last extension ends")


@case("core", "V2", VALIDATED + "test_receive_message_with_visibility_timeout_updates_timeout")
def receive_visibility_timeout_applies_per_receive():
    url = new_queue("msg-vt-per-recv")
    sqs.send_message(QueueUrl=url, MessageBody="test")
    eq(len(receive(url, WaitTimeSeconds=2, VisibilityTimeout=0)), 1, "first receive")
    eq(len(receive(url, VisibilityTimeout=3)), 1, "second receive")
    eq(receive(url), [], "third receive")


@case("core", "V4, V5", VALIDATED + "test_publish_get_delete_message, test_delete_message_deletes_with_change_visibility_timeout, test_change_message_visibility_not_permanent")
def delete_and_visibility_changes_in_sequence():
    url = new_queue("msg-seq")
    sent = sqs.send_message(QueueUrl=url, MessageBody="test")
    first = _one(url)
    eq(first["MessageId"], sent["MessageId"], "MessageId")
    eq(receive(url), [], "hidden after the receive")
    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=first["ReceiptHandle"], VisibilityTimeout=0)
    again = _one(url)
    eq(again["MessageId"], sent["MessageId"], "visible again at once")
    eq(receive(url), [], "the change to 0 does not last: hidden by the new receive")
    sqs.delete_message(QueueUrl=url, ReceiptHandle=again["ReceiptHandle"])
    out = _receive_raw(url)
    assert "Messages" not in out, out


@case("core", "V1, V4", VALIDATED + "test_publish_get_delete_message_batch")
def batch_send_receive_and_delete_ten():
    url = new_queue("msg-batch10")
    sent = sqs.send_message_batch(QueueUrl=url, Entries=[{"Id": f"message-{i}", "MessageBody": f"messageBody-{i}"} for i in range(10)])
    eq(len(sent["Successful"]), 10, "successful")
    got = []
    for _ in range(10):
        if len(got) < 10:
            got += receive(url, MaxNumberOfMessages=10)
    eq(sorted(m["MessageId"] for m in got), sorted(e["MessageId"] for e in sent["Successful"]), "message ids")
    out = sqs.delete_message_batch(QueueUrl=url, Entries=[{"Id": m["MessageId"], "ReceiptHandle": m["ReceiptHandle"]} for m in got])
    eq(len(out["Successful"]), 10, "deleted")
    assert "Failed" not in out, out
    assert "Messages" not in _receive_raw(url, MaxNumberOfMessages=10), "queue empty"


@case("core", "L3", VALIDATED + "test_sent_message_retains_attributes_after_receive")
def attributes_survive_a_receive():
    url = new_queue("msg-attr-keep")
    attrs = {"attr1": {"StringValue": "test1", "DataType": "String"}}
    sqs.send_message(QueueUrl=url, MessageBody="test", MessageAttributes=attrs)
    _one(url, VisibilityTimeout=0, MessageAttributeNames=["All"])
    eq(_one(url, MessageAttributeNames=["All"])["MessageAttributes"], attrs, "attributes on the second receive")


@case("core", "V22", SNAP + "test_aws_trace_header_propagation")
def trace_header_snapshot():
    url = new_queue("msg-trace2")
    value = "Root=1-3152b799-8954dae64eda91bc9a23a7e8;Parent=7fa8c0f79203be72;Sampled=1"

    def add_header(request, **_):
        request.headers["X-Amzn-Trace-Id"] = value

    sqs.meta.events.register("before-send.sqs.SendMessage", add_header)
    try:
        attrs = {"timestamp": {"StringValue": "1493147359900", "DataType": "Number"}}
        sqs.send_message(QueueUrl=url, MessageBody="test", MessageAttributes=attrs)
    finally:
        sqs.meta.events.unregister("before-send.sqs.SendMessage", add_header)
    out = _receive_raw(
        url, AttributeNames=["SentTimestamp", "AWSTraceHeader"], MaxNumberOfMessages=1,
        MessageAttributeNames=["All"], VisibilityTimeout=2, WaitTimeSeconds=2,
    )
    eq(len(out.get("Messages", [])), 1, "messages")
    m = out["Messages"][0]
    eq(sorted(m), ["Attributes", "Body", "MD5OfBody", "MD5OfMessageAttributes", "MessageAttributes", "MessageId", "ReceiptHandle"], "members")
    eq(sorted(m["Attributes"]), ["AWSTraceHeader", "SentTimestamp"], "attribute names")
    eq(m["Attributes"]["AWSTraceHeader"], value, "AWSTraceHeader")
    eq(m["MD5OfMessageAttributes"], "235c5c510d26fb653d073faed50ae77c", "MD5OfMessageAttributes")
    eq(m["MD5OfBody"], "098f6bcd4621d373cade4e832627b4f6", "MD5OfBody")
    eq(m["MessageAttributes"], attrs, "MessageAttributes")


@case("core", "V2", VALIDATED + "test_inflight_message_requeue")
def a_message_back_from_flight_comes_before_a_newer_one():
    # A standard queue's order is best effort (V10). The PostgreSQL engine
    # serves the message visible longest first, for its receive statement's
    # speed: a documented difference (docs/compatibility.md).
    if ENGINE == "postgres":
        raise Skip("best-effort order: the PostgreSQL engine serves the longest-visible message first")
    url = new_queue("msg-requeue")
    sqs.send_message(QueueUrl=url, MessageBody="test1")
    eq(_bodies(receive(url, VisibilityTimeout=3)), ["test1"], "first receive")
    time.sleep(1.5)
    sqs.send_message(QueueUrl=url, MessageBody="test2")
    time.sleep(3)
    eq(_bodies(receive(url, VisibilityTimeout=3)), ["test1"], "second receive")


def _receive_with_system_names(url, system_names, **kwargs):
    """ReceiveMessage with MessageSystemAttributeNames as the recording sent it.
    JSON: its own member. Query: botocore's Query serializer puts that list on
    the wire as AttributeName.N (the flattened list's member name), and an
    AttributeNames list given after it overwrites the same fields; so AWS's
    Query recordings saw AttributeName.N only. The Query pass's older botocore
    lacks the member: send what its newer one would have sent."""
    if fidelity.JSON:
        return _receive_raw(url, MessageSystemAttributeNames=system_names, **kwargs)
    names = list(system_names)
    for i, name in enumerate(kwargs.pop("AttributeNames", [])):
        names[i:i + 1] = [name]
    return _receive_raw(url, AttributeNames=names, **kwargs)


SYSTEM_ALL = ["ApproximateFirstReceiveTimestamp", "ApproximateReceiveCount", "SenderId", "SentTimestamp"]
FOO_BAR = {"Foo": {"DataType": "String", "StringValue": "Bar"}}


@case("core", "V2, V21", SNAP + "test_receive_message_message_system_attribute_names_filters")
def receive_message_system_attribute_names_filters():
    url = new_queue("msg-sysnames", attributes={"VisibilityTimeout": "0"})
    sqs.send_message(QueueUrl=url, MessageBody="msg", MessageAttributes=FOO_BAR)

    def get(names, user=None):
        out = _receive_with_system_names(url, names, WaitTimeSeconds=5, MessageAttributeNames=user or [])
        eq(len(out.get("Messages", [])), 1, "messages")
        return out["Messages"][0]

    m = get(["All"])
    eq(sorted(m["Attributes"]), SYSTEM_ALL, "All")
    eq(m["Attributes"]["ApproximateReceiveCount"], "1", "receive count")
    assert "MessageAttributes" not in m and "MD5OfMessageAttributes" not in m, m
    m = get(["All"], ["All"])
    eq(sorted(m["Attributes"]), SYSTEM_ALL, "All with user attributes")
    eq(m["Attributes"]["ApproximateReceiveCount"], "2", "receive count")
    eq((m["MessageAttributes"], m["MD5OfMessageAttributes"]), (FOO_BAR, "ae7155c6026991b6d54b11589678bf9c"), "user attributes")
    eq(sorted(get(["SenderId"])["Attributes"]), ["SenderId"], "single")
    eq(sorted(get(["SenderId", "SequenceNumber"])["Attributes"]), ["SenderId"], "multiple on a standard queue")


@case("core", "V2, V21", SNAP + "test_message_system_attribute_names_with_attribute_names")
def system_attribute_names_and_attribute_names_together():
    url = new_queue("msg-sysboth", attributes={"VisibilityTimeout": "0"})
    sqs.send_message(QueueUrl=url, MessageBody="msg", MessageAttributes=FOO_BAR)
    m = _receive_with_system_names(url, ["All"], WaitTimeSeconds=5, AttributeNames=["All"])["Messages"][0]
    eq(sorted(m["Attributes"]), SYSTEM_ALL, "same values")
    eq(m["Attributes"]["ApproximateReceiveCount"], "1", "receive count")
    m = _receive_with_system_names(url, ["All"], WaitTimeSeconds=5, AttributeNames=["SenderId"])["Messages"][0]
    # JSON: the two lists add up (All). Query: AttributeName.1=SenderId is all
    # that reached AWS (see _receive_with_system_names).
    want = SYSTEM_ALL if fidelity.JSON else ["SenderId"]
    eq(sorted(m["Attributes"]), want, "different values")
    assert "MessageAttributes" not in m, m


@case("core", "W7, V6", "AWS recorded answer, LocalStack snapshot test_sqs.py::TestSqsQueryApi::test_send_message_via_queue_url_with_json_protocol")
def json_protocol_posted_to_a_queue_url():
    if not fidelity.JSON:
        raise fidelity.Skip("a JSON 1.0 client only: runs in the JSON pass")
    url = new_queue("msg-json-on-url")
    import boto3
    from botocore.config import Config

    client = boto3.client(
        "sqs", endpoint_url=url, region_name=fidelity.REGION,
        aws_access_key_id="AKIDSLUICEFIDELITY", aws_secret_access_key="sluice-fidelity-secret",
        config=Config(retries={"total_max_attempts": 1}),
    )
    out = client.receive_message(QueueUrl=url, WaitTimeSeconds=1)
    eq(out["ResponseMetadata"]["HTTPHeaders"].get("content-type"), "application/x-amz-json-1.0", "content-type")
    assert "Messages" not in out, out


@case("core", "W7, W1", VALIDATED + "test_marker_serialization_json_protocol")
def query_receive_rendered_as_json_keeps_markup_in_bodies():
    if not fidelity.JSON:
        raise fidelity.Skip("built by hand: runs in the JSON pass only")
    import json as _json

    from cases_query_api import get

    for body in ('{"foo": "ba\rr", "foo2": "ba&quot;r&quot;"}', _json.dumps('{"foo": "ba\rr"}')):
        url = new_queue("msg-marker")
        sqs.send_message(QueueUrl=name_of(url), MessageBody=body)
        status, text = get(
            url, {"Action": "ReceiveMessage", "QueueUrl": url, "Version": "2012-11-05", "VisibilityTimeout": "0"},
            headers={"Accept": "application/json"},
        )
        eq(status, 200, "status")
        doc = _json.loads(text)
        eq(doc["ReceiveMessageResponse"]["ReceiveMessageResult"]["messages"][0]["Body"], body, "Body in the JSON rendering")
        eq(_one(url)["Body"], body, "Body through the SDK")


def _wait_until(moment, url):
    """Sleeps until `moment` (time.time()), asking for the queue's attributes
    every 20 s: a connection left idle as long as the server's idle timeout
    (60 s) may be closed by the server just as the client sends on it."""
    while time.time() < moment:
        time.sleep(max(0.0, min(20.0, moment - time.time())))
        sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])


@case("core", "V7", VALIDATED + "test_message_retention, test_message_retention_with_inflight (AWS's shortest retention, 60 s: this case takes ~75 s)")
def messages_expire_after_the_retention_period_even_in_flight():
    # Retention is the engine's, whatever the protocol: one pass waits.
    if not JSON:
        raise Skip("retention does not depend on the protocol: the JSON pass waits for it")
    retention = 60
    waiting = new_queue("msg-retain", attributes={"MessageRetentionPeriod": str(retention)})
    flying = new_queue("msg-retain-inflight", attributes={"MessageRetentionPeriod": str(retention), "VisibilityTimeout": str(retention)})
    start = time.time()
    for url in (waiting, flying):
        sqs.send_message(QueueUrl=url, MessageBody="foobar1")
        sqs.send_message(QueueUrl=url, MessageBody="foobar2")
    time.sleep(5)
    got = receive(flying, MaxNumberOfMessages=1)
    eq(_bodies(got), ["foobar1"], "the first message, received before it expires")
    handle = got[0]["ReceiptHandle"]
    _wait_until(start + retention + 5, waiting)
    assert not _receive_raw(waiting).get("Messages"), "expired messages are gone"
    _wait_until(start + 5 + retention + 1, flying)
    assert not _receive_raw(flying).get("Messages"), "expired, in flight or not"
    time.sleep(7.5)
    assert not _receive_raw(flying).get("Messages"), "the in-flight one does not come back when its timeout ends"
    sqs.delete_message(QueueUrl=flying, ReceiptHandle=handle)


@case("core", "V26", "AWS's answer as users of SQS report it (aws/aws-sdk-net#794, localstack/localstack#3956): "
      "the 12 hours count from the receive, so 43200 a moment after it is beyond the limit")
def change_visibility_past_twelve_hours_from_the_receive():
    url = new_queue("vis12h")
    sqs.send_message(QueueUrl=url, MessageBody="heartbeat")
    handle = _one(url)["ReceiptHandle"]
    time.sleep(0.05)
    expect_error(
        sqs.change_message_visibility, QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=43200,
        code=IPV, json_type=IPV_JSON,
        message="Value 43200 for parameter VisibilityTimeout is invalid. Reason: Total VisibilityTimeout for the "
                "message is beyond the limit [43200 seconds]",
    )
    # In a batch, that entry alone fails, as SQS's batch errors are.
    out = sqs.change_message_visibility_batch(QueueUrl=url, Entries=[
        {"Id": "within", "ReceiptHandle": handle, "VisibilityTimeout": 42000},
        {"Id": "beyond", "ReceiptHandle": handle, "VisibilityTimeout": 43200},
    ])
    eq([e["Id"] for e in out.get("Successful", [])], ["within"], "entries within the limit")
    eq([(e["Id"], e["Code"], e["SenderFault"]) for e in out.get("Failed", [])], [("beyond", IPV, True)],
       "the entry beyond the limit")

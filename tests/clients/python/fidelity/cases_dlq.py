"""Fidelity cases: dlq. See fidelity.py for the conventions."""

from fidelity import *  # noqa: F401,F403

MOVE = "AWS recorded answer, LocalStack snapshot test_sqs_move_task.py::"
SQS = "AWS recorded answer, LocalStack snapshot test_sqs.py::"


# ---- helpers of this file -----------------------------------------------------
def dlq_pipe(max_receive_count=1):
    """A source queue whose RedrivePolicy targets a fresh DLQ: (source URL, DLQ URL)."""
    dlq = new_queue("dlq")
    policy = json.dumps({"deadLetterTargetArn": queue_arn(dlq), "maxReceiveCount": max_receive_count})
    src = new_queue("src", attributes={"RedrivePolicy": policy})
    return src, dlq


def count_of(url):
    attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])
    return int(attrs["Attributes"]["ApproximateNumberOfMessages"])


def wait_count(url, n, timeout=10.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if count_of(url) >= n:
            return
        time.sleep(0.2)
    raise AssertionError(f"{name_of(url)}: {count_of(url)} messages after {timeout}s, want {n}")


def fill_dlq(src, dlq, n):
    """Sends n messages to src and receives each twice (maxReceiveCount 1), so all
    n end in the DLQ."""
    for i in range(n):
        sqs.send_message(QueueUrl=src, MessageBody=f"message-{i}")
    for _ in range(n * 2):
        sqs.receive_message(QueueUrl=src, VisibilityTimeout=0, MaxNumberOfMessages=10)
    wait_count(dlq, n)


def collect(url, n, timeout):
    """Receives and deletes until n messages arrived; returns their bodies."""
    got = []
    deadline = time.time() + timeout
    while len(got) < n and time.time() < deadline:
        for m in receive(url, WaitTimeSeconds=1, MaxNumberOfMessages=10):
            got.append(m["Body"])
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
    assert len(got) >= n, f"{len(got)} of {n} messages arrived in {timeout}s"
    return got


def latest_task(source_arn):
    results = sqs.list_message_move_tasks(SourceArn=source_arn)["Results"]
    assert results, "no move task listed"
    return results[0]


def wait_task(source_arn, done, timeout=30.0):
    deadline = time.time() + timeout
    while True:
        task = latest_task(source_arn)
        if done(task) or time.time() > deadline:
            return task
        time.sleep(0.5)


def handle_for(task_id, source_arn):
    """A move-task handle as AWS builds it: base64 of a small JSON document."""
    doc = '{"taskId":"%s","sourceArn":"%s"}' % (task_id, source_arn)
    return base64.b64encode(doc.encode()).decode()


def eq_members(got, want, what):
    eq(sorted(got), sorted(want), f"{what} members")


TASK_DONE = ["ApproximateNumberOfMessagesMoved", "ApproximateNumberOfMessagesToMove", "SourceArn", "StartedTimestamp", "Status"]


# ---- CancelMessageMoveTask errors ------------------------------------------------
@case("dlq", "R7,R9", MOVE + "test_cancel_with_invalid_task_handle")
def cancel_with_undecodable_handle():
    expect_error(sqs.cancel_message_move_task, TaskHandle="foobared",
                 code="InvalidParameterValue", json_type="InvalidParameterValueException",
                 message="Value for parameter TaskHandle is invalid.")


@case("dlq", "R7,R9", MOVE + "test_cancel_with_invalid_source_arn_in_task_handle")
def cancel_with_handle_naming_unknown_source():
    handle = handle_for("10f57157-fc38-4da9-a113-4de7e12d05dd",
                        "arn:aws:sqs:us-east-1:878966065785:test-queue-doesnt-exist-123456")
    expect_error(sqs.cancel_message_move_task, TaskHandle=handle, status=404,
                 code="ResourceNotFoundException", json_type="ResourceNotFoundException",
                 message="The resource that you specified for the SourceArn parameter doesn't exist.")


@case("dlq", "R7,R9", MOVE + "test_cancel_with_invalid_task_id_in_task_handle")
def cancel_with_unknown_task_id():
    arn = queue_arn(new_queue("src"))
    handle = handle_for("10f57157-fc38-4da9-a113-4de7e12d05aa", arn)
    expect_error(sqs.cancel_message_move_task, TaskHandle=handle, status=404,
                 code="ResourceNotFoundException", json_type="ResourceNotFoundException",
                 message="Task does not exist.")


# ---- StartMessageMoveTask errors -------------------------------------------------
@case("dlq", "R7", MOVE + "test_source_needs_redrive_policy")
def start_on_queue_that_is_no_dlq():
    src = queue_arn(new_queue("src"))
    dst = queue_arn(new_queue("dst"))
    expect_error(sqs.start_message_move_task, SourceArn=src, DestinationArn=dst,
                 code="InvalidParameterValue", json_type="InvalidParameterValueException",
                 message="Source queue must be configured as a Dead Letter Queue.")


@case("dlq", "R7", MOVE + "test_destination_needs_to_exist")
def start_with_unknown_destination():
    _, dlq = dlq_pipe()
    dst = queue_arn(new_queue("dst")) + "doesntexist"
    expect_error(sqs.start_message_move_task, SourceArn=queue_arn(dlq), DestinationArn=dst, status=404,
                 code="ResourceNotFoundException", json_type="ResourceNotFoundException",
                 message="The resource that you specified for the DestinationArn parameter doesn't exist.")


@case("dlq", "R7", MOVE + "test_start_multiple_move_tasks")
def start_second_task_while_one_runs():
    src, dlq = dlq_pipe()
    dst = queue_arn(new_queue("dst"))
    fill_dlq(src, dlq, 10)
    sqs.start_message_move_task(SourceArn=queue_arn(dlq), DestinationArn=dst, MaxNumberOfMessagesPerSecond=1)
    expect_error(sqs.start_message_move_task, SourceArn=queue_arn(dlq), DestinationArn=dst,
                 MaxNumberOfMessagesPerSecond=1,
                 code="InvalidParameterValue", json_type="InvalidParameterValueException",
                 message="There is already a task running. Only one active task is allowed for a source queue arn at a given time.")
    sqs.cancel_message_move_task(TaskHandle=latest_task(queue_arn(dlq))["TaskHandle"])


# ---- workflows -------------------------------------------------------------------
@case("dlq", "R7,R9", MOVE + "test_basic_move_task_workflow")
def move_task_to_destination():
    src, dlq = dlq_pipe()
    dlq_arn = queue_arn(dlq)
    dst = new_queue("dst")
    fill_dlq(src, dlq, 2)
    out = sqs.start_message_move_task(SourceArn=dlq_arn, DestinationArn=queue_arn(dst))
    eq_members([k for k in out if k != "ResponseMetadata"], ["TaskHandle"], "start answer")
    doc = json.loads(base64.b64decode(out["TaskHandle"]))
    eq(sorted(doc), ["sourceArn", "taskId"], "handle members")
    eq(doc["sourceArn"], dlq_arn, "handle sourceArn")
    uuid.UUID(doc["taskId"])
    eq(sorted(collect(dst, 2, 10)), ["message-0", "message-1"], "moved bodies")
    # As the recording waits: until the count says 2; the task that moved
    # them is COMPLETED in that same answer, never RUNNING with the DLQ drained.
    task = wait_task(dlq_arn, lambda t: t["ApproximateNumberOfMessagesMoved"] == 2)
    eq_members(task, TASK_DONE + ["DestinationArn"], "task")
    eq(task["Status"], "COMPLETED", "Status")
    eq(task["ApproximateNumberOfMessagesMoved"], 2, "moved")
    eq(task["ApproximateNumberOfMessagesToMove"], 2, "to move")
    eq(task["DestinationArn"], queue_arn(dst), "DestinationArn")
    eq(task["SourceArn"], dlq_arn, "SourceArn")
    # StartedTimestamp is epoch milliseconds.
    assert abs(task["StartedTimestamp"] - time.time() * 1000) < 120_000, task["StartedTimestamp"]
    eq(receive(dlq, WaitTimeSeconds=1), [], "DLQ after the move")


@case("dlq", "R7", MOVE + "test_move_task_with_throughput_limit")
def move_task_rate_limit():
    src, dlq = dlq_pipe()
    dst = new_queue("dst")
    fill_dlq(src, dlq, 4)
    out = sqs.start_message_move_task(SourceArn=queue_arn(dlq), DestinationArn=queue_arn(dst),
                                      MaxNumberOfMessagesPerSecond=1)
    assert out["TaskHandle"]
    started = time.time()
    eq(sorted(collect(dst, 4, 30)), [f"message-{i}" for i in range(4)], "moved bodies")
    assert time.time() - started >= 3, f"4 messages at 1/s moved in {time.time() - started:.1f}s"


@case("dlq", "R7,R9", MOVE + "test_move_task_cancel")
def move_task_cancel():
    src, dlq = dlq_pipe()
    dlq_arn = queue_arn(dlq)
    dst = new_queue("dst")
    fill_dlq(src, dlq, 10)
    handle = sqs.start_message_move_task(SourceArn=dlq_arn, DestinationArn=queue_arn(dst),
                                         MaxNumberOfMessagesPerSecond=1)["TaskHandle"]
    collect(dst, 2, 30)
    task = latest_task(dlq_arn)
    eq_members(task, TASK_DONE + ["DestinationArn", "MaxNumberOfMessagesPerSecond", "TaskHandle"], "running task")
    eq(task["Status"], "RUNNING", "Status")
    eq(task["TaskHandle"], handle, "TaskHandle")
    eq(task["MaxNumberOfMessagesPerSecond"], 1, "rate")
    eq(task["ApproximateNumberOfMessagesToMove"], 10, "to move")
    out = sqs.cancel_message_move_task(TaskHandle=handle)
    eq_members([k for k in out if k != "ResponseMetadata"], ["ApproximateNumberOfMessagesMoved"], "cancel answer")
    task = wait_task(dlq_arn, lambda t: t["Status"] == "CANCELLED")
    eq(task["Status"], "CANCELLED", "Status")
    eq_members(task, TASK_DONE + ["DestinationArn", "MaxNumberOfMessagesPerSecond"], "cancelled task")
    assert receive(dlq), "messages are left in the DLQ"


@case("dlq", "R7,R10", MOVE + "test_move_task_delete_destination_queue_while_running")
def move_task_destination_deleted():
    src, dlq = dlq_pipe()
    dlq_arn = queue_arn(dlq)
    dst = new_queue("dst")
    fill_dlq(src, dlq, 10)
    sqs.start_message_move_task(SourceArn=dlq_arn, DestinationArn=queue_arn(dst), MaxNumberOfMessagesPerSecond=1)
    sqs.delete_queue(QueueUrl=dst)
    task = wait_task(dlq_arn, lambda t: t["Status"] != "RUNNING")
    eq(task["Status"], "FAILED", "Status")
    eq(task.get("FailureReason"), "AWS.SimpleQueueService.NonExistentQueue", "FailureReason")
    eq_members(task, TASK_DONE + ["DestinationArn", "MaxNumberOfMessagesPerSecond", "FailureReason"], "failed task")
    assert receive(dlq), "messages are left in the DLQ"


@case("dlq", "R7", MOVE + "test_move_task_workflow_with_default_destination")
def move_task_back_to_source():
    src, dlq = dlq_pipe()
    dlq_arn = queue_arn(dlq)
    fill_dlq(src, dlq, 2)
    sqs.start_message_move_task(SourceArn=dlq_arn)
    eq(sorted(collect(src, 2, 10)), ["message-0", "message-1"], "bodies back in the source")
    task = wait_task(dlq_arn, lambda t: t["ApproximateNumberOfMessagesMoved"] == 2)
    eq_members(task, TASK_DONE, "task")
    eq((task["Status"], task["ApproximateNumberOfMessagesMoved"], task["ApproximateNumberOfMessagesToMove"]),
       ("COMPLETED", 2, 2), "status, moved, to move")


@case("dlq", "R7", MOVE + "test_move_task_workflow_with_multiple_sources_as_default_destination")
def move_task_back_to_several_sources():
    src1, dlq = dlq_pipe()
    dlq_arn = queue_arn(dlq)
    policy = json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 1})
    src2 = new_queue("src", attributes={"RedrivePolicy": policy})
    for src in (src1, src2):
        for i in range(2):
            sqs.send_message(QueueUrl=src, MessageBody=f"{name_of(src)}-{i}")
        for _ in range(4):
            sqs.receive_message(QueueUrl=src, VisibilityTimeout=0, MaxNumberOfMessages=10)
    wait_count(dlq, 4)
    sqs.start_message_move_task(SourceArn=dlq_arn)
    for src in (src1, src2):
        eq(sorted(collect(src, 2, 10)), [f"{name_of(src)}-{i}" for i in range(2)], "bodies back in their source")
    task = wait_task(dlq_arn, lambda t: t["ApproximateNumberOfMessagesMoved"] == 4)
    eq_members(task, TASK_DONE, "task")
    eq((task["Status"], task["ApproximateNumberOfMessagesMoved"], task["ApproximateNumberOfMessagesToMove"]),
       ("COMPLETED", 4, 4), "status, moved, to move")


@case("dlq", "R16", "SQS Developer Guide, dead-letter queue redrive: the destination must be of the DLQ's type")
def move_task_between_queue_types_is_refused():
    fifo_dlq = new_queue("dlq", fifo=True)
    policy = json.dumps({"deadLetterTargetArn": queue_arn(fifo_dlq), "maxReceiveCount": 1})
    new_queue("src", fifo=True, attributes={"RedrivePolicy": policy})
    standard = new_queue("dst")
    expect_error(sqs.start_message_move_task, SourceArn=queue_arn(fifo_dlq), DestinationArn=queue_arn(standard),
                 code="InvalidParameterValue", json_type="InvalidParameterValueException",
                 message="The destination queue must be of the same type as the source queue: both standard or both FIFO.")
    eq(sqs.list_message_move_tasks(SourceArn=queue_arn(fifo_dlq)).get("Results", []), [], "no task stored")


# ---- redrive policies ------------------------------------------------------------
@case("dlq", "R1,R11", SQS + "test_invalid_dead_letter_arn_rejected_before_lookup")
def redrive_policy_with_malformed_arn():
    policy = json.dumps({"deadLetterTargetArn": "dummy", "maxReceiveCount": 42})
    expect_error(new_queue, "src", attributes={"RedrivePolicy": policy},
                 code="InvalidParameterValue", json_type="InvalidParameterValueException",
                 message=f"Value {policy} for parameter RedrivePolicy is invalid. Reason: Invalid value for deadLetterTargetArn.")


@case("dlq", "R1,R12", "AWS behaviour given in the brief: an empty RedrivePolicy removes the policy")
def empty_redrive_policy_removes_it():
    src, dlq = dlq_pipe()
    sqs.set_queue_attributes(QueueUrl=src, Attributes={"RedrivePolicy": ""})
    attrs = sqs.get_queue_attributes(QueueUrl=src, AttributeNames=["All"])["Attributes"]
    assert "RedrivePolicy" not in attrs, attrs
    eq(sqs.list_dead_letter_source_queues(QueueUrl=dlq).get("queueUrls", []), [], "sources")


@case("dlq", "R1,R12", "AWS behaviour given in the brief: a queue may name itself as its dead-letter target")
def queue_may_be_its_own_dlq():
    url = new_queue("self")
    policy = json.dumps({"deadLetterTargetArn": queue_arn(url), "maxReceiveCount": 1})
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"RedrivePolicy": policy})
    got = json.loads(sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["RedrivePolicy"])["Attributes"]["RedrivePolicy"])
    eq(got, {"deadLetterTargetArn": queue_arn(url), "maxReceiveCount": 1}, "RedrivePolicy")
    eq(sqs.list_dead_letter_source_queues(QueueUrl=url)["queueUrls"], [url], "sources")


@case("dlq", "R6", SQS + "test_dead_letter_queue_list_sources")
def list_dead_letter_sources():
    dlq = new_queue("dlq")
    policy = json.dumps({"deadLetterTargetArn": queue_arn(dlq), "maxReceiveCount": 50})
    a = new_queue("src", attributes={"RedrivePolicy": policy})
    b = new_queue("src", attributes={"RedrivePolicy": policy})
    out = sqs.list_dead_letter_source_queues(QueueUrl=dlq)
    eq(sorted(out["queueUrls"]), sorted([a, b]), "queueUrls")


@case("dlq", "R2,R4", SQS + "test_dead_letter_queue_max_receive_count")
def dead_letter_after_max_receives():
    dlq = new_queue("dlq", attributes={"VisibilityTimeout": "0"})
    policy = json.dumps({"deadLetterTargetArn": queue_arn(dlq), "maxReceiveCount": 1})
    src = new_queue("src", attributes={"RedrivePolicy": policy, "VisibilityTimeout": "0"})
    sent = sqs.send_message(QueueUrl=src, MessageBody="test")["MessageId"]
    first = receive(src)
    second = receive(src)
    assert bool(first) != bool(second), (first, second)
    msgs = receive(dlq, WaitTimeSeconds=5)
    eq([m["MessageId"] for m in msgs], [sent], "MessageId in the DLQ")


@case("dlq", "R2,R4", "AWS observed answers (real-queue drills): a DLQ message names its source and counts every receive")
def dead_lettered_message_attributes():
    src, dlq = dlq_pipe(max_receive_count=1)
    sent = sqs.send_message(QueueUrl=src, MessageBody="poison")["MessageId"]
    first = receive(src, VisibilityTimeout=0, **{SYSTEM_ATTRS_PARAM: ["All"]})
    eq(len(first), 1, "first receive")
    eq(receive(src, VisibilityTimeout=0), [], "second receive (the message moves)")
    msgs = receive(dlq, WaitTimeSeconds=5, **{SYSTEM_ATTRS_PARAM: ["All"]})
    eq(len(msgs), 1, "messages in the DLQ")
    m = msgs[0]
    eq(m["MessageId"], sent, "MessageId")
    eq(m["Body"], "poison", "Body")
    a = m["Attributes"]
    eq(a.get("DeadLetterQueueSourceArn"), queue_arn(src), "DeadLetterQueueSourceArn")
    eq(a.get("ApproximateReceiveCount"), "2", "one receive in the source, one here")
    eq(a.get("SentTimestamp"), first[0]["Attributes"]["SentTimestamp"], "SentTimestamp kept")


@case("dlq", "R2,R4", SQS + "test_dead_letter_queue_with_fifo_and_content_based_deduplication")
def fifo_dead_letter_keeps_message_id():
    dlq = new_queue("dlq", fifo=True, attributes={"ContentBasedDeduplication": "true", "MessageRetentionPeriod": "1209600"})
    policy = json.dumps({"deadLetterTargetArn": queue_arn(dlq), "maxReceiveCount": 2})
    src = new_queue("src", fifo=True, attributes={"ContentBasedDeduplication": "true", "VisibilityTimeout": "60",
                                                  "RedrivePolicy": policy})
    sent = sqs.send_message(QueueUrl=src, MessageBody="foobar", MessageGroupId="1")["MessageId"]
    for _ in range(3):
        sqs.receive_message(QueueUrl=src, WaitTimeSeconds=1, VisibilityTimeout=0)
    msgs = receive(dlq, WaitTimeSeconds=10)
    eq([(m["MessageId"], m["Body"]) for m in msgs], [(sent, "foobar")], "the message in the DLQ")
    # The group the message left is not blocked: a new message of the same group
    # is received from the source at once (the newest recording asserts this too).
    second = sqs.send_message(QueueUrl=src, MessageBody="foobar2", MessageGroupId="1")["MessageId"]
    msgs = receive(src, WaitTimeSeconds=1)
    eq([(m["MessageId"], m["Body"]) for m in msgs], [(second, "foobar2")], "the next message of the group")


@case("dlq", "R6", SQS + "test_dead_letter_queue_list_sources (the answer has queueUrls and nothing else)")
def list_dead_letter_sources_members():
    dlq = new_queue("dlq")
    policy = json.dumps({"deadLetterTargetArn": queue_arn(dlq), "maxReceiveCount": 50})
    new_queue("src", attributes={"RedrivePolicy": policy})
    out = sqs.list_dead_letter_source_queues(QueueUrl=dlq)
    eq(sorted(k for k in out if k != "ResponseMetadata"), ["queueUrls"], "answer members")


@case("dlq", "R1,R13", "AWS wording as widely reported (no recorded snapshot): maxReceiveCount out of 1..1000")
def redrive_policy_with_bad_max_receive_count():
    dlq = queue_arn(new_queue("dlq"))
    url = new_queue("src")
    for count in (0, 1001):
        policy = json.dumps({"deadLetterTargetArn": dlq, "maxReceiveCount": count})
        expect_error(sqs.set_queue_attributes, QueueUrl=url, Attributes={"RedrivePolicy": policy},
                     code="InvalidParameterValue", json_type="InvalidParameterValueException",
                     message=f"Value {policy} for parameter RedrivePolicy is invalid. Reason: Invalid value for "
                             f"maxReceiveCount: {count}, valid values are from 1 to 1000 both inclusive.")


# ---- round 2: the newest recordings (localemu 3098669, recorded 2024-2025) ---------
TRACE = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"


@case("dlq", "R2,R4,R14", SQS + "test_dead_letter_queue_message_attributes")
def dead_letter_keeps_attributes_and_names_source():
    src, dlq = dlq_pipe(max_receive_count=1)
    user_attrs = {"MyAttribute": {"StringValue": "foobar", "DataType": "String"}}
    sqs.send_message(QueueUrl=src, MessageBody="message-1", MessageAttributes=user_attrs,
                     MessageSystemAttributes={"AWSTraceHeader": {"StringValue": TRACE, "DataType": "String"}})
    sqs.send_message(QueueUrl=src, MessageBody="message-2")
    seen = []
    for _ in range(4):
        seen += receive(src, VisibilityTimeout=0, AttributeNames=["All"], MessageAttributeNames=["All"])
    seen.sort(key=lambda m: m["Body"])
    # Each message is received once; the second receive moves it instead of returning it.
    eq([m["Body"] for m in seen], ["message-1", "message-2"], "received before the move")
    got = collect_full(dlq, 2)
    for phase, msgs, count, extra in (("source", seen, "1", []), ("DLQ", got, "2", ["DeadLetterQueueSourceArn"])):
        m1, m2 = msgs
        base = ["ApproximateFirstReceiveTimestamp", "ApproximateReceiveCount", "SenderId", "SentTimestamp"] + extra
        eq_members(m1["Attributes"], base + ["AWSTraceHeader"], f"{phase} message-1 attributes")
        eq_members(m2["Attributes"], base, f"{phase} message-2 attributes")
        eq(m1["Attributes"]["AWSTraceHeader"], TRACE, f"{phase} AWSTraceHeader")
        for m in msgs:
            eq(m["Attributes"]["ApproximateReceiveCount"], count, f"{phase} {m['Body']} receive count")
            if extra:
                eq(m["Attributes"]["DeadLetterQueueSourceArn"], queue_arn(src), "DeadLetterQueueSourceArn")
        eq(m1.get("MessageAttributes"), user_attrs, f"{phase} message-1 MessageAttributes")
        eq(m1.get("MD5OfMessageAttributes"), "adb59cd4678ea5a855436b949cd07ab6", f"{phase} MD5OfMessageAttributes")
        assert "MessageAttributes" not in m2 and "MD5OfMessageAttributes" not in m2, m2
        eq(m1["MD5OfBody"], "3d6b824fd8c1520e9a047d21fee6fb1f", f"{phase} MD5OfBody")
    eq([m["MessageId"] for m in got], [m["MessageId"] for m in seen], "MessageIds kept")


def collect_full(url, n, timeout=10.0):
    """Receives (with every attribute) and deletes until n messages arrived; sorted by body."""
    got = []
    deadline = time.time() + timeout
    while len(got) < n and time.time() < deadline:
        for m in receive(url, WaitTimeSeconds=1, MaxNumberOfMessages=10, AttributeNames=["All"],
                         MessageAttributeNames=["All"]):
            got.append(m)
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
    assert len(got) == n, f"{len(got)} of {n} messages arrived in {timeout}s"
    return sorted(got, key=lambda m: m["Body"])


@case("dlq", "R1", SQS + "test_dead_letter_queue_config")
def create_queue_with_redrive_policy():
    dlq = new_queue("dead_letter_queue")
    policy = {"deadLetterTargetArn": queue_arn(dlq), "maxReceiveCount": 50}
    url = new_queue("src", attributes={"RedrivePolicy": json.dumps(policy)})
    assert url, url
    got = json.loads(sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["RedrivePolicy"])["Attributes"]["RedrivePolicy"])
    eq(got, policy, "RedrivePolicy")


@case("dlq", "R1,R15", SQS + "test_redrive_policy_attribute_validity (validated on AWS; codes only)")
def redrive_policy_needs_both_members_and_a_count():
    dlq = queue_arn(new_queue("dlq"))
    url = new_queue("src")
    for policy in ({"deadLetterTargetArn": dlq}, {"maxReceiveCount": "42"},
                   {"deadLetterTargetArn": dlq, "maxReceiveCount": "invalid"}):
        expect_error(sqs.set_queue_attributes, QueueUrl=url, Attributes={"RedrivePolicy": json.dumps(policy)},
                     code="InvalidParameterValue", json_type="InvalidParameterValueException")
    # A count given as a JSON string is accepted.
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"RedrivePolicy": json.dumps(
        {"deadLetterTargetArn": dlq, "maxReceiveCount": "42"})})


@case("dlq", "R1,R12", SQS + "test_set_empty_redrive_policy")
def empty_redrive_policy_by_queue_name():
    dlq = new_queue("dl-queue")
    name = name_of(dlq)
    # The recorded sequence addresses the queue by its name, on a queue that has no policy yet.
    sqs.set_queue_attributes(QueueUrl=name, Attributes={"RedrivePolicy": ""})
    attrs = sqs.get_queue_attributes(QueueUrl=name, AttributeNames=["All"])["Attributes"]
    assert "RedrivePolicy" not in attrs, attrs
    policy = {"deadLetterTargetArn": queue_arn(dlq), "maxReceiveCount": "42"}
    sqs.set_queue_attributes(QueueUrl=dlq, Attributes={"RedrivePolicy": json.dumps(policy)})
    attrs = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["All"])["Attributes"]
    assert queue_arn(dlq) in attrs["RedrivePolicy"], attrs
    sqs.set_queue_attributes(QueueUrl=dlq, Attributes={"RedrivePolicy": ""})
    attrs = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["All"])["Attributes"]
    assert "RedrivePolicy" not in attrs, attrs


@case("dlq", "R1", SQS + "test_get_specific_queue_attribute_response")
def redrive_policy_among_named_attributes():
    dlq = new_queue("dead_letter_queue")
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    policy = {"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 10}
    url = new_queue("q", attributes={"MessageRetentionPeriod": "604800", "DelaySeconds": "10",
                                     "RedrivePolicy": json.dumps(policy)})
    two = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["MessageRetentionPeriod", "RedrivePolicy"])
    eq_members(two["Attributes"], ["MessageRetentionPeriod", "RedrivePolicy"], "two attributes")
    eq(two["Attributes"]["MessageRetentionPeriod"], "604800", "MessageRetentionPeriod")
    eq(json.loads(two["Attributes"]["RedrivePolicy"]).get("maxReceiveCount"), 10, "maxReceiveCount is a number")
    one = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]
    eq(one, {"QueueArn": f"arn:aws:sqs:{REGION}:{url.split('/')[-2]}:{name_of(url)}"}, "QueueArn alone")

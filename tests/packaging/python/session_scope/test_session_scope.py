"""``sluice_server`` at either scope: fresh queues for each test, on one
server for the session (``-o sluice_scope=session``) or one per test (the
default). Run both ways by scripts/package-smoke."""

import boto3

ENDPOINTS = []


def _scope(request):
    return request.config.getini("sluice_scope") or "function"


def test_first_test_leaves_queues_and_messages_behind(sluice_server, request):
    ENDPOINTS.append(sluice_server.endpoint_url)
    sqs = boto3.client("sqs", **sluice_server.client_kwargs())
    url = sqs.create_queue(QueueName="orders")["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="left behind")
    sqs.create_queue(QueueName="payments")


def test_next_test_starts_with_no_queues(sluice_server, request):
    ENDPOINTS.append(sluice_server.endpoint_url)
    sqs = boto3.client("sqs", **sluice_server.client_kwargs())
    assert sqs.list_queues().get("QueueUrls", []) == []
    # The name is free at once, and the queue is new: no message in it.
    url = sqs.create_queue(QueueName="orders")["QueueUrl"]
    assert "Messages" not in sqs.receive_message(QueueUrl=url)
    if _scope(request) == "session":
        assert ENDPOINTS[0] == ENDPOINTS[1], "one server for the session"
    else:
        assert ENDPOINTS[0] != ENDPOINTS[1], "a server per test"

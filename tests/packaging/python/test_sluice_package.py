"""The sluice-sqs wheel as a user meets it: installed into a fresh venv,
its pytest plugin found through the entry point, its fixtures and its
Python API used with boto3, its `sluice` command on PATH.

Run by scripts/package-smoke."""

import os
import subprocess
import sysconfig

import boto3
import pytest

import sluice


def test_the_fixture_gives_a_working_client(sqs_client):
    url = sqs_client.create_queue(QueueName="orders")["QueueUrl"]
    sqs_client.send_message(QueueUrl=url, MessageBody="hello")
    got = sqs_client.receive_message(QueueUrl=url, WaitTimeSeconds=1)
    assert [m["Body"] for m in got["Messages"]] == ["hello"]


def test_each_test_starts_with_no_queues(sqs_client):
    # The test above created "orders" on its own server.
    assert sqs_client.list_queues().get("QueueUrls", []) == []
    sqs_client.create_queue(QueueName="orders")


def test_the_session_server_is_shared(sluice_session_server, request):
    again = request.getfixturevalue("sluice_session_server")
    assert again is sluice_session_server
    assert sluice_session_server.running


def test_the_python_api_starts_and_stops_a_server():
    with sluice.Server() as server:
        assert server.endpoint_url.startswith("http://127.0.0.1:")
        sqs = boto3.client("sqs", **server.client_kwargs())
        url = sqs.create_queue(QueueName="api")["QueueUrl"]
        sqs.delete_queue(QueueUrl=url)
        # The name is free again at once.
        sqs.create_queue(QueueName="api")
    assert not server.running


def test_a_bad_argument_is_reported():
    with pytest.raises(sluice.ServerError, match="did not start"):
        sluice.Server(["--no-such-flag"]).start()


def test_the_binary_is_installed_as_a_command():
    binary = sluice.binary_path()
    assert os.path.dirname(binary) == sysconfig.get_path("scripts")
    out = subprocess.run(
        ["sluice", "--version"], capture_output=True, text=True, check=True
    )
    assert out.stdout.startswith("sluice "), out.stdout

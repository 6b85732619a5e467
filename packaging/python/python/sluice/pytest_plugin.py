"""The pytest plugin of sluice-sqs (registered through the ``pytest11``
entry point, so installing the package is enough).

Fixtures:
  ``sluice_server``          a fresh in-memory server for each test, so each
                             test starts with no queues;
  ``sluice_session_server``  one server for the whole session (faster when
                             tests name their queues apart);
  ``sqs_client``             a boto3 SQS client of ``sluice_server`` (needs
                             boto3 installed).
"""

from __future__ import annotations

import pytest

from sluice import Server


@pytest.fixture
def sluice_server():
    """A sluice server for this test alone: no queues at its start."""
    with Server() as server:
        yield server


@pytest.fixture(scope="session")
def sluice_session_server():
    """One sluice server shared by every test of the session."""
    with Server() as server:
        yield server


@pytest.fixture
def sqs_client(sluice_server):
    """A boto3 SQS client talking to this test's server."""
    boto3 = pytest.importorskip("boto3")
    return boto3.client("sqs", **sluice_server.client_kwargs())

"""The pytest plugin of sluice-sqs (registered through the ``pytest11``
entry point, so installing the package is enough).

Fixtures:
  ``sluice_server``          a server whose queues are fresh for each test:
                             by default a new in-memory server per test;
                             with ``sluice_scope = session`` (an ini option,
                             or ``-o sluice_scope=session``) the session's
                             one server, every queue deleted before each
                             test (faster: one start for the whole run);
  ``sluice_session_server``  the server shared by the whole session, as
                             it is (no queue deleted between tests);
  ``sqs_client``             a boto3 SQS client of ``sluice_server`` (needs
                             boto3 installed).
"""

from __future__ import annotations

import pytest

from sluice import Server

_SCOPES = ("function", "session")


def pytest_addoption(parser):
    parser.addini(
        "sluice_scope",
        "sluice_server's server: 'function' (a new server per test, the "
        "default) or 'session' (one server, its queues deleted before each test)",
        default="function",
    )


@pytest.fixture(scope="session")
def sluice_session_server():
    """One sluice server shared by every test of the session."""
    with Server() as server:
        yield server


@pytest.fixture
def sluice_server(request):
    """A sluice server with no queues at the test's start."""
    scope = request.config.getini("sluice_scope") or "function"
    if scope not in _SCOPES:
        raise pytest.UsageError(f"sluice_scope is 'function' or 'session', not {scope!r}")
    if scope == "session":
        server = request.getfixturevalue("sluice_session_server")
        server.reset()
        yield server
        return
    with Server() as server:
        yield server


@pytest.fixture
def sqs_client(sluice_server):
    """A boto3 SQS client talking to this test's server."""
    boto3 = pytest.importorskip("boto3")
    return boto3.client("sqs", **sluice_server.client_kwargs())

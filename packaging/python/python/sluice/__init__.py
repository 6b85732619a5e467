"""sluice for Python: the SQS-compatible server, started from your tests.

    import boto3, sluice

    with sluice.Server() as server:
        sqs = boto3.client("sqs", **server.client_kwargs())
        url = sqs.create_queue(QueueName="orders")["QueueUrl"]

`Server` runs the `sluice` binary that this package installs (or the one
named by ``SLUICE_BINARY``) on a free loopback port, in memory, and stops
it on exit. The pytest plugin (`sluice.pytest_plugin`) gives the
``sluice_server`` fixture: fresh queues for each test, on a server of the
test's own or on one shared by the session (``sluice_scope = session``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import threading
import urllib.error
import urllib.request
from typing import Iterable, Optional

__all__ = ["Server", "ServerError", "binary_path"]

#: The first line `sluice serve` prints, before the endpoint.
_LISTENING = "sluice listening on "

#: How long a server may take to say it is listening.
_START_TIMEOUT = 30.0


class ServerError(RuntimeError):
    """The server could not start, or stopped with an error."""


def binary_path() -> str:
    """The `sluice` binary: ``SLUICE_BINARY`` if set, else the one this
    package installed beside the interpreter's scripts, else one on PATH."""
    explicit = os.environ.get("SLUICE_BINARY")
    if explicit:
        return explicit
    name = "sluice.exe" if sys.platform == "win32" else "sluice"
    for scheme_dir in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        candidate = os.path.join(scheme_dir, name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which(name)
    if found:
        return found
    raise ServerError(
        "the sluice binary was not found: install sluice-sqs, or set SLUICE_BINARY"
    )


class Server:
    """A sluice server on a free loopback port, in memory unless told
    otherwise. Use it as a context manager, or call `start` and `stop`.

    ``args`` are extra `sluice serve` arguments (e.g. ``["--data-dir", path]``
    instead of memory, or ``["--config", file]``).
    """

    def __init__(
        self,
        args: Iterable[str] = (),
        *,
        in_memory: bool = True,
        region: str = "us-east-1",
        binary: Optional[str] = None,
    ) -> None:
        self.region = region
        self._binary = binary
        self._args = list(args)
        self._in_memory = in_memory
        self._process: Optional[subprocess.Popen] = None
        self._output: list = []
        self.endpoint_url: Optional[str] = None

    def start(self) -> "Server":
        """Starts the server and waits until it listens."""
        if self._process is not None:
            return self
        command = [self._binary or binary_path(), "serve", "--bind", "127.0.0.1:0"]
        if self._in_memory:
            command.append("--in-memory")
        # A test that deletes a queue may create it again at once.
        command += ["--deleted-queue-name-hold-secs", "0"]
        command += self._args
        self._process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
        )
        ready = threading.Event()
        threading.Thread(target=self._read, args=(ready,), daemon=True).start()
        if not ready.wait(_START_TIMEOUT) or self.endpoint_url is None:
            output = "".join(self._output)
            self.stop()
            raise ServerError(f"sluice did not start: {output.strip() or 'no output'}")
        return self

    def _read(self, ready: threading.Event) -> None:
        # Reads the endpoint from the first line, then keeps draining the
        # server's output so that a full pipe never blocks it.
        assert self._process is not None and self._process.stdout is not None
        for line in self._process.stdout:
            if self.endpoint_url is None and line.startswith(_LISTENING):
                self.endpoint_url = line[len(_LISTENING):].strip()
                ready.set()
            elif len(self._output) < 200:
                self._output.append(line)
        ready.set()

    def stop(self) -> None:
        """Stops the server (SIGTERM, then SIGKILL after five seconds)."""
        process, self._process = self._process, None
        if process is None:
            return
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    @property
    def running(self) -> bool:
        """True while the server process runs."""
        return self._process is not None and self._process.poll() is None

    def client_kwargs(self) -> dict:
        """Keyword arguments for ``boto3.client("sqs", **kwargs)``: the
        endpoint, the region and placeholder credentials (the server accepts
        any unless it was started with authentication on)."""
        return {
            "endpoint_url": self.endpoint_url,
            "region_name": self.region,
            "aws_access_key_id": "test",
            "aws_secret_access_key": "test",
        }

    def env(self) -> dict:
        """Environment variables that point AWS SDKs and the AWS CLI at
        this server."""
        return {
            "AWS_ENDPOINT_URL_SQS": self.endpoint_url or "",
            "AWS_REGION": self.region,
            "AWS_DEFAULT_REGION": self.region,
            "AWS_ACCESS_KEY_ID": "test",
            "AWS_SECRET_ACCESS_KEY": "test",
        }

    def reset(self) -> None:
        """Deletes every queue of the server (and with them their messages,
        tags and alarms), so that it looks freshly started; the pytest
        plugin calls it before each test at session scope. Needs a server
        without authentication (the requests are not signed)."""
        while True:
            urls = self._call("ListQueues", {"MaxResults": 1000}).get("QueueUrls", [])
            if not urls:
                return
            for url in urls:
                self._call("DeleteQueue", {"QueueUrl": url})

    def _call(self, action: str, payload: dict) -> dict:
        # One AWS JSON 1.0 request; the package needs no SDK.
        if self.endpoint_url is None:
            raise ServerError("the server is not running")
        request = urllib.request.Request(
            self.endpoint_url + "/",
            data=json.dumps(payload).encode(),
            headers={
                "Content-Type": "application/x-amz-json-1.0",
                "X-Amz-Target": f"AmazonSQS.{action}",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return json.loads(answer.read() or b"{}")
        except urllib.error.HTTPError as error:
            raise ServerError(f"{action}: {error.read().decode(errors='replace')}") from error

    def __enter__(self) -> "Server":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"<sluice.Server {self.endpoint_url or 'not started'}>"

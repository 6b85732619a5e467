"""A persistence layer for AWS Lambda Powertools' idempotency utility that
keeps its records in sluice (``Sluice.ClaimIdempotencyKey``,
``CompleteIdempotencyKey``, ``ReleaseIdempotencyKey``), so a handler already
decorated with ``@idempotent`` or ``@idempotent_function`` runs against
sluice unchanged but for its persistence store:

    from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig, idempotent
    from sluice.powertools import SluicePersistenceLayer

    persistence = SluicePersistenceLayer(endpoint_url="http://127.0.0.1:9324")

    @idempotent(persistence_store=persistence,
                config=IdempotencyConfig(event_key_jmespath="messageId"))
    def handler(event, context): ...

A key is claimed before the handler runs: a claim that finds it in progress
elsewhere raises Powertools' ``IdempotencyAlreadyInProgressError``, one that
finds it completed returns the stored response without running the handler.
The handler's response is stored at completion; a handler that raises
releases the key. Requests are signed with SigV4 (service ``sqs``) when
botocore finds credentials, as the server's authentication expects.

Needs ``aws-lambda-powertools`` (3.x) and ``botocore``.
"""

from __future__ import annotations

import json
import math
import time
import urllib.error
import urllib.request
from typing import Any, Optional

from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyItemAlreadyExistsError,
    IdempotencyItemNotFoundError,
    IdempotencyPersistenceLayerError,
)
from aws_lambda_powertools.utilities.idempotency.persistence.base import BasePersistenceLayer
from aws_lambda_powertools.utilities.idempotency.persistence.datarecord import (
    STATUS_CONSTANTS,
    DataRecord,
)

__all__ = ["SluicePersistenceLayer"]

# How long a claim holds when Powertools knows no Lambda context to take the
# remaining time from: the server's own default.
DEFAULT_IN_PROGRESS_SECONDS = 60
# The server's bounds (rule I1).
MAX_TTL_SECONDS = 30 * 24 * 3600
MAX_IN_PROGRESS_SECONDS = 12 * 3600


class SluicePersistenceLayer(BasePersistenceLayer):
    """Powertools' idempotency records in a sluice server."""

    def __init__(
        self,
        endpoint_url: str,
        region_name: str = "us-east-1",
        key_prefix: str = "",
        timeout: float = 10.0,
        botocore_session: Any = None,
    ):
        """``endpoint_url``: the sluice server. ``key_prefix`` is put before
        every key (e.g. the function's name, to keep functions apart).
        Credentials come from ``botocore_session`` (or a new botocore
        session: the environment, the shared files); without any, requests
        go unsigned."""
        super().__init__()
        self.endpoint_url = endpoint_url.rstrip("/") + "/"
        self.region_name = region_name
        self.key_prefix = key_prefix
        self.timeout = timeout
        self._botocore_session = botocore_session

    # Powertools' hooks.

    def _put_record(self, data_record: DataRecord) -> None:
        now = time.time()
        ttl = int(data_record.expiry_timestamp or 0) - int(now)
        body: dict[str, Any] = {
            "Key": self._key(data_record.idempotency_key),
            "TtlSeconds": min(max(ttl, 1), MAX_TTL_SECONDS),
        }
        if data_record.in_progress_expiry_timestamp is not None:
            remaining_ms = data_record.in_progress_expiry_timestamp - now * 1000
            body["InProgressSeconds"] = min(
                max(math.ceil(remaining_ms / 1000), 1), MAX_IN_PROGRESS_SECONDS
            )
        answer = self._call("ClaimIdempotencyKey", body)
        status = answer.get("Status")
        if status == "CLAIMED":
            return
        if status == "IN_PROGRESS":
            existing = DataRecord(
                idempotency_key=data_record.idempotency_key,
                status=STATUS_CONSTANTS["INPROGRESS"],
                in_progress_expiry_timestamp=answer.get("InProgressExpiryTimestamp"),
                expiry_timestamp=int(now) + 1,
            )
        elif status == "COMPLETED":
            stored = _decode_result(answer.get("Result", ""))
            existing = DataRecord(
                idempotency_key=data_record.idempotency_key,
                status=STATUS_CONSTANTS["COMPLETED"],
                response_data=stored.get("response"),
                payload_hash=stored.get("payload_hash"),
                # Not expired as far as Powertools can tell: the server
                # answered it completed, so within its TTL.
                expiry_timestamp=int(now) + 1,
            )
        else:
            raise IdempotencyPersistenceLayerError(f"unexpected claim status {status!r}")
        raise IdempotencyItemAlreadyExistsError(old_data_record=existing)

    def _update_record(self, data_record: DataRecord) -> None:
        result = json.dumps(
            {"response": data_record.response_data, "payload_hash": data_record.payload_hash}
        )
        self._call(
            "CompleteIdempotencyKey",
            {"Key": self._key(data_record.idempotency_key), "Result": result},
        )

    def _delete_record(self, data_record: DataRecord) -> None:
        try:
            self._call("ReleaseIdempotencyKey", {"Key": self._key(data_record.idempotency_key)})
        except _NotInProgress:
            # Its claim lapsed and another took it, or it is gone: nothing
            # of this invocation's is left to release.
            pass

    def _get_record(self, idempotency_key: str) -> DataRecord:
        # A claim that finds the key taken always carries the record it
        # found (IdempotencyItemAlreadyExistsError.old_data_record), so
        # Powertools has no need to read one apart; sluice offers no read
        # that would not claim.
        raise IdempotencyItemNotFoundError(idempotency_key)

    # The wire.

    def _key(self, idempotency_key: str) -> str:
        return self.key_prefix + idempotency_key

    def _call(self, action: str, body: dict[str, Any]) -> dict[str, Any]:
        data = json.dumps(body).encode()
        headers = {
            "Content-Type": "application/x-amz-json-1.0",
            "X-Amz-Target": f"Sluice.{action}",
        }
        headers = self._signed(data, headers)
        request = urllib.request.Request(self.endpoint_url, data=data, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                text = response.read().decode()
        except urllib.error.HTTPError as e:
            text = e.read().decode(errors="replace")
            code = _error_code(e, text)
            if code == "ResourceNotFoundException":
                raise _NotInProgress(text) from e
            raise IdempotencyPersistenceLayerError(f"{action}: {e.code} {code}: {text}") from e
        return json.loads(text) if text else {}

    def _signed(self, data: bytes, headers: dict[str, str]) -> dict[str, str]:
        try:
            from botocore.auth import SigV4Auth
            from botocore.awsrequest import AWSRequest
            from botocore.session import Session
        except ImportError:
            return headers
        session = self._botocore_session or Session()
        credentials = session.get_credentials()
        if credentials is None:
            return headers
        request = AWSRequest(method="POST", url=self.endpoint_url, data=data, headers=headers)
        SigV4Auth(credentials, "sqs", self.region_name).add_auth(request)
        return dict(request.headers.items())


class _NotInProgress(Exception):
    """The server answered ResourceNotFoundException: the key is not in
    progress."""


def _error_code(e: urllib.error.HTTPError, text: str) -> Optional[str]:
    query_error = e.headers.get("x-amzn-query-error")
    if query_error:
        return query_error.split(";")[0]
    try:
        return json.loads(text).get("__type", "").split("#")[-1] or None
    except ValueError:
        return None


def _decode_result(result: str) -> dict[str, Any]:
    try:
        stored = json.loads(result)
    except ValueError:
        return {"response": result}
    return stored if isinstance(stored, dict) else {"response": result}

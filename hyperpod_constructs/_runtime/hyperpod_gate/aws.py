"""The imperative edge: AWS clients, clock and sleep, behind one small seam.

Handlers never construct boto3 clients or read the clock directly; they call
:func:`client`, :func:`now` and :func:`sleep`.  Tests swap the seam with
:func:`configure` (and restore it with :func:`reset`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from botocore.config import Config  # type: ignore[import-untyped, unused-ignore]
from botocore.exceptions import (  # type: ignore[import-untyped, unused-ignore]
    ClientError,
    HTTPClientError,
)
from botocore.exceptions import (
    ConnectionError as BotoConnectionError,
)

from . import faults

ClientFactory = Callable[[str], Any]
"""Builds a boto3 client for a service name ("sagemaker", "cloudformation", ...)."""

CONNECT_TIMEOUT = 2
READ_TIMEOUT = 8
MAX_ATTEMPTS = 3
"""Attempts per API call, the first included (botocore standard mode)."""
MAX_BACKOFF_TOTAL = 1 + 2
"""Standard mode sleeps at most 1 s before the 2nd attempt and 2 s before the 3rd."""
CALL_WORST_CASE = MAX_ATTEMPTS * (CONNECT_TIMEOUT + READ_TIMEOUT) + MAX_BACKOFF_TOTAL
"""Seconds one API call may take at worst, retries included (33 s)."""

CLIENT_CONFIG = Config(
    retries={"mode": "standard", "total_max_attempts": MAX_ATTEMPTS},
    connect_timeout=CONNECT_TIMEOUT,
    read_timeout=READ_TIMEOUT,
    user_agent_extra="hyperpod-min-count-gate",
)
"""Standard-mode retries (throttling and 5xx) with bounded timeouts: at most
:data:`CALL_WORST_CASE` seconds per call, so each check can fit its time budget."""

THROTTLING_CODES = faults.THROTTLING_CODES
ACCESS_DENIED_CODES = faults.ACCESS_DENIED_CODES


def _boto3_client(service_name: str) -> Any:
    import boto3  # type: ignore[import-untyped, unused-ignore]

    return boto3.client(service_name, config=CLIENT_CONFIG)


_factory: ClientFactory = _boto3_client
_clock: Callable[[], float] = time.time
_sleep: Callable[[float], None] = time.sleep
_cache: dict[str, Any] = {}


def configure(
    *,
    client_factory: ClientFactory | None = None,
    clock: Callable[[], float] | None = None,
    sleep: Callable[[float], None] | None = None,
) -> None:
    """Replace the client factory, clock (epoch seconds) and/or sleep function."""
    global _factory, _clock, _sleep
    if client_factory is not None:
        _factory = client_factory
        _cache.clear()
    if clock is not None:
        _clock = clock
    if sleep is not None:
        _sleep = sleep


def reset() -> None:
    """Restore the real boto3 factory, wall clock and sleep; drop cached clients."""
    global _factory, _clock, _sleep
    _factory, _clock, _sleep = _boto3_client, time.time, time.sleep
    _cache.clear()


def client(service_name: str) -> Any:
    """Return the (per-container cached) client for ``service_name``."""
    found = _cache.get(service_name)
    if found is None:
        found = _cache[service_name] = _factory(service_name)
    return found


def now() -> datetime:
    """Current time (UTC, timezone-aware) from the configured clock."""
    return datetime.fromtimestamp(_clock(), tz=UTC)


def sleep(seconds: float) -> None:
    """Sleep through the configured sleep function."""
    _sleep(seconds)


def error_code(exc: BaseException) -> str | None:
    """The AWS error code of a botocore ``ClientError``, else ``None``."""
    if isinstance(exc, ClientError):
        code = exc.response.get("Error", {}).get("Code")
        return str(code) if code else None
    return None


def error_message(exc: BaseException) -> str:
    """The AWS error message of a ``ClientError`` (else ``str(exc)``)."""
    if isinstance(exc, ClientError):
        return str(exc.response.get("Error", {}).get("Message") or "")
    return str(exc)


def http_status(exc: BaseException) -> int | None:
    """HTTP status of a ``ClientError``, else ``None``."""
    if isinstance(exc, ClientError):
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        return status if isinstance(status, int) else None
    return None


def fault_kind(exc: BaseException) -> str:
    """The kind of an API failure in the fault model (:func:`faults.api_fault`)."""
    connection = isinstance(exc, (BotoConnectionError, HTTPClientError))
    return faults.api_fault(error_code(exc), http_status(exc), connection=connection)


def is_transient(exc: BaseException) -> bool:
    """Throttling, 5xx, or a connection/timeout problem: worth another poll."""
    return faults.is_transient_api_fault(fault_kind(exc))


def is_access_denied(exc: BaseException) -> bool:
    """Whether ``exc`` is an authorization failure."""
    return error_code(exc) in ACCESS_DENIED_CODES

"""The imperative edge: AWS clients, clock and sleep, behind one small seam.

Handlers never construct boto3 clients or read the clock directly; they call
:func:`client`, :func:`now` and :func:`sleep`.  Tests swap the seam with
:func:`configure` (and restore it with :func:`reset`).

Every AWS call of the gate goes through :func:`call`: a transient fault (botocore's retryable
codes, 5xx, timeouts, connection errors: :func:`is_transient`) is retried with backoff and full
jitter for as long as the invocation's remaining time allows (:func:`budget`, which keeps what
the handler still needs afterwards, e.g. the answer to CloudFormation); only a permanent answer,
or the transient one when the time is up, reaches the caller.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
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

RETRY_BASE_SECONDS = 1.0
"""The first pause between two attempts of :func:`call` (before jitter); it doubles each time."""
RETRY_CAP_SECONDS = 20.0
"""The longest pause between two attempts of :func:`call` (before jitter)."""

THROTTLING_CODES = faults.THROTTLING_CODES
ACCESS_DENIED_CODES = faults.ACCESS_DENIED_CODES


def _boto3_client(service_name: str) -> Any:
    import boto3  # type: ignore[import-untyped, unused-ignore]

    return boto3.client(service_name, config=CLIENT_CONFIG)


_factory: ClientFactory = _boto3_client
_clock: Callable[[], float] = time.time
_sleep: Callable[[float], None] = time.sleep
_random: Callable[[], float] = random.random
_cache: dict[str, Any] = {}
_allows: ContextVar[Callable[[float], bool] | None] = ContextVar("gate_allows", default=None)


def configure(
    *,
    client_factory: ClientFactory | None = None,
    clock: Callable[[], float] | None = None,
    sleep: Callable[[float], None] | None = None,
    jitter: Callable[[], float] | None = None,
) -> None:
    """Replace the client factory, clock (epoch seconds), sleep function and/or the random
    source of :func:`call`'s jitter (a float in [0, 1))."""
    global _factory, _clock, _sleep, _random
    if client_factory is not None:
        _factory = client_factory
        _cache.clear()
    if clock is not None:
        _clock = clock
    if sleep is not None:
        _sleep = sleep
    if jitter is not None:
        _random = jitter


def reset() -> None:
    """Restore the real boto3 factory, wall clock, sleep and jitter; drop cached clients."""
    global _factory, _clock, _sleep, _random
    _factory, _clock, _sleep, _random = _boto3_client, time.time, time.sleep, random.random
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


@contextmanager
def budget(allows: Callable[[float], bool]) -> Iterator[None]:
    """Within this block, :func:`call` retries a transient fault only while ``allows(seconds)``
    says the invocation still has ``seconds`` (the pause and the next attempt's worst case);
    ``allows`` keeps what the handler needs after its calls. Outside any block, :func:`call`
    makes one call (with botocore's own retries)."""
    token = _allows.set(allows)
    try:
        yield
    finally:
        _allows.reset(token)


@contextmanager
def within(seconds: float) -> Iterator[None]:
    """Within this block :func:`call` retries only for ``seconds`` from now (and no longer
    than the enclosing :func:`budget` allows)."""
    outer = _allows.get()
    ends = now().timestamp() + seconds

    def allows(wanted: float) -> bool:
        fits = now().timestamp() + wanted <= ends
        return fits and (outer is None or outer(wanted))

    with budget(allows):
        yield


def retry_pause(attempt: int, draw: float) -> float:
    """The pause before retry ``attempt`` (1, 2, ...) with full jitter (pure): a draw in
    [0, 1) of the capped exponential backoff."""
    return draw * min(RETRY_CAP_SECONDS, RETRY_BASE_SECONDS * 2.0 ** (attempt - 1))


def call(aws_client: Any, operation: str, /, **params: Any) -> Any:
    """``aws_client.<operation>(**params)``, a transient fault retried (backoff, full jitter)
    while the invocation's time allows (:func:`budget`); the permanent fault, or the last
    transient one, is raised."""
    method = getattr(aws_client, operation)
    attempt = 0
    while True:
        try:
            return method(**params)
        except Exception as exc:
            if not is_transient(exc):
                raise
            attempt += 1
            pause = retry_pause(attempt, _random())
            allows = _allows.get()
            if allows is None or not allows(pause + CALL_WORST_CASE):
                raise
            sleep(pause)


def stack_resource(stack_id: str, logical_id: str) -> Mapping[str, Any]:
    """``DescribeStackResource`` of ``logical_id`` in ``stack_id``: its ``StackResourceDetail``
    (:func:`call`: a transient fault retried while the invocation's time allows, then raised)."""
    detail: Mapping[str, Any] = call(
        client("cloudformation"),
        "describe_stack_resource",
        StackName=stack_id,
        LogicalResourceId=logical_id,
    )["StackResourceDetail"]
    return detail

"""The gate's fault model: every way a step can fail, transient or permanent, in one place.

Pure (no boto3 import at module level). The state machine's Retry/Catch (``definition.py``),
the check (``poll.py``), the signal (``cfnsignal.py``) and the docs' fault table
(``docs/gate.md``, tested against :data:`FAULT_TABLE`) all read it.

The rule the gate keeps: a *transient* fault of any length before the deadline means WAITING
and poll again; only HyperPod's own verdict or the gate's deadline means FAILURE. A
*permanent* fault of the check function hands the next check to the arm function (another
function, another role); a permanent fault of the signal ends the loop with a visible outcome.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

Transience = Literal["transient", "permanent"]
Step = Literal["invocation", "api", "signal"]


@dataclass(frozen=True)
class Fault:
    """One kind of failure of one step, and what the gate does about it."""

    step: Step
    kind: str
    transience: Transience
    examples: str
    action: str


INVOCATION_TRANSIENT_ERRORS: Final = (
    "Lambda.TooManyRequestsException",
    "Lambda.ServiceException",
    "Lambda.AWSLambdaException",
    "Lambda.SdkClientException",
    "Lambda.EC2ThrottledException",
    "Lambda.ResourceConflictException",
    "Lambda.ResourceNotReadyException",
    "States.Timeout",
    "Sandbox.Timedout",
)
"""Errors a Task state sees when the Lambda invocation (not the check) failed and a later one
may succeed: throttling, a service error, the function being updated, a timeout (every check
fits its time budget, so a timeout means a slow dependency)."""

THROTTLING_CODES: Final = frozenset(
    {
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestThrottledException",
        "TooManyRequestsException",
        "ProvisionedThroughputExceededException",
        "TransactionInProgressException",
        "RequestLimitExceeded",
        "LimitExceededException",
        "BandwidthLimitExceeded",
        "RequestThrottled",
        "SlowDown",
        "PriorRequestNotComplete",
        "EC2ThrottledException",
        "RequestTimeout",
        "RequestTimeoutException",
        "InternalFailure",
        "InternalError",
        "InternalServerError",
        "ServiceUnavailable",
    }
)
"""API error codes that are transient whatever their HTTP status: every code botocore's
standard retry mode retries (throttling and transient), and AWS's internal-error codes."""

ACCESS_DENIED_CODES: Final = frozenset(
    {"AccessDenied", "AccessDeniedException", "UnauthorizedOperation", "AuthorizationError"}
)
NOT_FOUND_CODES: Final = frozenset({"ResourceNotFound", "ResourceNotFoundException"})


def api_fault(code: str | None, status: int | None, *, connection: bool = False) -> str:
    """The kind of an AWS API failure (pure): ``throttled``, ``server``, ``connection``,
    ``denied``, ``not-found`` or ``malformed`` (any other client error)."""
    if connection:
        return "connection"
    if code in THROTTLING_CODES or status == 429:
        return "throttled"
    if status is not None and status >= 500:
        return "server"
    if code in ACCESS_DENIED_CODES:
        return "denied"
    if code in NOT_FOUND_CODES:
        return "not-found"
    return "malformed"


TRANSIENT_API_FAULTS: Final = frozenset({"throttled", "server", "connection"})


def is_transient_api_fault(kind: str) -> bool:
    """Whether another call later may succeed (throttling, 5xx, connection, timeout)."""
    return kind in TRANSIENT_API_FAULTS


def signal_fault(status: int | None) -> Transience:
    """A presigned-URL PUT (the custom resource's response) that failed with HTTP ``status``
    (``None``: no answer): 5xx, 429 and no answer are transient; any other 4xx is permanent
    (an expired or refused presigned URL answers 403, and the same URL will answer 403
    again)."""
    if status is None or status == 429 or status >= 500:
        return "transient"
    return "permanent"


FAULT_TABLE: Final = (
    Fault(
        "invocation",
        "throttled",
        "transient",
        "`Lambda.TooManyRequestsException`, `Lambda.EC2ThrottledException`",
        "retried twice, then the arm function checks; if it is throttled too, wait one poll "
        "interval and check again, for as long as it lasts",
    ),
    Fault(
        "invocation",
        "service error",
        "transient",
        "`Lambda.ServiceException`, `Lambda.AWSLambdaException`, `Lambda.SdkClientException`, "
        "`Lambda.ResourceConflictException`, `Lambda.ResourceNotReadyException`",
        "as throttled",
    ),
    Fault(
        "invocation",
        "timeout",
        "transient",
        "`Sandbox.Timedout`, `States.Timeout`",
        "as throttled",
    ),
    Fault(
        "invocation",
        "function error",
        "permanent",
        "`Lambda.Unknown` (out of memory), an unhandled error, a deleted function",
        "no retry; the arm function (another role) runs the check instead, every iteration",
    ),
    Fault(
        "api",
        "throttled",
        "transient",
        "`ThrottlingException`, HTTP 429",
        "retried with backoff and jitter while the invocation's time allows (keeping what the "
        "signal or the answer to CloudFormation needs), then WAITING: poll again at the next "
        "interval; in the arm function the request stays unanswered and Lambda runs it again "
        "(one, then two minutes later), never FAILED; ListClusterNodes still failing at the "
        "deadline: DescribeCluster's counts decide, with a note",
    ),
    Fault("api", "server", "transient", "HTTP 5xx", "as throttled"),
    Fault("api", "connection", "transient", "timeouts, connection errors", "as throttled"),
    Fault(
        "api",
        "denied",
        "permanent",
        "`AccessDeniedException`",
        "WAITING for the first 10 minutes (IAM propagation), then FAILED naming the "
        "permission; ListClusterNodes still denied after those 10 minutes: DescribeCluster's "
        "counts decide, with a note naming the permission",
    ),
    Fault(
        "api",
        "not-found",
        "permanent",
        "`ResourceNotFound` on DescribeCluster; a deleted wait condition",
        "FAILED (cluster deleted); ABANDONED (gate deleted or superseded); on "
        "ListClusterNodes: WAITING, the next DescribeCluster decides",
    ),
    Fault(
        "api",
        "malformed",
        "permanent",
        "`ValidationException` and any other 4xx",
        "FAILED with the code and message; on ListClusterNodes: DescribeCluster's counts "
        "decide, with a note",
    ),
    Fault(
        "signal",
        "refused",
        "permanent",
        "`AccessDenied`, a `ValidationError` while the wait condition still waits",
        "retried in the check, then by the arm function (another role); still refused: the "
        "loop ends FAILED (`MinCountGateSignalRefused`) within that poll, naming the decision "
        "and the `aws cloudformation signal-resource` command that delivers it, and the topic "
        "is told; during the first 10 minutes after arming: WAITING (IAM propagation, the "
        "wait condition not created yet)",
    ),
    Fault(
        "signal",
        "no longer waiting",
        "permanent",
        "a `ValidationError` once the wait condition completed, failed or was deleted",
        "the wait condition's state decides: the decision it already holds counts as "
        "delivered; completed before a FAILURE: OPENED; failed or deleted before a SUCCESS: "
        "ABANDONED",
    ),
    Fault(
        "signal",
        "transient",
        "transient",
        "throttling, HTTP 5xx, no answer (retried while the check's time allows)",
        "WAITING: decided and signalled again at the next poll",
    ),
)
"""The fault table of ``docs/gate.md`` (a test keeps the page and this tuple equal)."""

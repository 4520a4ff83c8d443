"""The wait condition's signal: ``cloudformation:SignalResource``, authorized by IAM.

The gate's wait condition has a ``CreationPolicy`` (``ResourceSignal`` Count 1) and no handle,
so there is no presigned URL to carry, expire or leak: a signal is an API call of the
function's own role, scoped to its own stack. A refusal (``AccessDenied``, or a
``ValidationError`` while the wait condition still waits) is never left to the wait
condition's 12-hour timeout: the check retries it, the arm function (another role) tries
again, and then the loop fails loudly, naming the decision and how to deliver it by hand.

The wait condition's state decides what a refusal means: a ``SignalResource`` of a resource
that no longer waits is refused too, e.g. the repeat of a signal whose answer was lost, or a
SUCCESS after the fast path's own.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from . import aws

UNIQUE_ID = "hyperpod-min-count-gate"
"""``UniqueId`` of a SUCCESS signal (the loop's and the fast path's: one opening)."""
FAILED_PREFIX = "gate-failed-"
UNIQUE_ID_LIMIT = 64
"""``ResourceSignalUniqueId`` is 1..64 characters (botocore's model)."""
REFUSED_CALL_SECONDS = aws.CONNECT_TIMEOUT + aws.READ_TIMEOUT
"""A refusal is a 4xx answer, which botocore does not retry: one attempt (10 s at worst)."""
REFUSAL_BACKOFF = 1.0
"""Seconds before retrying a refused signal in the same check (then 2, 3, ...)."""
REFUSAL_ATTEMPTS = 3
"""Signals one check sends at most while the wait condition still waits but refuses them."""
SIGNAL_WORST_CASE = aws.CALL_WORST_CASE + REFUSAL_BACKOFF + REFUSED_CALL_SECONDS
"""What a check keeps for its signal (44 s): one ``SignalResource`` (a refusal takes one
attempt, 10 s) and the ``DescribeStackResource`` that explains a refusal (33 s); a transient
failure is one call with botocore's retries (33 s). Each further attempt is made only while
the invocation's remaining time covers it."""

ConditionState = Literal[
    "WAITING", "COMPLETE", "FAILED", "DELETED", "MISSING", "UNKNOWN", "UNREADABLE"
]
"""The wait condition as ``DescribeStackResource`` shows it: still waiting, signalled SUCCESS,
failed (a FAILURE signal or its timeout), being deleted, not (or no longer) in the stack,
unknown (a transient failure reading it) or unreadable (denied, another error)."""

DeliveryKind = Literal["delivered", "opened", "ended", "waiting", "refused"]
"""``delivered``: the wait condition holds this decision (sent now, or by an earlier attempt
whose answer was lost); ``opened``: it completed already (a FAILURE comes too late);
``ended``: it failed or is gone (the gate was deleted or superseded); ``waiting``: try again
at the next check (throttled, 5xx, no answer, or a refusal while the policy or the wait
condition may not exist yet); ``refused``: refused for good while it still waits."""


@dataclass(frozen=True)
class Delivery:
    """What sending the signal came to."""

    kind: DeliveryKind
    label: str = ""
    """The error code (or exception type) of the last failed attempt."""
    message: str = ""
    """Its message (no secret: SignalResource carries none)."""
    attempts: int = 0


def condition_state(stack_id: str, logical_id: str) -> ConditionState:
    """Read the wait condition's state (one bounded ``DescribeStackResource``)."""
    try:
        detail = aws.stack_resource(stack_id, logical_id)
    except Exception as exc:
        if aws.is_transient(exc):
            return "UNKNOWN"
        message = aws.error_message(exc)
        if aws.error_code(exc) == "ValidationError" and "does not exist" in message:
            # "Stack with id ... does not exist": the stack itself is gone (deleted), so its
            # wait condition is too; "Resource ... does not exist for stack ...": not created
            # yet (it follows the arm resource).
            return "DELETED" if message.startswith("Stack with id") else "MISSING"
        return "UNREADABLE"
    status = str(detail.get("ResourceStatus") or "")
    if status == "CREATE_COMPLETE":
        return "COMPLETE"
    if status.startswith("CREATE_FAILED"):
        return "FAILED"
    if status.startswith("DELETE"):
        return "DELETED"
    return "WAITING"


def unique_id(success: bool, reason: str) -> str:
    """The signal's ``UniqueId`` (pure). SignalResource has no reason field; CloudFormation's
    stack event names the UniqueId ("Received FAILURE signal with UniqueId ..."), so a
    FAILURE's carries the start of its reason in the letters, digits and hyphens CloudFormation
    takes everywhere, e.g. ``gate-failed-HyperPod-rolled-back-instance-group-s-gpu-InService``.
    """
    if success:
        return UNIQUE_ID
    headline = re.sub(r"[^A-Za-z0-9]+", "-", reason.removeprefix("MinCount gate failed: "))
    return (FAILED_PREFIX + headline.strip("-"))[:UNIQUE_ID_LIMIT].rstrip("-") or "gate-failed"


def _after_refusal(state: ConditionState, success: bool, propagating: bool) -> DeliveryKind:
    """What a refused signal means, given the wait condition's state (pure); ``refused``
    means: it still waits, so the refusal is the signal's own (retry, then report)."""
    if state == "COMPLETE":
        return "delivered" if success else "opened"
    if state == "FAILED":
        return "ended" if success else "delivered"
    if state == "DELETED" or (state == "MISSING" and not propagating):
        return "ended"
    if state == "UNKNOWN" or propagating:
        # Before the settle window ends the role's policy may still be propagating, and the
        # wait condition (created just after the arm resource) may not exist yet.
        return "waiting"
    return "refused"


def send(
    stack_id: str,
    logical_id: str,
    *,
    success: bool,
    reason: str,
    propagating: bool,
    allows: Callable[[float], bool],
) -> Delivery:
    """Signal the wait condition ``logical_id`` of stack ``stack_id`` SUCCESS or FAILURE.

    ``allows(seconds)`` says whether the invocation still has that much time; ``propagating``
    whether the gate was armed less than the settle window ago. Raises only for what is not
    an AWS API error (a bug), as every other call of the check does."""
    cloudformation = aws.client("cloudformation")
    label, message, attempts = "", "", 0
    while True:
        attempts += 1
        try:
            aws.call(
                cloudformation,
                "signal_resource",
                StackName=stack_id,
                LogicalResourceId=logical_id,
                UniqueId=unique_id(success, reason),
                Status="SUCCESS" if success else "FAILURE",
            )
        except Exception as exc:
            code = aws.error_code(exc)
            if code is None and not aws.is_transient(exc):
                raise
            label, message = code or type(exc).__name__, aws.error_message(exc)
            if aws.is_transient(exc):
                return Delivery("waiting", label, message, attempts)
        else:
            return Delivery("delivered", attempts=attempts)
        if not allows(aws.CALL_WORST_CASE):
            return Delivery("waiting", label, message, attempts)
        kind = _after_refusal(condition_state(stack_id, logical_id), success, propagating)
        if kind != "refused":
            return Delivery(kind, label, message, attempts)
        pause = REFUSAL_BACKOFF * attempts
        if attempts >= REFUSAL_ATTEMPTS or not allows(
            pause + REFUSED_CALL_SECONDS + aws.CALL_WORST_CASE
        ):
            return Delivery("refused", label, message, attempts)
        aws.sleep(pause)


def manual_command(stack_id: str, logical_id: str, success: bool) -> str:
    """The AWS CLI command that delivers the decision by hand (pure)."""
    status = "SUCCESS" if success else "FAILURE"
    return (
        f"aws cloudformation signal-resource --stack-name {stack_id} --logical-resource-id "
        f"{logical_id} --unique-id {UNIQUE_ID}-manual --status {status}"
    )

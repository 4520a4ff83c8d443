"""Step Functions (ASL) definition of the MinCount gate's poll loop.

Pure: no CDK import, so it can be unit-tested and linted with statelint.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._runtime.hyperpod_gate.confirm import CONFIRM_MIN_SECONDS
from .._runtime.hyperpod_gate.faults import INVOCATION_TRANSIENT_ERRORS

LAMBDA_RETRY_ERRORS = INVOCATION_TRANSIENT_ERRORS
"""Transient invocation errors (the fault model's): retried, then handed to the other
function, then waited out for as long as they last."""

RETRY_ATTEMPTS = 2
RETRY_INTERVAL_SECONDS = 2
RETRY_BACKOFF = 2.0

FAILED_ERROR = "MinCountGateFailed"
"""Error name of the execution when the gate fails."""

REFUSED_ERROR = "MinCountGateSignalRefused"
"""Error name of the execution when CloudFormation refused the signal (SignalResource) to both
functions while the wait condition still waits: the cause names the decision that could not be
delivered and how to deliver it by hand."""

UNSIGNALLED_ERROR = "MinCountGateUnsignalled"
"""Error name of the execution when the arm function, checking for a check function whose
signal was refused, could not signal either (an unexpected error)."""

CHECK_TIMEOUT_SECONDS = 170
"""Per-invocation timeout of the check tasks (the functions' timeout must be lower)."""

HISTORY_QUOTA = 25_000
"""Events a Step Functions Standard execution's history may hold; reaching it fails the
execution with no Catch (the gate would end without a signal)."""
HISTORY_RESERVE = 1_000
"""Events kept free below the quota (the start, the end, the last iterations' retries)."""
EVENTS_PER_CHECK = 9
"""History events of one ordinary iteration (Wait, check, Choice); measured on moto's engine
from the synthesized definition (tests/gate/test_gate_faults.py), where the test fails if
the engine writes more."""
EVENTS_PER_FAULTED_CHECK = 20
"""History events of one iteration whose check invocation failed after its retries and the arm
function checked instead (also measured)."""
EVENTS_PER_STATE = 2
"""A state's ``...StateEntered`` and ``...StateExited`` events."""
EVENTS_PER_ATTEMPT = 3
"""One Lambda invocation of a Task: ``LambdaFunctionScheduled``, ``LambdaFunctionStarted`` and
``LambdaFunctionSucceeded`` (or ``Failed``/``TimedOut``); measured, as above."""


def _attempts(task: Mapping[str, Any]) -> list[float]:
    """The least time a Task's Retry policies wait before each of its attempts (the first: 0);
    as many entries as attempts the policies allow at most (pure)."""
    waits = [0.0]
    for policy in task.get("Retry", ()):
        interval = float(policy.get("IntervalSeconds", 1))
        backoff = float(policy.get("BackoffRate", 2.0))
        for retry in range(int(policy.get("MaxAttempts", 3))):
            waits.append(waits[-1] + interval * backoff**retry)
    return waits


def iteration_costs(definition: Mapping[str, Any]) -> list[tuple[int, float]]:
    """Every way one iteration of the loop can run under the fault model, as ``(history
    events, least seconds of retry waits)`` (pure). An iteration starts at a pause (the Wait
    state, or a CONFIRMING check, which lasts at least ``CONFIRM_MIN_SECONDS``; both counted
    as the Wait's two events), runs the check task with 1..N attempts (N from its Retry
    policies) and its Choice, then possibly the arm task with 0..M attempts and its Choice."""
    states = definition["States"]
    check, fallback = _attempts(states["CheckCapacity"]), _attempts(states["CheckFromArm"])
    costs = []
    for k1, wait1 in enumerate(check, start=1):
        first = EVENTS_PER_STATE + EVENTS_PER_STATE + EVENTS_PER_ATTEMPT * k1 + EVENTS_PER_STATE
        costs.append((first, wait1))
        for k2, wait2 in enumerate(fallback, start=1):
            second = EVENTS_PER_STATE + EVENTS_PER_ATTEMPT * k2 + EVENTS_PER_STATE
            costs.append((first + second, wait1 + wait2))
    return costs


def worst_iteration(poll_interval_seconds: int) -> tuple[int, float]:
    """The iteration that writes the most history events per second at this poll interval,
    as ``(events, least seconds it lasts)`` (pure)."""
    pause = min(poll_interval_seconds, CONFIRM_MIN_SECONDS)
    costs = iteration_costs(_LOOP)
    events, waits = max(costs, key=lambda cost: cost[0] / (pause + cost[1]))
    return events, pause + waits


def history_events(timeout_seconds: int, poll_interval_seconds: int) -> int:
    """Upper bound of the history events one gate's execution writes before its deadline
    (pure): the worst iteration the fault model allows (:func:`worst_iteration`: every Task
    retried as often as its Retry policies allow, the arm function checking after the check
    function), repeated for as long as the timeout lasts, plus the reserve."""
    events, seconds = worst_iteration(poll_interval_seconds)
    return int(events / seconds * (timeout_seconds + poll_interval_seconds)) + HISTORY_RESERVE


def max_timeout_for_history(poll_interval_seconds: int) -> int:
    """The longest gate timeout whose history fits the quota at this poll interval (pure)."""
    low, high = 0, 24 * 3600
    while low < high:
        middle = (low + high + 1) // 2
        if history_events(middle, poll_interval_seconds) <= HISTORY_QUOTA:
            low = middle
        else:
            high = middle - 1
    return low


def task_parameters(*, fallback: bool) -> dict[str, Any]:
    """What a check task sends its function: only the execution's id. The function reads the
    gate's requirements, deadline and wait condition from that execution's input, which only the
    arm function (the stack) writes, so a crafted invocation cannot open or fail the gate."""
    parameters: dict[str, Any] = {"executionArn.$": "$$.Execution.Id"}
    if fallback:
        parameters["fallback"] = True
    return parameters


def build_definition(
    *, poll_function_arn: str, fallback_function_arn: str, timeout_seconds: int
) -> dict[str, Any]:
    """Return the ASL definition of the gate's Wait -> check -> Choice loop.

    ``poll_function_arn`` is the check function (used directly as the Task resource; it may
    be an unresolved CDK token string). ``fallback_function_arn`` (the arm function, another
    role) runs the same check when the check function's invocation failed after its retries,
    or when CloudFormation refused its signal (UNSIGNALLED); if that invocation fails too, the
    loop waits one poll interval and checks again. A transient fault of any length therefore
    means "poll again"; only a check that ran decides FAILURE (HyperPod's verdict, or the
    deadline in the execution input). ``timeout_seconds`` becomes the execution's
    ``TimeoutSeconds``, a backstop behind the deadline for a check that never runs: pass
    the gate timeout plus at least one poll interval and the worst-case time of one
    iteration, or the backstop can fire before the check that reports "deadline reached".
    """
    if isinstance(timeout_seconds, bool) or not isinstance(timeout_seconds, int):
        raise TypeError("timeout_seconds must be an int")
    if timeout_seconds < 1:
        raise ValueError("timeout_seconds must be >= 1")

    def decide(default: str) -> dict[str, Any]:
        def on(status: str, next_state: str) -> dict[str, Any]:
            return {"Variable": "$.check.status", "StringEquals": status, "Next": next_state}

        return {
            "Type": "Choice",
            "Choices": [
                on("WAITING", "WaitForCapacity"),
                # Confirming Running nodes took the whole check (at least a minute): go on.
                on("CONFIRMING", "CheckCapacity"),
                on("READY", "GateOpened"),
                on("OPENED", "GateOpened"),
                on("ABANDONED", "GateAbandoned"),
                on("FAILED", "GateFailed"),
                on("REFUSED", "SignalRefused"),
            ],
            "Default": default,
        }

    return {
        "Comment": "HyperPod MinCount gate: poll DescribeCluster until the gated groups "
        "reach their minimum, then signal the wait condition.",
        "StartAt": "CheckCapacity",
        "TimeoutSeconds": timeout_seconds,
        "States": {
            "CheckCapacity": _task(poll_function_arn, fallback=False, on_fault="CheckFromArm"),
            "Decide": decide("CheckFromArm"),
            # The arm function (another role) checks when the check function could not run or
            # its signal was refused; if it cannot run either, wait and check again.
            "CheckFromArm": _task(fallback_function_arn, fallback=True, on_fault="WaitForCapacity"),
            "DecideFromArm": decide("GateUnsignalled"),
            "WaitForCapacity": {
                "Type": "Wait",
                "SecondsPath": "$.pollIntervalSeconds",
                "Next": "CheckCapacity",
            },
            "GateOpened": {"Type": "Succeed"},
            "GateAbandoned": {"Type": "Succeed"},
            "GateFailed": {"Type": "Fail", "Error": FAILED_ERROR, "CausePath": "$.check.reason"},
            "SignalRefused": {
                "Type": "Fail",
                "Error": REFUSED_ERROR,
                "CausePath": "$.check.reason",
            },
            "GateUnsignalled": {
                "Type": "Fail",
                "Error": UNSIGNALLED_ERROR,
                "CausePath": "$.check.reason",
            },
        },
    }


def _task(resource: str, *, fallback: bool, on_fault: str) -> dict[str, Any]:
    return {
        "Type": "Task",
        "Resource": resource,
        "Parameters": task_parameters(fallback=fallback),
        "ResultPath": "$.check",
        "TimeoutSeconds": CHECK_TIMEOUT_SECONDS,
        "Retry": [
            {
                "ErrorEquals": list(LAMBDA_RETRY_ERRORS),
                "IntervalSeconds": RETRY_INTERVAL_SECONDS,
                "MaxAttempts": RETRY_ATTEMPTS,
                "BackoffRate": RETRY_BACKOFF,
            }
        ],
        # Whatever else ends the invocation (a function error, retries exhausted) is a fault
        # of this function, not a decision: the other path checks.
        "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.fault", "Next": on_fault}],
        "Next": "DecideFromArm" if fallback else "Decide",
    }


_LOOP = build_definition(poll_function_arn="check", fallback_function_arn="arm", timeout_seconds=1)
"""The loop's definition, for the history bound (the function ARNs do not change its events)."""

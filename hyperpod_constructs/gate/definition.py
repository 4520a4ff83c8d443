"""Step Functions (ASL) definition of the MinCount gate's poll loop.

Pure: no CDK import, so it can be unit-tested and linted with statelint.
"""

from __future__ import annotations

from typing import Any

LAMBDA_RETRY_ERRORS = (
    "Lambda.ServiceException",
    "Lambda.AWSLambdaException",
    "Lambda.SdkClientException",
    "Lambda.TooManyRequestsException",
    "States.Timeout",
)
"""Transient invocation errors retried by the CheckCapacity task."""

FUNCTION_ERRORS = ("Sandbox.Timedout", "Lambda.Unknown")
"""The function itself ended abnormally (its timeout, out of memory): retried too, fewer
times, before the Catch reports the check as failed. A check has no side effect before its
decision, so running it again is safe; a repeated signal carries the same UniqueId."""

FUNCTION_ERROR_ATTEMPTS = 3

FAILED_ERROR = "MinCountGateFailed"
"""Error name of the execution when the gate fails."""

CHECK_FAILED_ERROR = "MinCountGateCheckFailed"
"""Error name of the execution when even the failure report could not run."""

CHECK_TIMEOUT_SECONDS = 120
"""Per-invocation timeout of the CheckCapacity task (poll Lambda timeout must be lower)."""


def build_definition(
    *, poll_function_arn: str, fallback_function_arn: str, timeout_seconds: int
) -> dict[str, Any]:
    """Return the ASL definition of the gate's Wait -> check -> Choice loop.

    ``poll_function_arn`` is used directly as the Task resource (it may be an
    unresolved CDK token string). ``fallback_function_arn`` (the arm function, another
    role) signals the wait condition when the check function could not (UNSIGNALLED) or
    could not run at all.  ``timeout_seconds`` becomes the execution's
    ``TimeoutSeconds``, a backstop behind the poll function's own deadline: pass
    the gate timeout plus at least one poll interval and the worst-case retry
    time of one check (about 15 minutes), or the backstop can fire before the
    poll that reports "deadline reached" and signals the wait condition.
    """
    if isinstance(timeout_seconds, bool) or not isinstance(timeout_seconds, int):
        raise TypeError("timeout_seconds must be an int")
    if timeout_seconds < 1:
        raise ValueError("timeout_seconds must be >= 1")
    return {
        "Comment": "HyperPod MinCount gate: poll DescribeCluster until the gated groups "
        "reach their minimum, then signal the wait condition.",
        "StartAt": "CheckCapacity",
        "TimeoutSeconds": timeout_seconds,
        "States": {
            "CheckCapacity": {
                "Type": "Task",
                "Resource": poll_function_arn,
                "ResultPath": "$.check",
                "TimeoutSeconds": CHECK_TIMEOUT_SECONDS,
                "Retry": _retries(),
                # Whatever ends the check for good (a function timeout, out of memory, retries
                # exhausted) is reported, so the wait condition fails with a reason instead of
                # waiting for its own 12-hour limit.
                "Catch": [_catch_all("ReportCheckFailure")],
                "Next": "Decide",
            },
            "ReportCheckFailure": {
                "Type": "Task",
                "Resource": poll_function_arn,
                "ResultPath": "$.check",
                "TimeoutSeconds": CHECK_TIMEOUT_SECONDS,
                "Retry": _retries(),
                "Catch": [_catch_all("ReportFromArm")],
                "Next": "Decide",
            },
            # The arm function (another role) reports a failure the check function could not,
            # or signals a decision the check function could not deliver.
            "ReportFromArm": _fallback_task(fallback_function_arn),
            "SignalFromArm": _fallback_task(fallback_function_arn),
            "Decide": {
                "Type": "Choice",
                "Choices": [
                    {
                        "Variable": "$.check.status",
                        "StringEquals": "WAITING",
                        "Next": "WaitForCapacity",
                    },
                    {"Variable": "$.check.status", "StringEquals": "READY", "Next": "GateOpened"},
                    {
                        "Variable": "$.check.status",
                        "StringEquals": "ABANDONED",
                        "Next": "GateAbandoned",
                    },
                    {
                        "Variable": "$.check.status",
                        "StringEquals": "UNSIGNALLED",
                        "Next": "SignalFromArm",
                    },
                ],
                "Default": "GateFailed",
            },
            "WaitForCapacity": {
                "Type": "Wait",
                "SecondsPath": "$.pollIntervalSeconds",
                "Next": "CheckCapacity",
            },
            "GateOpened": {"Type": "Succeed"},
            "GateAbandoned": {"Type": "Succeed"},
            "GateFailed": {
                "Type": "Fail",
                "Error": FAILED_ERROR,
                "CausePath": "$.check.reason",
            },
            "CheckFailedUnreported": {
                "Type": "Fail",
                "Error": CHECK_FAILED_ERROR,
                "CausePath": "$.checkFailure.Cause",
            },
        },
    }


def _retries() -> list[dict[str, Any]]:
    return [
        {
            "ErrorEquals": list(LAMBDA_RETRY_ERRORS),
            "IntervalSeconds": 5,
            "MaxAttempts": 5,
            "BackoffRate": 2.0,
        },
        {
            "ErrorEquals": list(FUNCTION_ERRORS),
            "IntervalSeconds": 10,
            "MaxAttempts": FUNCTION_ERROR_ATTEMPTS,
            "BackoffRate": 2.0,
        },
    ]


def _fallback_task(resource: str) -> dict[str, Any]:
    return {
        "Type": "Task",
        "Resource": resource,
        "ResultPath": "$.check",
        "TimeoutSeconds": CHECK_TIMEOUT_SECONDS,
        "Retry": _retries(),
        "Catch": [_catch_all("CheckFailedUnreported")],
        "Next": "Decide",
    }


def _catch_all(next_state: str) -> dict[str, Any]:
    """Catch every error; the poll function finds it under ``checkFailure`` ({Error, Cause})."""
    return {"ErrorEquals": ["States.ALL"], "ResultPath": "$.checkFailure", "Next": next_state}

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

FAILED_ERROR = "MinCountGateFailed"
"""Error name of the execution when the gate fails."""

CHECK_TIMEOUT_SECONDS = 120
"""Per-invocation timeout of the CheckCapacity task (poll Lambda timeout must be lower)."""


def build_definition(*, poll_function_arn: str, timeout_seconds: int) -> dict[str, Any]:
    """Return the ASL definition of the gate's Wait -> check -> Choice loop.

    ``poll_function_arn`` is used directly as the Task resource (it may be an
    unresolved CDK token string).  ``timeout_seconds`` becomes the execution's
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
                "Retry": [
                    {
                        "ErrorEquals": list(LAMBDA_RETRY_ERRORS),
                        "IntervalSeconds": 5,
                        "MaxAttempts": 5,
                        "BackoffRate": 2.0,
                    }
                ],
                "Next": "Decide",
            },
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
        },
    }

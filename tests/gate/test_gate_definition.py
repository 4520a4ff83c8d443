"""The ASL definition: contract shape and statelint (the real ASL validator); it runs on
moto's engine in test_gate_scenarios.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from statelint.config import Config
from statelint.linter import Linter

from hyperpod_constructs.gate.definition import build_definition

ARN = "arn:aws:lambda:us-east-1:123456789012:function:HyperPodTrain-GateCheck-1A2B"
ARM = "arn:aws:lambda:us-east-1:123456789012:function:HyperPodTrain-GateArm-3C4D"


def build(timeout_seconds: int = 13500, poll: str = ARN) -> dict[str, Any]:
    return build_definition(
        poll_function_arn=poll, fallback_function_arn=ARM, timeout_seconds=timeout_seconds
    )


def lint(definition: dict[str, Any]) -> list[str]:
    return Linter.validate(json.dumps(definition), Config())


def test_contract_shape() -> None:
    d = build(13500)
    assert d["StartAt"] == "CheckCapacity"
    assert d["TimeoutSeconds"] == 13500
    states = d["States"]
    assert set(states) == {
        "CheckCapacity",
        "Decide",
        "WaitForCapacity",
        "GateOpened",
        "GateAbandoned",
        "GateFailed",
        "ReportCheckFailure",
        "ReportFromArm",
        "SignalFromArm",
        "CheckFailedUnreported",
    }
    check = states["CheckCapacity"]
    assert check["Type"] == "Task" and check["Resource"] == ARN
    assert check["ResultPath"] == "$.check" and check["TimeoutSeconds"] == 120
    assert check["Next"] == "Decide"
    assert check["Retry"] == [
        {
            "ErrorEquals": [
                "Lambda.ServiceException",
                "Lambda.AWSLambdaException",
                "Lambda.SdkClientException",
                "Lambda.TooManyRequestsException",
                "States.Timeout",
            ],
            "IntervalSeconds": 5,
            "MaxAttempts": 5,
            "BackoffRate": 2,
        },
        {
            "ErrorEquals": ["Sandbox.Timedout", "Lambda.Unknown"],
            "IntervalSeconds": 10,
            "MaxAttempts": 3,
            "BackoffRate": 2,
        },
    ]
    catch_all = {"ErrorEquals": ["States.ALL"], "ResultPath": "$.checkFailure"}
    assert check["Catch"] == [{**catch_all, "Next": "ReportCheckFailure"}]
    report = states["ReportCheckFailure"]
    assert (report["Resource"], report["ResultPath"], report["Next"]) == (ARN, "$.check", "Decide")
    assert report["Catch"] == [{**catch_all, "Next": "ReportFromArm"}]
    for name in ("ReportFromArm", "SignalFromArm"):
        fallback = states[name]
        assert (fallback["Resource"], fallback["ResultPath"]) == (ARM, "$.check")
        assert fallback["Next"] == "Decide" and fallback["Retry"] == check["Retry"]
        assert fallback["Catch"] == [{**catch_all, "Next": "CheckFailedUnreported"}]
    assert states["CheckFailedUnreported"] == {
        "Type": "Fail",
        "Error": "MinCountGateCheckFailed",
        "CausePath": "$.checkFailure.Cause",
    }
    decide = states["Decide"]
    routes = {c["StringEquals"]: c["Next"] for c in decide["Choices"]}
    assert all(c["Variable"] == "$.check.status" for c in decide["Choices"])
    assert routes == {
        "WAITING": "WaitForCapacity",
        "READY": "GateOpened",
        "ABANDONED": "GateAbandoned",
        "UNSIGNALLED": "SignalFromArm",
    }
    assert decide["Default"] == "GateFailed"
    assert states["WaitForCapacity"] == {
        "Type": "Wait",
        "SecondsPath": "$.pollIntervalSeconds",
        "Next": "CheckCapacity",
    }
    assert states["GateOpened"] == {"Type": "Succeed"}
    assert states["GateAbandoned"] == {"Type": "Succeed"}
    assert states["GateFailed"] == {
        "Type": "Fail",
        "Error": "MinCountGateFailed",
        "CausePath": "$.check.reason",
    }


def test_statelint_accepts_the_definition() -> None:
    assert lint(build(13500)) == []


def test_statelint_cli_on_the_dumped_file(tmp_path: Path) -> None:
    path = tmp_path / "gate.asl.json"
    path.write_text(json.dumps(build(600)))
    result = subprocess.run(
        [sys.executable, "-m", "statelint", str(path)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_statelint_does_catch_a_broken_variant() -> None:
    broken = build(600)
    del broken["States"]["WaitForCapacity"]["Next"]
    broken["States"]["Decide"]["Default"] = "Nowhere"
    problems = lint(broken)
    assert any("Nowhere" in p for p in problems)
    assert any('required field "Next"' in p for p in problems)


def test_token_resource_is_embedded_verbatim() -> None:
    token = "${Token[TOKEN.1234]}"
    d = build(600, poll=token)
    assert d["States"]["CheckCapacity"]["Resource"] == token
    assert token in json.dumps(d)


@pytest.mark.parametrize("bad", [0, -5])
def test_rejects_non_positive_timeout(bad: int) -> None:
    with pytest.raises(ValueError):
        build(bad)


def test_rejects_non_int_timeout() -> None:
    with pytest.raises(TypeError):
        build(1.5)  # type: ignore[arg-type]


def test_a_lambda_timeout_or_crash_is_retried_before_the_gate_gives_up() -> None:
    """Issue 8, defect 2: a check that hits the function timeout surfaces as
    Sandbox.Timedout (out of memory as Lambda.Unknown); no Retry matched them, so the Catch
    failed a gate whose capacity may be ready."""
    for state in ("CheckCapacity", "ReportCheckFailure"):
        retried = {e for r in build()["States"][state]["Retry"] for e in r["ErrorEquals"]}
        assert {"Sandbox.Timedout", "Lambda.Unknown"} <= retried

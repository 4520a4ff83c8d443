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

from hyperpod_constructs._runtime.hyperpod_gate.faults import INVOCATION_TRANSIENT_ERRORS
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
        "CheckFromArm",
        "DecideFromArm",
        "WaitForCapacity",
        "GateOpened",
        "GateAbandoned",
        "GateFailed",
        "SignalRefused",
        "GateUnsignalled",
    }
    retry = [
        {
            "ErrorEquals": list(INVOCATION_TRANSIENT_ERRORS),
            "IntervalSeconds": 2,
            "MaxAttempts": 2,
            "BackoffRate": 2,
        }
    ]
    for name, resource, payload, fault_next, decide in (
        ("CheckCapacity", ARN, {"executionArn.$": "$$.Execution.Id"}, "CheckFromArm", "Decide"),
        (
            "CheckFromArm",
            ARM,
            {"executionArn.$": "$$.Execution.Id", "fallback": True},
            "WaitForCapacity",
            "DecideFromArm",
        ),
    ):
        task = states[name]
        assert task["Type"] == "Task" and task["Resource"] == resource
        # Only the execution's id: the functions read everything else from its input.
        assert task["Parameters"] == payload
        assert task["ResultPath"] == "$.check" and task["TimeoutSeconds"] == 170
        assert task["Retry"] == retry
        assert task["Catch"] == [
            {"ErrorEquals": ["States.ALL"], "ResultPath": "$.fault", "Next": fault_next}
        ]
        assert task["Next"] == decide
    for name, default in (("Decide", "CheckFromArm"), ("DecideFromArm", "GateUnsignalled")):
        decide = states[name]
        routes = {c["StringEquals"]: c["Next"] for c in decide["Choices"]}
        assert all(c["Variable"] == "$.check.status" for c in decide["Choices"])
        assert routes == {
            "WAITING": "WaitForCapacity",
            "CONFIRMING": "CheckCapacity",
            "READY": "GateOpened",
            "OPENED": "GateOpened",
            "ABANDONED": "GateAbandoned",
            "FAILED": "GateFailed",
            "REFUSED": "SignalRefused",
        }
        assert decide["Default"] == default
    assert states["WaitForCapacity"] == {
        "Type": "Wait",
        "SecondsPath": "$.pollIntervalSeconds",
        "Next": "CheckCapacity",
    }
    assert states["GateOpened"] == {"Type": "Succeed"}
    assert states["GateAbandoned"] == {"Type": "Succeed"}
    for name, error in (
        ("GateFailed", "MinCountGateFailed"),
        ("SignalRefused", "MinCountGateSignalRefused"),
        ("GateUnsignalled", "MinCountGateUnsignalled"),
    ):
        assert states[name] == {"Type": "Fail", "Error": error, "CausePath": "$.check.reason"}


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


def test_the_retries_follow_the_fault_model() -> None:
    """A check that hits the function timeout surfaces as Sandbox.Timedout;
    it is transient (retried). Out of memory (Lambda.Unknown) is a fault of the function: not
    retried, the other function checks. No invocation error reaches a Fail state."""
    states = build()["States"]
    for state in ("CheckCapacity", "CheckFromArm"):
        retried = {e for r in states[state]["Retry"] for e in r["ErrorEquals"]}
        assert retried == set(INVOCATION_TRANSIENT_ERRORS)
        assert "Sandbox.Timedout" in retried and "Lambda.Unknown" not in retried
        (catch,) = states[state]["Catch"]
        assert states[catch["Next"]]["Type"] in ("Task", "Wait")

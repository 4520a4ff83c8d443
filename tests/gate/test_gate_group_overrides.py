"""A per-group setting of the gate reaches the Lambda and changes what the gate does.

The per-group settings are derived: every field of the contract's ``Requirement`` but the
group's name (today ``min_count`` and ``target_count``, from the group's
``min_instance_count`` and ``instance_count``; a per-group override of a gate option travels
the same way). For each, one gated group is synthesized with another value than the
baseline's, and the synthesized arm properties, the execution input the real arm handler
builds and the outcome of the real loop (moto's engine, the HyperPod simulator) are compared
with the baseline's: a setting that is dropped on its way (not rendered, not parsed, not read
by the check) leaves the outcome unchanged and fails here. A new per-group field fails
:func:`test_every_per_group_setting_has_a_case` until it has a value here.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from hyperpod_constructs._runtime.hyperpod_gate import contract
from tests.support.hyperpod_sim import GroupSpec, steps
from tests.support.world import GateWorld, Requirement

MIN, HOUR = 60, 3600
PER_GROUP = [f.name for f in dataclasses.fields(contract.Requirement) if f.name != "group_name"]
"""The per-group settings of the gate (derived from the contract)."""
BASELINE = Requirement("gpu", 16, 16)
"""What HyperPod has: 16 of 16 nodes, the minimum reached at 30 min."""
OVERRIDES: dict[str, Any] = {"min_count": 8, "target_count": 20}
"""A value other than the baseline's for each per-group setting (HyperPod keeps the
baseline's, as after an update it did not apply)."""


def _world(monkeypatch: pytest.MonkeyPatch) -> GateWorld:
    capacity = steps((0, 4), (30 * MIN, 16))
    return GateWorld(
        monkeypatch,
        [
            GroupSpec("controller", 1, node_type="Controller", instance_type="ml.m5.12xlarge"),
            GroupSpec("gpu", BASELINE.target_count, BASELINE.min_count, capacity=capacity),
        ],
    )


def _run(monkeypatch: pytest.MonkeyPatch, requirement: Requirement) -> dict[str, Any]:
    """The gate synthesized for ``requirement``, armed and run to its end: what reached the
    arm resource and the loop, and what the gate decided when."""
    w = _world(monkeypatch)
    w.clock.advance(MIN)
    response = w.arm_gate([requirement])
    assert response["Status"] == "SUCCESS", response
    execution = w.execution(response)
    w.run(until_elapsed=5 * HOUR)
    (sent,) = w.gate([requirement]).properties[contract.Prop.REQUIREMENTS]
    start = next(params for name, params in w.sfn_calls if name == "StartExecution")
    (loop_input,) = json.loads(start["input"])["requirements"]
    (signal,) = w.signals([requirement])
    outcome = {
        "status": execution.status,
        "signal": signal.status,
        "at": round(signal.time - w.clock.start),
    }
    w.close()
    return {"properties": sent, "input": loop_input, "outcome": outcome}


def test_every_per_group_setting_has_a_case() -> None:
    assert PER_GROUP and sorted(OVERRIDES) == sorted(PER_GROUP)
    fields = {f.name for f in dataclasses.fields(Requirement)}
    assert set(PER_GROUP) <= fields, "the harness cannot synthesize a group with this setting"


@pytest.fixture(scope="module")
def baseline() -> dict[str, Any]:
    with pytest.MonkeyPatch.context() as monkeypatch:
        return _run(monkeypatch, BASELINE)


def test_the_baseline_opens_when_hyperpod_has_the_minimum(baseline: dict[str, Any]) -> None:
    assert baseline["outcome"]["status"] == "SUCCEEDED"
    assert baseline["outcome"]["signal"] == "SUCCESS"
    assert 30 * MIN < baseline["outcome"]["at"] < HOUR  # the capacity comes at 30 min, then boots


@pytest.mark.parametrize("setting", PER_GROUP)
def test_a_per_group_setting_reaches_the_loop_and_changes_the_outcome(
    monkeypatch: pytest.MonkeyPatch, baseline: dict[str, Any], setting: str
) -> None:
    value = OVERRIDES[setting]
    assert value != getattr(BASELINE, setting)
    changed = _run(monkeypatch, dataclasses.replace(BASELINE, **{setting: value}))
    # rendered into the arm resource's properties (as a string, as CloudFormation sends it) ...
    differs = {k for k, v in changed["properties"].items() if baseline["properties"][k] != v}
    assert [changed["properties"][k] for k in differs] == [str(value)], setting
    # ... parsed by the arm handler into the loop's input ...
    differs = {k for k, v in changed["input"].items() if baseline["input"][k] != v}
    assert [changed["input"][k] for k in differs] == [value], setting
    # ... and read by the check: the gate decides otherwise.
    assert changed["outcome"] != baseline["outcome"], setting

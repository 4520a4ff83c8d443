"""A gate whose counts are CloudFormation parameters (e.g. a Service Catalog product).

The template is the one the library synthesizes; the world resolves its ``Ref``s with the
parameter values of a deployment, as CloudFormation does, and runs the real arm and check
handlers on moto's Step Functions engine against the HyperPod simulator.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import pytest

from tests.support.hyperpod_sim import steps, unlimited
from tests.support.parameterized import parameterized_assembly
from tests.support.world import GateWorld, simulated_groups

HOUR = 3600
MIN = 60
LAUNCH = {"GpuCount": "16", "GpuMin": "12"}


@functools.cache
def parameterized_template() -> dict[str, Any]:
    """The cluster ``train`` whose gated group's counts are Number parameters."""
    assembly = parameterized_assembly("Product", cluster_name="train")
    template: dict[str, Any] = assembly.get_stack_by_name("Product").template
    return template


def world(
    monkeypatch: pytest.MonkeyPatch,
    parameters: Mapping[str, str],
    capacity: Any,
    *,
    event_bridge: bool = False,
) -> GateWorld:
    return GateWorld(
        monkeypatch,
        simulated_groups(parameterized_template(), capacity, parameters),
        template=parameterized_template(),
        parameters=dict(parameters),
        event_bridge=event_bridge,
    )


def test_the_gate_waits_for_the_deployed_parameter_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    w = world(monkeypatch, LAUNCH, steps((0, 8), (90 * MIN, 16)))
    assert [(g.name, g.instance_count, g.min_instance_count) for g in w.groups] == [
        ("controller", 1, 0),
        ("gpu", 16, 12),
    ]
    w.clock.advance(MIN)
    response = w.arm_gate()
    assert response["Status"] == "SUCCESS", response
    execution = w.execution(response)
    assert execution.input["requirements"] == [
        {"groupName": "gpu", "minCount": 12, "targetCount": 16}
    ]
    w.run(until_elapsed=5 * HOUR)
    assert execution.status == "SUCCEEDED"
    # Not at the defaults' 4 of 8: at 12 of the deployed 16, once the capacity is there.
    reached = w.sim.min_reached_at("gpu")
    assert reached is not None and reached - w.clock.start >= 90 * MIN
    (signal,) = w.signals()
    assert signal.time >= reached
    assert "gpu 16/12 (target 16, InService)" in signal.reason
    polls = w.polls()
    assert any("gpu 8/12 (target 16" in p.result["reason"] for p in polls)


def test_the_fast_path_reads_the_deployed_values_from_the_execution(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The rule's input is a constant; the fast path finds the deployed values (12 of 16, not
    the defaults) in the running execution's input, through the arm resource its environment
    names, and opens the gate only when 12 are in service."""
    w = world(monkeypatch, LAUNCH, steps((0, 0), (30 * MIN, 8), (90 * MIN, 12)), event_bridge=True)
    assert w.gate().fast_path_input == {"fastPath": True}
    assert w.gate().arm_logical_id in parameterized_template()["Resources"]
    w.clock.advance(MIN)
    execution = w.execution(w.arm_gate())
    w.run(until_elapsed=5 * HOUR)
    assert execution.status == "SUCCEEDED"
    (first, *_) = w.signals()
    assert "seen through an EventBridge event" in first.reason
    # 12 of 16 with capacity for 12: the group is Degraded at its minimum (API reference)
    assert "gpu 12/12 (target 16, Degraded)" in first.reason


def test_changing_only_a_parameter_value_does_not_wait_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    w = world(monkeypatch, LAUNCH, unlimited())
    w.clock.advance(MIN)
    first = w.execution(w.arm_gate())
    w.run(until_elapsed=2 * HOUR)
    assert first.status == "SUCCEEDED"
    old_properties = w.properties()
    handle = w.condition_id()
    starts = len(w.calls("StartExecution"))
    assert starts == 1

    w.parameters = {"GpuCount": "32", "GpuMin": "24"}
    assert w.condition_id() == handle  # the template's logical ids did not change
    response = w.custom_resource(
        "Update", w.properties(), physical_id=first.arn, old_properties=old_properties
    )
    assert response["Status"] == "SUCCESS"
    assert response["PhysicalResourceId"] == first.arn
    assert response["Reason"].startswith(
        "gated counts changed under the same wait condition (a parameter's value), no new wait"
    )
    assert len(w.calls("StartExecution")) == starts
    assert len(w.signals()) == 1

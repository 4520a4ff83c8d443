"""An update waits for exactly what HyperPod gates in it, and only the
stack's own deployment can start, fail or stop a wait (the arm function's crafted events)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from hyperpod_constructs._runtime.hyperpod_gate import arm
from hyperpod_constructs._runtime.hyperpod_gate.contract import (
    RESOURCE_TYPE,
    Requirement,
    parse_metadata,
    property_differences,
    update_scope,
)
from tests.support.groups import controller_spec
from tests.support.hyperpod_sim import GroupSpec, steps, unlimited
from tests.support.world import Execution, GateWorld
from tests.support.world import Requirement as Gated

MIN = 60
HOUR = 3600

# -- the pure decision --------------------------------------------------------------------


def names(requirements: tuple[Requirement, ...]) -> list[str]:
    return [r.group_name for r in requirements]


def test_a_creation_waits_for_every_gated_group() -> None:
    new = [Requirement("gpu", 16, 16), Requirement("trn", 2, 4)]
    scope = update_scope(None, new)
    assert names(scope.waits_for) == ["gpu", "trn"]
    assert scope.text() == "waits for gpu (creation), trn (creation)"


@pytest.mark.parametrize(
    ("old", "new", "waits", "text"),
    [
        # a new gated group: HyperPod holds it back until its minimum
        ([("gpu", 16, 16)], [("gpu", 16, 16), ("gpu2", 4, 4)], ["gpu2"], "gpu2 (new group)"),
        # a raised minimum: HyperPod's timer restarts, the group is Updating until it is met
        ([("gpu", 8, 16)], [("gpu", 14, 16)], ["gpu"], "gpu (minimum raised 8 -> 14)"),
        # scale-out without a new minimum (undocumented: HyperPod does not hold the group)
        ([("gpu", 8, 16)], [("gpu", 8, 24)], [], "not for gpu (minimum unchanged: 8)"),
        # a lowered minimum (undocumented: already met at the group's first InService)
        ([("gpu", 16, 16)], [("gpu", 12, 16)], [], "not for gpu (minimum lowered 16 -> 12)"),
        # a removed group: nothing to wait for
        ([("gpu", 16, 16), ("old", 2, 2)], [("gpu", 16, 16)], [], "not for gpu"),
    ],
)
def test_an_update_waits_only_for_new_groups_and_raised_minimums(
    old: list[tuple[str, int, int]], new: list[tuple[str, int, int]], waits: list[str], text: str
) -> None:
    scope = update_scope([Requirement(*r) for r in old], [Requirement(*r) for r in new])
    assert names(scope.waits_for) == waits
    assert text in scope.text()
    assert "old" not in scope.text()  # a removed group is neither waited for nor named


def test_a_replaced_cluster_waits_for_everything() -> None:
    old = [Requirement("gpu", 16, 16)]
    scope = update_scope(old, [Requirement("gpu", 16, 16)], same_cluster=False)
    assert names(scope.waits_for) == ["gpu"]
    assert scope.text() == "waits for gpu (cluster replaced)"


def test_property_differences_name_the_field_and_both_values() -> None:
    # Any two values: a pure comparison, not the gate's default timeout.
    declared = {"TimeoutSeconds": "12600", "Requirements": [{"GroupName": "gpu"}]}
    sent = {"TimeoutSeconds": "1", "Requirements": [{"GroupName": "gpu"}], "ServiceToken": "x"}
    assert property_differences(sent, declared) == ["TimeoutSeconds (sent '1', deployed '12600')"]
    assert property_differences({**declared, "ServiceTimeout": "300"}, declared) == []
    assert property_differences({"TimeoutSeconds": 12600}, {"TimeoutSeconds": "12600"}) == []


@pytest.mark.parametrize(
    "metadata", [None, "not json", "{}", json.dumps({"HyperPodMinCountGate": {"Gate": "A"}})]
)
def test_a_handle_without_a_declaration_declares_nothing(metadata: Any) -> None:
    with pytest.raises(ValueError):
        parse_metadata(metadata)


# -- the world: an update's scenario on moto's engine -------------------------------------

GPU = [Gated("gpu", 16, 16)]
BOTH = [Gated("gpu", 16, 16), Gated("gpu2", 4, 4)]


def world(monkeypatch: pytest.MonkeyPatch, gpu_capacity: Any = None) -> GateWorld:
    return GateWorld(
        monkeypatch,
        [
            controller_spec(),
            GroupSpec("gpu", 16, 16, capacity=gpu_capacity or unlimited()),
        ],
        poll_interval=5 * MIN,
    )


def opened(w: GateWorld) -> Execution:
    w.clock.advance(MIN)
    first = w.execution(w.arm_gate(GPU))
    w.run(until_elapsed=HOUR, stop_when_idle=False)
    assert first.status == "SUCCEEDED" and w.clock.elapsed == HOUR
    return first


def test_an_update_adding_a_group_waits_for_it_not_for_a_group_that_lost_nodes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """gpu opened at 16/16, then lost 2 nodes that HyperPod cannot replace (14/16,
    InService, as HyperPod allows). An update adds gpu2 4/4, which reaches its minimum: the
    wait is READY with gpu2, never FAILURE because of gpu (today: FAILURE at the deadline,
    and CloudFormation's rollback deletes the ready gpu2)."""
    w = world(monkeypatch, steps((0, 16), (HOUR + 5 * MIN, 14)))
    first = opened(w)
    w.clock.advance(5 * MIN)
    w.sim.lose_nodes("gpu", 2)
    w.run(until_elapsed=w.clock.elapsed + 30 * MIN, stop_when_idle=False)
    (gpu,) = [g for g in w.sim.describe()["InstanceGroups"] if g["InstanceGroupName"] == "gpu"]
    # Short of its target with no capacity to replace the lost nodes: Degraded (API reference)
    assert (gpu["Status"], gpu["CurrentCount"], gpu["TargetCount"]) == ("Degraded", 14, 16)
    # CloudFormation: UpdateCluster adds gpu2, then the new handle, then the arm's Update
    w.sim.add_group(GroupSpec("gpu2", 4, 4, instance_type="ml.p5.48xlarge"))
    updated_at = w.clock.time()
    response = w.arm_gate(BOTH, "Update", physical_id=first.arn, old_properties=w.properties(GPU))
    assert response["Status"] == "SUCCESS", response
    second = w.execution(response)
    w.run(until_elapsed=w.clock.elapsed + 8 * HOUR)
    (signal,) = w.signals(BOTH)
    assert signal.status == "SUCCESS", signal.reason
    assert second.status == "SUCCEEDED"
    assert "waits for gpu2 (new group); not for gpu (minimum unchanged: 16)" in response["Reason"]
    assert [r["groupName"] for r in second.input["requirements"]] == ["gpu2"]
    assert signal.reason.startswith("all gated groups reached their minimum: gpu2 4/4")
    assert "gpu " not in signal.reason  # the group this update does not gate is not judged
    reached = w.sim.min_reached_at("gpu2")
    assert reached is not None and signal.time - reached <= w.poll_interval
    assert signal.time - updated_at < HOUR
    (gpu,) = [g for g in w.sim.describe()["InstanceGroups"] if g["InstanceGroupName"] == "gpu"]
    assert gpu["CurrentCount"] == 14  # still short: HyperPod never held it back
    # The READY message tells a subscriber which deployment ended and what it waited for.
    first_ready, update_ready = (json.loads(m["Message"]) for m in w.sns.messages)
    assert (first_ready["operation"], first_ready["waitedFor"]) == ("create", ["gpu"])
    assert update_ready["operation"] == "update" and update_ready["waitedFor"] == ["gpu2"]
    assert update_ready["leftOut"] == [{"name": "gpu", "reason": "minimum unchanged: 16"}]
    assert update_ready["schemaVersion"] == "2"


def test_an_update_removing_a_gated_group_does_not_judge_the_others_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """gpu and gpu2 opened; gpu then lost 2 nodes for good. Removing gpu2 gates nothing: the
    new wait completes at once (today it waits for gpu again and fails at its deadline, and
    the rollback re-creates gpu2)."""
    w = GateWorld(
        monkeypatch,
        [
            controller_spec(),
            GroupSpec("gpu", 16, 16, capacity=steps((0, 16), (HOUR + 5 * MIN, 14))),
            GroupSpec("gpu2", 4, 4),
        ],
        poll_interval=5 * MIN,
    )
    w.clock.advance(MIN)
    first = w.execution(w.arm_gate(BOTH))
    w.run(until_elapsed=HOUR, stop_when_idle=False)
    assert first.status == "SUCCEEDED"
    w.clock.advance(5 * MIN)
    w.sim.lose_nodes("gpu", 2)
    w.run(until_elapsed=w.clock.elapsed + 30 * MIN, stop_when_idle=False)
    w.sim.remove_group("gpu2")
    response = w.arm_gate(GPU, "Update", physical_id=first.arn, old_properties=w.properties(BOTH))
    w.run(until_elapsed=w.clock.elapsed + 8 * HOUR)
    assert [s.status for s in w.signals(GPU)] == ["SUCCESS"]
    assert response["Status"] == "SUCCESS"
    assert w.execution(response).input["requirements"] == []  # a loop with nothing to wait for
    assert "waits for no group; not for gpu (minimum unchanged: 16)" in response["Reason"]


def test_an_update_from_a_gate_that_declared_nothing_waits_for_every_group(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first update after upgrading from a gate whose handle declares no wait: the
    previous values are unknown, so it waits for every gated group, as before, and says so."""
    w = world(monkeypatch)
    first = opened(w)
    old_handle = w.gate(GPU).handle_id
    w.cfn.resources[old_handle].pop("metadata")
    response = w.arm_gate(BOTH, "Update", physical_id=first.arn, old_properties=w.properties(GPU))
    assert response["Status"] == "SUCCESS"
    assert (
        "waits for gpu (previous values unknown), gpu2 (previous values unknown)"
        in response["Reason"]
    )
    assert "the previous wait is unknown" in response["Reason"]
    assert [r["groupName"] for r in w.execution(response).input["requirements"]] == [
        "gpu",
        "gpu2",
    ]


def test_an_update_that_gates_nothing_completes_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Scale-out without a new minimum: HyperPod holds nothing back, so the new wait opens at
    the first check that finds the wait condition (CloudFormation creates it after the arm's
    answer: a signal before that is refused and sent again), within one poll; the loop waits
    for no group."""
    w = world(monkeypatch)
    first = opened(w)
    scaled = [Gated("gpu", 16, 24)]
    response = w.arm_gate(scaled, "Update", physical_id=first.arn, old_properties=w.properties(GPU))
    assert response["Status"] == "SUCCESS", response
    assert "waits for no group; not for gpu (minimum unchanged: 16)" in response["Reason"]
    armed_at = w.clock.time()
    loop = w.execution(response)
    assert loop.input["requirements"] == []
    w.run(until_elapsed=w.clock.elapsed + HOUR)
    (signal,) = w.signals(scaled)
    assert signal.status == "SUCCESS" and loop.status == "SUCCEEDED"
    assert signal.time - armed_at <= w.poll_interval + MIN
    assert w.cfn.condition(w.condition_id(scaled)).status == "CREATE_COMPLETE"
    assert "READY" in w.sns.messages[-1]["Subject"]
    w.assert_no_secret_leak()


# -- crafted requests to the arm function ----------------------------------------------------


def crafted(
    w: GateWorld, request_type: str, properties: dict[str, Any], **extra: Any
) -> dict[str, Any]:
    """Invoke the arm function as anyone with lambda:InvokeFunction could (nothing in the
    stack changes); return its answer."""
    request_id = f"crafted-{len(w.invocations)}"
    event = {
        "RequestType": request_type,
        "ServiceToken": "x",
        "StackId": w.cfn.stack_id,
        "RequestId": request_id,
        "LogicalResourceId": w.gate().arm_logical_id,
        "ResourceType": RESOURCE_TYPE,
        "ResponseURL": w.cfn.response_url(request_id, "x"),
        "ResourceProperties": properties,
        **extra,
    }
    w._run_lambda("arm", arm.handler, event, 150)
    (answer,) = w.cfn.responses[request_id]
    document: dict[str, Any] = answer.json()
    return document


def waiting(monkeypatch: pytest.MonkeyPatch) -> tuple[GateWorld, Execution]:
    w = world(monkeypatch, steps((0, 0), (2 * HOUR, 16)))
    w.clock.advance(MIN)
    execution = w.execution(w.arm_gate(GPU))
    w.run(until_elapsed=30 * MIN)
    assert execution.running
    return w, execution


def assert_untouched(w: GateWorld, execution: Execution, starts: int = 1) -> None:
    """No loop started or stopped, and the real wait still ends as HyperPod decides."""
    assert len(w.calls("StartExecution")) == starts
    assert w.calls("StopExecution") == []
    assert execution.running and w.signals() == []
    w.run(until_elapsed=6 * HOUR)
    assert execution.status == "SUCCEEDED"
    assert [s.status for s in w.signals()] == ["SUCCESS"]
    assert "gpu 16/16" in w.signals()[0].reason


@pytest.mark.parametrize(
    ("change", "refusal"),
    [
        (
            {"Requirements": [{"GroupName": "controller", "MinCount": "1", "TargetCount": "1"}]},
            "Requirements (sent",
        ),
        ({"TimeoutSeconds": "1"}, "TimeoutSeconds (sent '1', deployed '{timeout}')"),
        ({"ClusterName": "other"}, "ClusterName (sent 'other', deployed 'train')"),
    ],
)
def test_a_crafted_create_with_other_properties_starts_nothing(
    monkeypatch: pytest.MonkeyPatch, change: dict[str, Any], refusal: str
) -> None:
    """Today a made-up Create for ``controller 1/1`` opens the gate while gpu is 0/16, and a
    TimeoutSeconds of 1 fails it (on a create, the rollback deletes the cluster)."""
    w, execution = waiting(monkeypatch)
    answer = crafted(w, "Create", {**w.properties(GPU), **change})
    assert answer["Status"] == "FAILED"
    assert refusal.format(timeout=w.timeout_seconds) in answer["Reason"]
    assert "deployed" in answer["Reason"]
    assert_untouched(w, execution)


def test_a_crafted_create_with_the_deployed_properties_starts_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same properties, but CloudFormation is not creating the resource: no second loop."""
    w, execution = waiting(monkeypatch)
    answer = crafted(w, "Create", w.properties(GPU))
    assert answer["Status"] == "FAILED"
    assert "as CREATE_COMPLETE, not CREATE_IN_PROGRESS" in answer["Reason"]
    assert_untouched(w, execution)


def test_a_crafted_update_starts_and_signals_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """A made-up Update for ``controller 1/1`` on the real handle, naming a wait condition
    that does not exist (so that a loop would start): today it opens the gate."""
    w, execution = waiting(monkeypatch)
    props = w.properties(GPU)
    forged = {
        **props,
        "Requirements": [{"GroupName": "controller", "MinCount": "1", "TargetCount": "1"}],
        "WaitConditionLogicalId": "Nowhere",
    }
    old = {**props, "WaitHandleLogicalId": "SomethingElse"}
    answer = crafted(w, "Update", forged, OldResourceProperties=old, PhysicalResourceId="x")
    assert answer["Status"] == "FAILED"
    assert "differ from what the template declares" in answer["Reason"]
    assert_untouched(w, execution)


def test_a_crafted_delete_stops_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Today a made-up Delete stops the real loop, and the stack hangs to the 12 h limit."""
    w, execution = waiting(monkeypatch)
    answer = crafted(w, "Delete", w.properties(GPU), PhysicalResourceId=execution.arn)
    assert answer["Status"] == "SUCCESS"  # a Delete always succeeds, but stops nothing
    assert "stop refused" in answer["Reason"]
    assert_untouched(w, execution)


@pytest.mark.parametrize(
    "change",
    [
        {"StackId": "arn:aws:cloudformation:us-east-1:123456789012:stack/Other/1"},
        {"LogicalResourceId": "SomeOtherResource"},
        {"ResourceType": "Custom::Other"},
    ],
)
def test_a_request_for_another_resource_is_refused(
    monkeypatch: pytest.MonkeyPatch, change: dict[str, str]
) -> None:
    w, execution = waiting(monkeypatch)
    for request_type in ("Create", "Delete"):
        answer = crafted(
            w, request_type, w.properties(GPU), PhysicalResourceId=execution.arn, **change
        )
        assert "not a request for this gate's arm resource" in answer["Reason"]
    assert_untouched(w, execution)

"""The Running confirmation: AWS's documentation does not say whether a group's
``CurrentCount`` counts nodes that are ``Pending``, in deep health checks or shutting down, so
once DescribeCluster counts the minimum the check lists the group's nodes (ListClusterNodes)
and opens the gate only when that many are ``Running``.

The simulator answers real boto3 clients (responses validated against botocore's model);
``current_count="in_group"`` is the case the documentation leaves open: ``CurrentCount``
(and HyperPod's ``InService``) counting every node in the group."""

from __future__ import annotations

import json
import math
from collections import Counter
from typing import Any

import pytest
from botocore.validate import ParamValidator

from hyperpod_constructs._runtime.hyperpod_gate import aws, poll
from hyperpod_constructs._runtime.hyperpod_gate.decision import (
    RUNNING,
    UNKNOWN_NODE_STATUS,
    NodeTally,
    tally_nodes,
)
from tests.support.clock import VirtualClock, forbid_real_sleep, patch_botocore_retry_sleep
from tests.support.groups import controller_spec
from tests.support.hyperpod_sim import (
    FAULT_KINDS,
    Fault,
    GroupSpec,
    HyperPodSimulator,
    steps,
    unlimited,
)
from tests.support.wire import reference_model
from tests.support.world import Execution, GateWorld

MIN, HOUR = 60, 3600
ARM_AT = MIN
BIG = 250
"""A gated group of more than two pages."""
SPARE = 120
"""An ungated group whose name contains the gated one's."""
CHECKS = 20 * MIN
"""How long the gated groups' on-start deep health checks take in these worlds."""


def big_groups() -> list[GroupSpec]:
    """gpu (250, gated, deep health checks; 200 at first, 50 more 10 minutes later) and
    gpu-spare (120, ungated, no checks): "gpu" is contained in both names."""
    return [
        controller_spec(),
        GroupSpec(
            "gpu",
            BIG,
            BIG,
            capacity=steps((0, 200), (20 * MIN, BIG)),
            deep_health_check_seconds=CHECKS,
        ),
        GroupSpec("gpu-spare", SPARE, 0, instance_type="ml.c5.18xlarge"),
    ]


def node_attempts(w: GateWorld) -> list[dict[str, Any]]:
    return [params for name, params in w.sim.fake.attempts if name == "ListClusterNodes"]


def truth(w: GateWorld, group: str) -> Counter[str]:
    """The simulator's own node states of ``group`` now (not read through the API)."""
    w.sim.advance()
    now, state = w.clock.time(), w.sim.groups[group]
    return Counter([RUNNING] * len(state.healthy) + [i.status(now) for i in state.pending])


# -- the pure count, on pages botocore really parsed ----------------------------------------


def sim_pages(monkeypatch: pytest.MonkeyPatch, at: float) -> tuple[HyperPodSimulator, list[Any]]:
    clock = VirtualClock()
    forbid_real_sleep(monkeypatch)
    patch_botocore_retry_sleep(monkeypatch, clock)
    sim = HyperPodSimulator(clock, big_groups(), current_count="in_group")
    clock.advance(at)
    client = sim.client()
    pages = list(
        client.get_paginator("list_cluster_nodes").paginate(
            ClusterName="train", InstanceGroupNameContains="gpu", PaginationConfig={"PageSize": 100}
        )
    )
    return sim, pages


def test_tally_counts_running_nodes_of_the_exact_group_over_pages(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Four pages (250 gpu + 120 gpu-spare nodes) as botocore parsed them: the tally keeps
    gpu's nodes only and counts them by status, as the simulator has them."""
    sim, pages = sim_pages(monkeypatch, 45 * MIN)
    assert len(pages) == math.ceil((BIG + SPARE) / 100)
    output = reference_model("sagemaker").operation_model("ListClusterNodes").output_shape
    for page in pages:
        body = {k: v for k, v in page.items() if k != "ResponseMetadata"}
        assert not ParamValidator().validate(body, output).has_errors()
    tally: NodeTally | None = None
    for index, page in enumerate(pages):
        last = index == len(pages) - 1
        tally = tally_nodes(page["ClusterNodeSummaries"], "gpu", previous=tally, complete=last)
    assert tally is not None and tally.complete
    now, gpu = sim.clock.time(), sim.groups["gpu"]
    expected = Counter([RUNNING] * len(gpu.healthy) + [i.status(now) for i in gpu.pending])
    assert Counter(tally.nodes.values()) == expected
    assert tally.listed == BIG and 0 < tally.running < BIG  # a mix: 200 Running, 50 checking
    others = dict(tally.others())
    assert others == {s: n for s, n in expected.items() if s != RUNNING}
    assert tally.text() == (
        f"gpu: {BIG} in group, {tally.running} Running ("
        + ", ".join(f"{n} {s}" for s, n in tally.others())
        + ")"
    )
    spare = tally_nodes([s for p in pages for s in p["ClusterNodeSummaries"]], "gpu-spare")
    assert spare.listed == SPARE and spare.running == SPARE


def test_tally_counts_a_node_without_status_as_not_running(monkeypatch: pytest.MonkeyPatch) -> None:
    """Defensive: a summary missing its status (or its instance id), which the model does not
    allow, is listed but never Running, and never merged with another node."""
    _, pages = sim_pages(monkeypatch, 2 * HOUR)
    summaries = [
        dict(s) for s in pages[0]["ClusterNodeSummaries"] if s["InstanceGroupName"] == "gpu"
    ]
    assert summaries and all(s["InstanceStatus"]["Status"] == RUNNING for s in summaries)
    del summaries[0]["InstanceStatus"]
    del summaries[1]["InstanceId"]
    summaries[2]["InstanceStatus"] = {}
    shape = reference_model("sagemaker").shape_for("ClusterNodeSummary")
    assert ParamValidator().validate(summaries[0], shape).has_errors()  # not a valid answer
    tally = tally_nodes(summaries, "gpu")
    assert tally.listed == len(summaries)
    assert tally.running == len(summaries) - 2
    assert dict(tally.others()) == {UNKNOWN_NODE_STATUS: 2}


# -- one check at a time -------------------------------------------------------------------


def big_world(monkeypatch: pytest.MonkeyPatch, **options: Any) -> GateWorld:
    return GateWorld(
        monkeypatch, big_groups(), sim_options={"current_count": "in_group"}, **options
    )


def test_counted_but_not_running_waits_naming_the_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    """DescribeCluster says gpu is InService with 250 of 250, but the nodes are still Pending or
    in deep health checks: WAITING, naming the group and the counts; every page was read
    (gpu-spare's Running nodes, listed by the "contains" filter, are not counted)."""
    w = big_world(monkeypatch)
    w.clock.advance(25 * MIN)
    described = w.sim.describe()["InstanceGroups"]
    (gpu,) = [g for g in described if g["InstanceGroupName"] == "gpu"]
    assert (gpu["Status"], gpu["CurrentCount"]) == ("InService", BIG)
    nodes = truth(w, "gpu")
    assert nodes[RUNNING] == 0 and nodes["Pending"] > 0 and nodes["DeepHealthCheckInProgress"] > 0
    result = w.poll_once(w.poll_event())
    assert result["status"] == "WAITING"
    counts = ", ".join(f"{n} {s}" for s, n in sorted(nodes.items(), key=lambda i: (-i[1], i[0])))
    assert result["reason"].startswith(
        f"waiting for Running nodes: gpu: {BIG} in group, 0 Running ({counts}) "
        "(DescribeCluster already counts the minimum); gpu 250/250 (target 250, InService)"
    )
    attempts = node_attempts(w)
    assert len(attempts) == math.ceil((BIG + SPARE) / poll.NODE_PAGE_SIZE)
    assert all(
        {k: v for k, v in a.items() if k != "NextToken"}
        == {"ClusterName": "train", "InstanceGroupNameContains": "gpu", "MaxResults": 100}
        for a in attempts
    )
    assert "NextToken" not in attempts[0] and all("NextToken" in a for a in attempts[1:])
    assert w.signals() == []


def test_ready_once_the_minimum_is_running(monkeypatch: pytest.MonkeyPatch) -> None:
    w = big_world(monkeypatch)
    w.clock.advance(HOUR)
    assert truth(w, "gpu") == Counter({RUNNING: BIG})
    result = w.poll_once(w.poll_event())
    assert result["status"] == "READY"
    assert result["reason"].startswith("all gated groups reached their minimum: gpu 250/250")
    assert "not confirmed" not in result["reason"]
    assert [s.status for s in w.signals()] == ["SUCCESS"]


def test_paging_stops_once_the_minimum_is_running(monkeypatch: pytest.MonkeyPatch) -> None:
    """A gated group of 250 with a minimum of 100, all Running: the first page proves it."""
    w = big_world(monkeypatch)
    w.clock.advance(HOUR)
    event = w.poll_event()
    event["requirements"] = [{"groupName": "gpu", "minCount": 100, "targetCount": BIG}]
    request = poll.parse_event(event)
    check = poll.list_nodes(w.sim.client(), request, poll.Budget(100.0))
    assert check.fault is None and check.pages == 1
    assert check.tallies["gpu"].running >= 100 and not check.tallies["gpu"].complete


def test_a_check_out_of_time_stops_paging_and_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each page is requested only while its worst case and the signal still fit: a page that
    hangs once (its retry answers) leaves too little time for the next one."""
    w = big_world(monkeypatch)
    w.clock.advance(30 * MIN)
    request = poll.parse_event(w.poll_event())
    sagemaker = w.sim.client()
    budget = poll.Budget(poll.SAFETY_SECONDS + aws.CALL_WORST_CASE + poll.SIGNAL_WORST_CASE + 1)
    w.sim.hang(operation="ListClusterNodes", count=1)
    check = poll.list_nodes(sagemaker, request, budget)
    assert (check.fault, check.label, check.pages) == (poll.NODE_BUDGET_FAULT, "1 page(s) read", 1)
    wait, reason = poll.unconfirmed(check, request, aws.now())
    assert wait and "this check ran out of time confirming them (1 page(s) read)" in reason


def test_a_next_token_that_repeats_stops_paging(monkeypatch: pytest.MonkeyPatch) -> None:
    w = big_world(monkeypatch)
    w.clock.advance(30 * MIN)
    monkeypatch.setattr(w.sim, "_page", lambda items, params, default: (items[:100], "100"))
    check = poll.list_nodes(w.sim.client(), poll.parse_event(w.poll_event()), poll.Budget(100.0))
    assert (check.fault, check.label) == (poll.NODE_BUDGET_FAULT, "a repeated NextToken")
    assert check.pages == 2


@pytest.mark.parametrize("kind", ["throttle", "5xx", "unavailable"])
def test_transient_list_faults_wait_then_open(monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    w = big_world(monkeypatch)
    w.clock.advance(HOUR)
    # The fault outlasts the check's time: aws.call retries it only while the signal still fits.
    began = w.clock.time()
    ends = began + w.gate().check_timeout
    w.sim.inject(kind, operation="ListClusterNodes", start=began, end=ends)
    event = w.poll_event()
    first = w.poll_once(event)
    assert first["status"] == "WAITING"
    assert (
        "DescribeCluster counts every gated group's minimum, but ListClusterNodes failed "
        in (first["reason"])
    )
    assert w.signals() == []
    lines = w.invocations[-1].stdout.splitlines()  # the counts are still published
    assert [json.loads(line)["InstanceGroup"] for line in lines[:-1]] == ["gpu"]
    assert lines[-1].endswith(f"error={FAULT_KINDS[kind][0]}")
    w.clock.advance_to(ends)
    second = w.poll_once(event)
    assert second["status"] == "READY" and "not confirmed" not in second["reason"]


def test_transient_list_faults_at_the_deadline_fall_back_to_describe_cluster(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Never FAILURE because of this path: at the deadline, DescribeCluster's counts decide,
    and the reason says the nodes were not confirmed."""
    w = big_world(monkeypatch)
    w.clock.advance(HOUR)
    w.sim.inject("throttle", operation="ListClusterNodes")
    result = w.poll_once(w.poll_event(deadline_in=-60))
    assert result["status"] == "READY"
    assert result["reason"].endswith(
        "(not confirmed with ListClusterNodes: ListClusterNodes failed transiently "
        "(ThrottlingException) at the deadline)"
    )
    assert w.signals()[0].status == "SUCCESS"


def test_access_denied_waits_while_propagating_then_falls_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An AccessDenied on ListClusterNodes (e.g. a role whose update has not propagated) is
    waited out for the settle window; after it, DescribeCluster's counts decide, with the
    missing permission named, rather than blocking a ready cluster until the deadline."""
    w = big_world(monkeypatch)
    w.clock.advance(HOUR)
    w.sim.inject("access_denied", operation="ListClusterNodes")
    early = w.poll_once(w.poll_event(armed_ago=60))
    assert early["status"] == "WAITING" and "may still be propagating" in early["reason"]
    assert w.signals() == []
    late = w.poll_once(w.poll_event())
    assert late["status"] == "READY"
    assert late["reason"].endswith(
        "(not confirmed with ListClusterNodes: denied (AccessDeniedException); grant "
        "sagemaker:ListClusterNodes on the cluster ARN to the gate functions' roles)"
    )
    assert w.signals()[0].status == "SUCCESS"
    assert len(node_attempts(w)) == 2  # AccessDenied is not retried


def test_other_list_errors_fall_back_to_describe_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    w = big_world(monkeypatch)
    w.clock.advance(HOUR)
    w.sim.faults.append(
        Fault("ListClusterNodes", "ValidationException", 400, "1 validation error detected")
    )
    result = w.poll_once(w.poll_event())
    assert result["status"] == "READY"
    assert result["reason"].endswith("(not confirmed with ListClusterNodes: ValidationException)")


def test_a_cluster_gone_between_the_calls_waits_for_describe_cluster(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    w = big_world(monkeypatch)
    w.clock.advance(HOUR)
    w.sim.faults.append(Fault("ListClusterNodes", "ResourceNotFound", 400, "Cluster not found"))
    result = w.poll_once(w.poll_event())
    assert result["status"] == "WAITING" and "the next DescribeCluster decides" in result["reason"]
    assert w.signals() == []


def test_nodes_still_checking_at_the_deadline_fail_naming_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    w = big_world(monkeypatch)
    w.clock.advance(30 * MIN)
    result = w.poll_once(w.poll_event(deadline_in=-60))
    assert result["status"] == "FAILED"
    assert "of Running nodes (gpu: 250 in group, 0 Running (" in result["reason"]
    assert "deep health checks that take longer than the gate timeout" in result["reason"]


# -- whole waits on the engine -------------------------------------------------------------


def dhc_groups(capacity: Any = None) -> list[GroupSpec]:
    return [
        controller_spec(),
        GroupSpec(
            "gpu", 16, 16, capacity=capacity or unlimited(), deep_health_check_seconds=CHECKS
        ),
    ]


def start(w: GateWorld) -> Execution:
    w.clock.advance(ARM_AT)
    response = w.arm_gate()
    assert response["Status"] == "SUCCESS", response
    return w.execution(response)


@pytest.mark.deep(sample=1)
@pytest.mark.parametrize("event_bridge", [False, True])
def test_the_gate_opens_only_once_the_minimum_is_running(
    monkeypatch: pytest.MonkeyPatch, event_bridge: bool
) -> None:
    """CurrentCount counts every node in the group: HyperPod says InService 16/16 while the
    nodes are still in their deep health checks. The gate (the loop, and the fast path, which
    HyperPod's "Minimum capacity reached" event runs at once) opens only once 16 are Running,
    within one poll interval (before this confirmation it opened 20 minutes early)."""
    w = GateWorld(
        monkeypatch,
        dhc_groups(),
        sim_options={"current_count": "in_group"},
        event_bridge=event_bridge,
    )
    execution = start(w)
    w.run(until_elapsed=2 * HOUR, stop_when_idle=False)  # HyperPod goes on after the gate
    assert execution.status == "SUCCEEDED"
    counted, running = w.sim.min_reached_at("gpu"), w.sim.min_running_at("gpu")
    assert counted is not None and running is not None
    assert running - counted >= CHECKS
    first = w.signals()[0]
    assert first.status == "SUCCESS"
    assert running <= first.time <= running + w.poll_interval
    waiting = [
        p.result["reason"]
        for p in w.polls()
        if p.result["status"] == "WAITING" and p.time >= counted + w.poll_interval
    ]
    assert waiting and all(
        r.startswith("waiting for Running nodes: gpu: 16 in group, 0 Running (16 ") for r in waiting
    )
    fast = [i for i in w.invocations if i.function == "fastpath"]
    assert bool(fast) == event_bridge
    assert all(i.time >= running or i.result["status"] == "IGNORED" for i in fast)


def test_the_loop_waits_out_a_throttled_list_then_opens(monkeypatch: pytest.MonkeyPatch) -> None:
    """ListClusterNodes throttled for 15 minutes around the moment the minimum arrives:
    WAITING ("failed transiently"), then SUCCESS; never FAILURE."""
    w = GateWorld(monkeypatch, dhc_groups(steps((0, 0), (5 * MIN, 16))))
    s = w.clock.start
    w.sim.inject("throttle", operation="ListClusterNodes", start=s + 30 * MIN, end=s + 45 * MIN)
    execution = start(w)
    w.run(until_elapsed=3 * HOUR)
    assert execution.status == "SUCCEEDED"
    running = w.sim.min_running_at("gpu")
    assert running is not None and 30 * MIN < running - s < 45 * MIN
    throttled = [
        p for p in w.polls() if "ListClusterNodes failed transiently" in p.result["reason"]
    ]
    assert throttled and all(p.result["status"] == "WAITING" for p in throttled)
    (signal,) = w.signals()
    assert signal.status == "SUCCESS"
    assert s + 45 * MIN <= signal.time <= s + 45 * MIN + w.poll_interval + 60

"""Table-driven and property tests of the pure gate decision."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import botocore.session  # type: ignore[import-untyped, unused-ignore]
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hyperpod_constructs._runtime.hyperpod_gate.decision import (
    COUNTED_GROUP_STATUSES,
    GroupRequirement,
    evaluate_gate,
    latest_error_events,
    summarize,
)

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
GPU = {"gpu": GroupRequirement(16, 16)}


def group(
    name: str = "gpu",
    status: str = "InService",
    current: int = 16,
    target: int = 16,
    minimum: int | None = 16,
    **extra: Any,
) -> dict[str, Any]:
    g: dict[str, Any] = {
        "InstanceGroupName": name,
        "Status": status,
        "CurrentCount": current,
        "TargetCount": target,
        **extra,
    }
    if minimum is not None:
        g["MinCount"] = minimum
    return g


def cluster(
    status: str = "InService", *groups: dict[str, Any], failure: str | None = None
) -> dict[str, Any]:
    response: dict[str, Any] = {
        "ClusterArn": "arn:aws:sagemaker:us-east-1:123456789012:cluster/abcd12345678",
        "ClusterName": "train",
        "ClusterStatus": status,
        "InstanceGroups": [group("controller", current=1, target=1, minimum=1), *groups],
    }
    if failure:
        response["FailureMessage"] = failure
    return response


CASES: list[tuple[str, dict[str, Any], dict[str, GroupRequirement], str, list[str]]] = [
    (
        "creating-not-listed",
        cluster("Creating"),
        GPU,
        "WAITING",
        ["gpu not listed (minimum 16, target 16)", "cluster train is Creating"],
    ),
    (
        "in-service-not-listed",
        cluster("InService"),
        GPU,
        "FAILED",
        ["gpu not in the cluster", "check that every gated group name"],
    ),
    (
        "creating-group",
        cluster("InService", group(status="Creating", current=8)),
        GPU,
        "WAITING",
        [
            "waiting for minimum capacity: gpu 8/16 (target 16, Creating)",
            "cluster train is InService",
        ],
    ),
    (
        "ready",
        cluster("InService", group()),
        GPU,
        "READY",
        [
            "all gated groups reached their minimum: gpu 16/16 (target 16, InService)",
            "cluster train is InService",
        ],
    ),
    (
        "ready-above-min-below-target",
        cluster("InService", group(current=20, target=32, minimum=16)),
        {"gpu": GroupRequirement(16, 32)},
        "READY",
        ["gpu 20/16 (target 32, InService)"],
    ),
    (
        "ready-while-cluster-updating",
        cluster("Updating", group()),
        GPU,
        "READY",
        ["cluster train is Updating"],
    ),
    ("ready-while-cluster-system-updating", cluster("SystemUpdating", group()), GPU, "READY", []),
    (
        "new-group-rolled-back",
        cluster("InService", group(current=0, target=0, minimum=0)),
        GPU,
        "FAILED",
        [
            "rolled back instance group(s) gpu",
            "gpu 0/16 (target 16, InService, HyperPod reports target 0 and minimum 0)",
            "3-hour window",
        ],
    ),
    (
        "existing-group-rolled-back",
        cluster("InService", group(current=8, target=8, minimum=8)),
        GPU,
        "FAILED",
        ["rolled back", "HyperPod reports target 8 and minimum 8"],
    ),
    (
        "min-only-rolled-back",
        cluster("InService", group(current=16, target=16, minimum=8)),
        GPU,
        "FAILED",
        ["rolled back", "HyperPod reports target 16 and minimum 8"],
    ),
    ("old-boto3-ready", cluster("InService", group(minimum=None)), GPU, "READY", ["gpu 16/16"]),
    (
        "old-boto3-rolled-back",
        cluster("InService", group(current=0, target=0, minimum=None)),
        GPU,
        "FAILED",
        ["rolled back", "HyperPod reports target 0)"],
    ),
    (
        "target-not-reported",  # cannot be verified: neither ready nor rolled back
        cluster(
            "InService", {"InstanceGroupName": "gpu", "Status": "InService", "CurrentCount": 16}
        ),
        GPU,
        "WAITING",
        ["gpu 16/16 (target 16, InService, HyperPod reports target none)"],
    ),
    (
        "in-service-below-min-untouched",
        cluster("InService", group(current=15)),
        GPU,
        "WAITING",
        ["gpu 15/16 (target 16, InService)"],
    ),
    (
        "updating-with-other-counts",
        cluster("Updating", group("gpu", "Updating", 8, 8, 8)),
        GPU,
        "WAITING",
        ["gpu 8/16 (target 16, Updating, HyperPod reports target 8 and minimum 8)"],
    ),
    ("system-updating", cluster("InService", group(status="SystemUpdating")), GPU, "WAITING", []),
    (
        "degraded-at-minimum",  # min 8 of 16, capacity for 8: what MinCount exists for
        cluster("InService", group(status="Degraded", current=8, target=16, minimum=8)),
        {"gpu": GroupRequirement(8, 16)},
        "READY",
        ["gpu 8/8 (target 16, Degraded)", "gpu Degraded at the minimum"],
    ),
    (
        "degraded-below-minimum",
        cluster("InService", group(status="Degraded", current=7, target=16, minimum=8)),
        {"gpu": GroupRequirement(8, 16)},
        "WAITING",
        ["gpu 7/8 (target 16, Degraded)"],
    ),
    (
        "group-failed",
        cluster("InService", group(status="Failed", current=3)),
        GPU,
        "FAILED",
        ["instance group(s) gpu Failed", "gpu 3/16 (target 16, Failed)", "What to do:"],
    ),
    (
        "group-deleting",
        cluster("InService", group(status="Deleting")),
        GPU,
        "FAILED",
        ["gpu Deleting"],
    ),
    (
        "cluster-failed",
        cluster(
            "Failed",
            group(status="Creating", current=0),
            failure="Lifecycle script on_create.sh failed on the controller",
        ),
        GPU,
        "FAILED",
        [
            "cluster train is Failed",
            "FailureMessage: Lifecycle script on_create.sh failed on the controller",
            "gpu 0/16 (target 16, Creating)",
            "lifecycle script",
        ],
    ),
    (
        "cluster-failed-even-if-group-ready",
        cluster("Failed", group()),
        GPU,
        "FAILED",
        ["cluster train is Failed"],
    ),
    (
        "cluster-deleting",
        cluster("Deleting", group()),
        GPU,
        "FAILED",
        ["cluster train is being deleted"],
    ),
    (
        "cluster-rolling-back",
        cluster("RollingBack", group(status="Updating")),
        GPU,
        "WAITING",
        ["cluster train is RollingBack"],
    ),
    (
        "two-groups-one-waiting",
        cluster("InService", group(), group("trn", "Creating", 2, 8, 4)),
        {"gpu": GroupRequirement(16, 16), "trn": GroupRequirement(4, 8)},
        "WAITING",
        ["gpu 16/16 (target 16, InService)", "trn 2/4 (target 8, Creating)"],
    ),
    (
        "two-groups-ready",
        cluster("InService", group(), group("trn", "InService", 4, 8, 4)),
        {"gpu": GroupRequirement(16, 16), "trn": GroupRequirement(4, 8)},
        "READY",
        ["gpu 16/16", "trn 4/4 (target 8, InService)"],
    ),
    (
        "one-of-two-rolled-back",
        cluster("InService", group(), group("trn", "InService", 0, 0, 0)),
        {"gpu": GroupRequirement(16, 16), "trn": GroupRequirement(4, 8)},
        "FAILED",
        ["rolled back instance group(s) trn:", "gpu 16/16"],
    ),
    (
        "ungated-failed-group-ignored",
        cluster("InService", group(), group("cpu", "Failed", 0, 4, 0)),
        GPU,
        "READY",
        [],
    ),
    (
        "ungated-slow-group-ignored",
        cluster("InService", group(), group("cpu", "Creating", 0, 64, 64)),
        GPU,
        "READY",
        [],
    ),
    (
        "min-zero-requirement",
        cluster("InService", group(current=0, target=4, minimum=0)),
        {"gpu": GroupRequirement(0, 4)},
        "READY",
        ["gpu 0/0 (target 4, InService)"],
    ),
]


@pytest.mark.parametrize(
    ("response", "requirements", "status", "fragments"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_decision_table(
    response: dict[str, Any],
    requirements: dict[str, GroupRequirement],
    status: str,
    fragments: list[str],
) -> None:
    decision = evaluate_gate(response, requirements)
    assert decision.status == status, decision.reason
    for fragment in fragments:
        assert fragment in decision.reason
    assert [g.name for g in decision.groups] == list(requirements)
    # every reason names every gated group and the cluster status
    for name in requirements:
        assert name in decision.reason
    assert (
        f"is {response['ClusterStatus']}" in decision.reason or "being deleted" in decision.reason
    )


def test_failed_reason_has_exactly_one_hint() -> None:
    decision = evaluate_gate(
        cluster("Failed", group(current=0, target=0, minimum=0), failure="boom"), GPU
    )
    assert decision.reason.count("What to do:") == 1
    assert "controller" in decision.reason.split("What to do:")[1]


@pytest.mark.parametrize("naive", [False, True])
def test_deadline(naive: bool) -> None:
    response = cluster("InService", group(status="Creating", current=12))
    deadline = NOW if not naive else NOW.replace(tzinfo=None)
    before = evaluate_gate(response, GPU, now=NOW - timedelta(seconds=1), deadline=deadline)
    at = evaluate_gate(response, GPU, now=NOW, deadline=deadline)
    assert before.status == "WAITING"
    assert at.status == "FAILED"
    assert "deadline reached (2026-06-01T12:00:00Z)" in at.reason
    assert "gpu 12/16 (target 16, Creating)" in at.reason
    assert "raise the gate timeout" in at.reason


@pytest.mark.parametrize(
    ("response", "what"),
    [
        (cluster("Updating", group(current=8, target=8, minimum=8)), "old counts"),
        (cluster("Updating"), "group not listed yet"),
    ],
)
def test_just_after_arming_old_counts_are_not_a_rollback(
    response: dict[str, Any], what: str
) -> None:
    """Right after an update, DescribeCluster may still show the previous values (or not
    list a new group): within the settle window that is WAITING; afterwards, a rollback."""
    early = evaluate_gate(response, GPU, now=NOW + timedelta(minutes=9), armed_at=NOW)
    late = evaluate_gate(response, GPU, now=NOW + timedelta(minutes=10), armed_at=NOW)
    assert early.status == "WAITING", what
    assert late.status == "FAILED", what


def test_the_settle_window_never_hides_a_failed_cluster() -> None:
    response = cluster("Failed", group(current=0, target=0, minimum=0), failure="no capacity")
    decision = evaluate_gate(response, GPU, now=NOW, armed_at=NOW)
    assert decision.status == "FAILED" and "no capacity" in decision.reason


def test_ready_wins_over_deadline() -> None:
    decision = evaluate_gate(
        cluster("InService", group()), GPU, now=NOW + timedelta(hours=1), deadline=NOW
    )
    assert decision.status == "READY"


def test_deadline_without_now_is_an_error() -> None:
    with pytest.raises(ValueError, match="now="):
        evaluate_gate(cluster("InService", group()), GPU, deadline=NOW)


def _event(minutes: int, level: str, text: str, group_name: str | None = "gpu") -> dict[str, Any]:
    event: dict[str, Any] = {
        "EventTime": NOW + timedelta(minutes=minutes),
        "EventLevel": level,
        "Description": text,
    }
    if group_name:
        event["InstanceGroupName"] = group_name
    return event


EVENTS = [
    _event(1, "Error", "capacity error one"),
    _event(5, "Error", "capacity error two"),
    _event(3, "Info", "Minimum capacity reached"),
    _event(4, "Warn", "Rollback initiated"),
    _event(9, "Error", "cpu error", "cpu"),
    _event(7, "Error", "cluster error", None),
    _event(6, "Error", "capacity error three"),
]


def test_failed_reason_lists_latest_three_error_events_newest_first() -> None:
    decision = evaluate_gate(
        cluster("InService", group(current=0, target=0, minimum=0)), GPU, events=EVENTS
    )
    tail = decision.reason.split("Latest errors (newest first): ")[1]
    assert tail == (
        "[cluster] cluster error | [gpu] capacity error three | [gpu] capacity error two"
    )
    assert "cpu error" not in decision.reason  # ungated group's noise is left out
    assert "Rollback initiated" not in decision.reason  # only Error level


def test_cluster_failure_keeps_events_of_every_group() -> None:
    events = [_event(1, "Error", "controller lifecycle script failed", "controller")]
    decision = evaluate_gate(cluster("Failed", failure="controller failed"), GPU, events=events)
    assert "[controller] controller lifecycle script failed" in decision.reason


def test_events_never_change_status_and_are_not_shown_unless_failed() -> None:
    for response in (cluster("InService", group()), cluster("Creating")):
        without = evaluate_gate(response, GPU)
        with_events = evaluate_gate(response, GPU, events=EVENTS)
        assert without == with_events
        assert "Latest errors" not in with_events.reason


def test_long_texts_are_clipped() -> None:
    long_event = _event(1, "Error", "x" * 5000)
    decision = evaluate_gate(cluster("Failed", failure="y" * 5000), GPU, events=[long_event])
    assert len(decision.reason) < 2000
    assert "y" * 297 + "..." in decision.reason


def test_latest_error_events_handles_missing_times() -> None:
    events = [{"EventLevel": "Error", "Description": "a"}, _event(1, "Error", "b")]
    assert [e["Description"] for e in latest_error_events(events)] == ["b", "a"]


def test_group_requirement_validation() -> None:
    with pytest.raises(ValueError):
        GroupRequirement(5, 4)
    with pytest.raises(ValueError):
        GroupRequirement(-1, 4)
    with pytest.raises(TypeError):
        GroupRequirement(True, 4)


def test_summarize() -> None:
    decision = evaluate_gate(cluster("InService", group(current=3, status="Creating")), GPU)
    assert summarize(decision.groups) == "gpu=3/16/16"


def test_duplicate_group_names_first_wins_and_garbage_is_ignored() -> None:
    response = cluster("InService", group(), group(status="Failed"))
    response["InstanceGroups"].append({"Status": "Failed"})
    response["InstanceGroups"].append("junk")
    assert evaluate_gate(response, GPU).status == "READY"


# -- properties -------------------------------------------------------------------------
_SAGEMAKER = botocore.session.get_session().get_service_model("sagemaker")
GROUP_STATUSES = list(_SAGEMAKER.shape_for("InstanceGroupStatus").enum)
"""Every group status botocore's API model lists (a status added later is drawn too)."""
CLUSTER_STATUSES = list(_SAGEMAKER.shape_for("ClusterStatus").enum)
NAMES = ["gpu", "trn", "cpu"]


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, GroupRequirement]]:
    gated = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=3, unique=True))
    requirements = {}
    for name in gated:
        target = draw(st.integers(0, 40))
        requirements[name] = GroupRequirement(draw(st.integers(0, target)), target)
    groups = []
    for name in draw(st.lists(st.sampled_from(NAMES), max_size=3, unique=True)):
        g: dict[str, Any] = {
            "InstanceGroupName": name,
            "Status": draw(st.sampled_from(GROUP_STATUSES)),
            "CurrentCount": draw(st.integers(0, 40)),
            "TargetCount": draw(st.integers(0, 40)),
        }
        if draw(st.booleans()):
            g["MinCount"] = draw(st.integers(0, 40))
        groups.append(g)
    response = {
        "ClusterName": "train",
        "ClusterStatus": draw(st.sampled_from(CLUSTER_STATUSES)),
        "InstanceGroups": groups,
    }
    if draw(st.booleans()):
        response["FailureMessage"] = draw(st.text(max_size=50))
    return response, requirements


@settings(max_examples=150, deadline=None)
@given(scenarios(), st.integers(-3600, 3600))
def test_properties(
    scenario: tuple[dict[str, Any], dict[str, GroupRequirement]], offset: int
) -> None:
    response, requirements = scenario
    deadline = NOW + timedelta(seconds=offset)
    decision = evaluate_gate(response, requirements, now=NOW, deadline=deadline)
    listed = {g["InstanceGroupName"]: g for g in response["InstanceGroups"]}
    if decision.status == "READY":
        assert response["ClusterStatus"] not in ("Failed", "Deleting")
        for name, req in requirements.items():
            g = listed[name]
            assert g["Status"] in COUNTED_GROUP_STATUSES
            assert g["CurrentCount"] >= req.min_count
            assert g["TargetCount"] == req.target_count
            assert g.get("MinCount", req.min_count) == req.min_count
    if response["ClusterStatus"] in ("Failed", "Deleting"):
        assert decision.status == "FAILED"
    if decision.status == "WAITING":
        assert deadline > NOW
    for name in requirements:
        assert name in decision.reason
    # deterministic, and events only ever touch the reason
    assert evaluate_gate(response, requirements, now=NOW, deadline=deadline) == decision
    again = evaluate_gate(
        response, requirements, now=NOW, deadline=deadline, events=[_event(1, "Error", "e")]
    )
    assert again.status == decision.status
    # without a deadline, a FAILED/READY decision stays the same; WAITING can only stay WAITING
    free = evaluate_gate(response, requirements)
    if decision.status != "FAILED" or "deadline reached" not in decision.reason:
        assert free.status == decision.status


def test_a_degraded_group_short_at_the_deadline_is_named_with_its_hint() -> None:
    """The hint names what happened (Degraded), not "capacity did not arrive in time"."""
    response = cluster("InService", group(status="Degraded", current=5, target=16, minimum=8))
    decision = evaluate_gate(
        response, {"gpu": GroupRequirement(8, 16)}, now=NOW, deadline=NOW - timedelta(seconds=1)
    )
    assert decision.status == "FAILED"
    assert "instance group(s) gpu Degraded" in decision.reason
    assert "failed to provision or are no longer healthy" in decision.reason
    assert "capacity did not arrive in time" not in decision.reason

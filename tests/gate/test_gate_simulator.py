"""The HyperPod simulator follows the facts file, and answers real boto3 clients honestly."""

from __future__ import annotations

import inspect
import math
from typing import Any

import botocore.endpoint
import pytest
from botocore.exceptions import ClientError

from hyperpod_constructs._runtime.hyperpod_gate import aws
from tests.support.clock import VirtualClock, forbid_real_sleep, patch_botocore_retry_sleep
from tests.support.groups import controller_spec
from tests.support.hyperpod_sim import GroupSpec, HyperPodSimulator, constant, steps
from tests.support.wire import ContractViolation

HOUR = 3600


def make(
    monkeypatch: pytest.MonkeyPatch, *groups: GroupSpec, **options: Any
) -> tuple[HyperPodSimulator, VirtualClock, Any]:
    clock = VirtualClock()
    forbid_real_sleep(monkeypatch)
    patch_botocore_retry_sleep(monkeypatch, clock)
    specs = [
        controller_spec(),
        *groups,
    ]
    sim = HyperPodSimulator(clock, specs, **options)
    return sim, clock, sim.client()


def group_of(response: dict[str, Any], name: str) -> dict[str, Any] | None:
    return next((g for g in response["InstanceGroups"] if g["InstanceGroupName"] == name), None)


def test_controller_first_then_parallel_groups_and_min_count_gating(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sim, clock, sm = make(
        monkeypatch,
        GroupSpec("login", 1, node_type="Login", instance_type="ml.m5.4xlarge", boot_seconds=300),
        GroupSpec("gpu", 16, 12, capacity=steps((0, 8), (HOUR, 16))),
    )
    first = sm.describe_cluster(ClusterName="train")
    assert first["ClusterStatus"] == "Creating"
    assert group_of(first, "gpu") is None  # not listed before the controller is healthy
    clock.advance(700)  # controller healthy at ~610 s, login/gpu started
    mid = sm.describe_cluster(ClusterName="train")
    assert group_of(mid, "gpu")["Status"] == "Creating"  # type: ignore[index]
    assert mid["ClusterStatus"] == "Creating"  # login not up yet
    clock.advance(600)
    up = sm.describe_cluster(ClusterName="train")
    gpu = group_of(up, "gpu")
    assert up["ClusterStatus"] == "InService"  # controller + login, gpu still gated
    assert gpu is not None
    assert gpu["Status"] == "Creating" and gpu["CurrentCount"] == 8 and gpu["MinCount"] == 12
    clock.advance(HOUR)
    later = group_of(sm.describe_cluster(ClusterName="train"), "gpu")
    assert later is not None
    assert later["Status"] == "InService" and later["CurrentCount"] == 16  # kept launching
    reached = sim.min_reached_at("gpu")
    assert reached is not None and reached - clock.start == pytest.approx(HOUR + 620, abs=300)
    events = sm.list_cluster_events(ClusterName="train", SortOrder="Ascending", MaxResults=100)[
        "Events"
    ]
    texts = [e["Description"] for e in events]
    assert any("Minimum capacity reached for instance group gpu" in t for t in texts)
    assert any(
        "InsufficientInstanceCapacity" in t and e["EventLevel"] == "Error"
        for t, e in zip(texts, events, strict=True)
    )
    nodes = sm.list_cluster_nodes(ClusterName=sim.arn)["ClusterNodeSummaries"]
    assert sum(n["InstanceGroupName"] == "gpu" for n in nodes) == 16


def test_new_group_rolls_back_to_zero_and_goes_in_service(monkeypatch: pytest.MonkeyPatch) -> None:
    sim, clock, sm = make(monkeypatch, GroupSpec("gpu", 16, 16, capacity=constant(12)))
    clock.advance(3 * HOUR - 60)
    before = group_of(sm.describe_cluster(ClusterName="train"), "gpu")
    assert before is not None and before["Status"] == "Creating" and before["CurrentCount"] == 12
    clock.advance(120)
    after = group_of(sm.describe_cluster(ClusterName="train"), "gpu")
    assert after == {
        **after,
        "Status": "InService",
        "CurrentCount": 0,
        "TargetCount": 0,
        "MinCount": 0,
    }
    rolled = sim.rolled_back_at("gpu")
    assert rolled is not None and rolled - clock.start == pytest.approx(3 * HOUR, abs=10)
    events = sm.list_cluster_events(ClusterName="train", SortOrder="Descending", MaxResults=5)[
        "Events"
    ]
    assert any("Rollback initiated for instance group gpu" in e["Description"] for e in events)


def test_existing_group_raised_min_updates_then_rolls_back_to_previous_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sim, clock, sm = make(monkeypatch, GroupSpec("gpu", 8, 8, capacity=constant(12)))
    clock.advance(HOUR)
    assert group_of(sm.describe_cluster(ClusterName="train"), "gpu")["Status"] == "InService"  # type: ignore[index]
    sim.update_group("gpu", min_instance_count=16, instance_count=16)
    clock.advance(HOUR)
    mid = sm.describe_cluster(ClusterName="train")
    gpu = group_of(mid, "gpu")
    assert gpu is not None and gpu["Status"] == "Updating" and gpu["CurrentCount"] == 12
    assert (gpu["MinCount"], gpu["TargetCount"]) == (16, 16)
    assert mid["ClusterStatus"] == "Updating"
    clock.advance(2 * HOUR + 60)
    rolling = group_of(sm.describe_cluster(ClusterName="train"), "gpu")
    assert rolling is not None and rolling["Status"] == "Updating"
    assert (rolling["MinCount"], rolling["TargetCount"], rolling["CurrentCount"]) == (8, 8, 8)
    clock.advance(600)
    done = group_of(sm.describe_cluster(ClusterName="train"), "gpu")
    assert done is not None and done["Status"] == "InService"


def test_controller_failure_makes_the_cluster_failed(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = VirtualClock()
    patch_botocore_retry_sleep(monkeypatch, clock)
    sim = HyperPodSimulator(
        clock,
        [
            GroupSpec(
                "controller",
                1,
                node_type="Controller",
                failure_message="Lifecycle script on_create.sh failed with exit code 1",
            ),
            GroupSpec("gpu", 4, 4),
        ],
    )
    clock.advance(900)
    response = sim.client().describe_cluster(ClusterName="train")
    assert response["ClusterStatus"] == "Failed"
    assert response["FailureMessage"] == "Lifecycle script on_create.sh failed with exit code 1"


def test_deleted_cluster_answers_resource_not_found(monkeypatch: pytest.MonkeyPatch) -> None:
    sim, clock, sm = make(monkeypatch, GroupSpec("gpu", 4, 4))
    sim.delete_cluster()
    assert sm.describe_cluster(ClusterName="train")["ClusterStatus"] == "Deleting"
    clock.advance(601)
    with pytest.raises(ClientError) as caught:
        sm.describe_cluster(ClusterName="train")
    assert caught.value.response["Error"]["Code"] == "ResourceNotFound"
    assert sim.calls == {"DescribeCluster": 2}  # not retried


def test_throttling_is_retried_by_real_botocore_in_virtual_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sim, clock, sm = make(monkeypatch, GroupSpec("gpu", 4, 4))
    sim.inject("throttle", count=aws.MAX_ATTEMPTS - 1)
    response = sm.describe_cluster(ClusterName="train")
    assert response["ResponseMetadata"]["RetryAttempts"] == aws.MAX_ATTEMPTS - 1
    assert sim.calls["DescribeCluster"] == aws.MAX_ATTEMPTS
    assert len(clock.sleeps) == aws.MAX_ATTEMPTS - 1
    # The clock counts epoch seconds (~1.8e9), where one float step is ~2.4e-7 s:
    # each sleep may round by half a step, so compare within that resolution.
    resolution = math.ulp(clock.time()) * len(clock.sleeps)
    assert clock.elapsed == pytest.approx(sum(clock.sleeps), abs=resolution)
    assert clock.elapsed <= aws.MAX_BACKOFF_TOTAL


def test_persistent_5xx_gives_up_after_the_bounded_attempts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sim, _, sm = make(monkeypatch, GroupSpec("gpu", 4, 4))
    sim.inject("5xx")
    with pytest.raises(ClientError) as caught:
        sm.describe_cluster(ClusterName="train")
    assert caught.value.response["Error"]["Code"] == "InternalFailure"
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 500
    # Config(retries={"total_max_attempts": n}) counts the first attempt too.
    assert sim.calls["DescribeCluster"] == aws.MAX_ATTEMPTS


def test_access_denied_is_not_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    sim, _, sm = make(monkeypatch, GroupSpec("gpu", 4, 4))
    sim.inject("access_denied")
    with pytest.raises(ClientError) as caught:
        sm.describe_cluster(ClusterName="train")
    assert caught.value.response["Error"]["Code"] == "AccessDeniedException"
    assert "sagemaker:DescribeCluster" in caught.value.response["Error"]["Message"]
    assert sim.calls["DescribeCluster"] == 1


def test_an_invalid_fake_response_fails_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    sim, _, sm = make(monkeypatch, GroupSpec("gpu", 4, 4))
    good = sim.describe
    monkeypatch.setattr(sim, "describe", lambda: {**good(), "ClusterStatus": 7})
    with pytest.raises(ContractViolation, match="ClusterStatus"):
        sm.describe_cluster(ClusterName="train")
    monkeypatch.setattr(
        sim, "describe", lambda: {k: v for k, v in good().items() if k != "ClusterArn"}
    )
    with pytest.raises(ContractViolation, match="ClusterArn"):
        sm.describe_cluster(ClusterName="train")


def test_old_boto3_model_drops_min_count(monkeypatch: pytest.MonkeyPatch) -> None:
    sim, clock, new = make(monkeypatch, GroupSpec("gpu", 4, 2))
    clock.advance(HOUR)
    old = sim.client(old_boto3=True)
    assert "MinCount" not in old.meta.service_model.shape_for("ClusterInstanceGroupDetails").members
    new_gpu = group_of(new.describe_cluster(ClusterName="train"), "gpu")
    old_gpu = group_of(old.describe_cluster(ClusterName="train"), "gpu")
    assert new_gpu is not None and old_gpu is not None
    assert new_gpu["MinCount"] == 2
    assert "MinCount" not in old_gpu
    assert old_gpu["TargetCount"] == 4


def test_retry_sleep_patch_targets_the_sleep_botocore_really_uses() -> None:
    # If botocore moves the retry sleep, this fails instead of silently sleeping for real
    # (forbid_real_sleep would also catch that).
    source = inspect.getsource(botocore.endpoint.Endpoint._needs_retry)
    assert "time.sleep(handler_response)" in source

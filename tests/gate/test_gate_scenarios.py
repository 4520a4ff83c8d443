"""Full waits in virtual time: the real arm handler, given the properties the construct
synthesizes, starts an execution of the synthesized definition on moto's Step Functions
engine, which calls the real check handler, which talks to the HyperPod simulator and the
CloudFormation/SNS fakes through real boto3 clients."""

from __future__ import annotations

from typing import Any

import pytest

from hyperpod_constructs._runtime.hyperpod_gate import poll
from hyperpod_constructs._runtime.hyperpod_gate.decision import SETTLE_SECONDS
from tests.support.hyperpod_sim import TICK, GroupSpec, constant, linear, steps, unlimited
from tests.support.wire import ApiError
from tests.support.world import EVENT_DELAY, Execution, GateWorld, Requirement

MIN = 60
HOUR = 3600
GPU = [Requirement("gpu", 16, 16)]
FIRST = [Requirement("gpu", 8, 16)]
RAISED = [Requirement("gpu", 14, 16)]
ARM_AT = MIN  # CloudFormation may return the cluster early: arm while it is still Creating
SLOW_POLL = 5 * MIN
"""Poll interval of the multi-hour scenarios (a real option value): fewer checks, same logic."""


def cluster_groups(
    gpu_capacity: Any,
    *,
    gpu_min: int = 16,
    gpu_target: int = 16,
    extra: list[GroupSpec] | None = None,
    controller: GroupSpec | None = None,
) -> list[GroupSpec]:
    return [
        controller
        or GroupSpec("controller", 1, node_type="Controller", instance_type="ml.m5.12xlarge"),
        GroupSpec("gpu", gpu_target, gpu_min, capacity=gpu_capacity),
        *(extra or []),
    ]


def start(w: GateWorld, requirements: list[Requirement] | None = None) -> Execution:
    w.clock.advance(ARM_AT)
    response = w.arm_gate(requirements)
    assert response["Status"] == "SUCCESS", response
    return w.execution(response)


def polls_of(w: GateWorld, execution: Execution) -> list[Any]:
    return [i for i in w.polls() if i.event.get("executionArn") == execution.arn]


def assert_loop_ended(
    w: GateWorld,
    execution: Execution,
    *,
    events: int = 0,
    extra_transitions: int = 0,
    nodes: int | None = None,
) -> None:
    """The execution is over after 3 transitions per poll, the SageMaker calls match the
    polls (one DescribeCluster each, ListClusterEvents only for ``events`` FAILED
    decisions, ListClusterNodes ``nodes`` times: by default one page for the one check that
    saw the minimum of a gate that opened, none for one that did not), and nothing polls
    any more, even hours later."""
    assert not execution.running
    polls = polls_of(w, execution)
    assert execution.task_invocations == len(polls) + extra_transitions
    if execution.status in ("SUCCEEDED", "FAILED") and execution.error != "States.Timeout":
        assert execution.transitions == 3 * len(polls) + extra_transitions
    if not w.sim.faults:  # with faults, retried attempts are counted by the test itself
        assert w.sim.calls.get("DescribeCluster", 0) == len(w.polls())
    assert w.sim.calls.get("ListClusterEvents", 0) == events
    if nodes is None:
        nodes = 1 if execution.status == "SUCCEEDED" and w.signals() else 0
    assert w.sim.calls.get("ListClusterNodes", 0) == nodes
    count = len(w.invocations)
    w.run(until_elapsed=w.clock.elapsed + 2 * HOUR, stop_when_idle=False)
    assert len(w.invocations) == count, "the loop kept polling after it ended"


def detection_latency(
    w: GateWorld, group: str = "gpu", requirements: list[Requirement] | None = None
) -> float:
    reached = w.sim.min_reached_at(group)
    assert reached is not None
    (signal,) = w.signals(requirements)
    return signal.time - reached


def test_fast_minimum_in_20_minutes(monkeypatch: pytest.MonkeyPatch) -> None:
    # 1 min, not the default: the checks are counted below, one a minute.
    w = GateWorld(monkeypatch, cluster_groups(unlimited()), poll_interval=MIN)
    execution = start(w)
    w.run(until_elapsed=5 * HOUR)
    assert execution.status == "SUCCEEDED"
    reached = w.sim.min_reached_at("gpu")
    assert reached is not None and 18 * MIN <= reached - w.clock.start <= 22 * MIN
    assert 0 <= detection_latency(w) <= w.poll_interval
    (signal,) = w.signals()
    assert signal.status == "SUCCESS" and signal.unique_id == "hyperpod-min-count-gate"
    assert signal.reason.startswith(
        "all gated groups reached their minimum: gpu 16/16 (target 16, InService)"
    )
    polls = polls_of(w, execution)
    assert [p.result["status"] for p in polls][-1] == "READY"
    assert all(p.result["status"] == "WAITING" for p in polls[:-1])
    assert (
        "gpu not listed (minimum 16, target 16); cluster train is Creating"
        in polls[0].result["reason"]
    )  # armed before the controller was up
    # one ListClusterNodes page, only in the check where DescribeCluster counts the minimum
    assert w.sim.calls == {"DescribeCluster": len(polls), "ListClusterNodes": 1}
    # armed at 1 min; polls every minute; the minimum is reached at 20 min 20 s
    assert len(polls) == 21 and polls[-1].time - w.clock.start == 21 * MIN
    assert w.cfn.condition(w.condition_id()).status == "CREATE_COMPLETE"
    assert len(w.sns.messages) == 1 and "READY" in w.sns.messages[0]["Subject"]
    assert_loop_ended(w, execution)
    w.assert_no_secret_leak()


def test_slow_minimum_at_2h50(monkeypatch: pytest.MonkeyPatch) -> None:
    capacity = steps((0, 4), (2 * HOUR + 35 * MIN, 16))
    w = GateWorld(monkeypatch, cluster_groups(capacity), poll_interval=SLOW_POLL)
    execution = start(w)
    w.run(until_elapsed=5 * HOUR)
    assert execution.status == "SUCCEEDED"
    reached = w.sim.min_reached_at("gpu")
    assert reached is not None and 2 * HOUR + 45 * MIN <= reached - w.clock.start < 3 * HOUR
    assert 0 <= detection_latency(w) <= w.poll_interval
    polls = polls_of(w, execution)
    assert abs(len(polls) - (reached - w.clock.start - ARM_AT) / SLOW_POLL) <= 2
    assert w.sim.calls == {"DescribeCluster": len(polls), "ListClusterNodes": 1}
    assert execution.transitions == 3 * len(polls)
    assert w.cfn.condition(w.condition_id()).status == "CREATE_COMPLETE"
    assert_loop_ended(w, execution)


def test_partial_then_recovery(monkeypatch: pytest.MonkeyPatch) -> None:
    capacity = steps((0, 10), (90 * MIN, 13), (2 * HOUR, 16))
    w = GateWorld(monkeypatch, cluster_groups(capacity), poll_interval=SLOW_POLL)
    execution = start(w)
    w.run(until_elapsed=5 * HOUR)
    assert execution.status == "SUCCEEDED"
    reasons = [p.result["reason"] for p in polls_of(w, execution)]
    assert any("gpu 10/16 (target 16, Creating)" in r for r in reasons)
    assert any("gpu 13/16 (target 16, Creating)" in r for r in reasons)
    assert 0 <= detection_latency(w) <= w.poll_interval
    assert w.sim.calls.get("ListClusterEvents", 0) == 0
    assert_loop_ended(w, execution)


def test_never_rolls_back_at_3h_and_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    w = GateWorld(monkeypatch, cluster_groups(constant(10)), poll_interval=SLOW_POLL)
    execution = start(w)
    w.run(until_elapsed=6 * HOUR)
    assert execution.status == "FAILED" and execution.error == "MinCountGateFailed"
    rolled = w.sim.rolled_back_at("gpu")
    assert rolled is not None and rolled - w.clock.start == pytest.approx(3 * HOUR, abs=10)
    (signal,) = w.signals()
    assert 0 <= signal.time - rolled <= w.poll_interval
    assert signal.status == "FAILURE"
    reason = signal.reason
    assert "HyperPod rolled back instance group(s) gpu" in reason
    assert "gpu 0/16 (target 16, InService, HyperPod reports target 0 and minimum 0)" in reason
    assert "3-hour window" in reason and "training plan" in reason
    assert "Latest errors (newest first): [gpu] Failed to launch 6 ml.p5.48xlarge" in reason
    assert len(reason) <= poll.RETURN_REASON_LIMIT
    assert execution.cause == reason
    polls = polls_of(w, execution)
    assert w.sim.calls == {"DescribeCluster": len(polls), "ListClusterEvents": 1}
    condition = w.cfn.condition(w.condition_id())
    # What the stack events show: the UniqueId, which starts the reason.
    assert condition.status == "CREATE_FAILED" and condition.reason == (
        "Received FAILURE signal with UniqueId "
        "gate-failed-HyperPod-rolled-back-instance-group-s-gpu-InService"
    )
    assert "FAILED" in w.sns.messages[0]["Subject"]
    assert_loop_ended(w, execution, events=1)
    w.assert_no_secret_leak()


def _update_world(
    monkeypatch: pytest.MonkeyPatch, capacity: Any, **options: Any
) -> tuple[GateWorld, Execution, dict[str, Any]]:
    """Create with gpu min 8 / target 16 (met quickly), then raise the minimum to 14."""
    w = GateWorld(
        monkeypatch, cluster_groups(capacity, gpu_min=8), poll_interval=SLOW_POLL, **options
    )
    first = start(w, FIRST)
    w.run(until_elapsed=HOUR)
    assert first.status == "SUCCEEDED"
    old_props = w.properties(FIRST)
    # CloudFormation: cluster update first (UpdateCluster), then the gate (new handle id)
    w.sim.update_group("gpu", min_instance_count=14)
    response = w.arm_gate(
        RAISED,
        request_type="Update",
        physical_id=first.arn,
        old_properties=old_props,
    )
    assert response["Status"] == "SUCCESS"
    assert response["PhysicalResourceId"] != first.arn
    return w, first, response


def test_update_raising_the_minimum_waits_again(monkeypatch: pytest.MonkeyPatch) -> None:
    w, first, response = _update_world(monkeypatch, steps((0, 10), (2 * HOUR, 16)))
    first_polls = len(polls_of(w, first))
    second = w.execution(response)
    w.run(until_elapsed=6 * HOUR)
    assert second.status == "SUCCEEDED"
    assert len(polls_of(w, first)) == first_polls  # the old loop had already ended
    assert any("gpu 10/14 (target 16, Updating)" in p.result["reason"] for p in polls_of(w, second))
    assert 0 <= detection_latency(w, requirements=RAISED) <= w.poll_interval
    assert w.signals(RAISED)[0].status == "SUCCESS"
    assert len(w.signals(FIRST)) == 1  # the first handle was not signalled again
    # cleanup: CloudFormation deletes the old physical id
    delete = w.custom_resource("Delete", w.properties(FIRST), physical_id=first.arn)
    assert delete["Status"] == "SUCCESS"
    assert w.calls("StopExecution")[-1] == {"executionArn": first.arn, "cause": "gate deleted"}
    assert first.status == "SUCCEEDED"  # stopping a finished execution changes nothing
    assert_loop_ended(w, second, nodes=2)  # one page for each gate that opened


def test_update_rolled_back_to_previous_values_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    w, _, response = _update_world(monkeypatch, constant(10))
    second = w.execution(response)
    updated_at = w.clock.time()
    w.run(until_elapsed=8 * HOUR)
    assert second.status == "FAILED"
    rolled = w.sim.rolled_back_at("gpu")
    assert rolled is not None and rolled - updated_at == pytest.approx(3 * HOUR, abs=20)
    (signal,) = w.signals(RAISED)
    reason = signal.reason
    assert "rolled back instance group(s) gpu" in reason
    # back at 8 of 16 with 10 nodes and no capacity for the rest: Degraded (the API reference)
    assert "gpu 10/14 (target 16, Degraded, HyperPod reports target 16 and minimum 8)" in reason
    # Updating for 5 minutes while scaling in, then InService with the old values
    assert 0 <= signal.time - rolled <= 5 * MIN + w.poll_interval
    assert_loop_ended(w, second, events=1, nodes=1)  # the first gate's opening check


def test_update_rollback_with_old_boto3_fails_at_the_deadline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Without MinCount in the parsed response a rollback that only reverts MinCount looks
    # like "InService, 8 of 14": the gate keeps waiting and fails at its deadline.
    w, _, response = _update_world(monkeypatch, constant(10), old_boto3=True)
    second = w.execution(response)
    deadline = second.input["deadline"]
    w.run(until_elapsed=9 * HOUR)
    assert second.status == "FAILED"
    (signal,) = w.signals(RAISED)
    reason = signal.reason
    assert "deadline reached" in reason and "gpu 10/14 (target 16, Degraded)" in reason
    assert "gpu Degraded" in reason  # the hint names what HyperPod reports
    assert 0 <= signal.time - deadline <= w.poll_interval
    assert_loop_ended(w, second, events=1, nodes=1)  # the first gate's opening check


def test_delete_during_wait_stops_the_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    # 1 min, not the default: the checks are counted below, one a minute.
    w = GateWorld(monkeypatch, cluster_groups(constant(10)), poll_interval=MIN)
    execution = start(w)
    responses: list[dict[str, Any]] = []
    props = w.properties(GPU)
    w.at(
        45 * MIN,
        lambda: responses.append(w.custom_resource("Delete", props, physical_id=execution.arn)),
    )
    w.run(until_elapsed=6 * HOUR)
    assert responses and responses[0]["Status"] == "SUCCESS"
    assert execution.status == "ABORTED"
    assert w.calls("StopExecution") == [{"executionArn": execution.arn, "cause": "gate deleted"}]
    polls = polls_of(w, execution)
    assert max(p.time for p in polls) <= w.clock.start + 45 * MIN
    assert len(polls) == 44  # minutes 1..44; the Delete at 45 min came first
    assert w.signals() == []
    assert_loop_ended(w, execution)


def test_controller_failure_fails_with_failure_message(monkeypatch: pytest.MonkeyPatch) -> None:
    controller = GroupSpec(
        "controller",
        1,
        node_type="Controller",
        failure_message="Lifecycle script on_create.sh failed on ip-10-1-2-3 with exit code 1",
    )
    w = GateWorld(monkeypatch, cluster_groups(unlimited(), controller=controller))
    execution = start(w)
    w.run(until_elapsed=3 * HOUR)
    assert execution.status == "FAILED"
    reason = w.signals()[0].reason
    assert "cluster train is Failed" in reason
    assert "FailureMessage: Lifecycle script on_create.sh failed on ip-10-1-2-3" in reason
    assert "gpu not listed (minimum 16, target 16)" in reason
    assert "[controller] Lifecycle script on_create.sh failed" in reason
    # HyperPod reports the failed controller about 10 minutes in; the next check sees it.
    assert w.signals()[0].time - w.clock.start <= 10 * MIN + w.poll_interval
    assert w.sim.calls["ListClusterEvents"] == 1
    assert_loop_ended(w, execution, events=1)


def test_throttling_and_5xx_are_absorbed(monkeypatch: pytest.MonkeyPatch) -> None:
    w = GateWorld(
        monkeypatch,
        cluster_groups(
            steps((0, 0), (25 * MIN, 16)),
        ),
    )
    s = w.clock.start
    w.sim.inject("throttle", start=s + 10 * MIN, end=s + 13 * MIN)  # a long burst
    w.sim.inject("5xx", count=3, start=s + 20 * MIN)  # a short one
    w.sim.inject("unavailable", count=2, start=s + 30 * MIN)
    execution = start(w)
    w.run(until_elapsed=3 * HOUR)
    assert execution.status == "SUCCEEDED"
    polls = polls_of(w, execution)
    transient = [p for p in polls if "failed transiently" in p.result["reason"]]
    assert 1 <= len(transient) <= 4  # only the long burst outlasts botocore's retries
    assert all(p.result["status"] == "WAITING" for p in transient)
    attempts = w.sim.calls["DescribeCluster"]
    assert attempts == len(polls) - len(transient) + sum(f.hits for f in w.sim.faults)
    assert attempts > len(polls)
    reached = w.sim.min_reached_at("gpu")
    assert reached is not None
    (signal,) = w.signals()
    assert signal.status == "SUCCESS"
    assert 0 <= signal.time - reached <= w.poll_interval + 60  # + retry back-off
    assert_loop_ended(w, execution)


def test_lambda_service_errors_are_retried_by_the_state_machine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    w = GateWorld(
        monkeypatch,
        cluster_groups(unlimited()),
        lambda_faults=["Lambda.ServiceException", "Lambda.TooManyRequestsException"],
    )
    execution = start(w)
    w.run(until_elapsed=2 * HOUR)
    assert execution.status == "SUCCEEDED"
    failed = [i for i in w.invocations if isinstance(i.result, dict) and "error" in i.result]
    assert len(failed) == 2
    # Retries re-run the task without entering another state.
    assert execution.task_invocations == len(polls_of(w, execution)) + 2
    assert execution.transitions == 3 * len(polls_of(w, execution))
    assert w.sim.calls == {"DescribeCluster": len(polls_of(w, execution)), "ListClusterNodes": 1}


def test_access_denied_past_the_settle_window_fails_naming_the_permission(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    w = GateWorld(monkeypatch, cluster_groups(unlimited()))
    w.sim.inject("access_denied")
    execution = start(w)
    w.run(until_elapsed=HOUR)
    assert execution.status == "FAILED"
    polls = polls_of(w, execution)
    # Denied for good: it may be IAM propagation for the settle window, then it fails.
    assert all("may still be propagating" in p.result["reason"] for p in polls[:-1])
    (signal,) = w.signals()
    assert signal.time - w.clock.start - ARM_AT == pytest.approx(
        SETTLE_SECONDS, abs=w.poll_interval
    )
    reason = signal.reason
    assert "may not call sagemaker:DescribeCluster" in reason
    assert "grant sagemaker:DescribeCluster" in reason
    assert w.sim.calls == {"DescribeCluster": len(polls)}  # AccessDenied is not retried
    assert_loop_ended(w, execution)


def test_access_denied_during_iam_propagation_does_not_fail_the_gate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The check function's policy names the cluster, so it is created
    just before the gate is armed; the first DescribeCluster calls may be denied while it
    propagates. Today one AccessDenied ends the gate."""
    w = GateWorld(monkeypatch, cluster_groups(unlimited()))
    s = w.clock.start
    w.sim.inject("access_denied", end=s + ARM_AT + 3 * MIN)
    execution = start(w)
    w.run(until_elapsed=3 * HOUR)
    assert execution.status == "SUCCEEDED"
    (signal,) = w.signals()
    assert signal.status == "SUCCESS"
    assert_loop_ended(w, execution)


def test_a_check_denied_by_cloudformation_is_signalled_by_the_arm_function(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every CloudFormation call denied to the check function for good. The
    arm function (another role) signals the decision, so CloudFormation sees it at once."""
    w = GateWorld(monkeypatch, cluster_groups(steps((0, 0), (30 * MIN, 16))))
    denied = ApiError("AccessDenied", "not authorized to perform: cloudformation", 403)
    original = w.cfn.fake.handler

    def handler(operation: str, params: dict[str, Any]) -> dict[str, Any]:
        if w.running == "poll":
            raise denied
        return original(operation, params)

    monkeypatch.setattr(w.cfn.fake, "handler", handler)
    execution = start(w)
    w.run(until_elapsed=3 * HOUR)
    (signal,) = w.signals()
    assert (signal.status, signal.role) == ("SUCCESS", "arm")
    assert "checked by the arm function" in signal.reason
    assert [i.function for i in w.invocations][-2:] == ["poll", "arm-fallback"]
    assert execution.status == "SUCCEEDED"
    reached = w.sim.min_reached_at("gpu")
    assert reached is not None and signal.time - reached <= w.poll_interval


@pytest.mark.parametrize(
    ("delete_seconds", "expected", "events"),
    [
        (600.0, "cluster train is being deleted", 1),  # Deleting: a decision, with events
        (0.0, "cluster train not found", 0),  # gone at once: ResourceNotFound
    ],
)
def test_cluster_deleted_mid_wait(
    monkeypatch: pytest.MonkeyPatch, delete_seconds: float, expected: str, events: int
) -> None:
    w = GateWorld(
        monkeypatch, cluster_groups(constant(10)), sim_options={"delete_seconds": delete_seconds}
    )
    execution = start(w)
    w.at(40 * MIN + 30, w.sim.delete_cluster)
    w.run(until_elapsed=3 * HOUR)
    assert execution.status == "FAILED"
    (signal,) = w.signals()
    assert expected in signal.reason
    assert signal.time - (w.clock.start + 40 * MIN + 30) <= w.poll_interval + 10
    assert_loop_ended(w, execution, events=events)


def test_deadline_fails_before_the_backstop(monkeypatch: pytest.MonkeyPatch) -> None:
    w = GateWorld(monkeypatch, cluster_groups(constant(10)), timeout_seconds=HOUR)
    execution = start(w)
    deadline = execution.input["deadline"]
    w.run(until_elapsed=4 * HOUR)
    assert execution.status == "FAILED" and execution.error == "MinCountGateFailed"
    (signal,) = w.signals()
    assert 0 <= signal.time - deadline <= w.poll_interval
    reason = signal.reason
    assert "deadline reached" in reason and "gpu 10/16 (target 16, Creating)" in reason
    assert_loop_ended(w, execution, events=1)


def test_old_boto3_without_min_count(monkeypatch: pytest.MonkeyPatch) -> None:
    fast = GateWorld(monkeypatch, cluster_groups(steps((0, 8), (30 * MIN, 16))), old_boto3=True)
    execution = start(fast)
    fast.run(until_elapsed=3 * HOUR)
    assert execution.status == "SUCCEEDED"
    assert 0 <= detection_latency(fast) <= fast.poll_interval
    assert_loop_ended(fast, execution)
    sm = fast.sim.client(old_boto3=True)  # what the poll function saw: no MinCount at all
    assert "MinCount" not in sm.describe_cluster(ClusterName="train")["InstanceGroups"][1]


def test_old_boto3_still_detects_a_new_group_rollback(monkeypatch: pytest.MonkeyPatch) -> None:
    w = GateWorld(
        monkeypatch, cluster_groups(constant(10)), old_boto3=True, poll_interval=SLOW_POLL
    )
    execution = start(w)
    w.run(until_elapsed=6 * HOUR)
    assert execution.status == "FAILED"
    reason = w.signals()[0].reason
    assert "gpu 0/16 (target 16, InService, HyperPod reports target 0)" in reason
    rolled = w.sim.rolled_back_at("gpu")
    assert rolled is not None and w.signals()[0].time - rolled <= w.poll_interval
    assert_loop_ended(w, execution, events=1)


def test_ungated_groups_never_hold_the_gate(monkeypatch: pytest.MonkeyPatch) -> None:
    extra = [
        GroupSpec(
            "cpu", 64, 0, instance_type="ml.c5.18xlarge", capacity=linear(0, per_hour=4, cap=64)
        ),
        GroupSpec(
            "login",
            1,
            node_type="Login",
            instance_type="ml.m5.4xlarge",
            capacity=steps((0, 0), (2 * HOUR, 1)),
        ),
    ]
    w = GateWorld(monkeypatch, cluster_groups(unlimited(), extra=extra))
    execution = start(w)
    w.run(until_elapsed=5 * HOUR)
    assert execution.status == "SUCCEEDED"
    signal = w.signals()[0]
    assert signal.time - w.clock.start < 25 * MIN
    reason = signal.reason
    assert "cluster train is Creating" in reason  # the login node is not up yet
    assert "cpu" not in reason and "login" not in reason
    assert 0 <= detection_latency(w) <= w.poll_interval
    assert_loop_ended(w, execution)


def test_handle_gone_abandons_the_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    # e.g. the stack moved on (rollback/update) but StopExecution never reached the loop
    w = GateWorld(monkeypatch, cluster_groups(steps((0, 10), (HOUR, 16))))
    execution = start(w)
    w.at(30 * MIN, lambda: w.cfn.remove_resource(w.condition_id()))
    w.run(until_elapsed=4 * HOUR)
    assert execution.status == "SUCCEEDED"
    last = polls_of(w, execution)[-1].result
    assert last["status"] == "ABANDONED" and "no longer waits" in last["reason"]
    assert w.signals() == [] and w.sns.messages == []
    assert_loop_ended(w, execution, nodes=1)  # the check that decided READY, then stopped


def test_a_slow_api_near_the_function_timeout_never_fails_a_ready_gate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On the engine: hanging calls and a hanging signal; every check
    ends within its function timeout (the harness reports Sandbox.Timedout otherwise)."""
    w = GateWorld(monkeypatch, cluster_groups(steps((0, 0), (20 * MIN, 16))))
    w.at(30 * MIN, lambda: w.sim.hang(count=5))
    w.at(30 * MIN, lambda: w.cfn.signal_faults.extend(["hang"] * 3))
    execution = start(w)
    w.run(until_elapsed=3 * HOUR)
    assert execution.status == "SUCCEEDED"
    assert all(i.duration <= w.gate().check_timeout for i in w.invocations)
    assert [s.status for s in w.signals()] == ["SUCCESS"]
    # The hung signal is retried within the same check (aws.call) while its time allows, so
    # no check reports it undelivered and one READY check decides.
    undelivered = [p for p in polls_of(w, execution) if "not delivered" in p.result["reason"]]
    assert undelivered == [] and w.cfn.fake.count("SignalResource") > 1
    assert_loop_ended(w, execution, nodes=1)


@pytest.mark.parametrize(("error", "arm_checks"), [("Sandbox.Timedout", 0), ("Lambda.Unknown", 2)])
def test_a_lambda_timeout_or_crash_is_retried_not_reported(
    monkeypatch: pytest.MonkeyPatch, error: str, arm_checks: int
) -> None:
    """A timeout is transient (retried); a crash is a fault of the function (no retry: the arm
    function checks instead). Neither is a verdict."""
    w = GateWorld(monkeypatch, cluster_groups(unlimited()), lambda_faults=[error, error])
    execution = start(w)
    w.run(until_elapsed=2 * HOUR)
    assert execution.status == "SUCCEEDED"
    assert [s.status for s in w.signals()] == ["SUCCESS"]
    arm = [i for i in w.invocations if i.function == "arm-fallback"]
    assert len(arm) == arm_checks
    assert execution.task_invocations == len(polls_of(w, execution)) + 2 + arm_checks


def test_a_check_that_keeps_timing_out_is_covered_by_the_arm_function(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The check function never finishes: after its retries the arm function checks instead,
    and the gate opens when HyperPod's minimum arrives; a timeout is never a verdict."""
    w = GateWorld(monkeypatch, cluster_groups(unlimited()), lambda_faults=["Sandbox.Timedout"] * 80)
    execution = start(w)
    w.run(until_elapsed=2 * HOUR)
    assert execution.status == "SUCCEEDED"
    (signal,) = w.signals()
    assert signal.status == "SUCCESS" and "checked by the arm function" in signal.reason
    assert [i.function for i in w.invocations][-1] == "arm-fallback"


def test_a_gated_group_removed_mid_wait_fails_the_gate(monkeypatch: pytest.MonkeyPatch) -> None:
    w = GateWorld(monkeypatch, cluster_groups(constant(10)))
    execution = start(w)
    w.at(30 * MIN, lambda: w.sim.remove_group("gpu"))
    w.run(until_elapsed=2 * HOUR)
    assert execution.status == "FAILED"
    (signal,) = w.signals()
    reason = signal.reason
    assert "instance group(s) gpu Deleting" in reason
    assert signal.time - (w.clock.start + 30 * MIN) <= w.poll_interval
    assert_loop_ended(w, execution, events=1)


def test_eventbridge_events_open_the_gate_within_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fast path: HyperPod's "Minimum capacity reached" event runs a check at once; the
    loop, which decides a poll interval later, signals the same UniqueId again (harmless)."""
    w = GateWorld(monkeypatch, cluster_groups(steps((0, 0), (30 * MIN, 16))), event_bridge=True)
    execution = start(w)
    w.run(until_elapsed=3 * HOUR)
    assert execution.status == "SUCCEEDED"
    reached = w.sim.min_reached_at("gpu")
    assert reached is not None
    first, *later = w.signals()
    fast = [i for i in w.invocations if i.function == "fastpath"]
    assert first.status == "SUCCESS", [(i.time - reached, i.result) for i in fast]
    assert "seen through an EventBridge event" in first.reason, [
        (i.time - reached, i.result) for i in fast
    ]
    assert first.time - reached <= EVENT_DELAY + TICK
    assert all(s.status == "SUCCESS" for s in later)
    assert {s.unique_id for s in w.signals()} == {"hyperpod-min-count-gate"}
    assert w.cfn.condition(w.condition_id()).completed_at == first.time
    assert len(w.sns.messages) == 1  # only the loop notifies
    fast = [i for i in w.invocations if i.function == "fastpath"]
    assert fast and all(i.result["status"] in ("IGNORED", "READY") for i in fast)


def test_eventbridge_never_fails_the_gate(monkeypatch: pytest.MonkeyPatch) -> None:
    """A rollback seen through events is left to the loop, which stays the authority."""
    w = GateWorld(
        monkeypatch, cluster_groups(constant(10)), poll_interval=SLOW_POLL, event_bridge=True
    )
    execution = start(w)
    w.run(until_elapsed=6 * HOUR)
    assert execution.status == "FAILED"
    (signal,) = w.signals()
    assert signal.status == "FAILURE"
    fast = [i for i in w.invocations if i.function == "fastpath"]
    assert fast and all(i.result["status"] == "IGNORED" for i in fast)


def test_a_group_degraded_at_its_minimum_opens_the_gate(monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue's repro: min 8 of 16, capacity for 8. HyperPod reaches the minimum in about
    20 minutes and reports the group Degraded (some instances failed to provision); 8 nodes
    are Running and HyperPod does not roll back. On main the gate failed at its deadline
    ("capacity did not arrive in time")."""
    w = GateWorld(monkeypatch, cluster_groups(constant(8), gpu_min=8), poll_interval=SLOW_POLL)
    execution = start(w, FIRST)
    w.run(until_elapsed=5 * HOUR)
    assert execution.status == "SUCCEEDED"
    (signal,) = w.signals(FIRST)
    assert signal.status == "SUCCESS"
    assert "gpu 8/8 (target 16, Degraded)" in signal.reason
    assert "gpu Degraded at the minimum" in signal.reason
    reached = w.sim.min_reached_at("gpu")
    assert reached is not None and signal.time - reached <= SLOW_POLL
    assert w.sim.groups["gpu"].status == "Degraded"


def test_the_history_counted_is_the_one_the_api_returns(monkeypatch: pytest.MonkeyPatch) -> None:
    """The harness counts a stopped execution's transitions and invocations from the records
    moto's API serializes (tests/support/world.py), read once: the same events, in the same
    order, as ``GetExecutionHistory`` returns."""
    w = GateWorld(monkeypatch, cluster_groups(constant(10)), timeout_seconds=HOUR)
    execution = start(w)
    w.run(until_elapsed=2 * HOUR)
    assert execution.status == "FAILED"
    api = w.sfn_client.get_execution_history(executionArn=execution.arn)["events"]
    counted = execution._history()
    assert [(e["id"], e["type"]) for e in counted] == [(e["id"], e["type"]) for e in api]
    assert execution.transitions == sum(e["type"].endswith("StateEntered") for e in api) > 0

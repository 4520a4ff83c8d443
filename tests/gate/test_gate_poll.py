"""The poll handler, one invocation at a time, against real boto3 clients and the fakes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hyperpod_constructs._runtime.hyperpod_gate import aws, cfnsignal, poll
from tests.support import gate_defaults
from tests.support.groups import controller_spec
from tests.support.hyperpod_sim import Fault, GroupSpec, constant, steps
from tests.support.wire import ApiError
from tests.support.world import TOPIC_ARN, GateWorld, Requirement

DOCS = Path(__file__).resolve().parents[2] / "docs"

HOUR = 3600
GPU = [Requirement("gpu", 16, 16)]


def world(monkeypatch: pytest.MonkeyPatch, capacity: Any = None, **options: Any) -> GateWorld:
    groups = [
        controller_spec(),
        GroupSpec("gpu", 16, 16, capacity=capacity or steps((0, 8), (HOUR, 16))),
        GroupSpec("cpu", 4, 0, instance_type="ml.c5.18xlarge"),
    ]
    return GateWorld(monkeypatch, groups, **options)


def calls(w: GateWorld) -> dict[str, int]:
    counts = dict(w.sim.calls)
    counts.update({f"cfn.{k}": v for k, v in _count(w.cfn.fake.attempts).items()})
    counts.update({f"sns.{k}": v for k, v in _count(w.sns.fake.attempts).items()})
    return counts


def _count(attempts: list[tuple[str, dict[str, Any]]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for name, _ in attempts:
        out[name] = out.get(name, 0) + 1
    return out


def test_missing_gated_group_fails_once_cluster_in_service(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world(monkeypatch)
    w.clock.advance(1300)
    result = w.poll_once(w.poll_event([*GPU, Requirement("trn", 2, 2)]))
    assert result["status"] == "FAILED"
    assert "instance group(s) trn not in the cluster" in result["reason"]
    assert "gpu 8/16 (target 16, Creating)" in result["reason"]
    assert calls(w) == {
        "DescribeCluster": 1,
        "ListClusterEvents": 1,
        "cfn.DescribeStackResource": 1,
        "cfn.SignalResource": 1,
        "sns.Publish": 1,
    }


def test_missing_gated_group_waits_while_cluster_creating(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world(monkeypatch)
    w.clock.advance(300)
    result = w.poll_once(w.poll_event(GPU))
    assert result["status"] == "WAITING"
    assert "gpu not listed (minimum 16, target 16); cluster train is Creating" in result["reason"]


def test_waiting_poll_exact_calls_and_output(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world(monkeypatch)
    w.clock.advance(1300)
    result = w.poll_once(w.poll_event(GPU))
    assert result == {"status": "WAITING", "reason": result["reason"]}
    assert result["reason"].startswith(
        "waiting for minimum capacity: gpu 8/16 (target 16, Creating); cluster train is InService"
    )
    # One DescribeStackResource: the wait condition, read before the cluster (one opening).
    assert calls(w) == {"DescribeCluster": 1, "cfn.DescribeStackResource": 1}
    lines = w.invocations[-1].stdout.splitlines()
    assert len(lines) == 2
    metric = json.loads(lines[0])
    assert metric["_aws"]["CloudWatchMetrics"] == [
        {
            "Namespace": gate_defaults.metrics_namespace(),
            "Dimensions": [["ClusterName", "InstanceGroup"]],
            "Metrics": [
                {"Name": "CurrentCount", "Unit": "Count"},
                {"Name": "MinimumCount", "Unit": "Count"},
                {"Name": "TargetCount", "Unit": "Count"},
            ],
        }
    ]
    assert metric["_aws"]["Timestamp"] == int(w.clock.time() * 1000)
    assert (
        metric["ClusterName"],
        metric["InstanceGroup"],
        metric["CurrentCount"],
        metric["MinimumCount"],
        metric["TargetCount"],
    ) == ("train", "gpu", 8, 16, 16)
    assert lines[1] == "hyperpod-min-count-gate WAITING cluster=train gpu=8/16/16"
    assert w.signals() == [] and w.sns.messages == []


def test_ready_signals_success_and_notifies(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world(monkeypatch)
    w.clock.advance(2 * HOUR)
    result = w.poll_once(w.poll_event(GPU))
    assert result["status"] == "READY"
    assert calls(w) == {
        "DescribeCluster": 1,
        "ListClusterNodes": 1,  # gpu's 16 nodes on one page (cpu has no minimum: not listed)
        "cfn.DescribeStackResource": 1,  # the wait condition's state, before deciding
        "cfn.SignalResource": 1,
        "sns.Publish": 1,
    }
    ((_, params),) = [a for a in w.sim.fake.attempts if a[0] == "ListClusterNodes"]
    assert params == {
        "ClusterName": "train",
        "InstanceGroupNameContains": "gpu",
        "MaxResults": poll.NODE_PAGE_SIZE,
    }
    (signal,) = w.signals()
    ((_, params),) = [a for a in w.cfn.fake.attempts if a[0] == "SignalResource"]
    assert params == {  # as botocore serialized it (the query protocol's form fields)
        "StackName": w.cfn.stack_id,
        "LogicalResourceId": w.condition_id(GPU),
        "UniqueId": "hyperpod-min-count-gate",
        "Status": "SUCCESS",
    }
    assert (signal.status, signal.role) == ("SUCCESS", "check")
    assert w.cfn.condition(w.condition_id(GPU)).status == "CREATE_COMPLETE"
    assert result["reason"] == (
        "all gated groups reached their minimum: gpu 16/16 (target 16, InService); "
        "cluster train is InService"
    )
    assert w.http.puts == []  # no presigned URL: nothing is PUT
    (message,) = w.sns.messages
    body = json.loads(message.pop("Message"))
    attributes = message.pop("MessageAttributes")
    assert message == {"TopicArn": TOPIC_ARN, "Subject": "HyperPod MinCount gate READY: train"}
    # The body is for machines (schema pinned in test_gate_notify.py).
    assert body["status"] == body["decision"] == "READY"
    assert body["reason"] == result["reason"]
    assert attributes["decision"] == {"DataType": "String", "StringValue": "READY"}
    w.assert_no_secret_leak()


def test_failed_enriches_with_events_and_signals_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world(monkeypatch, capacity=constant(10))
    w.clock.advance(3 * HOUR + 700)
    result = w.poll_once(w.poll_event(GPU))
    assert result["status"] == "FAILED"
    assert "rolled back instance group(s) gpu" in result["reason"]
    assert "HyperPod reports target 0 and minimum 0" in result["reason"]
    assert (
        "Latest errors (newest first): [gpu] Failed to launch 6 ml.p5.48xlarge" in result["reason"]
    )
    assert calls(w) == {
        "DescribeCluster": 1,
        "ListClusterEvents": 1,
        "cfn.DescribeStackResource": 1,
        "cfn.SignalResource": 1,
        "sns.Publish": 1,
    }
    ((_, params),) = [a for a in w.sim.fake.attempts if a[0] == "ListClusterEvents"]
    assert params["SortOrder"] == "Descending" and params["MaxResults"] <= 100
    (signal,) = w.signals()
    assert signal.status == "FAILURE" and signal.reason == result["reason"]
    # SignalResource has no reason: CloudFormation's event names the UniqueId, which starts it.
    assert signal.unique_id == "gate-failed-HyperPod-rolled-back-instance-group-s-gpu-InService"
    assert w.cfn.condition(w.condition_id(GPU)).reason == (
        "Received FAILURE signal with UniqueId " + signal.unique_id
    )


def test_a_long_reason_is_whole_in_the_result_and_message(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reason is the loop's (state, cause, message: up to 4000 characters), no longer cut
    to a signal's 1000; the UniqueId stays within its 64 characters."""
    w = world(monkeypatch, capacity=constant(10))
    w.clock.advance(3 * HOUR + 700)
    requirements = [Requirement("gpu", 16, 16)] + [
        Requirement(f"missing-group-with-a-rather-long-name-{i:02d}", 1, 1) for i in range(30)
    ]
    result = w.poll_once(w.poll_event(requirements))
    assert 1000 < len(result["reason"]) <= poll.RETURN_REASON_LIMIT
    (message,) = w.sns.messages
    assert json.loads(message["Message"])["reason"] == result["reason"]
    (signal,) = w.signals(requirements)
    assert len(signal.unique_id) <= 64 and set(signal.unique_id) <= set(
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-"
    )


def test_events_unavailable_still_fails_with_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world(monkeypatch, capacity=constant(10))
    w.sim.inject("access_denied", operation="ListClusterEvents")
    w.clock.advance(3 * HOUR + 700)
    result = w.poll_once(w.poll_event(GPU))
    assert result["status"] == "FAILED"
    assert "rolled back" in result["reason"]
    assert "grant sagemaker:ListClusterEvents" in result["reason"]
    assert len(w.signals()) == 1


def test_cluster_not_found(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world(monkeypatch)
    event = w.poll_event(GPU)
    event["clusterName"] = "other"
    result = w.poll_once(event)
    assert result["status"] == "FAILED"
    assert "cluster other not found" in result["reason"]
    assert "gpu (minimum 16, target 16)" in result["reason"]
    assert w.signals()[0].status == "FAILURE"
    assert w.sim.calls == {"DescribeCluster": 1}


def test_access_denied_names_the_permission(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world(monkeypatch)
    w.sim.inject("access_denied")
    result = w.poll_once(w.poll_event(GPU))
    assert result["status"] == "FAILED"
    assert "may not call sagemaker:DescribeCluster" in result["reason"]
    assert "AccessDeniedException" in result["reason"]
    assert w.invocations[-1].stdout.strip().endswith("error=AccessDeniedException")


def test_transient_errors_wait_then_fail_after_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world(monkeypatch)
    w.sim.inject("5xx")
    event = w.poll_event(GPU, deadline_in=600)
    began = w.clock.time()
    first = w.poll_once(event)
    assert first["status"] == "WAITING"
    assert "DescribeCluster failed transiently after retries (InternalFailure)" in first["reason"]
    # Retried (aws.call) while the check's time keeps the signal's, botocore's 3 attempts each.
    assert w.sim.calls["DescribeCluster"] > aws.MAX_ATTEMPTS
    assert list(w.sim.calls) == ["DescribeCluster"]
    spent = w.clock.time() - began
    assert spent + poll.SIGNAL_WORST_CASE + poll.SAFETY_SECONDS <= w.gate().check_timeout
    assert w.signals() == []
    w.clock.advance(600)
    second = w.poll_once(event)
    assert second["status"] == "FAILED" and "deadline reached" in second["reason"]
    assert w.signals()[0].status == "FAILURE"


def test_other_api_errors_fail_with_code(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world(monkeypatch)
    event = w.poll_event(GPU)
    w.sim.faults.append(
        Fault(
            "DescribeCluster",
            "ValidationException",
            400,
            "1 validation error detected: Value at 'clusterName' failed",
        )
    )
    result = w.poll_once(event)
    assert result["status"] == "FAILED"
    assert "DescribeCluster on " in result["reason"] and "ValidationException" in result["reason"]


def test_wait_condition_gone_is_abandoned(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world(monkeypatch)
    w.clock.advance(2 * HOUR)
    event = w.poll_event(GPU)
    w.cfn.remove_resource(w.condition_id())
    result = w.poll_once(event)
    assert result["status"] == "ABANDONED"
    assert "no longer waits" in result["reason"]
    assert w.signals() == [] and w.sns.messages == []
    assert [code for code, _ in w.cfn.refusals] == ["ValidationError"]


def test_stack_gone_is_abandoned(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world(monkeypatch)
    w.clock.advance(2 * HOUR)
    event = w.poll_event(GPU)
    w.cfn.delete_stack()
    assert w.poll_once(event)["status"] == "ABANDONED"


def test_wait_condition_unreadable_transiently_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world(monkeypatch)
    w.clock.advance(2 * HOUR)
    event = w.poll_event(GPU)
    original = w.cfn.fake.handler

    def throttled(operation: str, params: dict[str, Any]) -> dict[str, Any]:
        raise ApiError("Throttling", "Rate exceeded")

    monkeypatch.setattr(w.cfn.fake, "handler", throttled)
    result = w.poll_once(event)
    assert result["status"] == "WAITING"
    assert "reading the wait condition failed transiently" in result["reason"]
    assert w.cfn.fake.count("DescribeStackResource") > aws.MAX_ATTEMPTS  # retried (aws.call)
    monkeypatch.setattr(w.cfn.fake, "handler", original)
    assert w.poll_once(event)["status"] == "READY"
    assert len(w.signals()) == 1


def test_cloudformation_denied_hands_the_decision_to_the_arm_function(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    w = world(monkeypatch)
    w.clock.advance(2 * HOUR)
    event = w.poll_event(GPU)

    def denied(operation: str, params: dict[str, Any]) -> dict[str, Any]:
        raise ApiError("AccessDenied", f"not authorized to perform: cloudformation:{operation}")

    monkeypatch.setattr(w.cfn.fake, "handler", denied)
    result = w.poll_once(event)
    # Past the settle window a denial is not propagation: the arm function signals instead.
    assert result["status"] == "UNSIGNALLED" and result["decision"] == "READY"
    assert "cloudformation:SignalResource on wait condition" in result["reason"]
    assert "was refused (AccessDenied: not authorized" in result["reason"]
    assert w.sns.messages == [] and w.signals() == []
    # Retried within the check, a second apart, then left to the other role.
    assert w.cfn.fake.count("SignalResource") == cfnsignal.REFUSAL_ATTEMPTS


def test_signal_delivery_retried_then_next_poll(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world(monkeypatch)
    w.clock.advance(2 * HOUR)
    event = w.poll_event(GPU)
    # More transient faults than the check has time to retry (aws.call: backoff with jitter).
    w.cfn.signal_faults = [ApiError("Throttling", "Rate exceeded")] + ["hang"] * 20
    result = w.poll_once(event)
    assert result["status"] == "WAITING"
    assert "signal was not delivered (ReadTimeoutError); signalling again" in result["reason"]
    assert w.cfn.fake.count("SignalResource") >= aws.MAX_ATTEMPTS and w.signals() == []
    assert w.sns.messages == []
    w.cfn.signal_faults.clear()
    assert w.poll_once(event)["status"] == "READY"
    assert len(w.signals()) == 1 and len(w.sns.messages) == 1


def test_signal_retry_recovers_within_one_invocation(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world(monkeypatch)
    w.clock.advance(2 * HOUR)
    w.cfn.signal_faults = [ApiError("InternalFailure", "", 500)]
    assert w.poll_once(w.poll_event(GPU))["status"] == "READY"
    assert w.cfn.fake.count("SignalResource") == 2 and len(w.signals()) == 1


def test_no_topic_no_publish_and_sns_failure_is_harmless(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world(monkeypatch, topic=False)
    w.clock.advance(2 * HOUR)
    assert w.poll_once(w.poll_event(GPU))["status"] == "READY"
    assert w.sns.fake.attempts == []
    w2 = world(monkeypatch)
    w2.clock.advance(2 * HOUR)
    event = w2.poll_event(GPU)
    event["topicArn"] = TOPIC_ARN + "-missing"

    def missing(operation: str, params: dict[str, Any]) -> dict[str, Any]:
        raise ApiError("NotFound", "Topic does not exist", 404)

    monkeypatch.setattr(w2.sns.fake, "handler", missing)
    assert w2.poll_once(event)["status"] == "READY"
    assert "sns publish failed: NotFound" in w2.invocations[-1].stdout


def test_internal_error_hands_the_check_to_the_arm_function(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A bug in the check is a fault of the function, not a verdict: the check function does
    nothing (the loop hands the next check to the arm function); the arm function, with the
    same bug, fails the wait with the reason rather than leave it to time out."""
    w = world(monkeypatch)
    w.clock.advance(600)
    event = w.poll_event(GPU)
    url = w.cfn.response_url("some-request", "ClusterMinCountGateArm")

    def broken(*_: Any, **__: Any) -> Any:
        raise RuntimeError(f"boom while talking to {url}")

    monkeypatch.setattr(poll, "evaluate_gate", broken)
    first = w.poll_once(event)
    assert first["status"] == "IGNORED" and w.signals() == []
    result = w.poll_once(event, by_arm=True)
    assert result["status"] == "FAILED"
    assert result["reason"] == "internal error: RuntimeError: boom while talking to <url>"
    assert w.signals()[0].reason == result["reason"]
    w.assert_no_secret_leak()


def test_an_invocation_naming_no_execution_does_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The handlers read nothing from their payload but an execution's id: a payload with
    requirements (or none at all) is ignored, without a call or a signal."""
    w = world(monkeypatch)
    event = w.poll_event(GPU)
    assert poll.handler({}, None)["status"] == "IGNORED"
    assert poll.handler(event, None)["status"] == "IGNORED"
    assert poll.fallback_handler(event, None)["status"] == "IGNORED"
    assert w.signals() == [] and w.sim.calls == {}


def test_cluster_arn_and_previous_check_are_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world(monkeypatch)
    w.clock.advance(2 * HOUR)
    event = w.poll_event(GPU)
    event["clusterName"] = w.sim.arn
    event["check"] = {"status": "WAITING", "reason": "previous"}
    del event["metricsNamespace"]
    assert w.poll_once(event)["status"] == "READY"
    metric = json.loads(w.invocations[-1].stdout.splitlines()[0])
    assert metric["ClusterName"] == "train"  # from DescribeCluster, not the ARN
    assert metric["_aws"]["CloudWatchMetrics"][0]["Namespace"] == gate_defaults.metrics_namespace()


def test_clients_are_built_once_per_container(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world(monkeypatch)
    event = w.poll_event(GPU)
    for _ in range(3):
        w.clock.advance(60)
        w.poll_once(event)
    assert w.client_builds == {"sagemaker": 1, "cloudformation": 1}


def test_a_slow_api_never_outruns_the_function_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    """botocore's retries of hanging calls plus the signal PUT must not take longer than the
    function's timeout: Lambda would kill the check (Sandbox.Timedout) and fail a gate whose
    capacity was ready. Each check fits its budget and,
    when time runs short, returns WAITING without side effects."""
    w = world(monkeypatch)
    w.clock.advance(2 * HOUR)  # capacity is ready
    w.sim.hang(count=5)  # DescribeCluster hangs five times, then answers
    w.cfn.signal_faults = ["hang"] * 3  # so does the signal
    event = w.poll_event(GPU)
    timeout = w.gate().check_timeout
    results = []
    while not w.signals() and len(results) < 6:
        results.append(w.poll_once(event))
        assert w.invocations[-1].duration <= timeout - poll.SAFETY_SECONDS
    assert all(r["status"] in ("WAITING", "READY") for r in results)
    assert [s.status for s in w.signals()] == ["SUCCESS"]


def test_the_time_budget_table_states_the_synthesized_figures(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """docs/gate-runtime.md's time budget: the worst cases from the runtime's constants, the
    function and Task timeouts from the synthesized template and definition."""
    w = world(monkeypatch)
    table = (DOCS / "gate-runtime.md").read_text().split("### Time budget of one check")[1]
    task_timeouts = {
        state["TimeoutSeconds"]
        for state in w.gate().definition["States"].values()
        if state.get("Type") == "Task" and "TimeoutSeconds" in state
    }
    assert len(task_timeouts) == 1
    rows = {
        "a deciding check": f"| {poll.CHECK_WORST_CASE:g} s |",
        "reserve at the end": f"| {poll.SAFETY_SECONDS:g} s |",
        "**check function timeout**": f"| **{w.gate().check_timeout} s** |",
        "Task `TimeoutSeconds`": f"| {task_timeouts.pop()} s |",
        "the signal": f"| {cfnsignal.SIGNAL_WORST_CASE:g} s |",
    }
    lines = [line for line in table.split("\n### ")[0].splitlines() if line.startswith("| ")]
    for start, figure in rows.items():
        (line,) = [line for line in lines if line.startswith(f"| {start}")]
        assert figure in line, (start, line)


def test_the_worst_case_of_one_check_fits_the_function_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    w = world(monkeypatch)
    assert w.gate().check_timeout >= poll.CHECK_WORST_CASE + poll.SAFETY_SECONDS
    assert (
        aws.MAX_ATTEMPTS * (aws.CONNECT_TIMEOUT + aws.READ_TIMEOUT)
        + sum(2**k for k in range(aws.MAX_ATTEMPTS - 1))
        == aws.CALL_WORST_CASE
    )

"""The arm handler: CloudFormation custom resource protocol against real boto3 clients."""

from __future__ import annotations

import json
from typing import Any

import pytest

from hyperpod_constructs._runtime.hyperpod_gate import arm
from tests.support import gate_defaults
from tests.support.hyperpod_sim import GroupSpec
from tests.support.wire import ApiError
from tests.support.world import (
    STATE_MACHINE_ARN,
    TOPIC_ARN,
    Execution,
    GateWorld,
    Requirement,
)

GPU = [Requirement("gpu", 16, 16)]


def world(monkeypatch: pytest.MonkeyPatch, **options: Any) -> GateWorld:
    return GateWorld(
        monkeypatch,
        [GroupSpec("controller", 1, node_type="Controller"), GroupSpec("gpu", 16, 16)],
        **options,
    )


def sfn_calls(w: GateWorld, name: str) -> list[dict[str, Any]]:
    return w.calls(name)


def test_create_starts_the_loop_with_the_contract_input(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world(monkeypatch)
    w.clock.advance(123)
    response = w.arm_gate([Requirement("gpu", 16, 16), Requirement("trn", 2, 4)])
    (start,) = sfn_calls(w, "StartExecution")
    assert start["stateMachineArn"] == STATE_MACHINE_ARN
    assert start["name"] == "gate-5f0c4a8e-1b2d-4c3e-9f40-000000000001"
    assert json.loads(start["input"]) == {
        "clusterName": "train",
        "requirements": [
            {"groupName": "gpu", "minCount": 16, "targetCount": 16},
            {"groupName": "trn", "minCount": 2, "targetCount": 4},
        ],
        "armedAt": int(w.clock.time()),
        "deadline": int(w.clock.time()) + w.timeout_seconds,
        "pollIntervalSeconds": w.poll_interval,
        "stackId": w.cfn.stack_id,
        "waitConditionLogicalId": w.gate(
            [Requirement("gpu", 16, 16), Requirement("trn", 2, 4)]
        ).condition_id,
        "topicArn": TOPIC_ARN,
        "metricsNamespace": gate_defaults.metrics_namespace(),
        "operation": "create",
        "scope": [
            {"groupName": "gpu", "waited": True, "why": "creation"},
            {"groupName": "trn", "waited": True, "why": "creation"},
        ],
    }
    arn = (
        "arn:aws:states:us-east-1:123456789012:execution:GatePollLoopAbCdEf12:"
        "gate-5f0c4a8e-1b2d-4c3e-9f40-000000000001"
    )
    assert response["Status"] == "SUCCESS"
    assert response["PhysicalResourceId"] == arn
    assert response["Data"] == {"ExecutionArn": arn}
    assert (response["StackId"], response["LogicalResourceId"]) == (
        w.cfn.stack_id,
        w.gate().arm_logical_id,
    )
    assert Execution(w, arn).running
    (line,) = w.invocations[-1].stdout.splitlines()
    assert line.startswith("hyperpod-min-count-gate arm Create: started arn:aws:states")
    w.assert_no_secret_leak()


def test_no_topic_means_no_topic_arn(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world(monkeypatch, topic=False)
    w.arm_gate(GPU)
    assert "topicArn" not in json.loads(sfn_calls(w, "StartExecution")[0]["input"])


def test_start_failure_fails_with_placeholder_id_and_delete_is_a_noop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    w = world(monkeypatch)
    props = w.properties(GPU)
    w.sfn_fault = ApiError("StateMachineDoesNotExist", "State Machine Does Not Exist")
    response = w.arm_gate(GPU)
    w.sfn_fault = None
    assert response["Status"] == "FAILED"
    assert response["PhysicalResourceId"] == arm.NOT_STARTED
    assert (
        "could not start the MinCount gate poll loop: StateMachineDoesNotExist"
        in response["Reason"]
    )
    delete = w.custom_resource("Delete", props, physical_id=arm.NOT_STARTED)
    assert delete["Status"] == "SUCCESS" and delete["PhysicalResourceId"] == arm.NOT_STARTED
    assert sfn_calls(w, "StopExecution") == []


def test_start_access_denied_names_the_permission(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world(monkeypatch)

    w.sfn_fault = ApiError(
        "AccessDeniedException", "not authorized to perform: states:StartExecution"
    )
    response = w.arm_gate(GPU)
    assert response["Status"] == "FAILED"
    assert "missing permission states:StartExecution" in response["Reason"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"Requirements": [{"GroupName": "gpu", "MinCount": "17", "TargetCount": "16"}]},
            "MinCount 17 > TargetCount 16",
        ),
        (
            {"Requirements": [{"GroupName": "gpu", "MinCount": "many", "TargetCount": "16"}]},
            "MinCount must be an integer",
        ),
        ({"Requirements": []}, "Requirements must be a non-empty list"),
        ({"TimeoutSeconds": "0"}, "TimeoutSeconds must be >= 1"),
        ({"WaitConditionLogicalId": ""}, "WaitConditionLogicalId is required"),
    ],
)
def test_invalid_properties_fail(
    monkeypatch: pytest.MonkeyPatch, change: dict[str, Any], message: str
) -> None:
    w = world(monkeypatch)
    props = {**w.properties(GPU), **change}
    response = w.custom_resource("Create", props)
    assert response["Status"] == "FAILED" and message in response["Reason"]
    assert response["PhysicalResourceId"] == arm.NOT_STARTED
    assert sfn_calls(w, "StartExecution") == []


def test_update_starts_a_new_execution_and_failure_keeps_the_old_id(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    w = world(monkeypatch)
    first = w.arm_gate(GPU)
    second = w.arm_gate(
        [Requirement("gpu", 24, 24)],
        request_type="Update",
        physical_id=first["PhysicalResourceId"],
    )
    assert second["Status"] == "SUCCESS"
    assert second["PhysicalResourceId"] != first["PhysicalResourceId"]
    assert len(w.executions()) == 2
    w.sfn_fault = ApiError("StateMachineDoesNotExist", "State Machine Does Not Exist")
    failed = w.arm_gate(  # a wait that does not exist yet
        [Requirement("gpu", 8, 16)], "Update", physical_id=second["PhysicalResourceId"]
    )
    assert failed["Status"] == "FAILED"
    assert failed["PhysicalResourceId"] == second["PhysicalResourceId"]


def test_update_with_unchanged_gated_values_does_not_wait_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    w = world(monkeypatch)
    first = w.arm_gate(GPU)
    old = w.properties(GPU)
    w.timeout_seconds = 5 * 3600  # the next synthesized template has another timeout
    new = w.properties(GPU)
    assert new["TimeoutSeconds"] != old["TimeoutSeconds"]
    response = w.custom_resource(
        "Update", new, physical_id=first["PhysicalResourceId"], old_properties=old
    )
    assert response["Status"] == "SUCCESS"
    assert response["PhysicalResourceId"] == first["PhysicalResourceId"]
    assert len(sfn_calls(w, "StartExecution")) == 1


def test_update_with_a_new_handle_waits_again(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world(monkeypatch)
    first = w.arm_gate(GPU)
    second = w.arm_gate(
        [Requirement("gpu", 24, 24)],
        request_type="Update",
        physical_id=first["PhysicalResourceId"],
        old_properties=w.properties(GPU),
    )
    assert second["Status"] == "SUCCESS"
    assert second["PhysicalResourceId"] != first["PhysicalResourceId"]
    assert len(sfn_calls(w, "StartExecution")) == 2


def test_update_rollback_starts_no_orphan_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """UPDATE_ROLLBACK re-sends the old properties, exactly as the
    construct synthesized them; their wait condition already exists and holds its result, so
    the arm must not start a loop nothing waits for (it would signal an old, complete handle
    again and publish FAILED then READY). It answers with a new physical id so CloudFormation
    deletes (stops) the newer loop during cleanup."""
    w = world(monkeypatch)
    first = w.arm_gate(GPU)
    w.run(until_elapsed=2 * 3600)
    assert [s.status for s in w.signals(GPU)] == ["SUCCESS"]
    old = w.properties(GPU)
    raised = [Requirement("gpu", 20, 24)]  # a raised minimum: HyperPod gates it again
    new = w.properties(raised)
    forward = w.arm_gate(
        raised, "Update", physical_id=first["PhysicalResourceId"], old_properties=old
    )
    assert forward["Status"] == "SUCCESS"
    assert len(sfn_calls(w, "StartExecution")) == 2  # the new wait condition did not exist
    rollback = w.custom_resource(
        "Update", old, physical_id=forward["PhysicalResourceId"], old_properties=new
    )
    assert rollback["Status"] == "SUCCESS"
    assert rollback["PhysicalResourceId"] == arm.SETTLED
    assert len(sfn_calls(w, "StartExecution")) == 2
    cleanup = w.custom_resource("Delete", new, physical_id=forward["PhysicalResourceId"])
    assert cleanup["Status"] == "SUCCESS"
    assert sfn_calls(w, "StopExecution") == [
        {"executionArn": forward["PhysicalResourceId"], "cause": "gate deleted"}
    ]
    w.run(until_elapsed=6 * 3600)
    assert [s.status for s in w.signals(GPU)] == ["SUCCESS"]  # signalled once
    assert len(w.sns.messages) == 1


def test_delete_stops_the_execution(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world(monkeypatch)
    created = w.arm_gate(GPU)
    arn = created["PhysicalResourceId"]
    response = w.custom_resource("Delete", w.properties(GPU), physical_id=arn)
    assert response["Status"] == "SUCCESS" and response["PhysicalResourceId"] == arn
    assert sfn_calls(w, "StopExecution") == [{"executionArn": arn, "cause": "gate deleted"}]
    w.run(until_elapsed=600)
    assert Execution(w, arn).status == "ABORTED"


@pytest.mark.parametrize(
    "failure",
    [
        ApiError("ExecutionDoesNotExist", "Execution Does Not Exist"),
        ApiError("InternalFailure", "oops", 500),
        ApiError("AccessDeniedException", "not authorized"),
    ],
)
def test_delete_always_succeeds(monkeypatch: pytest.MonkeyPatch, failure: ApiError) -> None:
    w = world(monkeypatch)
    arn = w.arm_gate(GPU)["PhysicalResourceId"]
    w.sfn_fault = failure
    began = w.clock.time()
    response = w.custom_resource("Delete", w.properties(GPU), physical_id=arn)
    assert response["Status"] == "SUCCESS"
    assert w.clock.time() - began < 30  # retries of a 5xx are bounded
    assert f"stop skipped ({failure.code})" in w.invocations[-1].stdout


def test_delete_of_a_non_execution_id_does_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world(monkeypatch)
    response = w.custom_resource("Delete", {"ServiceToken": "x"}, physical_id="something-else")
    assert response["Status"] == "SUCCESS"
    assert w.sfn_calls == []


def test_retried_delivery_reuses_the_execution(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world(monkeypatch)
    gate = w.gate(GPU)
    w.cfn.add_wait_handle(gate.handle_id, gate.handle_metadata)
    w.cfn.resources[gate.arm_logical_id] = {
        "type": "Custom::HyperPodMinCountGate",
        "physical": "",
        "status": "CREATE_IN_PROGRESS",
    }
    props = w.properties(GPU)
    event = {
        "RequestType": "Create",
        "ServiceToken": "x",
        "StackId": w.cfn.stack_id,
        "RequestId": "same-request",
        "LogicalResourceId": gate.arm_logical_id,
        "ResponseURL": w.cfn.response_url("same-request", gate.arm_logical_id),
        "ResourceType": "Custom::HyperPodMinCountGate",
        "ResourceProperties": props,
    }
    w._run_lambda("arm", arm.handler, event, 60)
    w.clock.advance(30)  # a later delivery computes another deadline: different input
    w._run_lambda("arm", arm.handler, event, 60)
    first, second = (p.json() for p in w.cfn.responses["same-request"])
    assert first["Status"] == second["Status"] == "SUCCESS"
    assert first["PhysicalResourceId"] == second["PhysicalResourceId"]
    assert len(w.executions()) == 1


def test_response_put_is_retried_and_never_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world(monkeypatch)
    w.http.failures = [503, 502]
    assert w.arm_gate(GPU)["Status"] == "SUCCESS"
    assert len(w.http.puts) == 3
    w.http.failures = [503, 503, 503]
    props = w.properties(GPU)
    w._run_lambda(
        "arm",
        arm.handler,
        {
            "RequestType": "Delete",
            "StackId": w.cfn.stack_id,
            "RequestId": "r2",
            "LogicalResourceId": "Arm",
            "ResponseURL": w.cfn.response_url("r2", "Arm"),
            "PhysicalResourceId": "x",
            "ResourceProperties": props,
        },
        60,
    )
    assert "response not delivered: PUT failed after retries: HTTP 503" in w.invocations[-1].stdout
    w.assert_no_secret_leak()


def test_unknown_request_type_and_internal_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    w = world(monkeypatch)
    odd = w.custom_resource("Replace", w.properties(GPU))
    assert odd["Status"] == "FAILED" and "unknown RequestType" in odd["Reason"]

    def broken(_: Any) -> Any:
        raise RuntimeError("kaboom")

    monkeypatch.setattr(arm, "parse_properties", broken)
    create = w.custom_resource("Create", w.properties(GPU))
    assert create["Status"] == "FAILED"
    assert create["Reason"] == "internal error: RuntimeError: kaboom"
    monkeypatch.setattr(arm, "_stop", broken)
    delete = w.custom_resource("Delete", {}, physical_id="arn:whatever")
    assert delete["Status"] == "SUCCESS"


def test_pure_helpers() -> None:
    assert arm.execution_name("a/b c" * 30).startswith("gate-a-b-c")
    assert len(arm.execution_name("x" * 200)) == 80
    assert arm.is_execution_arn("arn:aws:states:us-east-1:123456789012:execution:Machine:gate-1")
    assert not arm.is_execution_arn(arm.NOT_STARTED)
    assert not arm.is_execution_arn("arn:aws:states:us-east-1:123456789012:stateMachine:Machine")
    assert (
        arm.execution_arn_for("arn:aws:states:eu-west-1:1:stateMachine:M", "n")
        == "arn:aws:states:eu-west-1:1:execution:M:n"
    )

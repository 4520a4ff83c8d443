"""Transient AWS faults at the gate's calls: retried while the invocation's time allows, never
a verdict (issue 36, item 1). Faults are injected by the world's ``before-call`` hook on every
client the handlers build (:class:`tests.support.world.ApiFault`)."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import botocore.retries.standard  # type: ignore[import-untyped, unused-ignore]
import pytest

from hyperpod_constructs._runtime.hyperpod_gate import arm, aws, faults
from tests.support.hyperpod_sim import GroupSpec, steps
from tests.support.world import (
    API_FAULT_KINDS,
    ApiFault,
    GateWorld,
    Requirement,
    handler_operations,
)

GPU = [Requirement("gpu", 16, 16)]
RUNTIME = Path(arm.__file__).resolve().parent


def world(monkeypatch: pytest.MonkeyPatch, **options: Any) -> GateWorld:
    return GateWorld(
        monkeypatch,
        [GroupSpec("controller", 1, node_type="Controller"), GroupSpec("gpu", 16, 16)],
        **options,
    )


def test_every_code_botocore_retries_is_transient() -> None:
    """The fault model knows every code botocore's standard mode retries (derived from
    botocore, not listed here)."""
    retried = (
        botocore.retries.standard.TransientRetryableChecker._TRANSIENT_ERROR_CODES
        + botocore.retries.standard.ThrottledRetryableChecker._THROTTLED_ERROR_CODES
    )
    assert set(retried) <= faults.THROTTLING_CODES
    for status in botocore.retries.standard.TransientRetryableChecker._TRANSIENT_STATUS_CODES:
        assert faults.is_transient_api_fault(faults.api_fault("Anything", status))


def _client_calls(tree: ast.AST) -> list[ast.Call]:
    """Calls of a method on a client: ``<x>.<snake_case_operation>(...)`` where ``<x>`` is
    ``aws.client(...)`` or a name bound to it."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and _is_client(node.value):
            bound.update(t.id for t in node.targets if isinstance(t, ast.Name))
    calls = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            target = node.func.value
            if _is_client(target) or (isinstance(target, ast.Name) and target.id in bound):
                calls.append(node)
    return calls


def _is_client(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "client"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "aws"
    )


def test_every_aws_call_of_the_handlers_goes_through_the_retrying_call() -> None:
    """No handler calls a client's operation directly: each goes through ``aws.call`` (one
    fault-classified way to call AWS), found by scanning the code, so a call added later is
    covered or this test names it."""
    direct = []
    for path in sorted(RUNTIME.glob("*.py")):
        for call in _client_calls(ast.parse(path.read_text())):
            assert isinstance(call.func, ast.Attribute)
            direct.append(f"{path.name}:{call.lineno} {call.func.attr}")
    assert direct == []


def test_throttled_stack_reads_do_not_fail_a_create(monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue's repro: a few seconds of CloudFormation throttling while the arm checks the
    request against the stack. On main the arm answered FAILED (and the rollback deleted the
    cluster)."""
    w = world(monkeypatch, api_faults=[ApiFault("throttle", 0, 5, service="cloudformation")])
    response = w.arm_gate(GPU)
    assert response["Status"] == "SUCCESS", response["Reason"]
    assert any(op == "DescribeStackResource" for _, op, _ in w.faulted)
    w.run(until_elapsed=4 * 3600)
    assert [s.status for s in w.signals(GPU)] == ["SUCCESS"]


@pytest.mark.parametrize("kind", sorted(API_FAULT_KINDS))
def test_a_longer_fault_at_every_arm_call_is_never_a_failed_answer(
    monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """Every call fails transiently for longer than one invocation: the request stays
    unanswered (Lambda runs it again, one minute later) and the answer, when it comes, is
    SUCCESS; the loop it starts opens the gate."""
    w = world(monkeypatch, api_faults=[ApiFault(kind, 0, 200)])
    response = w.arm_gate(GPU)
    assert response["Status"] == "SUCCESS", response["Reason"]
    raised = [i for i in w.invocations if i.function == "arm" and i.result == {"error": "raised"}]
    assert len(raised) == 1
    assert len(w.executions()) == 1
    w.run(until_elapsed=4 * 3600)
    assert [s.status for s in w.signals(GPU)] == ["SUCCESS"]


def test_throttling_during_an_update_rollback_settles(monkeypatch: pytest.MonkeyPatch) -> None:
    """UPDATE_ROLLBACK with CloudFormation throttled: on main, six throttled reads made
    ``wait_already_exists`` say "no" and the arm answer FAILED (UPDATE_ROLLBACK_FAILED)."""
    w = world(monkeypatch)
    first = w.arm_gate(GPU)
    w.run(until_elapsed=2 * 3600)
    old, raised = w.properties(GPU), [Requirement("gpu", 20, 24)]
    new = w.properties(raised)
    forward = w.arm_gate(
        raised, "Update", physical_id=first["PhysicalResourceId"], old_properties=old
    )
    assert forward["Status"] == "SUCCESS"
    began = w.clock.elapsed
    w.api_faults.append(ApiFault("throttle", began, began + 20, service="cloudformation"))
    rollback = w.custom_resource(
        "Update", old, physical_id=forward["PhysicalResourceId"], old_properties=new
    )
    assert rollback["Status"] == "SUCCESS", rollback["Reason"]
    assert rollback["PhysicalResourceId"] == arm.SETTLED


def test_a_permanent_answer_still_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    """A verdict needs a permanent answer that says so: a denied read refuses at once."""
    w = world(monkeypatch)
    gate = w.gate(GPU)
    w.cfn.add_wait_handle(gate.handle_id, gate.handle_metadata)

    def denied(operation: str, params: dict[str, Any]) -> dict[str, Any]:
        from tests.support.wire import ApiError

        raise ApiError("AccessDenied", "not authorized")

    monkeypatch.setattr(w.cfn.fake, "handler", denied)
    began = w.clock.elapsed
    response = w.custom_resource("Create", gate.properties)
    assert response["Status"] == "FAILED" and "(AccessDenied)" in response["Reason"]
    assert w.clock.elapsed - began < 10


def test_the_retry_pause_is_capped_full_jitter() -> None:
    assert aws.retry_pause(1, 0.5) == 0.5 * aws.RETRY_BASE_SECONDS
    assert aws.retry_pause(30, 0.999) < aws.RETRY_CAP_SECONDS
    assert aws.retry_pause(3, 0.0) == 0.0


MIN = 60
HOUR = 3600


@pytest.mark.deep(sample=3)
@pytest.mark.parametrize("operation", ["*", *handler_operations()])
def test_a_transient_fault_at_any_operation_is_never_a_verdict(
    monkeypatch: pytest.MonkeyPatch, operation: str
) -> None:
    """Each operation the handlers call (derived from their code, so one added later is
    faulted too), and all of them at once, fail transiently for 40 minutes from just after
    arming while capacity arrives at 20 minutes: the gate opens, once, after the fault; no
    FAILED answer, no FAILURE signal."""
    w = GateWorld(
        monkeypatch,
        [
            GroupSpec("controller", 1, node_type="Controller"),
            GroupSpec("gpu", 16, 16, capacity=steps((0, 0), (20 * MIN, 16))),
        ],
        event_bridge=True,
        api_faults=[ApiFault("throttle", 2 * MIN, 40 * MIN, operation=operation)],
    )
    w.clock.advance(MIN)
    response = w.arm_gate()
    assert response["Status"] == "SUCCESS", response["Reason"]
    w.run(until_elapsed=5 * HOUR)
    assert [s.status for s in w.signals()] == ["SUCCESS"]
    assert w.signals()[0].time >= w.clock.start + 40 * MIN or operation not in (
        "*",
        "DescribeCluster",
        "SignalResource",
    )
    deleted = w.custom_resource(
        "Delete", w.properties(), physical_id=response["PhysicalResourceId"]
    )
    assert deleted["Status"] == "SUCCESS"
    answers = [put.json()["Status"] for puts in w.cfn.responses.values() for put in puts]
    assert "FAILED" not in answers
    called = {name for _, name, _ in w.operations}
    assert called <= set(handler_operations()), "an operation the code scan did not find"
    window = [(n, t) for _, n, t in w.operations if 2 * MIN <= t < 40 * MIN]
    assert window, "nothing was called during the fault"
    assert {(n, t) for _, n, t in w.faulted} == {(n, t) for n, t in window if operation in ("*", n)}
    w.assert_no_secret_leak()

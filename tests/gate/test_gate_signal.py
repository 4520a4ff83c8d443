"""The wait condition's signal (``cfnsignal.py``): SignalResource, and what a refusal means."""

from __future__ import annotations

import string
from typing import Any

import pytest
from botocore.validate import ParamValidator  # type: ignore[import-untyped, unused-ignore]
from hypothesis import given, settings
from hypothesis import strategies as st

from hyperpod_constructs._runtime.hyperpod_gate import cfnsignal
from tests.support.groups import controller_spec
from tests.support.hyperpod_sim import GroupSpec, steps
from tests.support.wire import ApiError, reference_model
from tests.support.world import GateWorld, Requirement

HOUR = 3600
GPU = [Requirement("gpu", 16, 16)]
SAFE = set(string.ascii_letters + string.digits + "-")


def world(monkeypatch: pytest.MonkeyPatch) -> GateWorld:
    groups = [
        controller_spec(),
        GroupSpec("gpu", 16, 16, capacity=steps((0, 8), (HOUR, 16))),
    ]
    return GateWorld(monkeypatch, groups)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(reason=st.text(max_size=5000))
def test_every_unique_id_is_one_botocore_accepts(reason: str) -> None:
    """Whatever the reason, the UniqueId is 1..64 letters, digits and hyphens, which the real
    SignalResource input shape accepts."""
    shape = reference_model("cloudformation").operation_model("SignalResource").input_shape
    for success in (True, False):
        unique_id = cfnsignal.unique_id(success, reason)
        assert 1 <= len(unique_id) <= cfnsignal.UNIQUE_ID_LIMIT and set(unique_id) <= SAFE
        params = {
            "StackName": "arn:aws:cloudformation:us-east-1:123456789012:stack/S/1",
            "LogicalResourceId": "W",
            "UniqueId": unique_id,
            "Status": "SUCCESS" if success else "FAILURE",
        }
        assert not ParamValidator().validate(params, shape).has_errors()
    assert cfnsignal.unique_id(True, reason) == cfnsignal.UNIQUE_ID


@pytest.mark.parametrize(
    ("state", "success", "propagating", "kind"),
    [
        ("COMPLETE", True, False, "delivered"),  # ours (an answer lost) or the fast path's
        ("COMPLETE", False, False, "opened"),  # a FAILURE after the gate opened: too late
        ("FAILED", False, False, "delivered"),
        ("FAILED", True, False, "ended"),
        ("DELETED", True, True, "ended"),
        ("MISSING", True, False, "ended"),  # gone: deleted or superseded
        ("MISSING", True, True, "waiting"),  # not created yet (it follows the arm resource)
        ("UNKNOWN", True, False, "waiting"),
        ("WAITING", True, True, "waiting"),  # IAM propagation
        ("WAITING", True, False, "refused"),
        ("UNREADABLE", False, False, "refused"),
    ],
)
def test_what_a_refusal_means_follows_the_wait_condition(
    state: cfnsignal.ConditionState, success: bool, propagating: bool, kind: str
) -> None:
    assert cfnsignal._after_refusal(state, success, propagating) == kind


def test_a_passing_refusal_is_retried_within_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """A ValidationError while the wait condition still waits is retried a second later, in
    the same check: the second attempt delivers."""
    w = world(monkeypatch)
    w.clock.advance(2 * HOUR)
    w.cfn.signal_faults = [ApiError("ValidationError", "Signal could not be processed")]
    result = w.poll_once(w.poll_event(GPU))
    assert result["status"] == "READY"
    assert w.cfn.fake.count("SignalResource") == 2
    assert [s.status for s in w.signals()] == ["SUCCESS"]


def test_a_lost_answer_is_not_a_refusal(monkeypatch: pytest.MonkeyPatch) -> None:
    """The signal was taken but its answer lost (a 5xx after CloudFormation applied it): the
    retry is refused (the wait condition no longer waits), and the gate counts it as
    delivered, notifying READY once."""
    w = world(monkeypatch)
    w.clock.advance(2 * HOUR)
    event = w.poll_event(GPU)
    original = w.cfn.fake.handler
    answered: list[str] = []

    def lose_the_first_answer(operation: str, params: dict[str, Any]) -> dict[str, Any]:
        response = original(operation, params)
        if operation == "SignalResource" and not answered:
            answered.append(operation)
            raise ApiError("InternalFailure", "", 500)
        return response

    monkeypatch.setattr(w.cfn.fake, "handler", lose_the_first_answer)
    result = w.poll_once(event)
    assert result["status"] == "READY"
    assert [code for code, _ in w.cfn.refusals] == ["ValidationError"]
    assert len(w.signals()) == 1 and len(w.sns.messages) == 1


def test_a_check_after_the_stack_is_deleted_stops_the_loop_during_a_sagemaker_outage(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A Delete that could not stop the loop (StopExecution throttled past its retries) leaves
    the loop to stop by itself: once the stack itself is gone ("Stack with id ... does not
    exist"), the next check ends it (ABANDONED) before it reads SageMaker, so an outage there
    cannot keep it polling. A wait condition not created yet still waits."""
    w = world(monkeypatch)
    event = w.poll_event(GPU)
    w.sim.inject("unavailable", start=w.clock.time(), end=w.clock.time() + 2 * HOUR)
    assert cfnsignal.condition_state(w.cfn.stack_id, "NotCreatedYet") == "MISSING"
    w.cfn.delete_stack()
    assert cfnsignal.condition_state(w.cfn.stack_id, "GateWait") == "DELETED"
    result = w.poll_once(event)
    assert result["status"] == "ABANDONED", result

"""The local ASL interpreter is honest: it rejects what it does not implement and gets the
implemented semantics (retry, timeouts, paths, transitions) right."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from hyperpod_constructs.gate.definition import build_definition
from tests.support.asl import AslUnsupported, Execution, TaskFailure
from tests.support.clock import Scheduler, VirtualClock

ARN = "arn:aws:lambda:us-east-1:123456789012:function:Check"
INPUT = {"pollIntervalSeconds": 60, "clusterName": "train"}


def run(
    task: Callable[[Any], Any],
    *,
    definition: dict[str, Any] | None = None,
    until: float = 10 * 3600,
) -> tuple[Execution, VirtualClock]:
    clock = VirtualClock()
    scheduler = Scheduler(clock)
    execution = Execution(
        "arn:exec",
        definition or build_definition(poll_function_arn=ARN, timeout_seconds=3600),
        INPUT,
        {ARN: task},
        scheduler,
    )
    execution.start()
    scheduler.run(until=clock.start + until, stop=lambda: not execution.running)
    return execution, clock


def statuses(*values: str) -> Callable[[Any], Any]:
    queue = list(values)

    def task(document: Any) -> Any:
        assert "clusterName" in document  # the original input is passed every iteration
        return {"status": queue.pop(0), "reason": f"reason {len(queue)}"}

    return task


def test_waiting_then_ready_counts_transitions_and_waits() -> None:
    execution, clock = run(statuses("WAITING", "WAITING", "READY"))
    assert execution.status == "SUCCEEDED"
    assert execution.task_invocations == 3
    # 2 x (CheckCapacity, Decide, WaitForCapacity) + CheckCapacity, Decide, GateOpened
    assert execution.transitions == 9
    assert clock.elapsed == 120
    assert execution.output["check"] == {"status": "READY", "reason": "reason 0"}
    assert execution.output["clusterName"] == "train"


def test_failed_uses_cause_path() -> None:
    execution, _ = run(statuses("WAITING", "FAILED"))
    assert execution.status == "FAILED"
    assert execution.error == "MinCountGateFailed"
    assert execution.cause == "reason 0"


def test_unknown_status_goes_to_default_and_abandoned_succeeds() -> None:
    assert run(statuses("SOMETHING"))[0].status == "FAILED"
    assert run(statuses("ABANDONED"))[0].status == "SUCCEEDED"


def test_retry_on_lambda_service_errors_with_backoff() -> None:
    calls: list[float] = []
    clock_ref: list[VirtualClock] = []

    def task(_: Any) -> Any:
        calls.append(clock_ref[0].time() if clock_ref else 0.0)
        if len(calls) <= 2:
            raise TaskFailure("Lambda.ServiceException", "boom")
        return {"status": "READY", "reason": "ok"}

    clock = VirtualClock()
    clock_ref.append(clock)
    scheduler = Scheduler(clock)
    execution = Execution(
        "arn:e",
        build_definition(poll_function_arn=ARN, timeout_seconds=3600),
        INPUT,
        {ARN: task},
        scheduler,
    )
    execution.start()
    scheduler.run(stop=lambda: not execution.running)
    assert execution.status == "SUCCEEDED"
    assert [c - clock.start for c in calls] == [0, 5, 15]  # 5 s, then 5 * 2
    assert execution.transitions == 5  # 3 attempts of CheckCapacity + Decide + GateOpened


def test_retries_are_bounded_then_the_execution_fails() -> None:
    def task(_: Any) -> Any:
        raise TaskFailure("Lambda.TooManyRequestsException", "slow down")

    execution, _ = run(task)
    # 1 + MaxAttempts 5 for the check, then the same again for the failure report; both
    # are caught, and the execution ends in the unreported-failure state with the cause.
    assert execution.status == "FAILED"
    assert execution.error == "MinCountGateCheckFailed"
    assert execution.cause == "slow down"
    assert execution.task_invocations == 12


def test_unlisted_errors_are_not_retried() -> None:
    def task(_: Any) -> Any:
        raise KeyError("bug")

    seen: list[Any] = []

    def recording(document: Any) -> Any:
        seen.append(document.get("checkFailure"))
        raise KeyError("bug")

    execution, _ = run(recording)
    assert execution.status == "FAILED" and execution.error == "MinCountGateCheckFailed"
    assert execution.task_invocations == 2  # the check, then the failure report; no retries
    assert seen == [None, {"Error": "KeyError", "Cause": "'bug'"}]


def test_task_timeout_is_retried_as_states_timeout() -> None:
    clock_holder: list[VirtualClock] = []
    attempts: list[int] = []

    def task(_: Any) -> Any:
        attempts.append(1)
        if len(attempts) == 1:
            clock_holder[0].advance(121)  # longer than the task's TimeoutSeconds 120
        return {"status": "READY", "reason": "ok"}

    clock = VirtualClock()
    clock_holder.append(clock)
    scheduler = Scheduler(clock)
    execution = Execution(
        "arn:e",
        build_definition(poll_function_arn=ARN, timeout_seconds=3600),
        INPUT,
        {ARN: task},
        scheduler,
    )
    execution.start()
    scheduler.run(stop=lambda: not execution.running)
    assert execution.status == "SUCCEEDED" and len(attempts) == 2
    assert any(h.kind == "TaskFailed" and h.detail == "States.Timeout" for h in execution.history)


def test_execution_timeout_during_wait() -> None:
    execution, clock = run(
        lambda _: {"status": "WAITING", "reason": "w"},
        definition=build_definition(poll_function_arn=ARN, timeout_seconds=150),
    )
    assert execution.status == "TIMED_OUT"
    assert execution.stopped_at == clock.start + 150
    assert execution.task_invocations == 3  # at 0, 60, 120


def test_stop_aborts_and_discards_later_steps() -> None:
    clock = VirtualClock()
    scheduler = Scheduler(clock)
    count = [0]

    def task(_: Any) -> Any:
        count[0] += 1
        return {"status": "WAITING", "reason": "w"}

    execution = Execution(
        "arn:e",
        build_definition(poll_function_arn=ARN, timeout_seconds=3600),
        INPUT,
        {ARN: task},
        scheduler,
    )
    execution.start()
    scheduler.at(clock.start + 130, lambda: execution.stop("", "gate deleted"))
    scheduler.run(until=clock.start + 3600)
    assert execution.status == "ABORTED"
    assert count[0] == 3


def test_missing_variable_fails_at_runtime() -> None:
    execution, _ = run(lambda _: {"reason": "no status"})
    assert execution.status == "FAILED" and execution.error == "States.Runtime"


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (
            ("States", "CheckCapacity", "Catch"),
            [{"ErrorEquals": ["States.ALL"], "Next": "GateFailed", "OutputPath": "$"}],
        ),
        (("States", "CheckCapacity", "Parameters"), {"a.$": "$"}),
        (("States", "CheckCapacity", "InputPath"), "$.x"),
        (("States", "CheckCapacity", "Resource"), "arn:aws:states:::lambda:invoke"),
        (
            ("States", "CheckCapacity", "Resource"),
            "arn:aws:lambda:us-east-1:123456789012:function:Other",
        ),
        (("States", "WaitForCapacity", "Timestamp"), "2026-01-01T00:00:00Z"),
        (("States", "GateOpened", "OutputPath"), "$"),
        (
            ("States", "Decide", "Choices"),
            [{"Variable": "$.check.status", "StringMatches": "W*", "Next": "GateOpened"}],
        ),
        (("States", "Extra"), {"Type": "Pass", "End": True}),
        (("QueryLanguage",), "JSONata"),
    ],
)
def test_rejects_unsupported_fields(path: tuple[str, ...], value: Any) -> None:
    definition = copy.deepcopy(build_definition(poll_function_arn=ARN, timeout_seconds=600))
    target = definition
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(AslUnsupported):
        Execution("arn:e", definition, INPUT, {ARN: lambda _: None}, Scheduler(VirtualClock()))

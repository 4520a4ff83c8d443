"""The gate on AWS's bad days: faults injected at the Lambda-invoke and API level,
on moto's Step Functions engine running the synthesized definition, in virtual time.

Seven sections below, each with a test that fails on a loop without the fault model
(``hyperpod_gate/faults.py``); the property test at the end tries fault schedules."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hyperpod_constructs._runtime.hyperpod_gate import cfnsignal, faults, poll
from hyperpod_constructs.gate.definition import (
    EVENTS_PER_CHECK,
    EVENTS_PER_FAULTED_CHECK,
    HISTORY_QUOTA,
    history_events,
    max_timeout_for_history,
)
from hyperpod_constructs.gate.options import LOOP_BACKSTOP_MARGIN_SECONDS, MinCountGateOptions
from hyperpod_constructs.validation.gate_rules import gate_option_findings
from tests.support.aws_fakes import SIGNAL_TIMEOUT_REASON
from tests.support.depth import deep_only, examples
from tests.support.groups import controller_spec
from tests.support.hyperpod_sim import GroupSpec, constant, steps
from tests.support.moto_sfn import HISTORY_QUOTA_ERROR
from tests.support.world import Execution, GateWorld, InvokeFault

MIN, HOUR = 60, 3600
ARM_AT = MIN
DOCS = Path(__file__).resolve().parents[2] / "docs"
THROTTLED = "Lambda.TooManyRequestsException"


def groups(capacity: Any, *, gpu_min: int = 16, gpu_target: int = 16) -> list[GroupSpec]:
    return [
        controller_spec(),
        GroupSpec("gpu", gpu_target, gpu_min, capacity=capacity),
    ]


def start(w: GateWorld) -> Execution:
    w.clock.advance(ARM_AT)
    response = w.arm_gate()
    assert response["Status"] == "SUCCESS", response
    return w.execution(response)


def statuses(w: GateWorld) -> list[str]:
    return [s.status for s in w.signals()]


# -- 1. throttling --------------------------------------------------------------------------


def test_throttling_for_310_seconds_then_ready_succeeds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Both functions throttled for 310 s right after arming (the old Retry ran out, the Catch
    invoked the same throttled function and the arm function signalled FAILURE); the minimum
    arrives 35 minutes later: SUCCESS, and no FAILURE was ever signalled."""
    w = GateWorld(
        monkeypatch,
        groups(steps((0, 0), (36 * MIN, 16))),
        invoke_faults=[InvokeFault("*", ARM_AT, ARM_AT + 310, THROTTLED)],
    )
    execution = start(w)
    w.run(until_elapsed=5 * HOUR)
    assert execution.status == "SUCCEEDED"
    assert statuses(w) == ["SUCCESS"]
    throttled = [i for i in w.invocations if isinstance(i.result, dict) and "error" in i.result]
    assert throttled and all(ARM_AT <= i.time - w.clock.start < ARM_AT + 310 for i in throttled)


@pytest.mark.parametrize("error", [THROTTLED, "Lambda.ServiceException", "Sandbox.Timedout"])
def test_hours_of_invocation_faults_before_the_deadline_only_delay_the_verdict(
    monkeypatch: pytest.MonkeyPatch, error: str
) -> None:
    """Two hours of failed invocations of both functions, then HyperPod's rollback at 3 h:
    FAILURE with HyperPod's reason, not the fault's."""
    w = GateWorld(
        monkeypatch,
        groups(constant(10)),
        invoke_faults=[InvokeFault("*", ARM_AT, 2 * HOUR, error)],
    )
    execution = start(w)
    w.run(until_elapsed=5 * HOUR)
    assert execution.status == "FAILED" and execution.error == "MinCountGateFailed"
    (signal,) = w.signals()
    assert signal.status == "FAILURE"
    assert "HyperPod rolled back instance group(s) gpu" in signal.reason
    assert error not in signal.reason


def test_a_broken_check_function_is_replaced_by_the_arm_function(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The check function fails permanently (out of memory on every invocation): the report
    path does not depend on it; the arm function checks each iteration and opens the gate."""
    w = GateWorld(
        monkeypatch,
        groups(steps((0, 0), (40 * MIN, 16))),
        invoke_faults=[InvokeFault("check", 0, 10 * HOUR, "Lambda.Unknown")],
    )
    execution = start(w)
    w.run(until_elapsed=5 * HOUR)
    assert execution.status == "SUCCEEDED"
    (signal,) = w.signals()
    assert "checked by the arm function" in signal.reason


# -- 2. the history quota -------------------------------------------------------------------


def _events(w: GateWorld, execution: Execution) -> int:
    client, total, token = w.sfn_client, 0, None
    while True:
        page = client.get_execution_history(
            executionArn=execution.arn, maxResults=1000, **({"nextToken": token} if token else {})
        )
        total += len(page["events"])
        token = page.get("nextToken")
        if not token:
            return total


def _events_per_iteration(monkeypatch: pytest.MonkeyPatch, *, faulted: bool) -> float:
    """History events per iteration of the synthesized definition on moto, between 20 and 50
    minutes of a wait (the check throttled through its retries in that span when
    ``faulted``, so the arm function checks each time)."""
    faults_ = [InvokeFault("check", 20 * MIN, 50 * MIN, THROTTLED)] if faulted else []
    # 1 min, not the default: the iterations counted below fit the 2 hours at this interval.
    w = GateWorld(
        monkeypatch,
        groups(steps((0, 0), (2 * HOUR, 16))),
        poll_interval=MIN,
        invoke_faults=faults_,
    )
    execution = start(w)
    w.run(until_elapsed=20 * MIN - 1)
    before = _events(w, execution)
    w.run(until_elapsed=50 * MIN - 1)
    after = _events(w, execution)
    deciding = "arm-fallback" if faulted else "poll"
    iterations = [
        i
        for i in w.invocations
        if i.function == deciding
        and 20 * MIN - 1 < i.time - w.clock.start <= 50 * MIN - 1
        and "error" not in i.result
    ]
    assert len(iterations) >= 20
    w.close()
    return (after - before) / len(iterations)


def test_the_history_bound_uses_events_measured_on_moto(monkeypatch: pytest.MonkeyPatch) -> None:
    """The synth-time bound (HP-GATE-HISTORY) counts EVENTS_PER_CHECK per ordinary iteration and
    EVENTS_PER_FAULTED_CHECK per faulted one: what moto's engine writes for the synthesized
    definition (an iteration whose check was throttled through its retries, then checked by
    the arm function)."""
    with monkeypatch.context() as mp:
        assert _events_per_iteration(mp, faulted=False) == EVENTS_PER_CHECK
    with monkeypatch.context() as mp:
        assert _events_per_iteration(mp, faulted=True) == EVENTS_PER_FAULTED_CHECK


def test_a_configuration_whose_history_cannot_fit_is_a_synth_error() -> None:
    """12 h at a 10-second poll needs ~46,000 events: refused at synth, naming the field, the
    estimate and the fix (the old gate accepted it and died at ~7.7 h without a signal)."""
    from aws_cdk import Duration

    options = MinCountGateOptions(timeout=Duration.hours(11), poll_interval=Duration.seconds(10))
    (finding,) = gate_option_findings(options, parameter="readiness_gate")
    assert finding.rule == "HP-GATE-HISTORY"
    assert finding.field == "readiness_gate.poll_interval"
    assert f"at most {HISTORY_QUOTA}" in finding.allowed
    assert re.search(r"at least \d+ s", finding.fix)
    fitting = MinCountGateOptions(
        timeout=Duration.seconds(max_timeout_for_history(10)), poll_interval=Duration.seconds(10)
    )
    assert gate_option_findings(fitting) == []
    assert history_events(max_timeout_for_history(10), 10) <= HISTORY_QUOTA


def no_rollback(monkeypatch: pytest.MonkeyPatch) -> None:
    """A simulator that never rolls back (so only the deadline can end the wait)."""
    monkeypatch.setattr("tests.support.hyperpod_sim.ROLLBACK_WINDOW", 100 * HOUR)


@deep_only(
    "one long fixed wait (about 5 s of CPU); in make test the events per iteration it adds up "
    "are measured on moto (test_the_history_bound_uses_events_measured_on_moto) and the bound "
    "on them is checked at synth (test_a_configuration_whose_history_cannot_fit_is_a_synth_error)"
)
def test_polling_as_often_as_allowed_under_faults_stays_below_the_quota(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The longest allowed wait at a 10-second poll, with every third check throttled through
    its retries and no capacity ever: the harness enforces the 25,000-event quota (moto does
    not), and the execution still ends with the deadline's FAILURE, below the quota."""
    no_rollback(monkeypatch)
    timeout = max_timeout_for_history(10)
    throttles = [
        InvokeFault("check", t, t + 10, THROTTLED) for t in range(ARM_AT + 30, timeout, 30)
    ]
    w = GateWorld(
        monkeypatch,
        groups(constant(0)),
        timeout_seconds=timeout,
        poll_interval=10,
        invoke_faults=throttles,
    )
    execution = start(w)
    w.run(until_elapsed=timeout + 2 * HOUR)
    assert execution.status == "FAILED", (execution.error, w.engine.history_peak)
    assert execution.error == "MinCountGateFailed"
    assert w.engine.history_peak < HISTORY_QUOTA
    assert "deadline reached" in w.signals()[0].reason


def test_the_harness_enforces_the_history_quota(monkeypatch: pytest.MonkeyPatch) -> None:
    """Against the harness itself: a loop that never decides (its checks always WAITING and no
    deadline in reach) fails at the quota, as Step Functions would."""
    monkeypatch.setattr("tests.support.moto_sfn.HISTORY_QUOTA", 300)
    no_rollback(monkeypatch)
    w = GateWorld(monkeypatch, groups(constant(0)))
    execution = start(w)
    w.run(until_elapsed=3 * HOUR)
    assert execution.status == "FAILED" and execution.error == HISTORY_QUOTA_ERROR


# -- 3. a signal refused for good -----------------------------------------------------------


def test_a_refused_signal_ends_the_loop_with_a_visible_outcome(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """CloudFormation refuses SignalResource to both gate roles for good (a policy edited by
    hand, an SCP): the check function retries, the arm function (another role) retries, then
    the loop ends FAILED with MinCountGateSignalRefused within the same poll, naming the
    undelivered decision and the command that delivers it, and the topic is told. The old loop
    retried at every poll for 13 hours."""
    w = GateWorld(monkeypatch, groups(steps((0, 0), (30 * MIN, 16))))
    execution = start(w)
    w.cfn.denied_roles = {"check", "arm"}  # after the arm's response to CloudFormation
    w.run(until_elapsed=13 * HOUR)
    assert execution.status == "FAILED" and execution.error == "MinCountGateSignalRefused"
    assert "could not deliver its decision READY" in (execution.cause or "")
    refusals = [code for code, _ in w.cfn.refusals]
    assert refusals == ["AccessDenied"] * (2 * cfnsignal.REFUSAL_ATTEMPTS)
    (message,) = w.sns.messages
    assert message["Subject"].startswith("HyperPod MinCount gate REFUSED")
    command = (
        f"aws cloudformation signal-resource --stack-name {w.cfn.stack_id} "
        f"--logical-resource-id {w.condition_id()} --unique-id hyperpod-min-count-gate-manual "
        "--status SUCCESS"
    )
    assert "AccessDenied" in message["Message"] and command in message["Message"]
    assert faults.signal_fault(403) == "permanent" and faults.signal_fault(503) == "transient"


def test_a_ready_the_gate_decided_reaches_cloudformation_or_fails_loudly_within_minutes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A signal refused for good must not leave the wait condition to time out 12 hours later (on a
    create, the rollback would delete a cluster the gate saw READY). The wait condition is
    signalled with SignalResource: refused to the check function's role, the arm function's role
    delivers it within the same poll; refused to both, the loop fails loudly within minutes, and
    the decision can still be delivered (by the command its message names) while the wait
    condition waits: nothing times out."""
    for denied in ({"check"}, {"check", "arm"}):
        with pytest.MonkeyPatch.context() as mp:
            w = GateWorld(mp, groups(steps((0, 0), (30 * MIN, 16))))
            try:
                execution = start(w)
                w.cfn.denied_roles = set(denied)
                w.run(until_elapsed=13 * HOUR)
                ready_at = w.sim.min_reached_at("gpu")
                assert ready_at is not None
                condition = w.cfn.condition(w.condition_id())
                if denied == {"check"}:
                    assert execution.status == "SUCCEEDED"
                    (signal,) = w.signals()
                    assert (signal.status, signal.role) == ("SUCCESS", "arm")
                    assert condition.status == "CREATE_COMPLETE"
                    assert condition.completed_at is not None
                    assert condition.completed_at - ready_at <= w.poll_interval + 5 * MIN
                    continue
                assert execution.error == "MinCountGateSignalRefused"
                failed_at = max(i.time + i.duration for i in w.invocations)
                assert failed_at - ready_at <= w.poll_interval + 5 * MIN
                # Still waiting (nothing rolled back), and the message's command delivers it.
                assert condition.status == "CREATE_IN_PROGRESS"
                w.cfn.role = lambda: None  # the operator, with a principal that may signal
                w.cfn.fake.client().signal_resource(
                    StackName=w.cfn.stack_id,
                    LogicalResourceId=w.condition_id(),
                    UniqueId="hyperpod-min-count-gate-manual",
                    Status="SUCCESS",
                )
                assert w.cfn.condition(w.condition_id()).status == "CREATE_COMPLETE"
                w.assert_no_secret_leak()
            finally:
                w.close()


def test_a_signal_sent_before_the_wait_condition_exists_is_sent_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """CloudFormation creates the wait condition after the arm resource answered; a gate whose
    groups are ready at its first check (which runs before StartExecution returns) signals a
    resource that does not exist yet. That refusal is not final: the next check delivers."""
    w = GateWorld(monkeypatch, groups(constant(16)))
    w.clock.advance(4 * HOUR)  # the minimum was reached long ago
    execution = start(w)
    w.run(until_elapsed=6 * HOUR)
    assert execution.status == "SUCCEEDED"
    assert statuses(w) == ["SUCCESS"]
    assert [code for code, _ in w.cfn.refusals] == ["ValidationError"]


# -- 4. one opening ------------------------------------------------------------------------


def test_after_the_fast_path_opens_the_gate_the_loop_stops_at_its_next_step(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The fast path signals SUCCESS; nodes are lost an hour later. The loop stops at its next
    check (OPENED), sends the only notification (READY), never signals FAILURE, and the
    execution SUCCEEDS (no ExecutionsFailed alarm)."""
    w = GateWorld(monkeypatch, groups(steps((0, 0), (30 * MIN, 16))), event_bridge=True)
    execution = start(w)
    w.at(HOUR + 30 * MIN, lambda: w.sim.remove_group("gpu"))
    w.run(until_elapsed=6 * HOUR, stop_when_idle=False)
    assert execution.status == "SUCCEEDED"
    assert statuses(w) == ["SUCCESS"]
    first = w.signals()[0]
    assert "seen through an EventBridge event" in first.reason
    (message,) = w.sns.messages
    assert message["Subject"] == "HyperPod MinCount gate READY: train"
    checks = [i for i in w.invocations if i.function == "poll"]
    assert checks[-1].result["status"] == "OPENED"
    assert checks[-1].time - first.time <= w.poll_interval
    assert all(i.time <= first.time + w.poll_interval for i in checks)


# -- 5. only the stack decides what is required ---------------------------------------------


def test_a_crafted_invocation_can_neither_open_nor_fail_the_gate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An invoke carrying ``controller 1/1`` (which is ready) and a past deadline, with or
    without the real execution's id, to either function: the gate still waits for gpu 16/16."""
    w = GateWorld(monkeypatch, groups(steps((0, 0), (2 * HOUR, 16))))
    execution = start(w)
    w.run(until_elapsed=40 * MIN)
    crafted = w.poll_event(deadline_in=-60)
    crafted["requirements"] = [{"groupName": "controller", "minCount": 1, "targetCount": 1}]
    for payload in (crafted, {**crafted, "executionArn": execution.arn}):
        for handler in (poll.handler, poll.fallback_handler):
            result = w._run_lambda("poll", handler, payload, 150)[0]
            assert result["status"] in ("IGNORED", "WAITING"), result
    fast = w._run_lambda("poll", poll.handler, {**crafted, "fastPath": True}, 150)[0]
    assert fast["status"] == "IGNORED"
    assert w.signals() == []
    w.run(until_elapsed=5 * HOUR)
    assert execution.status == "SUCCEEDED"
    assert statuses(w) == ["SUCCESS"]
    assert "gpu 16/16" in w.signals()[0].reason


# -- 6. margins and a requested 12 h --------------------------------------------------------


def test_the_docs_state_the_backstop_margin_the_code_uses() -> None:
    """Every sentence of the gate pages that names the backstop and a margin names the one the
    code uses (docs/gate.md said 15 min while the code used 30)."""
    margin = f"{LOOP_BACKSTOP_MARGIN_SECONDS // 60} min"
    for page in ("gate.md", "gate-runtime.md"):
        text = " ".join((DOCS / page).read_text().split())
        sentences = [s for s in re.split(r"(?<=[.;])\s", text) if "backstop" in s and " min" in s]
        assert sentences, page
        for sentence in sentences:
            assert "15 min" not in sentence, (page, sentence)
        assert any(margin in sentence for sentence in sentences), page


def test_a_requested_12_hours_is_refused_not_shortened() -> None:
    from aws_cdk import Duration

    # 1 minute, not the default: the longest timeout named depends on the poll interval.
    options = MinCountGateOptions(timeout=Duration.hours(12), poll_interval=Duration.minutes(1))
    (finding,) = gate_option_findings(options, parameter="readiness_gate")
    assert finding.rule == "HP-GATE-TIMEOUT" and finding.value == "12 hours"
    assert "at most 11 h 29 min with poll_interval 1 minute" in finding.allowed


def test_a_timeout_is_the_deadline_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    w = GateWorld(monkeypatch, groups(constant(0)), timeout_seconds=11 * HOUR)
    assert w.gate().properties["TimeoutSeconds"] == str(11 * HOUR)


# -- 7. the backstop, in virtual time --------------------------------------------------------


def test_the_backstop_ends_a_loop_whose_checks_never_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every invocation of both functions throttled, forever: nothing can decide. The harness
    enforces the execution's TimeoutSeconds (moto does not): the execution ends TIMED_OUT at
    deadline + poll interval + 30 min, and the wait condition ends at its own 12 h."""
    w = GateWorld(monkeypatch, groups(constant(0)), invoke_faults=[InvokeFault("*", 0, 99 * HOUR)])
    execution = start(w)
    w.run(until_elapsed=13 * HOUR, stop_when_idle=False)
    assert execution.status == "TIMED_OUT"
    assert w.engine.timed_out == 1
    backstop = w.gate().definition["TimeoutSeconds"]
    assert backstop == w.timeout_seconds + w.poll_interval + LOOP_BACKSTOP_MARGIN_SECONDS
    condition = w.cfn.condition(w.condition_id())
    assert condition.status == "CREATE_FAILED" and condition.reason == SIGNAL_TIMEOUT_REASON


def test_faults_ending_after_the_deadline_are_reported_before_the_backstop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Throttling until 10 minutes past the deadline: the first check that runs reports the
    deadline (FAILURE with a reason), before the backstop fires."""
    no_rollback(monkeypatch)
    w = GateWorld(monkeypatch, groups(constant(0)))
    deadline = ARM_AT + w.timeout_seconds
    w.invoke_faults.append(InvokeFault("*", 0, deadline + 10 * MIN))
    execution = start(w)
    w.run(until_elapsed=13 * HOUR)
    assert execution.status == "FAILED" and w.engine.timed_out == 0
    (signal,) = w.signals()
    assert "deadline reached" in signal.reason


# -- the fault table ------------------------------------------------------------------------


def test_docs_carry_the_fault_table() -> None:
    text = (DOCS / "gate.md").read_text()
    for fault in faults.FAULT_TABLE:
        row = f"| {fault.step} | {fault.kind} | {fault.transience} | {fault.examples} |"
        assert row in text, row


def test_the_definition_retries_exactly_the_transient_invocation_errors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    w = GateWorld(monkeypatch, groups(constant(0)))
    for name in ("CheckCapacity", "CheckFromArm"):
        (retry,) = w.gate().definition["States"][name]["Retry"]
        assert tuple(retry["ErrorEquals"]) == faults.INVOCATION_TRANSIENT_ERRORS


# -- the property: every schedule that ends before the window closes ------------------------

WINDOW = 3 * HOUR
"""HyperPod's MinCount window: faults end before it closes."""


@st.composite
def fault_schedules(draw: Any) -> list[tuple[str, str, float, float]]:
    """(level, kind, start, end) faults, each ending before the window closes."""
    schedule = []
    for _ in range(draw(st.integers(0, 4))):
        level = draw(st.sampled_from(["invoke", "api"]))
        if level == "invoke":
            kind = draw(
                st.sampled_from(
                    [
                        "check:" + THROTTLED,
                        "*:" + THROTTLED,
                        "*:Lambda.ServiceException",
                        "check:Lambda.Unknown",
                        "check:Sandbox.Timedout",
                    ]
                )
            )
        else:
            kind = draw(
                st.sampled_from(
                    [
                        "throttle",
                        "5xx",
                        "unavailable",
                        "hang",
                        "signal-denied",
                        "nodes:throttle",
                        "nodes:5xx",
                    ]
                )
            )
        begin = draw(st.integers(0, WINDOW - 10 * MIN))
        length = draw(st.integers(10, 2 * HOUR))
        schedule.append((level, kind, float(begin), float(min(begin + length, WINDOW - MIN))))
    return schedule


def _apply(w: GateWorld, schedule: list[tuple[str, str, float, float]]) -> bool:
    """Install the faults; return whether the signal is refused for good (SignalResource
    denied to both roles)."""
    refused = False
    for level, kind, begin, end in schedule:
        if level == "invoke":
            function, error = kind.split(":", 1)
            w.invoke_faults.append(InvokeFault(function, begin, end, error))
        elif kind == "hang":
            w.sim.hang(count=int((end - begin) // 60) + 1)
        elif kind == "signal-denied":
            refused = True
        elif kind.startswith("nodes:"):  # the Running confirmation's ListClusterNodes
            start, end = w.clock.start + begin, w.clock.start + end
            w.sim.inject(kind.split(":")[1], operation="ListClusterNodes", start=start, end=end)
        else:
            w.sim.inject(kind, start=w.clock.start + begin, end=w.clock.start + end)
    return refused


DEFAULT_SCHEDULES = 200
"""Fault schedules the property test tries in ``make test-deep`` (docs/gate.md states the
figure)."""
SAMPLED_SCHEDULES = 6
"""Fault schedules ``make test`` tries: a sample drawn from the run's seed
(tests/support/depth.py)."""
SCHEDULES = int(
    os.environ.get("HYPERPOD_GATE_SCHEDULES", examples(DEFAULT_SCHEDULES, SAMPLED_SCHEDULES))
)
"""Fault schedules the property test tries (HYPERPOD_GATE_SCHEDULES overrides the depth's count,
e.g. 1000 for a longer run, 5 for a quick one). One schedule costs about 0.75 s of CPU on moto's
engine (``python bench/gate_schedules.py`` measures it; docs/performance.md has the figures)."""


def test_the_docs_state_the_suites_schedule_count() -> None:
    text = " ".join((DOCS / "gate.md").read_text().split())
    assert f"{DEFAULT_SCHEDULES} fault schedules" in text
    assert f"a sample of {SAMPLED_SCHEDULES}" in text
    assert "HYPERPOD_GATE_SCHEDULES" in text


@pytest.mark.deep
@settings(
    max_examples=SCHEDULES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    schedule=fault_schedules(),
    reach_at=st.one_of(st.none(), st.integers(5 * MIN, WINDOW - 30 * MIN)),
    fast_path=st.booleans(),
)
def test_every_fault_schedule_ends_with_hyperpods_verdict(
    schedule: list[tuple[str, str, float, float]], reach_at: int | None, fast_path: bool
) -> None:
    """For every schedule of faults ending before the window closes: a cluster that reaches
    its minimum (as the simulator says: capacity arriving late in the window may still miss
    it) gets SUCCESS, one that HyperPod rolls back gets FAILURE with HyperPod's reason; a
    refused signal ends the loop visibly; no schedule leaves a wait without an end (the
    execution is over and the wait condition is no longer in progress)."""
    capacity = constant(10) if reach_at is None else steps((0, 0), (float(reach_at), 16))
    with pytest.MonkeyPatch.context() as mp:
        w = GateWorld(mp, groups(capacity), event_bridge=fast_path)
        try:
            refused = _apply(w, schedule)
            execution = start(w)
            if refused:
                w.cfn.denied_roles = {"check", "arm"}
            w.run(until_elapsed=13 * HOUR, stop_when_idle=not fast_path)
            assert not execution.running, schedule
            assert w.engine.timed_out == 0 and w.engine.history_peak < HISTORY_QUOTA
            condition = w.cfn.condition(w.condition_id())
            if refused and not w.signals():
                # Visible: the execution failed naming the refusal; the wait condition ends at
                # its own timeout, at most 12 h after CloudFormation created it, when the arm
                # resource completed (the first check runs before StartExecution returns, so
                # slow API calls of that check delay the arm's response).
                assert execution.error == "MinCountGateSignalRefused"
                (arm,) = [i for i in w.invocations if i.function == "arm"]
                assert condition.timeout_at == arm.time + arm.duration + w.gate().wait_timeout
                assert w.gate().wait_timeout <= 12 * HOUR
                return
            assert condition.status != "CREATE_IN_PROGRESS"
            # HyperPod's truth (the simulator's): did the group reach its minimum in its window?
            reached = w.sim.min_reached_at("gpu") is not None
            if reached:
                assert execution.status == "SUCCEEDED", (execution.error, execution.cause)
                assert statuses(w)[0] == "SUCCESS" and condition.status == "CREATE_COMPLETE"
                assert "FAILURE" not in statuses(w)
            else:
                assert execution.status == "FAILED", (execution.error, execution.cause)
                assert statuses(w) == ["FAILURE"]
                assert "HyperPod rolled back instance group(s) gpu" in w.signals()[0].reason
            ready = [m for m in w.sns.messages if "READY" in m["Subject"]]
            assert len(ready) == (1 if reached else 0)
        finally:
            w.close()

"""The history bound covers the worst iteration the fault model allows.

HP-GATE-HISTORY bounds an execution's history (25,000 events) by events per iteration. The
worst iteration retries each Task as often as its Retry policies allow and still runs both
(the check function's invocation throttled twice, then a check that hands over to the arm
function, whose invocation is throttled twice too): measured here on moto's engine from the
synthesized definition, and the longest timeout the synth accepts must fit the quota at
that rate."""

from __future__ import annotations

from typing import Any

import pytest

from hyperpod_constructs._runtime.hyperpod_gate import poll
from hyperpod_constructs.gate.definition import (
    HISTORY_QUOTA,
    iteration_costs,
    max_timeout_for_history,
    worst_iteration,
)
from tests.gate.test_gate_faults import THROTTLED, _events, groups, start
from tests.support.hyperpod_sim import steps
from tests.support.world import GateWorld

MIN, HOUR = 60, 3600
SPAN = (20 * MIN, 50 * MIN)
"""Where iterations are counted (the gate waits for capacity all along)."""


def _retry_waits(task: dict[str, Any]) -> tuple[int, float]:
    """Attempts and the least seconds of back-off a Task's Retry policies allow at most, read
    from the synthesized definition itself."""
    attempts, waits = 1, 0.0
    for policy in task["Retry"]:
        for retry in range(policy["MaxAttempts"]):
            attempts += 1
            waits += policy["IntervalSeconds"] * policy["BackoffRate"] ** retry
    return attempts, waits


def _worst_world(monkeypatch: pytest.MonkeyPatch) -> tuple[float, float, GateWorld]:
    """Every invocation of both functions throttled until its last attempt, and every check
    of the check function handing over to the arm function (IGNORED): history events per
    iteration and virtual seconds per iteration, on moto's engine."""
    # 1 min, not the default: the iterations counted below fit the 2 hours at this interval.
    w = GateWorld(monkeypatch, groups(steps((0, 0), (2 * HOUR, 16))), poll_interval=MIN)
    attempts = {
        name: _retry_waits(w.gate().definition["States"][name])[0]
        for name in ("CheckCapacity", "CheckFromArm")
    }
    assert len(set(attempts.values())) == 1
    per_task = attempts["CheckCapacity"]
    seen: dict[str, int] = {}

    def throttled_until_last_attempt(function: str) -> str | None:
        seen[function] = seen.get(function, 0) + 1
        return THROTTLED if seen[function] % per_task else None

    def hands_over(event: Any, context: Any) -> dict[str, str]:
        return {"status": "IGNORED", "reason": "the check function could not check"}

    monkeypatch.setattr(w, "_invoke_fault", throttled_until_last_attempt)
    monkeypatch.setattr(poll, "handler", hands_over)
    execution = start(w)
    w.run(until_elapsed=SPAN[0] - 1)
    before, began = _events(w, execution), w.clock.time()
    w.run(until_elapsed=SPAN[1] - 1)
    after, ended = _events(w, execution), w.clock.time()
    checks = [
        i
        for i in w.invocations
        if i.function == "arm-fallback"
        and SPAN[0] - 1 < i.time - w.clock.start <= SPAN[1] - 1
        and "error" not in i.result
    ]
    assert len(checks) >= 20
    assert all(i.result["status"] == "WAITING" for i in checks)
    return (after - before) / len(checks), (ended - began) / len(checks), w


def test_the_worst_iteration_is_measured_on_moto(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bound's worst iteration (both Tasks at their last attempt, both Choices) writes
    exactly the events moto's engine writes for it, and lasts at least the poll interval plus
    both Tasks' back-offs."""
    events, seconds, w = _worst_world(monkeypatch)
    costs = iteration_costs(w.gate().definition)
    assert max(cost[0] for cost in costs) == events
    worst_events, worst_seconds = worst_iteration(w.poll_interval)
    assert worst_events == events
    assert seconds >= worst_seconds
    w.close()


def test_the_longest_accepted_timeout_fits_the_worst_iteration(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """At the longest timeout HP-GATE-HISTORY accepts, a wait made of worst iterations (events
    measured on moto, each as short as the definition's Retry policies allow) stays below the
    quota, at any poll interval. Before, the bound counted at most 20 events an iteration: at
    a 28-second poll the longest accepted timeout (40,773 s) projected to over 28,000 events."""
    events, _, w = _worst_world(monkeypatch)
    states = w.gate().definition["States"]
    w.close()
    back_off = sum(_retry_waits(states[name])[1] for name in ("CheckCapacity", "CheckFromArm"))
    for poll_interval in (10, 28, 60, 300):
        shortest = min(poll_interval, 60) + back_off  # a CONFIRMING check lasts at least 60 s
        timeout = max_timeout_for_history(poll_interval)
        projected = events * (timeout + poll_interval) / shortest + 10  # + start and end events
        assert projected <= HISTORY_QUOTA, (poll_interval, timeout, projected)

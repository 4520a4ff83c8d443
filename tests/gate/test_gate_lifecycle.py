"""Proof over the cluster's life: one stack driven through random sequences of a create,
updates (groups added, removed and renamed; minimums raised and lowered; scale out and in),
updates that fail elsewhere and roll back, AWS faults, node losses and a delete, on moto's
engine with the real handlers, in virtual time (``tests/support/world.py``).

Invariants after every step, per wait (one deployment's wait condition):

- never SUCCESS before every group this deployment gates has its minimum ``Running``;
- never FAILURE while every group the gate waits for reached its minimum in HyperPod's window
  (with node losses, judged by what the *update* gates:
  :func:`test_an_update_fails_only_for_what_it_gates` in deep runs, and an update's life
  that leaves a group alone,
  :func:`test_an_update_does_not_fail_for_a_group_it_left_alone`);
- every wait that ended has a reason (the execution's result, and its cause when it failed);
- dependants are created exactly when the wait condition completes, never after a FAILURE;
- a delete succeeds and leaves no execution running; nothing leaks a secret.

What an operation gates (the rule the gate follows, HyperPod's: ``MinInstanceCount`` "only
affects the initial transition to InService", and its timer restarts when ``MinCount``
changes): a create gates every group with a minimum; an update gates the groups it adds and
the groups whose minimum it raises, not unchanged, lowered or removed ones.

``make test`` runs a sample drawn from the run's seed, ``make test-deep`` every life
(tests/support/depth.py); ``HYPERPOD_LIFECYCLE_EXAMPLES`` (and ``HYPERPOD_LIFECYCLE_STEPS``)
set other counts.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import event as hypothesis_event
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from tests.support.aws_fakes import Signal
from tests.support.depth import DEEP, examples
from tests.support.hyperpod_sim import CapacityCurve, GroupSpec, constant, steps
from tests.support.world import (
    API_FAULT_KINDS,
    ApiFault,
    Execution,
    GateWorld,
    Requirement,
    handler_operations,
)

MIN = 60
HOUR = 3600
POLL = 5 * MIN
"""The gate's poll interval here (a real option value): fewer checks, the same logic."""
POOL = ("gpu", "gpu2", "trn")
"""Compute groups a template may have (a rename is a removal and an addition)."""
DEEP_LIVES = 100
"""Lives a deep run (``make test-deep``) tries, derandomized: the same on every run."""
SAMPLED_LIVES = 4
"""Lives ``make test`` tries, drawn from the run's printed seed (tests/support/depth.py)."""
EXAMPLES = int(os.environ.get("HYPERPOD_LIFECYCLE_EXAMPLES") or examples(DEEP_LIVES, SAMPLED_LIVES))
"""Lives per test; ``HYPERPOD_LIFECYCLE_EXAMPLES`` sets another count."""
STEPS = int(os.environ.get("HYPERPOD_LIFECYCLE_STEPS", "8"))
RIDDEN_OUT = 5 * MIN
"""A fault the arm function rides out within Lambda's attempts of one request (retries while
each invocation's time allows, then Lambda's two more attempts one and two minutes later);
CloudFormation's own calls fail in a longer outage, so it sends the gate's requests after it."""

CURVES: dict[str, CapacityCurve] = {
    "fast": steps((0, 0), (20 * MIN, 6)),
    "slow": steps((0, 1), (2 * HOUR, 6)),
    "short": constant(2),
    "dwindling": steps((0, 0), (20 * MIN, 6), (90 * MIN, 2)),
}
"""Capacity per group over the cluster's life: enough soon, enough late, never more than 2,
and enough at first but not to replace lost nodes later."""

Config = dict[str, tuple[int, int]]
"""A template's compute groups: name -> (minimum, target)."""


def configs() -> st.SearchStrategy[Config]:
    names = list(POOL)

    def gated(config: Config) -> Config:  # at least one group with a minimum
        if any(minimum > 0 for minimum, _ in config.values()):
            return config
        first = min(config)
        return {**config, first: (2, config[first][1])}

    return st.dictionaries(
        st.sampled_from(names),
        st.tuples(st.sampled_from([0, 2, 4]), st.sampled_from([4, 6])),
        min_size=1,
        max_size=len(names),
    ).map(gated)


def event(text: str) -> None:
    """A statistic of the run (``--hypothesis-show-statistics``), also outside hypothesis."""
    if currently_in_test_context():
        hypothesis_event(text)


def requirements(config: Config) -> list[Requirement]:
    return [Requirement(n, m, t) for n, (m, t) in sorted(config.items()) if m > 0]


def scope(old: Config | None, new: Config) -> frozenset[str]:
    """The gated groups an operation gates (the rule in the module docstring)."""
    if old is None:
        return frozenset(n for n, (m, _) in new.items() if m > 0)
    return frozenset(n for n, (m, _) in new.items() if m > 0 and (n not in old or m > old[n][0]))


@dataclass
class Wait:
    """One deployment's wait."""

    kind: str
    config: Config
    scope: frozenset[str]
    """What the rule says it gates."""
    condition_id: str
    execution: Execution | None
    physical_id: str
    seen: int = 0
    """Signals already checked."""
    dependant_at: float | None = None
    """When the dependants (``cluster.ready``) were created: once the condition completed."""


class Lifecycle(RuleBasedStateMachine):
    """One stack over its life (see the module docstring)."""

    scope_invariant = False
    """Check FAILURE against what the update gates (the rule), not what the gate waits for."""
    node_losses = False

    def __init__(self) -> None:
        super().__init__()
        self.mp = pytest.MonkeyPatch()
        self.w: GateWorld | None = None
        self.waits: list[Wait] = []
        self.config: Config = {}
        self.status = "NONE"
        self.curves: dict[str, CapacityCurve] = {}

    # -- helpers -------------------------------------------------------------------------
    @property
    def world(self) -> GateWorld:
        assert self.w is not None
        return self.w

    def _now(self) -> float:
        return self.world.clock.elapsed

    def _after_outage(self) -> None:
        """CloudFormation acts (sends a request, deletes a resource) once a fault longer than
        :data:`RIDDEN_OUT` is over: its own API calls fail in such an outage too."""
        w = self.world
        now = w.clock.elapsed
        ends = [f.end for f in w.api_faults if f.start <= now < f.end and f.end - now > RIDDEN_OUT]
        if ends:
            w.run(until_elapsed=max(ends), stop_when_idle=False)

    def _arm(self, config: Config, kind: str) -> Wait | None:
        self._after_outage()
        w = self.world
        new = requirements(config)
        previous = self.waits[-1] if self.waits else None
        if previous is None:
            response = w.arm_gate(new)
        else:
            response = w.arm_gate(
                new,
                request_type="Update",
                physical_id=previous.physical_id,
                old_properties=w.properties(requirements(previous.config)),
            )
        assert response["Status"] == "SUCCESS", response
        condition_id = w.condition_id(new)
        if previous is not None and previous.condition_id == condition_id:
            return None  # same gated values: the wait condition holds its result, no new wait
        physical = str(response["PhysicalResourceId"])
        execution = w.execution(response) if physical.startswith("arn:") else None
        old = None if previous is None else previous.config
        wait = Wait(kind, dict(config), scope(old, config), condition_id, execution, physical)
        # A logical id may come back (the same gated values again): only new signals count.
        wait.seen = len(w.cfn.signals.get(condition_id, []))
        self.waits.append(wait)
        return wait

    def _apply_to_cluster(self, old: Config, new: Config) -> None:
        """UpdateCluster: groups added, removed, minimums and targets changed."""
        sim = self.world.sim
        for name, (minimum, target) in new.items():
            if name not in old:
                sim.groups.pop(name, None)  # a group removed earlier is created anew
                sim.add_group(GroupSpec(name, target, minimum, capacity=self.curves[name]))
            elif old[name] != (minimum, target):
                sim.update_group(
                    name,
                    min_instance_count=minimum if minimum != old[name][0] else None,
                    instance_count=target if target != old[name][1] else None,
                )
        for name in old:
            if name not in new:
                sim.remove_group(name)

    def _rollback(self, wait: Wait, previous: Wait) -> None:
        """CloudFormation rolls an update back: UpdateCluster to the previous values, the arm
        resource updated back (its wait condition exists: nothing starts), the new wait
        condition deleted, then the cleanup's Delete of the new loop."""
        self.signals_follow_hyperpod()  # before UpdateCluster resets HyperPod's timers
        self._after_outage()
        self.signals_follow_hyperpod()
        w = self.world
        self._apply_to_cluster(wait.config, previous.config)
        w.cfn.remove_resource(wait.condition_id)
        back = w.arm_gate(
            requirements(previous.config),
            request_type="Update",
            physical_id=wait.physical_id,
            old_properties=w.properties(requirements(wait.config)),
        )
        assert back["Status"] == "SUCCESS", back
        deleted = w.custom_resource(
            "Delete", w.properties(requirements(wait.config)), physical_id=wait.physical_id
        )
        assert deleted["Status"] == "SUCCESS"
        self.waits.remove(wait)
        self.waits.append(previous)  # the stack's gate is the previous wait again
        self.config = dict(previous.config)
        self.status = "COMPLETE"

    def _cleanup(self, old: Wait, new: Wait) -> None:
        """an update's cleanup: CloudFormation deletes the previous wait condition and its
        declaration, and sends Delete for the arm resource's previous physical id."""
        self._after_outage()
        w = self.world
        w.cfn.remove_resource(old.condition_id)
        w.cfn.remove_resource(w.gate(requirements(old.config)).handle_id)
        if old.physical_id != new.physical_id:
            deleted = w.custom_resource(
                "Delete", w.properties(requirements(old.config)), physical_id=old.physical_id
            )
            assert deleted["Status"] == "SUCCESS", deleted

    def _settle(self) -> None:
        """What CloudFormation does once the current wait ended."""
        if self.status not in ("CREATE_IN_PROGRESS", "UPDATE_IN_PROGRESS"):
            return
        wait = self.waits[-1]
        condition = self.world.cfn.condition(wait.condition_id)
        if condition.status != "CREATE_IN_PROGRESS":
            event(f"{wait.kind} ended {condition.status}")
        if condition.status == "CREATE_COMPLETE":
            wait.dependant_at = condition.completed_at
            if self.status == "UPDATE_IN_PROGRESS":
                self._cleanup(self.waits[-2], wait)
            self.status = "COMPLETE"
        elif condition.status == "CREATE_FAILED":
            if self.status == "CREATE_IN_PROGRESS":
                self._delete_stack()  # the create rolls back: everything is deleted
                self.status = "ROLLED_BACK"
            else:
                self._rollback(wait, self.waits[-2])

    def _delete_stack(self) -> None:
        """Delete (or a create's rollback): the wait condition, the arm resource (its Delete
        stops the loop and always succeeds), then the cluster."""
        self.signals_follow_hyperpod()
        self._after_outage()
        self.signals_follow_hyperpod()
        w = self.world
        wait = self.waits[-1]
        w.cfn.remove_resource(wait.condition_id)
        response = w.custom_resource(
            "Delete", w.properties(requirements(wait.config)), physical_id=wait.physical_id
        )
        assert response["Status"] == "SUCCESS", response
        w.sim.delete_cluster()
        w.cfn.delete_stack()
        w.run(until_elapsed=self._now() + 2 * POLL, stop_when_idle=False)
        running = [a for a in w.executions() if Execution(w, a).running]
        assert running == [], running

    # -- rules ---------------------------------------------------------------------------
    @initialize(
        config=configs(),
        curves=st.fixed_dictionaries({n: st.sampled_from(sorted(CURVES)) for n in POOL}),
    )
    def create(self, config: Config, curves: dict[str, str]) -> None:
        self.curves = {n: CURVES[c] for n, c in curves.items()}
        groups = [GroupSpec("controller", 1, node_type="Controller", instance_type="ml.m5.xlarge")]
        groups += [
            GroupSpec(n, t, m, capacity=self.curves[n]) for n, (m, t) in sorted(config.items())
        ]
        self.w = GateWorld(self.mp, groups, poll_interval=POLL)
        self.world.clock.advance(MIN)
        self.config = dict(config)
        self.status = "CREATE_IN_PROGRESS"
        assert self._arm(config, "create") is not None

    @rule(minutes=st.sampled_from([10, 45, 120, 240]))
    def wait(self, minutes: int) -> None:
        w = self.world
        before = sum(len(s) for s in w.cfn.signals.values())
        w.run(until_elapsed=self._now() + minutes * MIN, stop_when_idle=False)
        if self.status in ("DELETED", "ROLLED_BACK"):  # hours after: nothing runs or signals
            assert [a for a in w.executions() if Execution(w, a).running] == []
            assert sum(len(s) for s in w.cfn.signals.values()) == before
        self._settle()

    @precondition(lambda self: self.status not in ("DELETED", "ROLLED_BACK"))
    @rule(data=st.data())
    def update(self, data: st.DataObject) -> None:
        """The next ``cdk deploy``: CloudFormation starts it once the stack is idle (the
        current wait ended), then UpdateCluster, then the gate."""
        if self.status != "COMPLETE":
            self.world.run(until_elapsed=self._now() + 13 * HOUR, stop_when_idle=True)
            self._settle()
            if self.status != "COMPLETE":
                return  # the create failed and rolled back: nothing to update
        self.signals_follow_hyperpod()  # before UpdateCluster resets HyperPod's timers
        self.deploy(data.draw(configs()))

    def deploy(self, new: Config) -> None:
        """An update to ``new`` of an idle stack."""
        old = dict(self.config)
        if new == old:
            return
        event(f"update: gates {sorted(scope(old, new)) or 'nothing'}")
        self._apply_to_cluster(old, new)
        self.config = dict(new)
        if self._arm(new, "update") is not None:
            self.status = "UPDATE_IN_PROGRESS"

    @precondition(lambda self: self.status == "UPDATE_IN_PROGRESS")
    @rule()
    def another_resource_fails(self) -> None:
        """The update fails elsewhere while the gate waits: CloudFormation rolls it back."""
        self._rollback(self.waits[-1], self.waits[-2])

    @rule(
        kind=st.sampled_from(["throttle", "5xx", "unavailable"]),
        minutes=st.sampled_from([5, 30, 90]),
    )
    def aws_fault(self, kind: str, minutes: int) -> None:
        start = self.world.clock.time()
        self.world.sim.inject(kind, start=start, end=start + minutes * MIN)

    @rule(
        kind=st.sampled_from(sorted(API_FAULT_KINDS)),
        operation=st.sampled_from(["*", *handler_operations()]),
        seconds=st.sampled_from([20, 5 * MIN, 30 * MIN, 90 * MIN]),
    )
    def api_fault(self, kind: str, operation: str, seconds: int) -> None:
        """A transient fault at one AWS operation the handlers call (found in their code), or
        at all of them, on every client the handlers build."""
        start = self.world.clock.elapsed
        self.world.api_faults.append(ApiFault(kind, start, start + seconds, operation=operation))

    @precondition(lambda self: self.node_losses and self.status not in ("DELETED", "ROLLED_BACK"))
    @rule(data=st.data(), count=st.integers(1, 3))
    def nodes_lost(self, data: st.DataObject, count: int) -> None:
        self.lose(data.draw(st.sampled_from(sorted(self.config))), count)

    def lose(self, name: str, count: int) -> None:
        """``count`` healthy nodes of ``name`` fail; HyperPod replaces them when its capacity
        allows (the group stays InService: its minimum governed only its first transition)."""
        sim = self.world.sim
        sim.advance()
        group = sim.groups[name]
        del group.healthy[max(0, len(group.healthy) - count) :]
        group.next_attempt_at = self.world.clock.time()

    @precondition(lambda self: self.status not in ("DELETED", "ROLLED_BACK", "NONE"))
    @rule()
    def delete(self) -> None:
        self._delete_stack()
        self.status = "DELETED"

    # -- invariants ----------------------------------------------------------------------
    @invariant()
    def signals_follow_hyperpod(self) -> None:
        if self.w is None:
            return
        w = self.world
        for wait in self.waits:
            signals: list[Signal] = w.cfn.signals.get(wait.condition_id, [])
            new, wait.seen = signals[wait.seen :], len(signals)
            for signal in new:
                if signal.status == "SUCCESS":
                    for name in wait.scope:
                        running = w.sim.min_running_at(name)
                        assert running is not None and running <= signal.time, (
                            f"READY before {name} had its minimum Running",
                            wait,
                        )
                else:
                    gated = (
                        wait.scope
                        if self.scope_invariant
                        else frozenset(n for n, (m, _) in wait.config.items() if m > 0)
                    )
                    reached = {n: w.sim.min_reached_at(n) for n in gated}
                    assert not all(t is not None for t in reached.values()), (
                        "FAILURE although every gated group reached its minimum",
                        wait,
                        reached,
                        signal.reason,
                    )
                    assert signal.reason, "a FAILURE without a reason"

    @invariant()
    def transient_faults_are_never_a_verdict(self) -> None:
        """No FAILED answer to CloudFormation, and no FAILURE signal for a transient fault
        before the deadline (only HyperPod's verdict or the deadline fails a wait)."""
        if self.w is None:
            return
        w = self.world
        answers = [put.json() for puts in w.cfn.responses.values() for put in puts]
        assert all(a["Status"] == "SUCCESS" for a in answers), answers
        for signals in w.cfn.signals.values():
            for signal in signals:
                if signal.status == "FAILURE" and "deadline reached" not in signal.reason:
                    assert "transient" not in signal.reason, signal.reason

    @invariant()
    def every_ended_wait_has_a_reason(self) -> None:
        if self.w is None:
            return
        for wait in self.waits:
            execution = wait.execution
            if execution is None or execution.running:
                continue
            assert execution.status in ("SUCCEEDED", "FAILED", "ABORTED"), execution.status
            if execution.status == "FAILED":
                assert execution.cause, "a failed wait without a cause"
            if execution.status != "ABORTED":
                results = [
                    i.result
                    for i in self.world.invocations
                    if isinstance(i.event, dict)
                    and i.event.get("executionArn") == execution.arn
                    and isinstance(i.result, dict)
                    and "status" in i.result
                ]
                assert results and results[-1].get("reason"), "a wait ended without a reason"

    @invariant()
    def dependants_follow_the_verdict(self) -> None:
        if self.w is None:
            return
        w = self.world
        for wait in self.waits:
            if wait.dependant_at is None:
                continue
            signals = w.cfn.signals.get(wait.condition_id, [])
            assert signals and signals[0].status == "SUCCESS", "dependants without a SUCCESS"
            assert wait.dependant_at >= signals[0].time

    def teardown(self) -> None:
        try:
            if self.w is not None:
                if self.status not in ("DELETED", "ROLLED_BACK"):
                    self._delete_stack()  # delete always succeeds and stops every loop
                self.world.assert_no_secret_leak()
        finally:
            if self.w is not None:
                self.w.close()
            self.mp.undo()


SETTINGS = settings(
    max_examples=EXAMPLES,
    stateful_step_count=STEPS,
    deadline=None,
    derandomize=DEEP,
    # Shrinking a life of virtual hours takes minutes: the printed steps reproduce it.
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


class UpdateScopeLifecycle(Lifecycle):
    """The same life with node losses, and FAILURE judged by what the update gates."""

    scope_invariant = True
    node_losses = True


TestLifecycle = pytest.mark.deep(Lifecycle.TestCase)
TestLifecycle.settings = SETTINGS


def test_the_docs_name_the_lifecycle_switch() -> None:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "gate-runtime.md").read_text()
    assert "HYPERPOD_LIFECYCLE_EXAMPLES" in text


@pytest.mark.deep
def test_an_update_fails_only_for_what_it_gates() -> None:
    """The random lives, with node losses, FAILURE judged by what each update gates."""
    run_state_machine_as_test(UpdateScopeLifecycle, settings=SETTINGS)


def test_an_update_does_not_fail_for_a_group_it_left_alone() -> None:
    """The life of the issue: gpu opens at 4/4, loses 2 nodes that HyperPod has no capacity to
    replace (2/4, InService), then an update adds gpu2 2/4, which reaches its minimum in
    minutes. The update gates gpu2 only: it must not fail."""
    machine = UpdateScopeLifecycle()
    try:
        machine.create(config={"gpu": (4, 4)}, curves={n: "dwindling" for n in POOL})
        machine.wait(minutes=240)
        assert machine.status == "COMPLETE"
        machine.lose("gpu", 2)
        machine.wait(minutes=45)
        machine.deploy({"gpu": (4, 4), "gpu2": (2, 4)})
        assert machine.waits[-1].scope == {"gpu2"}
        for _ in range(6):
            machine.wait(minutes=60)
            machine.signals_follow_hyperpod()
        assert machine.status == "COMPLETE" and len(machine.waits) == 2
    finally:
        machine.teardown()

"""One refresh of ``watch``, as a pure function: what AWS answered -> what to show and whether
to stop.

:func:`refresh` maps a :class:`WatchTarget` and an :class:`Observation` (the parsed responses of
one round of read calls) to a :class:`Refresh`. The readiness of the gated groups is decided by
the gate's own function (``evaluate_gate``), so ``watch`` and the gate never disagree on what
"ready" or "rolled back" means. Nothing here performs I/O or reads a clock.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, is_dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, TypeVar

from ..._core.limits import MIN_COUNT_WINDOW_HOURS
from ..._core.sanitize import printable
from ..._runtime.hyperpod_gate.decision import (
    GateDecision,
    GroupProgress,
    GroupRequirement,
    evaluate_gate,
)
from .._cli.verdict import EXIT_OK, withheld
from .target import Count, WatchTarget

WINDOW = timedelta(hours=MIN_COUNT_WINDOW_HOURS)
"""HyperPod's fixed window to reach a group's minimum before it rolls the group back."""
STACK_GRACE = timedelta(minutes=10)
"""How long a stack that does not exist yet counts as "cdk deploy has not created it yet", and a
stack at rest without the gate's wait condition as "cdk deploy has not started updating it"."""
EVENTS_PER_GROUP = 3
"""Newest events shown per gated group (and for the cluster itself)."""

Verdict = Literal["waiting", "ready", "failed", "error"]
GateState = Literal["unknown", "not armed", "waiting", "ready", "failed"]
EXIT_READY = EXIT_OK
EXIT_FAILED = 1
EXIT_ERROR = 2


@dataclass(frozen=True)
class ResourceState:
    """One stack resource (DescribeStackResources)."""

    status: str
    reason: str | None = None
    physical_id: str | None = None
    updated_at: datetime | None = None


@dataclass(frozen=True)
class StackState:
    """The stack (DescribeStacks and DescribeStackResources)."""

    status: str
    reason: str | None
    resources: Mapping[str, ResourceState]
    parameters: Mapping[str, str] = field(default_factory=dict)
    """The stack's parameter values (``ResolvedValue`` for SSM parameter types)."""


@dataclass(frozen=True)
class Observation:
    """What one round of read calls returned. ``None`` means "could not be read this time"
    (see ``problems``), except where a ``*_missing`` flag says the thing does not exist."""

    time: datetime
    stack: StackState | None = None
    stack_missing: bool = False
    """DescribeStacks said the stack does not exist."""
    cluster: Mapping[str, Any] | None = None
    """The DescribeCluster response."""
    cluster_missing: bool = False
    """The cluster does not exist: DescribeCluster said ResourceNotFound, or the stack has not
    created it yet (its name is generated and the resource has no physical id)."""
    events: Sequence[Mapping[str, Any]] = ()
    """ListClusterEvents entries, any order."""
    problems: tuple[str, ...] = ()
    """Reads that failed this time after their retries (throttling, 5xx, network)."""


@dataclass(frozen=True)
class EventView:
    """One cluster event."""

    time: datetime | None
    level: str
    description: str


@dataclass(frozen=True)
class GroupView:
    """One gated group in one refresh."""

    name: str
    status: str
    """Group status from DescribeCluster; ``NotListed``, or ``Unknown`` when not read."""
    current: int
    min_count: int | None
    """The requested minimum (from the template, or the stack parameter it names); None while
    that parameter's value is not known."""
    target_count: int | None
    """The requested target, likewise."""
    reported_min: int | None
    reported_target: int | None
    ready: bool
    rolled_back: bool
    window_left: timedelta | None
    """Time left in HyperPod's 3-hour window, while the group still waits for its minimum
    (estimated from the cluster's creation, or the cluster resource's last update during a
    stack update); None once it no longer waits."""
    events: tuple[EventView, ...]
    """Newest first."""
    types_up: tuple[tuple[str, int], ...] = ()
    """A flexible group's instances per type (DescribeCluster ``InstanceTypeDetails``:
    type and ``CurrentCount``), in the order HyperPod lists them; empty for a group of one
    type."""


@dataclass(frozen=True)
class GateView:
    """The gate's wait condition."""

    state: GateState
    reason: str | None
    wait_condition_id: str | None


@dataclass(frozen=True)
class Refresh:
    """Everything one refresh shows, and whether ``watch`` stops (``exit_code`` not None)."""

    time: datetime
    elapsed: timedelta
    stack_name: str
    stack_status: str | None
    cluster: str
    cluster_status: str | None
    failure_message: str | None
    groups: tuple[GroupView, ...]
    cluster_events: tuple[EventView, ...]
    gate: GateView
    verdict: Verdict
    reason: str
    exit_code: int | None
    notes: tuple[str, ...]


def _utc(moment: object) -> datetime | None:
    if isinstance(moment, datetime):
        return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return None


def stack_failing(status: str) -> bool:
    """A stack status that means the deployment failed (rolling back, failed, deleting)."""
    return "ROLLBACK" in status or status.endswith("_FAILED") or status.startswith("DELETE_")


def _gate_view(target: WatchTarget, stack: StackState | None) -> GateView:
    condition_id = target.wait_condition_id
    if stack is None or condition_id is None:
        return GateView("unknown", None, condition_id)
    resource = stack.resources.get(condition_id)
    if resource is None:
        return GateView("not armed", None, condition_id)
    if resource.status.endswith("_COMPLETE") and not resource.status.startswith("DELETE"):
        return GateView("ready", resource.reason, condition_id)
    if resource.status.endswith("_FAILED") or resource.status.startswith("DELETE"):
        reason = resource.reason or f"wait condition {condition_id} is {resource.status}"
        return GateView("failed", reason, condition_id)
    return GateView("waiting", resource.reason, condition_id)


def _events(
    events: Sequence[Mapping[str, Any]], group: str | None, limit: int = EVENTS_PER_GROUP
) -> tuple[EventView, ...]:
    picked = [e for e in events if (e.get("InstanceGroupName") or None) == group]
    oldest = datetime.min.replace(tzinfo=UTC)
    picked.sort(key=lambda e: _utc(e.get("EventTime")) or oldest, reverse=True)
    return tuple(
        EventView(
            _utc(e.get("EventTime")),
            str(e.get("EventLevel") or "Info"),
            " ".join(str(e.get("Description") or "").split()),
        )
        for e in picked[:limit]
    )


def _window_start(obs: Observation, target: WatchTarget) -> datetime | None:
    created = _utc((obs.cluster or {}).get("CreationTime"))
    if obs.stack is not None and obs.stack.status.startswith("UPDATE_"):
        resource = obs.stack.resources.get(target.cluster_logical_id)
        updated = resource.updated_at if resource is not None else None
        if updated is not None and (created is None or updated > created):
            return updated
    return created


def _group_view(
    progress: GroupProgress, obs: Observation, window_start: datetime | None
) -> GroupView:
    waiting = progress.status in ("Creating", "Updating", "NotListed") and not progress.ready
    return GroupView(
        name=progress.name,
        status=progress.status,
        current=progress.current_count,
        min_count=progress.min_count,
        target_count=progress.target_count,
        reported_min=progress.reported_min,
        reported_target=progress.reported_target,
        ready=progress.ready,
        rolled_back=progress.rolled_back,
        window_left=(
            window_start + WINDOW - obs.time if waiting and window_start is not None else None
        ),
        events=_events(obs.events, progress.name),
        types_up=_types_up(obs.cluster, progress.name),
    )


def _types_up(cluster: Mapping[str, Any] | None, name: str) -> tuple[tuple[str, int], ...]:
    """Which types of a flexible group came up: ``InstanceTypeDetails`` of the group."""
    groups = (cluster or {}).get("InstanceGroups")
    for group in groups if isinstance(groups, list) else ():
        if isinstance(group, Mapping) and group.get("InstanceGroupName") == name:
            details = group.get("InstanceTypeDetails")
            return tuple(
                (str(d["InstanceType"]), int(d.get("CurrentCount") or 0))
                for d in (details if isinstance(details, list) else ())
                if isinstance(d, Mapping) and isinstance(d.get("InstanceType"), str)
            )
    return ()


def _known(count: Count) -> int | None:
    return count if isinstance(count, int) else None


def _unread_group(target: WatchTarget, index: int, status: str) -> GroupView:
    group = target.groups[index]
    return GroupView(
        name=group.name,
        status=status,
        current=0,
        min_count=_known(group.min_count),
        target_count=_known(group.target_count),
        reported_min=None,
        reported_target=None,
        ready=False,
        rolled_back=False,
        window_left=None,
        events=(),
    )


def _armed_at(gate: GateView, stack: StackState | None, now: datetime) -> datetime | None:
    """When the gate started waiting, for the decision's settle window: while it is not armed
    yet, a cluster update may not be applied yet either, so "now" (settling)."""
    if gate.state == "not armed":
        return now
    if gate.state == "waiting" and stack is not None and gate.wait_condition_id is not None:
        return stack.resources[gate.wait_condition_id].updated_at
    return None


def _verdict(
    target: WatchTarget,
    obs: Observation,
    gate: GateView,
    decision: GateDecision | None,
    elapsed: timedelta,
) -> tuple[Verdict, str, int | None]:
    stack = obs.stack
    if gate.state == "failed":
        # The stack event names only the signal's UniqueId (SignalResource has no reason):
        # watch's own reading of the cluster adds the whole reason when it sees it too.
        own = f"; {decision.reason}" if decision is not None and decision.status == "FAILED" else ""
        return "failed", f"the gate failed: {gate.reason}{own}", EXIT_FAILED
    if decision is not None and decision.status == "FAILED":
        return "failed", decision.reason, EXIT_FAILED
    if decision is not None and decision.status == "READY":
        return "ready", decision.reason, EXIT_READY
    if gate.state == "ready":
        return (
            "ready",
            f"the gate opened: wait condition {gate.wait_condition_id} complete",
            EXIT_READY,
        )
    if stack is not None and stack_failing(stack.status):
        why = f": {stack.reason}" if stack.reason else ""
        return "failed", f"stack {target.stack_name} is {stack.status}{why}", EXIT_FAILED
    idle = stack is not None and not stack.status.endswith("_IN_PROGRESS")
    if gate.state == "not armed" and idle and elapsed >= STACK_GRACE:
        assert stack is not None
        return (
            "error",
            f"stack {target.stack_name} is {stack.status} without the gate's wait condition "
            f"{gate.wait_condition_id}: the template read does not match the deployed stack "
            "(synthesize again, or pass --stack without --app to read the deployed template)",
            EXIT_ERROR,
        )
    if obs.stack_missing:
        if elapsed >= STACK_GRACE:
            return (
                "error",
                f"stack {target.stack_name} not found (waited {int(elapsed.total_seconds())} s "
                "for cdk deploy to create it); check --stack and --region",
                EXIT_ERROR,
            )
        return "waiting", f"waiting for cdk deploy to create stack {target.stack_name}", None
    if obs.cluster_missing:
        if stack is not None and not stack.status.endswith("_IN_PROGRESS"):
            return (
                "failed",
                f"cluster {target.cluster_name or target.cluster_logical_id} not found and "
                f"stack {target.stack_name} is {stack.status}",
                EXIT_FAILED,
            )
        return "waiting", "waiting for CloudFormation to create the cluster", None
    if decision is not None:
        return "waiting", decision.reason, None
    if target.parameters and stack is not None:
        return (
            "error",
            f"stack {target.stack_name} has no integer value for parameter(s) "
            f"{', '.join(target.parameters)}, which the gated counts name: the template read "
            "does not match the deployed stack",
            EXIT_ERROR,
        )
    if target.parameters:
        return "waiting", f"waiting for the stack's parameters {', '.join(target.parameters)}", None
    return "waiting", "no answer yet", None


def refresh(target: WatchTarget, obs: Observation, *, started_at: datetime) -> Refresh:
    """The refresh that ``obs`` gives for ``target``; ``started_at`` is when ``watch`` began.

    Counts that name stack parameters take the values the stack reports; until it does, the
    groups are shown unread and the gate's decision waits."""
    if obs.stack is not None:
        target = target.resolved(obs.stack.parameters)
    gate = _gate_view(target, obs.stack)
    decision: GateDecision | None = None
    requirements = {
        g.name: GroupRequirement(g.min_count, g.target_count)
        for g in target.groups
        if isinstance(g.min_count, int) and isinstance(g.target_count, int)
    }
    if obs.cluster is not None and len(requirements) == len(target.groups):
        decision = evaluate_gate(
            obs.cluster,
            requirements,
            events=obs.events,
            now=obs.time,
            armed_at=_armed_at(gate, obs.stack, obs.time),
        )
    if decision is not None:
        start = _window_start(obs, target)
        groups = tuple(_group_view(p, obs, start) for p in decision.groups)
    else:
        status = "NotCreated" if obs.cluster_missing else "Unknown"
        groups = tuple(_unread_group(target, i, status) for i in range(len(target.groups)))
    elapsed = obs.time - started_at
    verdict, reason, exit_code = _verdict(target, obs, gate, decision, elapsed)
    unproven = withheld(exit_code, obs.problems)
    if unproven is not None:  # never "ready" on an answer that could not be read
        verdict, reason, exit_code = "waiting", f"{reason}; but {unproven}", None
    cluster = obs.cluster or {}
    failure = cluster.get("FailureMessage")
    return printable_view(
        Refresh(
            time=obs.time,
            elapsed=elapsed,
            stack_name=target.stack_name,
            stack_status=obs.stack.status if obs.stack is not None else None,
            cluster=str(
                cluster.get("ClusterName") or target.cluster_name or target.cluster_logical_id
            ),
            cluster_status=str(cluster["ClusterStatus"]) if "ClusterStatus" in cluster else None,
            failure_message=str(failure) if failure else None,
            groups=groups,
            cluster_events=_events(obs.events, None),
            gate=gate,
            verdict=verdict,
            reason=reason,
            exit_code=exit_code,
            notes=obs.problems,
        )
    )


V = TypeVar("V")


def printable_view(value: V) -> V:
    """``value`` (a :class:`Refresh` or a part of it) with every string passed through the one
    sanitizer (:func:`hyperpod_constructs._core.sanitize.printable`): names, statuses, reasons,
    event descriptions and notes come from AWS, and no control character, escape sequence or
    bidi control among them reaches a terminal, a log line or ``--json``."""
    if isinstance(value, str):
        return printable(value)  # type: ignore[return-value]
    if isinstance(value, tuple):
        return tuple(printable_view(item) for item in value)  # type: ignore[return-value]
    if is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: printable_view(getattr(value, f.name)) for f in fields(value)}
        return replace(value, **changes)
    return value

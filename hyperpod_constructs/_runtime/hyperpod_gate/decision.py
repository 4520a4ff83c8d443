"""Pure readiness decision of the HyperPod MinCount gate.

Nothing here performs I/O or reads a clock: :func:`evaluate_gate` maps one
``DescribeCluster`` response (plus, optionally, recent ``ListClusterEvents``
entries, the gated groups' nodes from ``ListClusterNodes`` and the current time)
to a :class:`GateDecision`; :func:`tally_nodes` counts one group's nodes from
``ListClusterNodes`` pages.

The central trap it guards against: when HyperPod cannot reach a group's
``MinCount`` within its fixed 3-hour window it rolls the group back and the
group then goes straight to ``InService``.  ``InService`` alone therefore does
not mean the minimum was met; the group is only ready when its ``CurrentCount``
reached the requested minimum *and* its ``TargetCount`` (and ``MinCount``,
when the API returns it) still equal the requested values.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

GateStatus = Literal["WAITING", "READY", "FAILED"]
"""Outcome of one evaluation."""

DEFAULT_METRICS_NAMESPACE = "HyperPod/MinCountGate"
"""CloudWatch namespace of the gate's progress metrics (the options' default)."""
NOT_LISTED = "NotListed"
"""``GroupProgress.status`` of a gated group absent from ``InstanceGroups``."""
SETTLE_SECONDS = 600
"""How long after arming other counts (or a missing group) mean "not applied yet"."""
RUNNING = "Running"
"""The ``ListClusterNodes`` status (``InstanceStatus.Status``) of a node that counts."""
UNKNOWN_NODE_STATUS = "Unknown"
"""How :func:`tally_nodes` files a node whose summary carries no status."""

MAX_ERROR_EVENTS = 3
EVENT_TEXT_LIMIT = 200
FAILURE_MESSAGE_LIMIT = 300

COUNTED_GROUP_STATUSES = frozenset({"InService", "Degraded"})
"""Group statuses whose ``CurrentCount`` counts toward the minimum: ``InService``, and
``Degraded`` ("some instances have failed to provision or are no longer healthy", the API
reference), which is how a group at its minimum but short of its target (min < target where
capacity is short: what MinCount exists for) reports. A Degraded group is only ready once its
minimum of nodes is confirmed ``Running``."""
DEGRADED = "Degraded"

_HINT_CLUSTER_FAILED = (
    "What to do: the controller (or login) group could not start; check the "
    "controller's lifecycle script and the capacity for its instance type, then "
    "delete and recreate the stack."
)
_HINT_CLUSTER_DELETING = (
    "What to do: something is deleting the cluster; let the deletion finish and redeploy."
)
_HINT_ROLLBACK = (
    "What to do: HyperPod rolls a group back when its minimum is not reached within "
    "its fixed 3-hour window; lower min_instance_count, use a training plan "
    "(reserved capacity) or a subnet in another Availability Zone, then update the "
    "stack (the 3-hour timer restarts when MinCount changes)."
)
_HINT_GROUP_FAILED = (
    "What to do: read the latest errors (capacity, quota, lifecycle script); lower "
    "min_instance_count, use a training plan or another Availability Zone."
)
_HINT_GROUP_DELETING = (
    "What to do: the gated instance group is being removed from the cluster; keep it "
    "in the cluster definition or drop it from the gate."
)
_HINT_NOT_LISTED = (
    "What to do: check that every gated group name matches an instance group of the "
    "cluster and that the cluster update adding it succeeded."
)
_HINT_NOT_RUNNING = (
    "What to do: DescribeCluster counts the minimum but fewer nodes are Running; read the "
    "nodes' status (ListClusterNodes, DescribeClusterNode): deep health checks that take "
    "longer than the gate timeout or fail, or nodes being replaced; raise the gate timeout "
    "or lower min_instance_count."
)
_HINT_DEGRADED = (
    "What to do: HyperPod reports the group(s) Degraded: some instances failed to provision "
    "or are no longer healthy (the latest errors say which); check the capacity and quota "
    "for the instance type, the lifecycle scripts and the nodes' health, or lower "
    "min_instance_count."
)
_HINT_DEADLINE = (
    "What to do: capacity did not arrive in time; lower min_instance_count, use a "
    "training plan or another Availability Zone, or raise the gate timeout "
    "(HyperPod itself rolls the group back after 3 hours)."
)


@dataclass(frozen=True)
class GroupRequirement:
    """What the gate waits for in one instance group.

    ``min_count`` is the requested ``MinInstanceCount`` and ``target_count`` the
    requested ``InstanceCount``; ``0 <= min_count <= target_count``.
    """

    min_count: int
    """The requested ``MinInstanceCount``: the gate waits until this many are in service."""
    target_count: int
    """The requested ``InstanceCount``, which HyperPod must report back as ``TargetCount``."""

    def __post_init__(self) -> None:
        if isinstance(self.min_count, bool) or not isinstance(self.min_count, int):
            raise TypeError("min_count must be an int")
        if isinstance(self.target_count, bool) or not isinstance(self.target_count, int):
            raise TypeError("target_count must be an int")
        if not 0 <= self.min_count <= self.target_count:
            raise ValueError(
                "need 0 <= min_count <= target_count, got "
                f"min_count={self.min_count}, target_count={self.target_count}"
            )


@dataclass(frozen=True)
class NodeTally:
    """The nodes ``ListClusterNodes`` listed for one instance group, by status.

    ``nodes`` maps each node's instance id to its status (``Running``, ``Pending``,
    ``DeepHealthCheckInProgress``, ...); a node listed twice (pages read while the list
    changes) counts once, with its last status.  ``carried`` holds the counts (status ->
    nodes) of the pages earlier checks read: a confirmation that spans checks keeps counts and
    a ``NextToken``, never node lists.  ``complete`` is whether every page was read.
    """

    group: str
    """The instance group's exact name."""
    nodes: Mapping[str, str] = field(default_factory=dict)
    """Instance id -> status, for the group's nodes seen so far. Default: none."""
    complete: bool = False
    """Whether the last page was read. Default: ``False``."""
    carried: Mapping[str, int] = field(default_factory=dict)
    """Status -> nodes, from the pages earlier checks read. Default: none."""

    def counts(self) -> dict[str, int]:
        """Status -> how many of the group's listed nodes have it (carried ones included)."""
        counts = dict(self.carried)
        for status in self.nodes.values():
            counts[status] = counts.get(status, 0) + 1
        return counts

    @property
    def listed(self) -> int:
        """How many of the group's nodes were listed."""
        return len(self.nodes) + sum(self.carried.values())

    @property
    def running(self) -> int:
        """How many of them are ``Running``."""
        return self.counts().get(RUNNING, 0)

    def others(self) -> list[tuple[str, int]]:
        """``(status, count)`` of the nodes that are not ``Running``, most frequent first."""
        counts = [(status, n) for status, n in self.counts().items() if status != RUNNING and n]
        return sorted(counts, key=lambda item: (-item[1], item[0]))

    def text(self) -> str:
        """E.g. ``gpu: 16 in group, 12 Running (4 DeepHealthCheckInProgress)``."""
        text = f"{self.group}: {self.listed} in group, {self.running} {RUNNING}"
        others = self.others()
        if others:
            text += " (" + ", ".join(f"{n} {status}" for status, n in others) + ")"
        return text


def _node_status(summary: Mapping[str, Any]) -> str:
    details = summary.get("InstanceStatus")
    status = details.get("Status") if isinstance(details, Mapping) else None
    return status if isinstance(status, str) and status else UNKNOWN_NODE_STATUS


def tally_nodes(
    summaries: Iterable[Any],
    group: str,
    *,
    previous: NodeTally | None = None,
    complete: bool = False,
) -> NodeTally:
    """Add one ``ListClusterNodes`` page (its ``ClusterNodeSummaries``) to ``group``'s tally.

    Only nodes whose ``InstanceGroupName`` is exactly ``group`` count: the request's filter,
    ``InstanceGroupNameContains``, also returns ``gpu-spare`` for ``gpu``.  A summary without
    a status counts as listed but not ``Running`` (:data:`UNKNOWN_NODE_STATUS`); one without
    an instance id is kept under its position, so it is never merged with another node.

    :param summaries: one page's ``ClusterNodeSummaries`` (boto3-parsed).
    :param group: the gated instance group's name.
    :param previous: the tally of the pages before this one. Default: none (the first page).
    :param complete: whether this page is the last one (no ``NextToken``). Default: ``False``.
    """
    nodes = dict(previous.nodes) if previous is not None else {}
    for summary in summaries:
        if not isinstance(summary, Mapping) or summary.get("InstanceGroupName") != group:
            continue
        instance = summary.get("InstanceId")
        key = instance if isinstance(instance, str) and instance else f"#{len(nodes)}"
        nodes[key] = _node_status(summary)
    return NodeTally(group, nodes, complete, previous.carried if previous is not None else {})


@dataclass(frozen=True)
class GroupProgress:
    """What one poll saw for one gated group.

    ``min_count``/``target_count`` are the *requested* values;
    ``reported_min``/``reported_target`` what DescribeCluster returned (``None``
    when absent, e.g. a boto3 that predates ``MinCount``).  ``status`` is the
    group status, or :data:`NOT_LISTED`.
    """

    name: str
    status: str
    current_count: int
    min_count: int
    target_count: int
    reported_target: int | None
    reported_min: int | None
    nodes: NodeTally | None = None
    """The group's nodes from ``ListClusterNodes``, when the check read them. Default: none."""

    @property
    def listed(self) -> bool:
        """Whether DescribeCluster listed the group."""
        return self.status != NOT_LISTED

    @property
    def counts_match(self) -> bool:
        """Whether HyperPod still reports the requested target (and minimum)."""
        if self.reported_target != self.target_count:
            return False
        return self.reported_min is None or self.reported_min == self.min_count

    @property
    def rolled_back(self) -> bool:
        """``InService`` (or ``Degraded``: short of its restored target) with reported counts
        that differ from the request.

        That is what a HyperPod rollback looks like (a new group goes to 0/0, an
        existing one back to its last InService values).  A count that is not
        reported at all is unknown, not different.
        """
        if self.status not in COUNTED_GROUP_STATUSES:
            return False
        if self.reported_target is not None and self.reported_target != self.target_count:
            return True
        return self.reported_min is not None and self.reported_min != self.min_count

    @property
    def counted(self) -> bool:
        """What DescribeCluster says: ``InService`` or ``Degraded``
        (:data:`COUNTED_GROUP_STATUSES`), counts untouched, ``CurrentCount`` at least the
        minimum."""
        return (
            self.status in COUNTED_GROUP_STATUSES
            and self.counts_match
            and self.current_count >= self.min_count
        )

    @property
    def nodes_short(self) -> bool:
        """DescribeCluster counts the minimum, but fewer of the listed nodes are Running."""
        return self.counted and self.nodes is not None and self.nodes.running < self.min_count

    @property
    def ready(self) -> bool:
        """:attr:`counted`, and, when the nodes were listed, at least the minimum Running."""
        return self.counted and not self.nodes_short


@dataclass(frozen=True)
class GateDecision:
    """Result of :func:`evaluate_gate`: a status, the human reason, the groups."""

    status: GateStatus
    """READY, WAITING or FAILED."""
    reason: str
    """Why, in words: what the gate saw and, on FAILED, what to do."""
    groups: tuple[GroupProgress, ...]
    """The progress of each gated group (current, minimum and target counts, status)."""


def _as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    return None


def _utc(moment: datetime) -> datetime:
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def _progress(
    name: str, req: GroupRequirement, group: Mapping[str, Any] | None, nodes: NodeTally | None
) -> GroupProgress:
    if group is None:
        return GroupProgress(name, NOT_LISTED, 0, req.min_count, req.target_count, None, None)
    current = _as_int(group.get("CurrentCount"))
    return GroupProgress(
        name=name,
        status=str(group.get("Status") or "Unknown"),
        current_count=current if current is not None else 0,
        min_count=req.min_count,
        target_count=req.target_count,
        reported_target=_as_int(group.get("TargetCount")),
        reported_min=_as_int(group.get("MinCount")),
        nodes=nodes,
    )


def _fragment(group: GroupProgress) -> str:
    if not group.listed:
        return f"{group.name} not listed (minimum {group.min_count}, target {group.target_count})"
    text = (
        f"{group.name} {group.current_count}/{group.min_count} "
        f"(target {group.target_count}, {group.status}"
    )
    if not group.counts_match:
        reported = "none" if group.reported_target is None else str(group.reported_target)
        text += f", HyperPod reports target {reported}"
        if group.reported_min is not None:
            text += f" and minimum {group.reported_min}"
    return text + ")"


def _fragments(groups: Sequence[GroupProgress]) -> str:
    return ", ".join(_fragment(g) for g in groups) if groups else "no gated groups"


def _cluster_text(name: str, status: str, failure_message: str | None) -> str:
    text = f"cluster {name} is {status}"
    if failure_message:
        text += f" (FailureMessage: {_clip(failure_message, FAILURE_MESSAGE_LIMIT)})"
    return text


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, ending in ``...`` when it was longer."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _clip(text: str, limit: int) -> str:
    """One line (white space folded), clipped."""
    return clip(" ".join(text.split()), limit)


def _event_time(event: Mapping[str, Any]) -> float:
    value = event.get("EventTime")
    if isinstance(value, datetime):
        return _utc(value).timestamp()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return float("-inf")


def latest_error_events(
    events: Sequence[Mapping[str, Any]],
    *,
    groups: Sequence[str] | None = None,
    limit: int = MAX_ERROR_EVENTS,
) -> list[Mapping[str, Any]]:
    """Return the newest distinct Error-level events, newest first.

    When ``groups`` is given, only events of those groups and cluster-level
    events (no ``InstanceGroupName``) are kept.
    """
    wanted = None if groups is None else frozenset(groups)
    picked = [
        e
        for e in events
        if e.get("EventLevel") == "Error"
        and (
            wanted is None or e.get("InstanceGroupName") in wanted or not e.get("InstanceGroupName")
        )
    ]
    # sort() is stable, so events without a time keep their relative order.
    picked.sort(key=_event_time, reverse=True)
    distinct: list[Mapping[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for event in picked:
        key = (str(event.get("InstanceGroupName") or ""), str(event.get("Description") or ""))
        if key not in seen:  # HyperPod repeats the same error on every launch retry
            seen.add(key)
            distinct.append(event)
    return distinct[:limit]


def _events_text(events: Sequence[Mapping[str, Any]]) -> str:
    parts = []
    for event in events:
        where = event.get("InstanceGroupName") or "cluster"
        text = _clip(str(event.get("Description") or "(no description)"), EVENT_TEXT_LIMIT)
        parts.append(f"[{where}] {text}")
    return " | ".join(parts)


def evaluate_gate(
    describe_cluster_response: Mapping[str, Any],
    requirements: Mapping[str, GroupRequirement],
    *,
    events: Sequence[Mapping[str, Any]] = (),
    now: datetime | None = None,
    deadline: datetime | None = None,
    armed_at: datetime | None = None,
    nodes: Mapping[str, NodeTally] | None = None,
) -> GateDecision:
    """Decide whether the gated instance groups reached their minimum.

    ``describe_cluster_response`` is a (boto3-parsed) DescribeCluster response;
    ``requirements`` maps each gated group name to what was requested (ungated
    groups are ignored).  ``events`` are ListClusterEvents entries used only to
    enrich a FAILED reason.  When ``deadline`` is given, ``now`` must be too
    (naive datetimes are taken as UTC); a decision that is neither READY nor
    FAILED at or after the deadline becomes FAILED.

    Returns READY when every gated group is ``InService`` with ``CurrentCount``
    >= the requested minimum and ``TargetCount`` (and ``MinCount``, when
    reported) equal to the requested values; FAILED when the cluster is
    ``Failed``/``Deleting``, a gated group is ``Failed``/``Deleting``/rolled back
    (``InService`` with other counts), or missing outside cluster creation;
    WAITING otherwise.

    ``armed_at`` (with ``now``): during the first ``SETTLE_SECONDS`` (10 min) after the gate was
    armed, a gated group that is missing or reports other counts is taken as "HyperPod has
    not applied the update yet" (WAITING), not as a rollback; HyperPod's rollback comes
    hours later, so this never hides one.

    ``nodes`` (each from ``tally_nodes``): a group whose nodes are given is only ready when at
    least its minimum of them are ``Running``; until then it is WAITING (and FAILED at the
    deadline), however many DescribeCluster counts.

    :param describe_cluster_response: a (boto3-parsed) DescribeCluster response.
    :param requirements: each gated group's name -> what was requested.
    :param events: ListClusterEvents entries, newest first, to enrich a FAILED reason.
        Default: none.
    :param now: the current time. Default: none (no deadline or settle window applies).
    :param deadline: when waiting becomes FAILED. Default: none.
    :param armed_at: when the gate was armed, for the settle window. Default: none.
    :param nodes: gated group name -> its nodes from ListClusterNodes. Default: none
        (DescribeCluster's counts decide alone).
    """
    if deadline is not None and now is None:
        raise ValueError("evaluate_gate needs now= when deadline= is given")
    if not isinstance(describe_cluster_response, Mapping):
        raise TypeError("describe_cluster_response must be a mapping (a DescribeCluster answer)")
    if not isinstance(requirements, Mapping) or not all(
        isinstance(r, GroupRequirement) for r in requirements.values()
    ):
        raise TypeError("requirements must map group names to GroupRequirement")

    cluster_status = str(describe_cluster_response.get("ClusterStatus") or "Unknown")
    cluster_name = str(describe_cluster_response.get("ClusterName") or "(unnamed)")
    raw_failure = describe_cluster_response.get("FailureMessage")
    failure_message = str(raw_failure) if raw_failure else None

    listed: dict[str, Mapping[str, Any]] = {}
    for group in describe_cluster_response.get("InstanceGroups") or ():
        if isinstance(group, Mapping) and isinstance(group.get("InstanceGroupName"), str):
            listed.setdefault(group["InstanceGroupName"], group)

    tallies = nodes or {}
    groups = tuple(_progress(n, r, listed.get(n), tallies.get(n)) for n, r in requirements.items())
    cluster = _cluster_text(cluster_name, cluster_status, failure_message)
    summary = _fragments(groups)

    problems: list[str] = []
    hints: list[str] = []
    if cluster_status == "Failed":
        problems.append(f"cluster {cluster_name} is Failed")
        hints.append(_HINT_CLUSTER_FAILED)
    elif cluster_status == "Deleting":
        problems.append(f"cluster {cluster_name} is being deleted")
        hints.append(_HINT_CLUSTER_DELETING)

    settling = (
        armed_at is not None
        and now is not None
        and (_utc(now) - _utc(armed_at)).total_seconds() < SETTLE_SECONDS
        and cluster_status not in ("Failed", "Deleting")
    )
    rolled = [] if settling else [g for g in groups if g.rolled_back]
    if rolled:
        names = ", ".join(g.name for g in rolled)
        problems.append(
            f"HyperPod rolled back instance group(s) {names}: "
            f"{'/'.join(sorted({g.status for g in rolled}))} with counts "
            "other than requested, so the minimum was not reached"
        )
        hints.append(_HINT_ROLLBACK)
    failed = [g for g in groups if g.status == "Failed"]
    if failed:
        problems.append(f"instance group(s) {', '.join(g.name for g in failed)} Failed")
        hints.append(_HINT_GROUP_FAILED)
    deleting = [g for g in groups if g.status == "Deleting"]
    if deleting:
        problems.append(f"instance group(s) {', '.join(g.name for g in deleting)} Deleting")
        hints.append(_HINT_GROUP_DELETING)
    missing = [g for g in groups if not g.listed]
    if missing and cluster_status != "Creating" and not settling:
        problems.append(
            f"instance group(s) {', '.join(g.name for g in missing)} not in the cluster"
        )
        hints.append(_HINT_NOT_LISTED)

    if not problems:
        if all(g.ready for g in groups):
            return GateDecision(
                "READY",
                f"all gated groups reached their minimum: {summary}; {cluster}"
                + _degraded_note(groups),
                groups,
            )
        short = [g for g in groups if not g.ready]
        only_nodes = all(g.nodes_short for g in short)
        running = "; ".join(g.nodes.text() for g in short if g.nodes is not None)
        if deadline is not None and now is not None and _utc(now) >= _utc(deadline):
            stamp = _utc(deadline).strftime("%Y-%m-%dT%H:%M:%SZ")
            problem = f"deadline reached ({stamp}) before every gated group reached its minimum"
            if only_nodes:
                problem += f" of Running nodes ({running})"
            problems.append(problem)
            degraded = [g.name for g in short if g.status == DEGRADED]
            if only_nodes:
                hints.append(_HINT_NOT_RUNNING)
            elif degraded:
                problems.append(f"instance group(s) {', '.join(degraded)} Degraded")
                hints.append(_HINT_DEGRADED)
            else:
                hints.append(_HINT_DEADLINE)
        elif only_nodes:
            return GateDecision(
                "WAITING",
                f"waiting for Running nodes: {running} (DescribeCluster already counts the "
                f"minimum); {summary}; {cluster}",
                groups,
            )
        else:
            return GateDecision(
                "WAITING", f"waiting for minimum capacity: {summary}; {cluster}", groups
            )

    reason = f"MinCount gate failed: {'; '.join(problems)}. Groups (current/minimum): "
    reason += f"{summary}; {cluster}. {hints[0]}"
    recent = latest_error_events(
        events,
        groups=None if cluster_status in ("Failed", "Deleting") else list(requirements),
    )
    if recent:
        reason += f" Latest errors (newest first): {_events_text(recent)}"
    return GateDecision("FAILED", reason, groups)


def _degraded_note(groups: Sequence[GroupProgress]) -> str:
    """For a READY with Degraded groups: what that means (pure)."""
    degraded = [g for g in groups if g.status == DEGRADED]
    if not degraded:
        return ""
    names = ", ".join(g.name for g in degraded)
    return (
        f"; {names} Degraded at the minimum: the minimum is Running, some instances failed "
        "to provision or are no longer healthy, and HyperPod keeps working toward the target"
    )


def summarize(groups: Sequence[GroupProgress]) -> str:
    """Compact ``name=current/min/target`` list, e.g. for the signal's Data."""
    return ",".join(f"{g.name}={g.current_count}/{g.min_count}/{g.target_count}" for g in groups)

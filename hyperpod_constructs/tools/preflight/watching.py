"""What ``watch --capacity`` shows for gated groups still below their minimum: the same checks
as ``preflight`` (quotas less the other clusters' use, the training plan), against the cluster
as HyperPod describes it, in one line, so the person watching knows whether waiting can help.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from ..._core.sanitize import printable
from ..watch.target import WatchTarget
from .demand import ClusterDemand, GroupDemand
from .verdict import GroupVerdict, judge


def demand_of_cluster(target: WatchTarget, described: Mapping[str, Any]) -> ClusterDemand:
    """The watched cluster's demand: its groups as ``DescribeCluster`` lists them (type,
    ``TargetCount``, training plan) with the gate's minimums (pure)."""
    minimums = {g.name: g.min_count for g in target.groups}
    groups: list[GroupDemand] = []
    for group in described.get("InstanceGroups") or []:
        name = str(group.get("InstanceGroupName") or "")
        kind = group.get("InstanceType")
        plan = group.get("TrainingPlanArn")
        target_count = group.get("TargetCount")
        groups.append(
            GroupDemand(
                name=name,
                instance_types=(kind,) if isinstance(kind, str) else (),
                count=target_count if isinstance(target_count, int) else "?",
                minimum=minimums.get(name),
                training_plan=plan if isinstance(plan, str) and plan else None,
            )
        )
    cluster = described.get("ClusterName")
    return ClusterDemand(
        stack_name=target.stack_name,
        display_name=target.display_name,
        region=target.region,
        logical_id=target.cluster_logical_id,
        name=cluster if isinstance(cluster, str) else target.cluster_name,
        groups=tuple(groups),
    )


def _group_text(verdict: GroupVerdict) -> str:
    order = {"short": 0, "unknown": 1, "met": 2}
    check = min(verdict.checks, key=lambda c: order[c.verdict])
    text = (
        f"{verdict.group.name} (minimum {verdict.group.minimum}): {check.subject}: {check.detail}"
    )
    if verdict.verdict == "short":
        return f"{text}; waiting cannot help: {check.fix or 'lower the minimum'}"
    if verdict.verdict == "unknown":
        return f"{text}; whether waiting can help is unknown"
    return f"{text}; quotas and plan allow the minimum: waiting for capacity can help"


def capacity_line(
    target: WatchTarget,
    described: Mapping[str, Any],
    below: set[str],
    *,
    region: str | None,
    session: Any = None,
    now: Callable[[], datetime] | None = None,
) -> str:
    """One line for the gated groups named in ``below``: their ``preflight`` checks. Never
    raises: a read that fails is in the line."""
    from .aws import AccountReader, make_clients

    demand = demand_of_cluster(target, described)
    try:
        account = AccountReader(make_clients(region=region, session=session), now).account([demand])
    except Exception as error:  # FatalError, or anything botocore raised: watch goes on
        return printable(f"capacity: not read: {error}")
    verdicts = [v for v in judge([demand], account) if v.group.name in below]
    return printable("capacity: " + " | ".join(_group_text(v) for v in verdicts))

"""Per gated group: can its minimum be met? A pure function of the app's demand and the
account's facts.

Three verdicts: ``short`` (cannot be met: a quota, what the other clusters leave, or the
training plan is below the minimum; the number short and what to do), ``unknown`` (an answer
the check needs was not read, or a number is not known before the deploy) and ``met``. A group
is ``short`` when any check is, else ``unknown`` when any is, else ``met``.

The checks of a gated group (``need`` as in :mod:`.demand`: a gated group's minimum, any other
group's whole count):

- ``<type> for cluster usage``, for a group without a training plan: the quota minus what the
  account's *other* clusters hold of that type (on-demand, not on a plan) minus what this
  cluster's other groups need of it (a flexible group may use any of its types: the room of
  each adds up). An update counts only what it adds: the deployed cluster (same name) is not
  an "other" cluster; a cluster replaced under a new name is, until it is deleted.
- ``Maximum number instances allowed per SageMaker HyperPod cluster``: the cluster's need.
- ``Total number of instances allowed across SageMaker HyperPod clusters``: every other
  cluster's instances plus this cluster's need.
- For a group on a training plan: the plan is ``Active`` (or ``Scheduled`` to start inside
  HyperPod's 3-hour window), does not end inside the window, serves HyperPod clusters, and
  its available instances (plus those this cluster already holds of it) cover the need of the
  groups on it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from ..._core.limits import MIN_COUNT_WINDOW_HOURS
from .demand import ClusterDemand, GroupDemand
from .facts import Account, ClusterUse, Plan, Quota, Unread
from .quotas import Kind, find, wanted

Verdict = Literal["met", "short", "unknown"]
VERDICTS: tuple[Verdict, ...] = ("short", "unknown", "met")
"""Worst first."""
HYPERPOD_CLUSTER = "hyperpod-cluster"
"""``TargetResources`` value of a plan HyperPod clusters may use."""


@dataclass(frozen=True)
class Check:
    """One limit a gated group's minimum meets."""

    kind: Literal["quota", "plan", "input"]
    subject: str
    """The quota's name (as AWS spells it), the plan's name, or what is not known."""
    verdict: Verdict
    detail: str
    """The numbers, one line."""
    limit: int | None = None
    """The quota, or the plan's available instances."""
    others: int | None = None
    """What the account's other clusters hold against it."""
    needed: int | None = None
    """What this cluster needs of it (this group's minimum included)."""
    short_by: int | None = None
    fix: str | None = None
    code: str | None = None
    """The quota's code (``L-...``), for an increase request."""


@dataclass(frozen=True)
class GroupVerdict:
    """The verdict of one gated group."""

    cluster: ClusterDemand
    group: GroupDemand
    checks: tuple[Check, ...]

    @property
    def verdict(self) -> Verdict:
        return worst(c.verdict for c in self.checks)

    @property
    def short_by(self) -> int | None:
        """The largest shortfall of its checks (None unless ``short``)."""
        shorts = [c.short_by for c in self.checks if c.short_by is not None]
        return max(shorts) if shorts else None


def worst(verdicts: Iterable[Verdict]) -> Verdict:
    found = set(verdicts)
    return next((v for v in VERDICTS if v in found), "met")


def _others(clusters: Sequence[ClusterUse], own: str | None) -> list[ClusterUse]:
    return [c for c in clusters if c.name != own]


def _held_of_type(clusters: Sequence[ClusterUse], instance_type: str) -> int:
    """On-demand instances of ``instance_type`` the clusters hold (groups on a plan aside)."""
    total = 0
    for cluster in clusters:
        for group in cluster.groups:
            if group.training_plan is not None:
                continue
            if group.types:
                total += group.types.get(instance_type, 0)
                if group.count > group.current:  # still launching: its preferred type
                    total += (group.count - group.current) * (group.instance_type == instance_type)
            elif group.instance_type == instance_type:
                total += group.count
    return total


def _clusters_unread(unread: Unread) -> Check:
    return Check("quota", "clusters", "unknown", f"other clusters' use: {unread.reason}")


def _unknown_need(groups: Iterable[GroupDemand]) -> str | None:
    for group in groups:
        if group.need is None:
            value = group.minimum if group.gated else group.count
            what = "minimum" if group.gated else "InstanceCount"
            return f"the {what} of group {group.name} is {value}, not known before the deploy"
    return None


def _fix(quota: Quota, short: int, minimum: int, plan: bool = True) -> str:
    lower = max(minimum - short, 0)
    text = (
        f"request a quota increase of {quota.name!r} ({quota.code}) to {quota.value + short} "
        f"in Service Quotas, or lower the minimum to {lower}"
    )
    return text + (", or run the group on a training plan" if plan else "")


def _quota_check(
    quota: Quota | Unread,
    name: str,
    *,
    group: GroupDemand,
    minimum: int,
    others: int | None,
    rest: int,
    what: str,
    plan_hint: bool = True,
) -> Check:
    """``rest``: what this cluster needs of the quota besides this group."""
    if isinstance(quota, Unread):
        return Check("quota", name, "unknown", f"not read: {quota.reason}")
    held = others or 0
    needed = rest + minimum
    room = quota.value - held - rest
    short = max(minimum - room, 0)
    source = "" if quota.applied else " (AWS default; no applied value)"
    detail = (
        f"quota {quota.value}{source}: "
        + (f"other clusters hold {held}, " if others is not None else "")
        + f"this cluster needs {needed} {what}"
        + (f" (group {group.name}: {minimum})" if rest else "")
        + (f": {short} short" if short else f": {room - minimum} to spare")
    )
    return Check(
        "quota",
        quota.name,
        "short" if short else "met",
        detail,
        limit=quota.value,
        others=held,
        needed=needed,
        short_by=short or None,
        fix=_fix(quota, short, minimum, plan_hint) if short else None,
        code=quota.code,
    )


def _type_check(
    demand: ClusterDemand, group: GroupDemand, minimum: int, account: Account
) -> list[Check]:
    if not group.instance_types:
        return [Check("input", "instance type", "unknown", "the instance type is an expression")]
    if isinstance(account.clusters, Unread):
        return [_clusters_unread(account.clusters)]
    others = _others(account.clusters, demand.name)
    checks: list[Check] = []
    for instance_type in group.instance_types:
        quota = find(account.quotas, Kind.INSTANCE_TYPE, instance_type)
        siblings = [
            g
            for g in demand.groups
            if g is not group
            and g.training_plan is None
            and g.instance_types[:1] == (instance_type,)
        ]
        unknown = _unknown_need(siblings)
        if unknown is not None:
            checks.append(Check("input", f"{instance_type} for cluster usage", "unknown", unknown))
            continue
        rest = sum(g.need or 0 for g in siblings)
        checks.append(
            _quota_check(
                quota,
                wanted(Kind.INSTANCE_TYPE, instance_type),
                group=group,
                minimum=minimum,
                others=_held_of_type(others, instance_type),
                rest=rest,
                what=f"of {instance_type} at its minimums",
            )
        )
    if len(checks) > 1 and all(c.verdict != "unknown" for c in checks):
        # A flexible group: the room of its types adds up.
        room = sum((c.limit or 0) - (c.others or 0) - ((c.needed or 0) - minimum) for c in checks)
        short = max(minimum - room, 0)
        detail = f"its types together leave room for {room} of {minimum}"
        return [
            Check(
                "quota",
                " + ".join(c.subject for c in checks),
                "short" if short else "met",
                detail + (f": {short} short" if short else ""),
                limit=room,
                short_by=short or None,
                fix=(
                    f"request a quota increase of {' or '.join(repr(c.subject) for c in checks)}"
                    f" by {short} in Service Quotas, or lower the minimum to {minimum - short}"
                )
                if short
                else None,
            )
        ]
    return checks


def _cluster_checks(
    demand: ClusterDemand, group: GroupDemand, minimum: int, account: Account
) -> list[Check]:
    rest_groups = [g for g in demand.groups if g is not group]
    unknown = _unknown_need(rest_groups)
    if unknown is not None:
        return [Check("input", "cluster instances", "unknown", unknown)]
    rest = sum(g.need or 0 for g in rest_groups)

    def cluster_quota(kind: Kind, others: int | None) -> Check:
        return _quota_check(
            find(account.quotas, kind),
            wanted(kind),
            group=group,
            minimum=minimum,
            others=others,
            rest=rest,
            what="instances at its minimums",
            plan_hint=False,
        )

    checks = [cluster_quota(Kind.PER_CLUSTER, None)]
    if isinstance(account.clusters, Unread):
        return [*checks, _clusters_unread(account.clusters)]
    held = sum(g.count for c in _others(account.clusters, demand.name) for g in c.groups)
    return [*checks, cluster_quota(Kind.ACROSS_CLUSTERS, held)]


def _when(time: datetime) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC")


def _plan_status(plan: Plan, now: datetime, window: timedelta) -> str | None:
    """Why the plan cannot give instances inside the window (None: it can)."""
    end_of_window = now + window
    if plan.status in ("Expired", "Failed"):
        return f"the plan is {plan.status}"
    if plan.status == "Pending":
        return "the plan is Pending (not yet Scheduled or Active): its capacity is not confirmed"
    if plan.status == "Scheduled" and (plan.start is None or plan.start > end_of_window):
        start = _when(plan.start) if plan.start else "an unknown time"
        return (
            f"the plan is Scheduled to start at {start}, after HyperPod's "
            f"{MIN_COUNT_WINDOW_HOURS}-hour window from "
            "now: the group would be rolled back before its capacity arrives"
        )
    if plan.status not in ("Active", "Scheduled"):
        return None
    if plan.end is not None and plan.end <= end_of_window:
        return (
            f"the plan ends at {_when(plan.end)}, inside HyperPod's 3-hour window from now: "
            "its instances would be taken back"
        )
    if plan.target_resources and HYPERPOD_CLUSTER not in plan.target_resources:
        return f"the plan is for {', '.join(plan.target_resources)}, not {HYPERPOD_CLUSTER}"
    return None


def _plan_check(demand: ClusterDemand, group: GroupDemand, minimum: int, account: Account) -> Check:
    arn = group.training_plan or ""
    plan = account.plans.get(arn)
    if plan is None or isinstance(plan, Unread):
        reason = plan.reason if plan is not None else "not read"
        return Check("plan", arn, "unknown", f"training plan {arn}: {reason}")
    fix = (
        "use an Active training plan with enough instances (or one Scheduled to start within "
        f"{MIN_COUNT_WINDOW_HOURS} hours), deploy when the plan is Active, or lower the minimum"
    )
    if plan.status not in ("Active", "Scheduled", "Pending", "Expired", "Failed"):
        return Check(
            "plan", plan.name, "unknown", f"the plan's status {plan.status!r} is not known"
        )
    blocked = _plan_status(plan, account.now, timedelta(hours=MIN_COUNT_WINDOW_HOURS))
    if blocked is not None:
        return Check("plan", plan.name, "short", blocked, short_by=minimum, fix=fix)
    types = set(group.instance_types)
    if plan.instance_types and types and not types & set(plan.instance_types):
        return Check(
            "plan",
            plan.name,
            "short",
            f"the plan reserves {', '.join(plan.instance_types)}, not "
            f"{', '.join(group.instance_types)}",
            short_by=minimum,
            fix=fix,
        )
    available = plan.available if plan.available is not None else None
    if available is None:
        return Check(
            "plan", plan.name, "unknown", "the plan's answer has no AvailableInstanceCount"
        )
    on_plan = [g for g in demand.groups if g.training_plan == arn and g is not group]
    unknown = _unknown_need(on_plan)
    if unknown is not None:
        return Check("input", plan.name, "unknown", unknown)
    rest = sum(g.need or 0 for g in on_plan)
    if isinstance(account.clusters, Unread):
        own_held = 0 if demand.name is None else None
    else:
        own_held = sum(
            g.current
            for c in account.clusters
            if c.name == demand.name
            for g in c.groups
            if g.training_plan == arn
        )
    if own_held is None:
        reason = account.clusters.reason if isinstance(account.clusters, Unread) else ""
        return Check("plan", plan.name, "unknown", f"this cluster's use of the plan: {reason}")
    room = available + own_held - rest
    short = max(minimum - room, 0)
    detail = (
        f"{plan.status}, {available} instances available"
        + (f" (+{own_held} this cluster holds)" if own_held else "")
        + (f", starts {_when(plan.start)}" if plan.status == "Scheduled" and plan.start else "")
        + f"; this cluster needs {rest + minimum} of it"
        + (f": {short} short" if short else "")
    )
    return Check(
        "plan",
        plan.name,
        "short" if short else "met",
        detail,
        limit=available,
        needed=rest + minimum,
        short_by=short or None,
        fix=f"extend the plan or use a larger one, or lower the minimum to {minimum - short}"
        if short
        else None,
    )


def judge_group(demand: ClusterDemand, group: GroupDemand, account: Account) -> GroupVerdict:
    """The checks of one gated group of ``demand``."""
    minimum = group.minimum
    if not isinstance(minimum, int):
        check = Check(
            "input",
            "minimum",
            "unknown",
            f"the minimum is {minimum}, not known before the deploy (read the deployed stack's "
            "parameters with --stack)",
        )
        return GroupVerdict(demand, group, (check,))
    checks: list[Check] = []
    if demand.name_problem is not None:
        checks.append(Check("input", "cluster name", "unknown", demand.name_problem))
    if group.plan_expression:
        checks.append(
            Check("input", "training plan", "unknown", "TrainingPlanArn is an expression")
        )
    elif group.training_plan is not None:
        checks.append(_plan_check(demand, group, minimum, account))
    else:
        checks += _type_check(demand, group, minimum, account)
    checks += _cluster_checks(demand, group, minimum, account)
    return GroupVerdict(demand, group, tuple(checks))


def judge(demands: Sequence[ClusterDemand], account: Account) -> list[GroupVerdict]:
    """Every gated group's verdict, in the clusters' and groups' order."""
    return [judge_group(d, g, account) for d in demands for g in d.gated]

"""What the account answered, as plain values (no AWS call here).

Each fact is either read or :class:`Unread` (why not: denied, throttled after retries, an answer
that does not fit AWS's model): a verdict that needs an unread fact is "unknown", never "met".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime


@dataclass(frozen=True)
class Unread:
    """An answer that could not be read; ``reason`` is one printable line naming the call."""

    reason: str


@dataclass(frozen=True)
class Quota:
    """One SageMaker entry of Service Quotas."""

    name: str
    """``QuotaName`` as AWS spells it, e.g. ``ml.p5.48xlarge for cluster usage``."""
    code: str
    """``QuotaCode``, e.g. ``L-...``: what a quota increase request names."""
    value: int
    """The quota, in instances (AWS's ``Value``, a whole number of instances, rounded down)."""
    applied: bool
    """True: the account's applied value (ListServiceQuotas); False: AWS's default
    (ListAWSDefaultServiceQuotas), for an account without an applied value."""


@dataclass(frozen=True)
class Quotas:
    """The account's SageMaker quotas, both lists Service Quotas gives."""

    applied: tuple[Quota, ...] | Unread
    """ListServiceQuotas (every page)."""
    defaults: tuple[Quota, ...] | Unread
    """ListAWSDefaultServiceQuotas (every page)."""


@dataclass(frozen=True)
class GroupUse:
    """One instance group of a cluster that exists (DescribeCluster)."""

    name: str
    instance_type: str | None
    """``InstanceType``; None when the answer has none."""
    count: int
    """The instances the group holds or is launching: the larger of ``CurrentCount`` and
    ``TargetCount``."""
    current: int
    """``CurrentCount``."""
    training_plan: str | None = None
    """``TrainingPlanArn``: the group runs on a plan's reserved capacity."""
    types: Mapping[str, int] = field(default_factory=dict)
    """Instance type -> ``CurrentCount`` of a flexible group (``InstanceTypeDetails``)."""


@dataclass(frozen=True)
class ClusterUse:
    """One cluster of the account (ListClusters, then DescribeCluster)."""

    name: str
    status: str
    groups: tuple[GroupUse, ...]


@dataclass(frozen=True)
class Plan:
    """A training plan (DescribeTrainingPlan)."""

    arn: str
    name: str
    status: str
    """``Pending``, ``Scheduled``, ``Active``, ``Expired`` or ``Failed``."""
    available: int | None
    """``AvailableInstanceCount``: instances of the plan not in use."""
    total: int | None
    """``TotalInstanceCount``."""
    start: datetime | None
    end: datetime | None
    target_resources: tuple[str, ...] = ()
    """``TargetResources``: ``hyperpod-cluster`` when HyperPod may use the plan."""
    instance_types: tuple[str, ...] = ()
    """The instance types of the plan's reserved capacities."""


@dataclass(frozen=True)
class Account:
    """Every fact the verdicts read, at one time."""

    now: datetime
    """When the facts were read (AWS's clock when an answer had a ``Date``)."""
    quotas: Quotas
    clusters: tuple[ClusterUse, ...] | Unread
    """Every cluster of the account in the region (this app's own cluster included)."""
    plans: Mapping[str, Plan | Unread] = field(default_factory=dict)
    """Training plan ARN -> the plan."""

"""Organisation policy rules for HyperPod clusters: pure checks over :class:`ClusterFacts`.

Each rule is a small frozen dataclass with a stable id (:class:`PolicyRuleId`) and a
configurable :class:`PolicySeverity`; :class:`~hyperpod_constructs.policy.HyperPodPolicy`
runs them over every cluster of an app. A rule returns
:class:`~hyperpod_constructs.validation.Finding` values, like every check of the library.
Write your own rule by implementing :class:`PolicyRule` (``rule_id``, ``severity``,
``check``).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Protocol, runtime_checkable

from aws_cdk import TagManager, Token

from .._core.expect import require
from .._core.finding import Finding, Severity
from ..enums import DeepHealthCheck, NodeProvisioningMode, NodeType
from ..instance_group import InstanceGroup
from ..instance_type import HyperPodInstanceType

if TYPE_CHECKING:
    from ..cluster import HyperPodSlurmCluster


PolicySeverity = Severity
"""What a broken policy rule does: the library's one :class:`Severity` enum.

``ERROR`` fails the synth (the policy's node validation reports it, so ``python app.py``,
``cdk synth`` and an in-process ``app.synth()`` all fail and write no template) and adds
an error annotation.
``WARNING`` adds a warning annotation (id ``hyperpod-policy:<rule id>``): reported, and
fatal only with ``cdk synth --strict``; acknowledge it with
``Annotations.of(cluster).acknowledge_warning("hyperpod-policy:<rule id>", reason)``.
A string (``"error"`` / ``"warning"``, any case) is accepted wherever a severity is; anything
else is rejected, so a policy never fails open.
"""


class PolicyRuleId(enum.StrEnum):
    """The ids of the built-in rules (use them as keys of ``HyperPodPolicy(severities=...)``)."""

    INSTANCE_TYPE = "HPP-INSTANCE-TYPE"
    MAX_INSTANCE_COUNT = "HPP-MAX-COUNT"
    MIN_INSTANCE_FLOOR = "HPP-MIN-FLOOR"
    DEEP_HEALTH_CHECKS = "HPP-DEEP-HEALTH"
    REQUIRED_TAGS = "HPP-TAGS"
    EBS_CUSTOMER_KEY = "HPP-EBS-KMS"
    VPC_REQUIRED = "HPP-VPC"


@dataclass(frozen=True)
class ClusterFacts:
    """What the policy rules see of one cluster (a snapshot taken after all aspects ran)."""

    path: str
    """The cluster's construct path."""
    groups: tuple[InstanceGroup, ...]
    """The cluster's instance groups, in the order they were added."""
    node_provisioning_mode: NodeProvisioningMode = NodeProvisioningMode.CONTINUOUS
    """The cluster's ``NodeProvisioningMode``. Default: CONTINUOUS."""
    tags: Mapping[str, str] = field(default_factory=dict)
    """The tags of the ``AWS::SageMaker::Cluster`` resource: ``tags=`` plus ``Tags.of()``."""
    has_vpc: bool = False
    """Whether the cluster has a ``VpcConfig`` (its own network). Default: False."""

    @classmethod
    def of(cls, cluster: HyperPodSlurmCluster) -> ClusterFacts:
        """Read a cluster construct. Call it after aspects ran (at validation) so that tags
        applied with ``Tags.of(...)`` are included.

        :param cluster: the cluster; anything else is a ``TypeError`` naming it.
        """
        from ..cluster import HyperPodSlurmCluster

        require("ClusterFacts.of", "cluster", cluster, HyperPodSlurmCluster)
        resource = cluster.node.default_child
        tags: dict[str, str] = {}
        has_vpc = False
        if resource is not None:
            manager = TagManager.of(resource)
            if manager is not None:
                tags = dict(manager.tag_values())
            has_vpc = getattr(resource, "vpc_config", None) is not None
        return cls(
            path=cluster.node.path,
            groups=tuple(cluster.instance_groups),
            node_provisioning_mode=cluster.node_provisioning_mode,
            tags=tags,
            has_vpc=has_vpc,
        )


def fail_closed(severity: object) -> Severity:
    """``severity`` as a :class:`Severity`; anything that is not one counts as an error (a
    policy never fails open)."""
    try:
        return Severity.of(severity)
    except TypeError:
        return Severity.ERROR


@runtime_checkable
class PolicyRule(Protocol):
    """A policy rule: implement this to add your own checks to :class:`HyperPodPolicy`."""

    @property
    def rule_id(self) -> str:
        """Stable id shown in messages and warning ids, e.g. ``ACME-NAME-PREFIX``."""
        ...

    @property
    def severity(self) -> PolicySeverity:
        """ERROR or WARNING."""
        ...

    def check(self, cluster: ClusterFacts) -> Iterable[Finding]:
        """Every finding of this rule on ``cluster`` (nothing when it complies): build them
        with ``Finding(rule=self.rule_id, severity=self.severity, path=cluster.path,
        group=..., problem=..., fix=...)``."""
        ...


@dataclass(frozen=True, kw_only=True)
class _Rule:
    RULE_ID: ClassVar[str]
    severity: PolicySeverity = PolicySeverity.ERROR
    """ERROR (default: fails synth) or WARNING (or its value as a string)."""

    def __post_init__(self) -> None:
        # Severity.of raises TypeError for anything that is not a severity: never fail open.
        object.__setattr__(self, "severity", Severity.of(self.severity))

    @property
    def rule_id(self) -> str:
        """The rule's stable id."""
        return self.RULE_ID

    def _violation(
        self, cluster: ClusterFacts, group: str | None, problem: str, fix: str
    ) -> Finding:
        return Finding(
            rule=str(self.RULE_ID),
            severity=self.severity,
            path=cluster.path,
            group=group,
            problem=problem,
            fix=fix,
        )


def _accelerated_compute(group: InstanceGroup) -> bool:
    return group.node_type is NodeType.COMPUTE and any(
        itype.is_accelerated for itype in group.all_instance_types
    )


def _names(values: Iterable[object]) -> str:
    return ", ".join(str(value) for value in values)


@dataclass(frozen=True)
class AllowedInstanceTypes(_Rule):
    """Every group (controller and login included) uses one of ``instance_types``; each
    type of a flexible group is checked.

    :param instance_types: the allowed types (constants or API names). Not empty.
    """

    RULE_ID: ClassVar[str] = PolicyRuleId.INSTANCE_TYPE
    instance_types: Collection[HyperPodInstanceType | str]

    def __post_init__(self) -> None:
        super().__post_init__()
        if isinstance(self.instance_types, str) or not self.instance_types:
            raise ValueError("AllowedInstanceTypes: give a non-empty list of instance types")

    @property
    def allowed(self) -> frozenset[str]:
        """The allowed API names."""
        return frozenset(str(value) for value in self.instance_types)

    def check(self, cluster: ClusterFacts) -> Iterable[Finding]:
        """Every finding of this rule on ``cluster`` (:meth:`PolicyRule.check`)."""
        allowed = self.allowed
        for group in cluster.groups:
            for itype in group.all_instance_types:  # a flexible group: each of its types
                if itype.name not in allowed:
                    yield self._violation(
                        cluster,
                        group.name,
                        f"instance_type {itype.name} is not allowed",
                        f"use one of {_names(sorted(allowed))}",
                    )


@dataclass(frozen=True)
class MaxInstanceCount(_Rule):
    """No group has more than ``maximum`` instances (``instance_count``).

    :param maximum: the largest allowed ``instance_count`` of any group (0 or more).
    """

    RULE_ID: ClassVar[str] = PolicyRuleId.MAX_INSTANCE_COUNT
    maximum: int

    def __post_init__(self) -> None:
        super().__post_init__()
        if isinstance(self.maximum, bool) or not isinstance(self.maximum, int) or self.maximum < 0:
            raise ValueError(f"MaxInstanceCount: maximum={self.maximum!r} must be an int >= 0")

    def check(self, cluster: ClusterFacts) -> Iterable[Finding]:
        """Every finding of this rule on ``cluster`` (:meth:`PolicyRule.check`)."""
        for group in cluster.groups:
            count = group.instance_count
            if isinstance(count, int) and count > self.maximum:
                yield self._violation(
                    cluster,
                    group.name,
                    f"instance_count {count} is above the maximum of {self.maximum} per "
                    "instance group",
                    f"lower instance_count to at most {self.maximum}, or split the instances "
                    "over several groups or clusters",
                )


@dataclass(frozen=True)
class MinInstanceFloor(_Rule):
    """Accelerator compute groups are gated at ``fraction`` of their size or more:
    ``min_instance_count >= ceil(fraction x instance_count)``.

    Applies to compute groups of GPU / Trainium types with ``instance_count > 0``. A cluster
    in STANDARD provisioning mode complies (provisioning is all-or-nothing there).

    :param fraction: the floor, more than 0 and at most 1 (1 = gated at full size).
    """

    RULE_ID: ClassVar[str] = PolicyRuleId.MIN_INSTANCE_FLOOR
    fraction: float

    def __post_init__(self) -> None:
        super().__post_init__()
        if (
            isinstance(self.fraction, bool)
            or not isinstance(self.fraction, int | float)
            or not 0 < self.fraction <= 1
        ):
            raise ValueError(f"MinInstanceFloor: fraction={self.fraction!r} must be in (0, 1]")

    def required(self, instance_count: int) -> int:
        """The smallest compliant ``min_instance_count`` for ``instance_count`` instances."""
        # The epsilon keeps e.g. 0.9 x 10 = 9.000000000000002 from rounding up to 10.
        return math.ceil(self.fraction * instance_count - 1e-9)

    def check(self, cluster: ClusterFacts) -> Iterable[Finding]:
        """Every finding of this rule on ``cluster`` (:meth:`PolicyRule.check`)."""
        if cluster.node_provisioning_mode is not NodeProvisioningMode.CONTINUOUS:
            return
        for group in cluster.groups:
            count = group.instance_count
            if not _accelerated_compute(group) or not isinstance(count, int) or count <= 0:
                continue
            required = self.required(count)
            actual = group.min_instance_count
            if isinstance(actual, int) and actual >= required:
                continue
            shown = "is not set" if actual is None else f"{actual}"
            yield self._violation(
                cluster,
                group.name,
                f"min_instance_count {shown} is below {self.fraction:.0%} of instance_count "
                f"{count} (at least {required})",
                f"set min_instance_count={required} or more (or size the group with "
                "InstanceGroup.compute(min_accelerators=...))",
            )


_ALL_CHECKS = (DeepHealthCheck.INSTANCE_STRESS, DeepHealthCheck.INSTANCE_CONNECTIVITY)


@dataclass(frozen=True)
class RequiredDeepHealthChecks(_Rule):
    """Accelerator compute groups run ``checks`` when their instances start.

    :param checks: the required on-start deep health checks. Default: InstanceStress and
        InstanceConnectivity.
    """

    RULE_ID: ClassVar[str] = PolicyRuleId.DEEP_HEALTH_CHECKS
    checks: Collection[DeepHealthCheck] = _ALL_CHECKS

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.checks:
            raise ValueError("RequiredDeepHealthChecks: give at least one DeepHealthCheck")

    def check(self, cluster: ClusterFacts) -> Iterable[Finding]:
        """Every finding of this rule on ``cluster`` (:meth:`PolicyRule.check`)."""
        required = [check for check in _ALL_CHECKS if check in set(self.checks)]
        for group in cluster.groups:
            if not _accelerated_compute(group):
                continue
            missing = [check for check in required if check not in group.deep_health_checks]
            if missing:
                wanted = sorted(
                    set(group.deep_health_checks) | set(required), key=_ALL_CHECKS.index
                )
                yield self._violation(
                    cluster,
                    group.name,
                    f"deep_health_checks lacks {_names(check.value for check in missing)}",
                    "pass deep_health_checks=["
                    + ", ".join(f"DeepHealthCheck.{check.name}" for check in wanted)
                    + "]",
                )


@dataclass(frozen=True)
class RequiredTags(_Rule):
    """The cluster carries ``tags`` (set with ``tags=`` or ``Tags.of(scope).add``).

    :param tags: tag keys, or a mapping of key to the allowed values (``None``: any value but
        an empty or blank one, e.g. an unset variable). A value that is a deploy-time token
        cannot be checked and is accepted.
    """

    RULE_ID: ClassVar[str] = PolicyRuleId.REQUIRED_TAGS
    tags: Mapping[str, Collection[str] | None] | Collection[str]

    def __post_init__(self) -> None:
        super().__post_init__()
        if isinstance(self.tags, str) or not self.tags:
            raise ValueError("RequiredTags: give a non-empty list or mapping of tag keys")

    @property
    def required(self) -> dict[str, frozenset[str] | None]:
        """Key -> allowed values (``None``: any value)."""
        if isinstance(self.tags, Mapping):
            return {
                key: None
                if values is None
                else frozenset([values] if isinstance(values, str) else values)
                for key, values in self.tags.items()
            }
        return dict.fromkeys(self.tags)

    def check(self, cluster: ClusterFacts) -> Iterable[Finding]:
        """Every finding of this rule on ``cluster`` (:meth:`PolicyRule.check`)."""
        for key, allowed in self.required.items():
            value = cluster.tags.get(key)
            if value is None:
                example = sorted(allowed)[0] if allowed else "<value>"
                yield self._violation(
                    cluster,
                    None,
                    f"tag {key!r} is missing",
                    f"pass tags={{{key!r}: {example!r}}} to the cluster, or "
                    f"Tags.of(scope).add({key!r}, {example!r})",
                )
            elif allowed is None and not value.strip():  # an unset variable, say
                yield self._violation(
                    cluster,
                    None,
                    f"tag {key!r} has an empty value",
                    f"give tag {key!r} a value (an unset variable in the build?)",
                )
            elif allowed is not None and value not in allowed and not Token.is_unresolved(value):
                yield self._violation(
                    cluster,
                    None,
                    f"tag {key!r} is {value!r}, which is not allowed",
                    f"set tag {key!r} to one of {_names(sorted(allowed))}",
                )


def _is_aws_managed_alias(key_id: str) -> bool:
    return key_id.startswith("alias/aws/") or ":alias/aws/" in key_id


@dataclass(frozen=True)
class EbsCustomerManagedKey(_Rule):
    """Every EBS volume a group configures (``InstanceStorage.ebs``) is encrypted with a
    customer managed KMS key: ``kms_key_id`` is set and is not an AWS managed alias
    (``alias/aws/...``).

    Groups without an EBS configuration have only the root volume, which HyperPod encrypts
    with an AWS owned key; the rule does not flag them.
    """

    RULE_ID: ClassVar[str] = PolicyRuleId.EBS_CUSTOMER_KEY

    def check(self, cluster: ClusterFacts) -> Iterable[Finding]:
        """Every finding of this rule on ``cluster`` (:meth:`PolicyRule.check`)."""
        for group in cluster.groups:
            for index, storage in enumerate(group.storage):
                if storage.kind != "ebs":
                    continue
                key = storage.kms_key_id
                where = f"storage[{index}] (EBS volume)"
                if key is None:
                    problem = f"{where} has no kms_key_id (encrypted with an AWS owned key)"
                elif isinstance(key, str) and _is_aws_managed_alias(key):
                    problem = f"{where} uses the AWS managed key {key}"
                else:
                    continue
                yield self._violation(
                    cluster,
                    group.name,
                    problem,
                    "create a kms.Key and pass InstanceStorage.ebs(..., kms_key_id=key.key_arn); "
                    "the execution role needs kms:CreateGrant and kms:DescribeKey on it",
                )


@dataclass(frozen=True)
class VpcRequired(_Rule):
    """The cluster runs in your VPC (``vpc=``), not in HyperPod's service network."""

    RULE_ID: ClassVar[str] = PolicyRuleId.VPC_REQUIRED

    def check(self, cluster: ClusterFacts) -> Iterable[Finding]:
        """Every finding of this rule on ``cluster`` (:meth:`PolicyRule.check`)."""
        if not cluster.has_vpc:
            yield self._violation(
                cluster,
                None,
                "the cluster has no VPC (it runs in HyperPod's service network)",
                "pass vpc= (and optionally vpc_subnets=, security_groups=) to the cluster",
            )

"""Instance groups: the controller, the login nodes and the compute partitions of a cluster."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ._cdk.tokens import is_unresolved
from ._core.arguments import ARG_TYPE, instance_of, is_int, is_sequence, is_str
from ._core.finding import Finding, Severity
from ._core.rule import Rule, Scope, Source
from .enums import (
    AutoPatchStrategy,
    CapacityType,
    DeepHealthCheck,
    NetworkInterfaceType,
    NodeType,
)
from .group_fields import (
    SUBNETS,
    GroupField,
    Member,
    MemberKey,
    Members,
    Plain,
    Rendered,
    api,
    group_fields,
    instance_type_check,
    is_lifecycle,
    is_role,
    scheduled_update_check,
    security_groups_check,
    storage_check,
    typed,
)
from .instance_type import HyperPodInstanceType
from .sizing import instances_for_accelerators, sizing_type
from .storage import InstanceStorage
from .updates import ScheduledUpdate

if TYPE_CHECKING:  # annotations only
    from aws_cdk import aws_ec2 as ec2
    from aws_cdk import aws_iam as iam

    from .lifecycle import LifecycleScripts


@dataclass(frozen=True, kw_only=True)
class InstanceGroup:
    """One HyperPod instance group. Build it with :meth:`controller`, :meth:`login` or
    :meth:`compute` and pass it to :class:`HyperPodSlurmCluster`.

    The value is only data: it is checked when it is added to a cluster, so every error names
    the cluster's construct path. An existing group keeps its ``instance_type``,
    ``execution_role``, ``threads_per_core``, ``vpc_subnets``, ``security_groups`` and
    ``node_type``: ``UpdateCluster`` refuses a change (``plan`` reports it). A new ``name`` is a
    new group: the old one is removed and the new one provisioned. ``instance_types`` (a
    flexible group) is not create-only in the schema.

    Example:

    ```python
    InstanceGroup.compute(
        "gpu",
        instance_type=HyperPodInstanceType.ML_P5_48XLARGE,
        instance_count=18,
        min_instance_count=16,  # in service once 16 are up; 2 spares
        partition="gpu",
        threads_per_core=1,
        deep_health_checks=[DeepHealthCheck.INSTANCE_STRESS],
        storage=[InstanceStorage.ebs(volume_size=Size.gibibytes(500))],
    )
    ```
    """

    name: str = field(
        metadata=api("InstanceGroupName", check=typed(is_str, "a str"), codec=Plain(str))
    )
    """Instance group name (1..63 characters, letters, digits and single or repeated hyphens)."""
    node_type: NodeType = field(
        metadata=api(
            "SlurmConfig",
            label=None,
            nodes=frozenset(),
            check=typed(
                instance_of(NodeType),
                "a NodeType (use InstanceGroup.controller / .login / .compute)",
            ),
        )
    )
    """``SlurmConfig.NodeType``: controller, login or compute (set by the factory).
    Immutable after creation."""
    instance_type: HyperPodInstanceType = field(
        metadata=api("InstanceType", check=instance_type_check)
    )
    """``InstanceType``: a :class:`HyperPodInstanceType` (``HyperPodInstanceType.ML_P5_48XLARGE``
    or ``HyperPodInstanceType.of("ml.p5.48xlarge")``); for a flexible group (``instance_types``),
    the first of its types. Replacement on change."""
    instance_types: tuple[HyperPodInstanceType, ...] = field(
        default=(), metadata=api("InstanceRequirements")
    )
    """``InstanceRequirements.InstanceTypes``: a flexible group's 1..20 types in priority
    order (HyperPod launches the first and falls back to the next when it has no capacity).
    Rendered instead of ``InstanceType`` (the API makes them mutually exclusive). Default:
    empty, a group of the one ``instance_type``."""
    instance_count: int = field(metadata=api("InstanceCount", codec=Plain(int)))
    """``InstanceCount``: the target number of instances, 0..6758."""
    min_instance_count: int | None = field(default=None, metadata=api("MinInstanceCount"))
    """``MinInstanceCount``: HyperPod keeps the group out of service until this many instances
    are up (Continuous mode only). ``None`` omits it (HyperPod's default: 0 for compute,
    1 for controller and login)."""
    partition: str | None = field(
        default=None,
        metadata=api(
            "SlurmConfig", label="SlurmConfig.PartitionNames", nodes=frozenset({NodeType.COMPUTE})
        ),
    )
    """The Slurm partition of a compute group (every node also joins ``dev``)."""
    threads_per_core: int | None = field(
        default=None, metadata=api("ThreadsPerCore", codec=Plain(int))
    )
    """``ThreadsPerCore``: 1 turns hyper-threading off (the usual choice for training), 2 keeps
    it on, where the instance type supports it. Default: HyperPod's default. An existing
    group keeps it: ``UpdateCluster`` refuses a change (rename the group instead)."""
    deep_health_checks: tuple[DeepHealthCheck, ...] = field(
        default=(),
        metadata=api(
            "OnStartDeepHealthChecks",
            nodes=frozenset({NodeType.COMPUTE}),
            check=typed(is_sequence, "a list of DeepHealthCheck members (or an empty list)"),
            codec=Members(DeepHealthCheck),
        ),
    )
    """``OnStartDeepHealthChecks`` of a compute group with accelerators: stress and connectivity
    checks before a node joins. Default: none."""
    storage: tuple[InstanceStorage, ...] = field(
        default=(),
        metadata=api("InstanceStorageConfigs", check=storage_check, codec=Rendered(each=True)),
    )
    """``InstanceStorageConfigs``: up to four :class:`InstanceStorage` (EBS, FSx for Lustre,
    FSx for OpenZFS). Default: none."""
    training_plan_arn: str | None = field(
        default=None, metadata=api("TrainingPlanArn", codec=Plain(str))
    )
    """``TrainingPlanArn``: run the group on a SageMaker training plan's reserved capacity.
    Default: none."""
    image_id: str | None = field(default=None, metadata=api("ImageId", codec=Plain(str)))
    """``ImageId``: a custom AMI. Default: HyperPod's default AMI."""
    execution_role: iam.IRole | None = field(
        default=None,
        metadata=api(
            "ExecutionRole", label=None, check=typed(is_role, "an iam.IRole", optional=True)
        ),
    )
    """``ExecutionRole`` of this group. Default: the cluster's role. Replacement on change."""
    lifecycle_scripts: LifecycleScripts | None = field(
        default=None,
        metadata=api(
            "LifeCycleConfig",
            label=None,
            check=typed(
                is_lifecycle,
                "LifecycleScripts.from_directory(...) or LifecycleScripts.from_s3(...)",
                optional=True,
            ),
        ),
    )
    """``LifeCycleConfig`` of this group. Default: the cluster's :class:`LifecycleScripts`."""
    vpc_subnets: ec2.SubnetSelection | None = field(
        default=None,
        metadata=api("OverrideVpcConfig", label="OverrideVpcConfig.Subnets", check=SUBNETS),
    )
    """``OverrideVpcConfig.Subnets``: run this group in other subnets than the cluster (e.g. a
    Local Zone). Explicit ``subnets`` need no VPC lookup. Default: the cluster's subnets."""
    security_groups: tuple[ec2.ISecurityGroup, ...] | None = field(
        default=None,
        metadata=api(
            "OverrideVpcConfig",
            label="OverrideVpcConfig.SecurityGroupIds",
            check=security_groups_check,
        ),
    )
    """``OverrideVpcConfig.SecurityGroupIds``. Default: the cluster's security groups (used
    too when only ``vpc_subnets`` is given, as the API needs both)."""
    scheduled_update: ScheduledUpdate | None = field(
        default=None,
        metadata=api("ScheduledUpdateConfig", check=scheduled_update_check, codec=Rendered()),
    )
    """``ScheduledUpdateConfig``: when HyperPod rolls new AMIs onto the group. Default: none."""
    network_interface: NetworkInterfaceType | None = field(
        default=None,
        metadata=api(
            "NetworkInterface",
            label="NetworkInterface.InterfaceType",
            check=typed(
                instance_of(NetworkInterfaceType), "a NetworkInterfaceType member", optional=True
            ),
            codec=Member(NetworkInterfaceType, key="InterfaceType"),
        ),
    )
    """``NetworkInterface.InterfaceType``. Default: HyperPod's default for the type."""
    capacity_type: CapacityType | None = field(
        default=None,
        metadata=api(
            "CapacityRequirements",
            check=typed(instance_of(CapacityType), "a CapacityType member", optional=True),
            codec=MemberKey(CapacityType),
        ),
    )
    """``CapacityRequirements``: On-Demand or Spot. Default: HyperPod's default."""
    auto_patch: AutoPatchStrategy | None = field(
        default=None,
        metadata=api(
            "AutoPatchConfig",
            label="AutoPatchConfig.PatchingStrategy",
            codec=Member(AutoPatchStrategy, key="PatchingStrategy"),
        ),
    )
    """``AutoPatchConfig.PatchingStrategy``: HyperPod applies security-patch AMI updates to
    the group's nodes as they become idle. Default: none (no automatic patching)."""
    min_accelerators: int | None = field(
        default=None, metadata=api(nodes=frozenset({NodeType.COMPUTE}))
    )
    """The accelerator count ``min_instance_count`` was sized from, if any."""
    problems: tuple[Finding, ...] = field(default=(), compare=False)
    """Findings of the factory (sizing from ``min_accelerators``); reported with the
    construct path, together with every other finding, when the cluster is synthesized."""

    @classmethod
    def controller(
        cls,
        name: str,
        *,
        instance_type: HyperPodInstanceType | None = None,
        instance_types: Sequence[HyperPodInstanceType] | None = None,
        instance_count: int = 1,
        min_instance_count: int | None = None,
        threads_per_core: int | None = None,
        storage: Sequence[InstanceStorage] = (),
        training_plan_arn: str | None = None,
        image_id: str | None = None,
        execution_role: iam.IRole | None = None,
        lifecycle_scripts: LifecycleScripts | None = None,
        vpc_subnets: ec2.SubnetSelection | None = None,
        security_groups: Sequence[ec2.ISecurityGroup] | None = None,
        scheduled_update: ScheduledUpdate | None = None,
        network_interface: NetworkInterfaceType | None = None,
        capacity_type: CapacityType | None = None,
        auto_patch: AutoPatchStrategy | None = None,
    ) -> InstanceGroup:
        """The Slurm controller group (one per cluster). Default: one instance.

        Give ``instance_type``, or ``instance_types`` (a flexible group, in priority order).
        ``training_plan_arn``: run the group on a SageMaker training plan's reserved capacity
        (the API allows it on any group). Default: none.
        """
        return cls._head_node_group(NodeType.CONTROLLER, **_arguments(locals()))

    @classmethod
    def login(
        cls,
        name: str,
        *,
        instance_type: HyperPodInstanceType | None = None,
        instance_types: Sequence[HyperPodInstanceType] | None = None,
        instance_count: int = 1,
        min_instance_count: int | None = None,
        threads_per_core: int | None = None,
        storage: Sequence[InstanceStorage] = (),
        training_plan_arn: str | None = None,
        image_id: str | None = None,
        execution_role: iam.IRole | None = None,
        lifecycle_scripts: LifecycleScripts | None = None,
        vpc_subnets: ec2.SubnetSelection | None = None,
        security_groups: Sequence[ec2.ISecurityGroup] | None = None,
        scheduled_update: ScheduledUpdate | None = None,
        network_interface: NetworkInterfaceType | None = None,
        capacity_type: CapacityType | None = None,
        auto_patch: AutoPatchStrategy | None = None,
    ) -> InstanceGroup:
        """The login group (at most one per cluster). Default: one instance.

        Give ``instance_type``, or ``instance_types`` (a flexible group, in priority order).
        ``training_plan_arn``: as for :meth:`controller`. Default: none.
        """
        return cls._head_node_group(NodeType.LOGIN, **_arguments(locals()))

    @classmethod
    def _head_node_group(cls, node_type: NodeType, **fields: Any) -> InstanceGroup:
        primary, types, problems = _types(
            fields["name"], fields["instance_type"], fields["instance_types"]
        )
        return cls._build(node_type, fields, primary, types, problems)

    @classmethod
    def _build(
        cls,
        node_type: NodeType,
        fields: dict[str, Any],
        instance_type: Any,
        instance_types: tuple[Any, ...],
        problems: list[Finding],
    ) -> InstanceGroup:
        """The group of a factory's keyword arguments (``fields``), given its checked instance
        types and the factory's findings: the same for every node type."""
        sequences: dict[str, Any] = {
            field.keyword: _as_tuple(fields[field.keyword])
            for field in GROUP_FIELDS
            if field.annotation.startswith("tuple[") and field.keyword in fields
        }
        checked: dict[str, Any] = {"instance_type": instance_type, "instance_types": instance_types}
        arguments = {**fields, **sequences, **checked}
        return cls(**arguments, node_type=node_type, problems=tuple(problems))

    @classmethod
    def compute(
        cls,
        name: str,
        *,
        instance_type: HyperPodInstanceType | None = None,
        instance_types: Sequence[HyperPodInstanceType] | None = None,
        partition: str | None = None,
        instance_count: int | None = None,
        min_instance_count: int | None = None,
        min_accelerators: int | None = None,
        threads_per_core: int | None = None,
        deep_health_checks: Sequence[DeepHealthCheck] = (),
        storage: Sequence[InstanceStorage] = (),
        training_plan_arn: str | None = None,
        image_id: str | None = None,
        execution_role: iam.IRole | None = None,
        lifecycle_scripts: LifecycleScripts | None = None,
        vpc_subnets: ec2.SubnetSelection | None = None,
        security_groups: Sequence[ec2.ISecurityGroup] | None = None,
        scheduled_update: ScheduledUpdate | None = None,
        network_interface: NetworkInterfaceType | None = None,
        capacity_type: CapacityType | None = None,
        auto_patch: AutoPatchStrategy | None = None,
    ) -> InstanceGroup:
        """A compute group: the nodes of one Slurm partition.

        ``partition`` names the group's Slurm partition (``SlurmConfig.PartitionNames``). It
        may be left out, as the API allows: HyperPod then puts the group's nodes only in
        ``dev``, the partition every node joins, so no job can target the group alone
        (warning ``HP-WARN-PARTITION-MISSING``).

        Give ``instance_type``, or ``instance_types``: a flexible group of 1..20 types in
        priority order, which HyperPod launches first-available (``InstanceRequirements``).

        Size it either with counts, or from the accelerators a job needs:

        - ``instance_count`` (required unless ``min_accelerators`` is given) and
          ``min_instance_count`` (default: omitted, i.e. no gate);
        - ``min_accelerators``: ``min_instance_count`` becomes
          ``ceil(min_accelerators / accelerators per instance)`` and ``instance_count``
          defaults to that minimum (give a larger one for spare nodes). Do not combine
          with ``min_instance_count``. A flexible group is sized by the type with the fewest
          accelerators per instance, so the minimum holds whichever types come up.
        """
        fields = _arguments(locals())
        instance_type, types, problems = _types(name, instance_type, instance_types)
        if min_accelerators is not None:
            sized_by = sizing_type(types) if types else instance_type
            problems += _sizing(name, sized_by, min_accelerators, min_instance_count)
            if not problems and isinstance(sized_by, HyperPodInstanceType):
                min_instance_count = instances_for_accelerators(sized_by, min_accelerators)
        if instance_count is None:
            if min_instance_count is not None:
                instance_count = min_instance_count
            else:
                if not problems:
                    problems.append(_count_required(name))
                instance_count = 0
        fields.update(instance_count=instance_count, min_instance_count=min_instance_count)
        return cls._build(NodeType.COMPUTE, fields, instance_type, types, problems)

    @property
    def all_instance_types(self) -> tuple[HyperPodInstanceType, ...]:
        """Every type the group may launch, in priority order: ``instance_types`` for a
        flexible group, else the one ``instance_type``."""
        return self.instance_types or (self.instance_type,)

    @property
    def is_gated(self) -> bool:
        """Whether HyperPod holds this group out of service until ``min_instance_count``."""
        return is_int(self.min_instance_count) and self.min_instance_count > 0  # type: ignore[operator]

    @property
    def has_minimum(self) -> bool:
        """Whether the group declares a minimum: ``min_instance_count`` above 0, or a token
        (e.g. a ``CfnParameter``) whose value is known only at deploy time. The readiness
        gate waits for every such group."""
        return self.is_gated or is_unresolved(self.min_instance_count)


GROUP_FIELDS: tuple[GroupField, ...] = group_fields(InstanceGroup)
"""The instance group's fields, declared once (each field's ``metadata``, in field order;
``problems`` is none): the type checks, the render, ``convert``'s reader and the tests
derive from it. A factory takes exactly the fields of its node type (:meth:`GroupField.takes`,
held by tests/test_group_fields.py)."""


def _arguments(scope: dict[str, Any]) -> dict[str, Any]:
    """A factory's keyword arguments (its ``locals()`` without ``cls``)."""
    return {key: value for key, value in scope.items() if key != "cls"}


def _as_tuple(value: Any) -> Any:
    """A list, tuple or other iterable as a tuple; anything else unchanged (it is reported as
    a wrong type when the group is validated, instead of crashing here)."""
    if isinstance(value, Iterable) and not isinstance(value, str | bytes | Mapping):
        return tuple(value)
    return value


_TYPES_FIELD = "instance_type / instance_types (InstanceType / InstanceRequirements)"


def _types(
    name: object, instance_type: object, instance_types: object
) -> tuple[Any, tuple[Any, ...], list[Finding]]:
    """A factory's ``instance_type`` (the first of ``instance_types`` for a flexible group),
    its ``instance_types`` as a tuple, and why they cannot be used (empty when they can)."""
    if instance_types is None:
        if instance_type is None:
            return None, (), [_types_finding(name, None, "one of them is required")]
        return instance_type, (), []
    if instance_type is not None:
        allowed = "instance_type or instance_types, not both (the API: mutually exclusive)"
        return instance_type, (), [_types_finding(name, instance_types, allowed)]
    types = _as_tuple(instance_types)
    if not isinstance(types, tuple) or not types:
        allowed = "a non-empty list of HyperPodInstanceType, in priority order"
        return None, (), [_types_finding(name, instance_types, allowed)]
    return types[0], types, []


def _types_finding(name: object, value: object, allowed: str) -> Finding:
    return ARG_TYPE.finding(
        field=_TYPES_FIELD,
        value=value,
        allowed=allowed,
        fix="pass instance_type=HyperPodInstanceType.ML_P5_48XLARGE, or instance_types=[...] "
        "for a flexible group",
        group=_group_label(name),
    )


SIZING = Rule(
    "HP-SIZING",
    Severity.ERROR,
    Scope.GROUP,
    "`min_accelerators`, `instance_count`",
    "`min_accelerators` >= 1, on a type whose accelerator count is known, not together with "
    "`min_instance_count`; a compute group needs `instance_count` or `min_accelerators`",
    source=Source.library("min_accelerators is the library's own way to size MinInstanceCount"),
)
"""The rule of the group's sizing, declared here where the factories build its findings (the
group's :attr:`InstanceGroup.problems`); the count family (validation/count_rules.py) lists it
and reports them."""

_SIZING_FIELD = "min_accelerators (sizes MinInstanceCount)"


def _group_label(name: object) -> str | None:
    return name if isinstance(name, str) else None


def _count_required(name: object) -> Finding:
    return SIZING.finding(
        field="instance_count (InstanceCount)",
        value=None,
        allowed="a whole number in 0..6758; required unless min_accelerators is given",
        fix="pass instance_count=..., or min_accelerators=... to size the group from the "
        "accelerators a job needs",
        group=_group_label(name),
    )


def _sizing(
    name: object, instance_type: object, wanted: object, min_instance_count: object
) -> list[Finding]:
    """Why the group cannot be sized from ``min_accelerators`` (empty when it can)."""
    group = _group_label(name)
    if min_instance_count is not None:
        allowed = (
            "min_accelerators or min_instance_count, not both "
            f"(min_instance_count = {min_instance_count!r})"
        )
        fix = "drop min_instance_count (it is computed from min_accelerators) or min_accelerators"
    elif not is_int(wanted) or wanted < 1:  # type: ignore[operator]
        allowed = "a whole number of accelerators >= 1"
        fix = "pass the job's world size, e.g. min_accelerators=64"
    elif not isinstance(instance_type, HyperPodInstanceType):
        return []  # reported as a wrong type (HP-ARG-TYPE) when the group is validated
    elif instance_type.accelerator_count is None:
        allowed = (
            "only on an instance type whose accelerators per instance the library knows "
            f"({instance_type.name} is not one; see ACCELERATORS_PER_INSTANCE)"
        )
        fix = (
            "give min_instance_count and instance_count explicitly, i.e. "
            "ceil(min_accelerators / accelerators per instance)"
        )
    else:
        return []
    return [
        SIZING.finding(
            field=_SIZING_FIELD,
            value=wanted,
            allowed=allowed,
            fix=fix,
            group=group,
        )
    ]

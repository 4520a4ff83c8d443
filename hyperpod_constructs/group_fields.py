"""The fields of an instance group, declared once.

Each field of :class:`~hyperpod_constructs.InstanceGroup` carries a :class:`GroupField` in its
metadata (``field(..., metadata=api(...))``): the CloudFormation key it renders, the API
member its messages name, the factories that take it (by node type), the check of its type
and how its value becomes CloudFormation (:class:`Codec`). ``GROUP_FIELDS``
(``instance_group.py``) is that table, read from the dataclass; the type checks
(``validation/group_arguments.py``), the render (``_cluster/rendering.py``), ``convert``'s
reader and the tests derive from it. docs/layout.md, "A new instance-group field", lists the
files a new field touches.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aws_cdk import Duration

from ._cdk.modules import loaded_instance_of
from ._core.arguments import (
    argument_finding,
    check,
    check_items,
    instance_of,
    is_sequence,
    is_str,
)
from ._core.finding import Finding
from .enums import BatchSizeType, NodeType
from .instance_type import HyperPodInstanceType
from .storage import InstanceStorage
from .updates import BatchSize, ScheduledUpdate

Check = Callable[[str, Any, "str | None"], list[Finding]]
"""A field's type check: (the parameter as messages name it, its value, the group's name or
``None``) -> findings (``HP-ARG-TYPE``); empty when other rules can read the value."""


# -- how a value becomes CloudFormation ------------------------------------------------------


@dataclass(frozen=True)
class Plain:
    """The value as it is (an ``int`` or a ``str``, the type ``convert`` expects)."""

    kind: type

    def render(self, value: Any) -> Any:
        return value


@dataclass(frozen=True)
class Member:
    """An enum member's API value; with ``key``, wrapped in ``{key: value}``."""

    kind: type[enum.Enum]
    key: str | None = None

    def render(self, value: Any) -> Any:
        return value.value if self.key is None else {self.key: value.value}


@dataclass(frozen=True)
class Members:
    """A list of enum members' API values."""

    kind: type[enum.Enum]

    def render(self, value: Any) -> Any:
        return [item.value for item in value]


@dataclass(frozen=True)
class MemberKey:
    """An enum member's API value as the one key of an object (``{"Spot": {}}``)."""

    kind: type[enum.Enum]

    def render(self, value: Any) -> Any:
        return {value.value: {}}


@dataclass(frozen=True)
class Rendered:
    """A value type that renders itself (``render()``); with ``each``, a list of them."""

    each: bool = False

    def render(self, value: Any) -> Any:
        return [item.render() for item in value] if self.each else value.render()


Codec = Plain | Member | Members | MemberKey | Rendered
"""How a field's value becomes its CloudFormation value on its own (``convert`` reads it
back by the same kind)."""


# -- the table's row ---------------------------------------------------------------------------

ALL_NODES = frozenset(NodeType)


@dataclass(frozen=True)
class GroupField:
    """One field of an instance group (a row of ``GROUP_FIELDS``).

    :param keyword: the dataclass field and the factories' keyword (from the dataclass).
    :param annotation: the dataclass field's annotation, as written (from the dataclass).
    :param cfn: the key of ``AWS::SageMaker::Cluster`` ``InstanceGroups[]`` it renders;
        ``None`` when it renders none (``min_accelerators`` sizes another field).
    :param label: the API member its messages name (``"OnStartDeepHealthChecks"`` in
        ``deep_health_checks (OnStartDeepHealthChecks)``); ``None``: the keyword alone.
    :param nodes: the node types whose factory takes it (empty: set by the factory).
    :param check: the check of its type that other rules rely on; ``None`` when a rule of
        its own checks it.
    :param codec: how its value renders on its own; ``None`` when the cluster renders it from
        context (the role's ARN, the bound lifecycle scripts, the provisioning mode, ...)
        and ``convert`` reads it in its own step.
    """

    keyword: str = ""
    annotation: str = ""
    cfn: str | None = None
    label: str | None = None
    nodes: frozenset[NodeType] = ALL_NODES
    check: Check | None = None
    codec: Codec | None = None

    @property
    def parameter(self) -> str:
        """The field as messages name it: ``keyword (Label)``, or the keyword alone."""
        return self.keyword if self.label is None else f"{self.keyword} ({self.label})"

    def takes(self, node_type: NodeType) -> bool:
        """Whether the factory of ``node_type`` takes this field."""
        return node_type in self.nodes


_KEY = "hyperpod_constructs.group_field"


def api(
    cfn: str | None = None,
    *,
    label: str | None = "",
    nodes: frozenset[NodeType] = ALL_NODES,
    check: Check | None = None,
    codec: Codec | None = None,
) -> dict[str, GroupField]:
    """The metadata of an :class:`InstanceGroup` field: its :class:`GroupField` (``label``
    defaults to ``cfn``)."""
    row = GroupField(
        cfn=cfn, label=cfn if label == "" else label, nodes=nodes, check=check, codec=codec
    )
    return {_KEY: row}


def group_fields(cls: type) -> tuple[GroupField, ...]:
    """The rows of the dataclass ``cls``'s fields declared with :func:`api`, in order, each
    with its keyword and annotation."""
    return tuple(
        dataclasses.replace(f.metadata[_KEY], keyword=f.name, annotation=str(f.type))
        for f in dataclasses.fields(cls)
        if _KEY in f.metadata
    )


def absent(value: object) -> bool:
    """Left out of the template: ``None`` or an empty list."""
    return value is None or (is_sequence(value) and not value)


# -- the type checks ----------------------------------------------------------------------------


def typed(ok: Callable[[object], bool], expected: str, *, optional: bool = False) -> Check:
    """A check of ``ok(value)`` (``None`` passes when ``optional``)."""
    return lambda parameter, value, group: check(
        parameter, value, ok, expected, optional=optional, group=group
    )


def instance_type_check(parameter: str, value: Any, group: str | None) -> list[Finding]:
    """A :class:`HyperPodInstanceType` whose name is a ``str``."""
    if isinstance(value, HyperPodInstanceType):
        if isinstance(value.name, str):
            return []
        return [
            argument_finding(
                parameter,
                value.name,
                "a str name such as 'ml.p5.48xlarge'",
                fix="use HyperPodInstanceType.of('ml.<family>.<size>')",
                group=group,
            )
        ]
    if isinstance(value, str):
        fix = f"use HyperPodInstanceType.of({value!r}) or a constant such as "
        fix += "HyperPodInstanceType.ML_P5_48XLARGE"
    else:
        fix = "use a HyperPodInstanceType constant or HyperPodInstanceType.of('ml.<family>.<size>')"
    return [argument_finding(parameter, value, "a HyperPodInstanceType", fix=fix, group=group)]


def storage_check(parameter: str, value: Any, group: str | None) -> list[Finding]:
    """A list of :class:`InstanceStorage`."""
    if not is_sequence(value):
        expected = "a list of InstanceStorage (or an empty list)"
        return [argument_finding(parameter, value, expected, group=group)]
    found: list[Finding] = []
    for index, item in enumerate(value):
        found += check(
            f"storage[{index}]",
            item,
            instance_of(InstanceStorage),
            "an InstanceStorage, e.g. InstanceStorage.ebs(volume_size=Size.gibibytes(500))",
            group=group,
        )
    return found


def is_role(value: object) -> bool:
    """An ``iam.IRole`` (by its members: imported roles are proxies)."""
    return hasattr(value, "role_arn") and hasattr(value, "add_to_principal_policy")


def is_lifecycle(value: object) -> bool:
    """A :class:`LifecycleScripts` (imported here: the model's lighter modules do not)."""
    from .lifecycle import LifecycleScripts

    return isinstance(value, LifecycleScripts)


def security_groups_check(parameter: str, value: Any, group: str | None) -> list[Finding]:
    """``None``, or a list of ``ec2.ISecurityGroup``."""
    if value is None:
        return []
    is_security_group = lambda item: hasattr(item, "security_group_id")  # noqa: E731
    return check_items(parameter, value, is_security_group, "ec2.ISecurityGroup", group=group)


def scheduled_update_check(parameter: str, value: Any, group: str | None) -> list[Finding]:
    """``None``, or a :class:`ScheduledUpdate` whose fields the update rule can read
    (``HP-SCHEDULED-UPDATE`` checks their values)."""
    expected = "a ScheduledUpdate(schedule_expression='cron(...)')"
    found = check(
        parameter, value, instance_of(ScheduledUpdate), expected, optional=True, group=group
    )
    if not isinstance(value, ScheduledUpdate):
        return found
    prefix = "scheduled_update"
    for name in ("maximum_batch_size", "rollback_maximum_batch_size"):
        size = getattr(value, name)
        found += check(
            f"{prefix}.{name}",
            size,
            instance_of(BatchSize),
            "a BatchSize, e.g. BatchSize.instances(1) or BatchSize.percentage(10)",
            optional=True,
            group=group,
        )
        if isinstance(size, BatchSize):
            found += check(
                f"{prefix}.{name}.type",
                size.type,
                instance_of(BatchSizeType),
                "a BatchSizeType (use BatchSize.instances / BatchSize.percentage)",
                group=group,
            )
    found += check(
        f"{prefix}.wait_interval",
        value.wait_interval,
        instance_of(Duration),
        "a Duration, e.g. Duration.minutes(5)",
        optional=True,
        group=group,
    )
    alarms = value.rollback_alarms
    if isinstance(alarms, str) or not is_sequence(alarms):
        expected = "a list of CloudWatch alarm names (or an empty list)"
        found.append(argument_finding(f"{prefix}.rollback_alarms", alarms, expected, group=group))
    else:
        found += check_items(
            f"{prefix}.rollback_alarms", alarms, is_str, "an alarm name (a str)", group=group
        )
    return found


SUBNETS = typed(
    loaded_instance_of("aws_ec2", "SubnetSelection"),
    "an ec2.SubnetSelection, e.g. SubnetSelection(subnets=[...])",
    optional=True,
)

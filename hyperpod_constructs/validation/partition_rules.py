"""The Slurm partition of a group (``SlurmConfig.PartitionNames``). Pure: a group in, findings
out."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..enums import NodeType
from . import limits
from .finding import Finding, Severity
from .name_rules import check_name
from .rule import Rule, Scope, reports

if TYPE_CHECKING:
    from ..instance_group import InstanceGroup

E, W = Severity.ERROR, Severity.WARNING

PARTITION_REQUIRED = Rule(
    "HP-PARTITION-REQUIRED",
    E,
    Scope.GROUP,
    "`partition` / `SlurmConfig.PartitionNames`",
    "exactly one name on a compute group",
)

PARTITION_NAME = Rule(
    "HP-PARTITION-NAME",
    E,
    Scope.GROUP,
    "`partition` / `SlurmConfig.PartitionNames[0]`",
    "1..1024 characters, `[a-zA-Z0-9](-*[a-zA-Z0-9])*` (full match)",
)

PARTITION_FORBIDDEN = Rule(
    "HP-PARTITION-FORBIDDEN",
    E,
    Scope.GROUP,
    "`partition` / `SlurmConfig.PartitionNames`",
    "none on controller and login groups",
)

WARN_PARTITION_DEV = Rule(
    "HP-WARN-PARTITION-DEV",
    W,
    Scope.GROUP,
    "`partition` / `SlurmConfig.PartitionNames[0]`",
    "not `dev`: HyperPod already puts every node in the `dev` partition",
)

RULES = (
    PARTITION_REQUIRED,
    PARTITION_NAME,
    PARTITION_FORBIDDEN,
    WARN_PARTITION_DEV,
)
"""This family's rules, in documentation order."""


@reports(PARTITION_REQUIRED, PARTITION_NAME, PARTITION_FORBIDDEN)
def partition_name(group: InstanceGroup) -> list[Finding]:
    """A compute group names exactly one valid partition; controller and login groups none."""
    name, partition = group.name, group.partition
    field = "partition (SlurmConfig.PartitionNames)"
    if group.node_type is NodeType.COMPUTE:
        if partition is None or partition == "":
            return [
                Finding(
                    rule=PARTITION_REQUIRED.id,
                    field=field,
                    value=partition,
                    allowed="exactly one partition name for a compute group",
                    fix="pass partition='gpu' (or another name)",
                    group=name,
                )
            ]
        return check_name(
            partition,
            rule=PARTITION_NAME.id,
            field=field,
            group=name,
            max_length=limits.MAX_PARTITION_LENGTH,
        )
    if partition is not None:
        role = group.node_type.value.lower()
        return [
            Finding(
                rule=PARTITION_FORBIDDEN.id,
                field=field,
                value=partition,
                allowed=f"no partition on a {role} group (None)",
                fix="remove partition; only compute groups join partitions",
                group=name,
            )
        ]
    return []


DEV_PARTITION = "dev"
"""HyperPod puts every node in this Slurm partition."""


@reports(WARN_PARTITION_DEV)
def dev_partition(group: InstanceGroup) -> list[Finding]:
    """A compute group's partition is not ``dev``, which every node joins anyway."""
    if group.node_type is not NodeType.COMPUTE or group.partition != DEV_PARTITION:
        return []
    return [
        Finding(
            rule=WARN_PARTITION_DEV.id,
            field="partition (SlurmConfig.PartitionNames)",
            value=group.partition,
            allowed="a partition other than 'dev': HyperPod already puts every node in 'dev', "
            "so this group's nodes would not be separable from the others",
            fix="name the partition after the group's hardware, e.g. 'gpu'",
            group=group.name,
        )
    ]

"""The Slurm partition of a group (``SlurmConfig.PartitionNames``). Pure: a group in, findings
out."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._core import limits
from .._core.finding import Finding, Severity
from .._core.rule import UNCONFIRMED, Rule, Scope, Source, reports
from .._core.sources import SEARCHED
from ..enums import NodeType
from .name_rules import check_name

if TYPE_CHECKING:
    from ..instance_group import InstanceGroup

E, W = Severity.ERROR, Severity.WARNING

WARN_PARTITION_MISSING = Rule(
    "HP-WARN-PARTITION-MISSING",
    W,
    Scope.GROUP,
    "`partition` / `SlurmConfig.PartitionNames`",
    f"a partition on a compute group ({UNCONFIRMED}: the API makes `PartitionNames` optional on "
    "every group)",
    source=Source.unconfirmed(
        SEARCHED,
        "no statement that a Compute group needs a partition; API ClusterSlurmConfig."
        "PartitionNames is optional (0..1 names) on every node type",
    ),
)

PARTITION_NAME = Rule(
    "HP-PARTITION-NAME",
    E,
    Scope.GROUP,
    "`partition` / `SlurmConfig.PartitionNames[0]`",
    "1..1024 characters, `[a-zA-Z0-9](-*[a-zA-Z0-9])*` (full match)",
    source=Source.api(
        "ClusterSlurmConfig.PartitionNames",
        "at most 1 name, up to 1024 characters, pattern [a-zA-Z0-9](-*[a-zA-Z0-9])*",
    ),
)

WARN_PARTITION_HEAD_NODE = Rule(
    "HP-WARN-PARTITION-HEAD-NODE",
    W,
    Scope.GROUP,
    "`partition` / `SlurmConfig.PartitionNames`",
    f"no partition on controller and login groups ({UNCONFIRMED}: the API allows one on every "
    "group)",
    source=Source.unconfirmed(
        SEARCHED,
        "no statement that Controller or Login groups must not name a partition; API "
        "ClusterSlurmConfig.PartitionNames allows 0..1 names on every node type",
    ),
)

WARN_PARTITION_DEV = Rule(
    "HP-WARN-PARTITION-DEV",
    W,
    Scope.GROUP,
    "`partition` / `SlurmConfig.PartitionNames[0]`",
    f"not `dev`: every node is said to join the `dev` partition ({UNCONFIRMED})",
    source=Source.unconfirmed(
        SEARCHED, "no AWS page found that says HyperPod puts every node in a partition named dev"
    ),
)

RULES = (
    WARN_PARTITION_MISSING,
    PARTITION_NAME,
    WARN_PARTITION_HEAD_NODE,
    WARN_PARTITION_DEV,
)
"""This family's rules, in documentation order."""


@reports(WARN_PARTITION_MISSING, PARTITION_NAME, WARN_PARTITION_HEAD_NODE)
def partition_name(group: InstanceGroup) -> list[Finding]:
    """A partition name is valid; a compute group names one and controller and login groups
    none (warnings: AWS's documentation confirms neither)."""
    name, partition = group.name, group.partition
    field = "partition (SlurmConfig.PartitionNames)"
    if partition is None:
        if group.node_type is not NodeType.COMPUTE:
            return []
        return [
            Finding(
                rule=WARN_PARTITION_MISSING.id,
                field=field,
                value=partition,
                allowed=f"a partition name for a compute group ({UNCONFIRMED}; without one, "
                "the group's nodes may be in no partition of their own)",
                fix="pass partition='gpu' (or another name), or acknowledge this warning",
                group=name,
            )
        ]
    found = check_name(
        partition,
        rule=PARTITION_NAME.id,
        field=field,
        group=name,
        max_length=limits.MAX_PARTITION_LENGTH,
    )
    if group.node_type is not NodeType.COMPUTE:
        role = group.node_type.value.lower()
        found.append(
            Finding(
                rule=WARN_PARTITION_HEAD_NODE.id,
                field=field,
                value=partition,
                allowed=f"no partition on a {role} group ({UNCONFIRMED}; the API allows it)",
                fix="remove partition unless the head nodes must run jobs, or acknowledge this "
                "warning",
                group=name,
            )
        )
    return found


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

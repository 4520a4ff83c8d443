"""The Slurm partition of a group (``SlurmConfig.PartitionNames``). Pure: a group in, findings
out."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._core import layout, limits
from .._core.finding import Finding
from .._core.rule import E, Rule, Scope, Source, W, reports
from .._core.sources import SLURM_REFERENCE
from ..enums import NodeType
from .name_rules import check_name

if TYPE_CHECKING:
    from ..instance_group import InstanceGroup

WARN_PARTITION_MISSING = Rule(
    "HP-WARN-PARTITION-MISSING",
    W,
    Scope.GROUP,
    "`partition` / `SlurmConfig.PartitionNames`",
    "a partition on a compute group: without one its nodes are only in `dev`, the partition "
    "every node joins, so no job can target this group alone",
    source=Source(
        SLURM_REFERENCE,
        '"All nodes are automatically added to the universal dev partition in addition to their '
        'specified partition"; it calls PartitionNames "Required for Compute node types", '
        "but API ClusterSlurmConfig requires only NodeType (PartitionNames: 0..1 names), the "
        "CloudFormation schema agrees, and public samples deploy without one, so the library "
        "accepts it",
    ),
)

PARTITION_NAME = Rule(
    "HP-PARTITION-NAME",
    E,
    Scope.GROUP,
    "`partition` / `SlurmConfig.PartitionNames`",
    "1..1024 characters, `[a-zA-Z0-9](-*[a-zA-Z0-9])*` (full match)",
    source=Source.api(
        "ClusterSlurmConfig.PartitionNames",
        "at most 1 name, up to 1024 characters, pattern [a-zA-Z0-9](-*[a-zA-Z0-9])*",
    ),
)

PARTITION_HEAD_NODE = Rule(
    "HP-PARTITION-HEAD-NODE",
    E,
    Scope.GROUP,
    "`partition` / `SlurmConfig.PartitionNames`",
    "no partition on controller and login groups",
    source=Source(
        SLURM_REFERENCE,
        'PartitionNames: "Required for Compute node types; not allowed for Controller or Login '
        'node types" (the API validates the Slurm topology before creating the cluster)',
    ),
)

WARN_PARTITION_DEV = Rule(
    "HP-WARN-PARTITION-DEV",
    W,
    Scope.GROUP,
    "`partition` / `SlurmConfig.PartitionNames`",
    f"not `{layout.DEV_PARTITION}`: every node joins the `{layout.DEV_PARTITION}` partition",
    source=Source(
        SLURM_REFERENCE,
        '"All nodes are automatically added to the universal dev partition in addition to their '
        'specified partition"',
    ),
)

RULES = (
    WARN_PARTITION_MISSING,
    PARTITION_NAME,
    PARTITION_HEAD_NODE,
    WARN_PARTITION_DEV,
)
"""This family's rules, in documentation order."""

LAYOUT_RULES = frozenset({WARN_PARTITION_MISSING.id, PARTITION_NAME.id, PARTITION_HEAD_NODE.id})
"""Rules about ``SlurmConfig.PartitionNames``, which the legacy layout
(``SlurmLayout.LIFECYCLE_SCRIPTS``) does not render: its partitions live in
``provisioning_parameters.json``."""


@reports(WARN_PARTITION_MISSING, PARTITION_NAME, PARTITION_HEAD_NODE)
def partition_name(group: InstanceGroup) -> list[Finding]:
    """A partition name is valid; only node types that take one name one (controller and login
    groups none), and a compute group without one gets a warning (the layout of
    :mod:`~hyperpod_constructs._core.layout`)."""
    name, partition = group.name, group.partition
    role = layout.layout_of(group.node_type)
    if partition is None:
        if role is None or not role.partition_advised:
            return []
        return [
            WARN_PARTITION_MISSING.finding(
                value=partition,
                allowed="a partition name for a compute group (without one, HyperPod puts the "
                f"group's nodes only in '{layout.DEV_PARTITION}', with every other node)",
                fix="pass partition='gpu' (or another name) to target the group in Slurm, or "
                "acknowledge this warning",
                group=name,
            )
        ]
    found = check_name(
        partition,
        rule=PARTITION_NAME,
        group=name,
        max_length=limits.MAX_PARTITION_LENGTH,
    )
    if role is not None and not role.partition_allowed:
        found.append(
            PARTITION_HEAD_NODE.finding(
                value=partition,
                allowed=f"no partition on a {role.node_type} group (PartitionNames is not "
                f"allowed for Controller or Login node types; every node is in "
                f"'{layout.DEV_PARTITION}')",
                fix="remove partition from this group",
                group=name,
            )
        )
    return found


@reports(WARN_PARTITION_DEV)
def dev_partition(group: InstanceGroup) -> list[Finding]:
    """A compute group's partition is not ``dev``, which every node joins anyway."""
    if group.node_type is not NodeType.COMPUTE or group.partition != layout.DEV_PARTITION:
        return []
    return [
        WARN_PARTITION_DEV.finding(
            value=group.partition,
            allowed=f"a partition other than '{layout.DEV_PARTITION}': HyperPod already puts "
            f"every node in '{layout.DEV_PARTITION}', so this group's nodes would not be "
            "separable from the others",
            fix="name the partition after the group's hardware, e.g. 'gpu'",
            group=group.name,
        )
    ]

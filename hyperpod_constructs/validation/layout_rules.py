"""The cluster's Slurm layout across its groups: how many groups, one controller, at most one
login group, unique names. Pure: a description of the cluster in, findings out."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from .._tokens import is_unresolved
from ..enums import NodeType
from . import limits
from .finding import Finding, Severity
from .rule import Rule, Scope, reports

if TYPE_CHECKING:
    from .cluster_rules import ClusterSpec

E = Severity.ERROR

GROUPS_COUNT = Rule(
    "HP-GROUPS-COUNT",
    E,
    Scope.CROSS_GROUP,
    "`instance_groups` / `InstanceGroups`",
    "1..100 groups",
)

CONTROLLER_ONE = Rule(
    "HP-CONTROLLER-ONE",
    E,
    Scope.CROSS_GROUP,
    "`instance_groups` (NodeType=Controller)",
    "exactly one controller group",
)

LOGIN_MAX = Rule(
    "HP-LOGIN-MAX",
    E,
    Scope.CROSS_GROUP,
    "`instance_groups` (NodeType=Login)",
    "at most one login group",
)

GROUP_UNIQUE = Rule(
    "HP-GROUP-UNIQUE",
    E,
    Scope.CROSS_GROUP,
    "`name` / `InstanceGroupName`",
    "unique within the cluster",
)

RULES = (
    GROUPS_COUNT,
    CONTROLLER_ONE,
    LOGIN_MAX,
    GROUP_UNIQUE,
)
"""This family's rules, in documentation order."""


@reports(GROUPS_COUNT, CONTROLLER_ONE, LOGIN_MAX, GROUP_UNIQUE)
def group_layout(spec: ClusterSpec) -> list[Finding]:
    """1..100 groups, exactly one controller, at most one login group, unique names."""
    found: list[Finding] = []
    total, top = len(spec.groups), limits.MAX_INSTANCE_GROUPS
    if not 1 <= total <= top:
        found.append(
            Finding(
                rule=GROUPS_COUNT.id,
                field="instance_groups (InstanceGroups)",
                value=f"{total} groups",
                allowed=f"1..{top} instance groups",
                fix="add a controller and at least one compute group"
                if total == 0
                else f"merge groups; HyperPod allows at most {top}",
            )
        )
    roles = Counter(group.node_type for group in spec.groups)
    names = {role: [g.name for g in spec.groups if g.node_type is role] for role in NodeType}
    if roles[NodeType.CONTROLLER] != 1:
        found.append(
            Finding(
                rule=CONTROLLER_ONE.id,
                field="instance_groups (SlurmConfig.NodeType=Controller)",
                value=names[NodeType.CONTROLLER],
                allowed="exactly one controller group",
                fix="add InstanceGroup.controller(...)"
                if not names[NodeType.CONTROLLER]
                else "keep one controller group and remove the others",
            )
        )
    if roles[NodeType.LOGIN] > 1:
        found.append(
            Finding(
                rule=LOGIN_MAX.id,
                field="instance_groups (SlurmConfig.NodeType=Login)",
                value=names[NodeType.LOGIN],
                allowed="at most one login group",
                fix="keep one login group; raise its instance_count for more nodes",
            )
        )
    counts = Counter(
        g.name for g in spec.groups if isinstance(g.name, str) and not is_unresolved(g.name)
    )
    for name in sorted(name for name, n in counts.items() if n > 1):
        found.append(
            Finding(
                rule=GROUP_UNIQUE.id,
                field="name (InstanceGroupName)",
                value=name,
                allowed="a name used by one group of the cluster only "
                f"({counts[name]} groups use it)",
                fix="rename all but one of these groups",
                group=name,
            )
        )
    return found

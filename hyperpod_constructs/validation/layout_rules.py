"""The cluster's Slurm layout across its groups: how many groups, one controller, at most one
login group, unique names. Pure: a description of the cluster in, findings out."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from .._core import limits
from .._core.finding import Finding, Severity
from .._core.rule import UNCONFIRMED, Rule, Scope, Source, reports
from .._core.sources import SEARCHED, SLURM_SCALING
from .._tokens import is_unresolved
from ..enums import NodeType

if TYPE_CHECKING:
    from .spec import ClusterSpec

E, W = Severity.ERROR, Severity.WARNING

GROUPS_COUNT = Rule(
    "HP-GROUPS-COUNT",
    E,
    Scope.CROSS_GROUP,
    "`instance_groups` / `InstanceGroups`",
    "1..100 groups",
    source=Source.api("CreateClusterRequest.InstanceGroups", "1..100 items"),
)

CONTROLLER_REQUIRED = Rule(
    "HP-CONTROLLER-REQUIRED",
    E,
    Scope.CROSS_GROUP,
    "`instance_groups` (NodeType=Controller)",
    "a controller group",
    source=Source(
        SLURM_SCALING,
        "the cluster becomes InService only after at least one controller node is provisioned",
    ),
)

WARN_CONTROLLER_ONE = Rule(
    "HP-WARN-CONTROLLER-ONE",
    W,
    Scope.CROSS_GROUP,
    "`instance_groups` (NodeType=Controller)",
    f"one controller group ({UNCONFIRMED}; more controllers: raise the group's `instance_count`)",
    source=Source.unconfirmed(
        SEARCHED,
        "no statement on how many Controller groups a cluster may have (the multi-head guide "
        "speaks of controller nodes, not groups)",
    ),
)

WARN_LOGIN_MAX = Rule(
    "HP-WARN-LOGIN-MAX",
    W,
    Scope.CROSS_GROUP,
    "`instance_groups` (NodeType=Login)",
    f"at most one login group ({UNCONFIRMED})",
    source=Source.unconfirmed(SEARCHED, "no statement on how many Login groups a cluster may have"),
)

GROUP_UNIQUE = Rule(
    "HP-GROUP-UNIQUE",
    E,
    Scope.CROSS_GROUP,
    "`name` / `InstanceGroupName`",
    "unique within the cluster",
    source=Source.api(
        "UpdateClusterRequest.InstanceGroups",
        "groups are identified by InstanceGroupName (UpdateCluster, DeleteInstanceGroups, "
        "ListClusterNodes)",
    ),
)

RULES = (
    GROUPS_COUNT,
    CONTROLLER_REQUIRED,
    WARN_CONTROLLER_ONE,
    WARN_LOGIN_MAX,
    GROUP_UNIQUE,
)
"""This family's rules, in documentation order."""


@reports(GROUPS_COUNT, CONTROLLER_REQUIRED, WARN_CONTROLLER_ONE, WARN_LOGIN_MAX, GROUP_UNIQUE)
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
    controllers = names[NodeType.CONTROLLER]
    if not controllers:
        found.append(
            Finding(
                rule=CONTROLLER_REQUIRED.id,
                field="instance_groups (SlurmConfig.NodeType=Controller)",
                value=controllers,
                allowed="a controller group (the cluster is InService only once a controller "
                "node is up)",
                fix="add InstanceGroup.controller(...)",
            )
        )
    elif len(controllers) > 1:
        found.append(
            Finding(
                rule=WARN_CONTROLLER_ONE.id,
                field="instance_groups (SlurmConfig.NodeType=Controller)",
                value=controllers,
                allowed=f"one controller group ({UNCONFIRMED})",
                fix="keep one controller group and raise its instance_count for backup "
                "controllers, or acknowledge this warning",
            )
        )
    if roles[NodeType.LOGIN] > 1:
        found.append(
            Finding(
                rule=WARN_LOGIN_MAX.id,
                field="instance_groups (SlurmConfig.NodeType=Login)",
                value=names[NodeType.LOGIN],
                allowed=f"at most one login group ({UNCONFIRMED})",
                fix="keep one login group and raise its instance_count for more nodes, or "
                "acknowledge this warning",
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

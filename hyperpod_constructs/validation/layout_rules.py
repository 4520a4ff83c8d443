"""The cluster's Slurm layout across its groups: how many groups, one controller group (of one
node in Continuous mode), at most one login group, unique names. The layout's facts are those
of :mod:`hyperpod_constructs._core.layout`. Pure: a description of the cluster in, findings
out."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from .._cdk.tokens import is_unresolved
from .._core import layout, limits
from .._core.finding import Finding
from .._core.rule import E, Rule, Scope, Source, reports
from .._core.sources import SLURM_REFERENCE, SLURM_SCALING
from ..enums import NodeProvisioningMode, NodeType

if TYPE_CHECKING:
    from .spec import ClusterSpec

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
    "`instance_groups` / `SlurmConfig.NodeType=Controller`",
    "a controller group",
    source=Source(
        SLURM_SCALING,
        "the cluster becomes InService only after at least one controller node is provisioned",
    ),
)

CONTROLLER_ONE = Rule(
    "HP-CONTROLLER-ONE",
    E,
    Scope.CROSS_GROUP,
    "`instance_groups` / `SlurmConfig.NodeType=Controller`",
    f"{layout.CONTROLLER.groups()} (more than one is refused)",
    source=Source(
        SLURM_REFERENCE,
        'SlurmConfig.NodeType Controller: "Exactly one instance group must have this node type"',
    ),
)

MULTI_HEAD_IN_CONTINUOUS = Rule(
    "HP-MULTI-HEAD-IN-CONTINUOUS",
    E,
    Scope.CROSS_GROUP,
    "`instance_count` of the controller group / `InstanceCount`",
    f"{layout.CONTINUOUS_CONTROLLER_NODES} controller node with "
    "`NodeProvisioningMode.CONTINUOUS` (no multi-head)",
    source=Source(
        SLURM_SCALING,
        '"The following features are not currently supported with continuous provisioning on '
        "Slurm clusters: multi-head node configuration via API-based Slurm topology, and "
        'SlurmConfigStrategy"',
    ),
    modes=((NodeProvisioningMode.STANDARD, None),),
)

LOGIN_MAX = Rule(
    "HP-LOGIN-MAX",
    E,
    Scope.CROSS_GROUP,
    "`instance_groups` / `SlurmConfig.NodeType=Login`",
    layout.LOGIN.groups(),
    source=Source(
        SLURM_REFERENCE,
        'SlurmConfig.NodeType Login: "Optional. At most one instance group can have this node '
        'type"',
    ),
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
    CONTROLLER_ONE,
    MULTI_HEAD_IN_CONTINUOUS,
    LOGIN_MAX,
    GROUP_UNIQUE,
)
"""This family's rules, in documentation order."""


@reports(*RULES)
def group_layout(spec: ClusterSpec) -> list[Finding]:
    """1..100 groups, exactly one controller group (of one node in Continuous mode), at most
    one login group, unique names (the layout of :mod:`~hyperpod_constructs._core.layout`)."""
    found: list[Finding] = []
    total, top = len(spec.groups), limits.MAX_INSTANCE_GROUPS
    if not 1 <= total <= top:
        found.append(
            GROUPS_COUNT.finding(
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
            CONTROLLER_REQUIRED.finding(
                value=controllers,
                allowed="a controller group (the cluster is InService only once a controller "
                "node is up)",
                fix="add InstanceGroup.controller(...)",
            )
        )
    elif not layout.CONTROLLER.count_allowed(len(controllers)):
        found.append(
            CONTROLLER_ONE.finding(
                value=controllers,
                allowed=f"{layout.CONTROLLER.groups()} (the Slurm configuration reference)",
                fix="keep one controller group and remove the others"
                + (
                    " (continuous provisioning supports one controller node: no multi-head)"
                    if spec.mode is NodeProvisioningMode.CONTINUOUS
                    else ""
                ),
            )
        )
    else:
        found += _multi_head(spec)
    if not layout.LOGIN.count_allowed(roles[NodeType.LOGIN]):
        found.append(
            LOGIN_MAX.finding(
                value=names[NodeType.LOGIN],
                allowed=f"{layout.LOGIN.groups()} (the Slurm configuration reference)",
                fix="merge the login groups into one; for more login nodes raise its "
                "instance_count",
            )
        )
    counts = Counter(
        g.name for g in spec.groups if isinstance(g.name, str) and not is_unresolved(g.name)
    )
    for name in sorted(name for name, n in counts.items() if n > 1):
        found.append(
            GROUP_UNIQUE.finding(
                value=name,
                allowed="a name used by one group of the cluster only "
                f"({counts[name]} groups use it)",
                fix="rename all but one of these groups",
                group=name,
            )
        )
    return found


def _multi_head(spec: ClusterSpec) -> list[Finding]:
    """The controller group of a Continuous-mode cluster has one node."""
    if not isinstance(spec.mode, NodeProvisioningMode):
        return []  # provisioning_rules reports it
    severity = MULTI_HEAD_IN_CONTINUOUS.severity_in(spec.mode)
    if severity is None:
        return []
    top = layout.CONTINUOUS_CONTROLLER_NODES
    found: list[Finding] = []
    for position, group in enumerate(spec.groups, start=1):
        count = group.instance_count  # a token or a wrong type: skipped (reported elsewhere)
        if group.node_type is not NodeType.CONTROLLER or type(count) is not int:
            continue
        if count > top:
            found.append(
                MULTI_HEAD_IN_CONTINUOUS.finding(
                    field="instance_count (InstanceCount)",
                    value=count,
                    allowed=f"{top} controller node with node_provisioning_mode=CONTINUOUS "
                    "(multi-head node configuration is not supported with continuous "
                    "provisioning)",
                    fix=f"use instance_count={top} (the default); multi-head clusters need "
                    "node_provisioning_mode=NodeProvisioningMode.STANDARD and "
                    "slurm_layout=SlurmLayout.LIFECYCLE_SCRIPTS (their setup lives in "
                    f"{layout.LEGACY_LAYOUT_FILE})",
                    group=group.name,
                    positions=(position,),
                    mode=spec.mode,
                )
            )
    return found

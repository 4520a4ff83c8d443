"""The network: the cluster's ``VpcConfig`` and each group's ``OverrideVpcConfig``. Pure: a
description of the cluster (or a group and what the cluster can lend it) in, findings out."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._core import limits
from .._core.finding import Finding
from .._core.rule import E, Rule, Scope, Source, reports
from .._core.sources import SLURM_REFERENCE

if TYPE_CHECKING:
    from ..instance_group import InstanceGroup
    from .spec import ClusterSpec

OVERRIDE_VPC = Rule(
    "HP-OVERRIDE-VPC",
    E,
    Scope.GROUP,
    "`vpc_subnets`, `security_groups` / `OverrideVpcConfig`",
    "1..5 security groups, 1..16 explicit subnets; a subnet selection without `subnets` only when "
    "the cluster has a `vpc`; security groups of the group or the cluster",
    source=Source.api(
        "ClusterInstanceGroupSpecification.OverrideVpcConfig",
        "a VpcConfig: SecurityGroupIds (1..5) and Subnets (1..16), both required",
    ),
)

VPC_REQUIRED = Rule(
    "HP-VPC-REQUIRED",
    E,
    Scope.CLUSTER,
    "`security_groups`, `vpc_subnets` / `VpcConfig`",
    "together with `vpc`, or explicit subnets (`SubnetSelection(subnets=...)`) together with "
    "`security_groups`",
    source=Source.api("VpcConfig", "SecurityGroupIds and Subnets are both required"),
)

FSX_NEEDS_VPC = Rule(
    "HP-FSX-NEEDS-VPC",
    E,
    Scope.CROSS_GROUP,
    "`vpc` / `VpcConfig`",
    "a VPC whenever a group mounts FSx (the platform-managed VPC cannot reach the file system)",
    source=Source(
        SLURM_REFERENCE,
        'FSx through InstanceStorageConfigs: "Your cluster must use a custom VPC (via '
        "VpcConfig). FSx filesystems reside in your VPC, and the platform-managed VPC cannot "
        'reach them."',
    ),
)

VPC_SECURITY_GROUPS = Rule(
    "HP-VPC-SECURITY-GROUPS",
    E,
    Scope.CROSS_GROUP,
    "`security_groups` / `VpcConfig.SecurityGroupIds`",
    "1..5",
    source=Source.api("VpcConfig.SecurityGroupIds", "1..5 items"),
)

VPC_SUBNETS = Rule(
    "HP-VPC-SUBNETS",
    E,
    Scope.CROSS_GROUP,
    "`vpc_subnets` / `VpcConfig.Subnets`",
    "1..16 subnets",
    source=Source.api("VpcConfig.Subnets", "1..16 items"),
)

RULES = (
    OVERRIDE_VPC,
    VPC_REQUIRED,
    FSX_NEEDS_VPC,
    VPC_SECURITY_GROUPS,
    VPC_SUBNETS,
)
"""This family's rules, in documentation order."""


@reports(OVERRIDE_VPC)
def override_network(group: InstanceGroup) -> list[Finding]:
    """``OverrideVpcConfig``: 1..5 security groups; explicit subnets 1..16."""
    found: list[Finding] = []
    top_sg, top_subnets = limits.MAX_SECURITY_GROUPS, limits.MAX_SUBNETS
    if group.security_groups is not None and not 1 <= len(group.security_groups) <= top_sg:
        found.append(
            OVERRIDE_VPC.finding(
                field="security_groups (OverrideVpcConfig.SecurityGroupIds)",
                value=len(group.security_groups),
                allowed=f"1..{top_sg} security groups",
                fix=f"pass between 1 and {top_sg} security groups, or None for the cluster's",
                group=group.name,
            )
        )
    subnets = group.vpc_subnets.subnets if group.vpc_subnets is not None else None
    if subnets is not None and not 1 <= len(subnets) <= top_subnets:
        found.append(
            OVERRIDE_VPC.finding(
                field="vpc_subnets (OverrideVpcConfig.Subnets)",
                value=len(subnets),
                allowed=f"1..{top_subnets} subnets",
                fix=f"select between 1 and {top_subnets} subnets, or None for the cluster's",
                group=group.name,
            )
        )
    return found


@reports(OVERRIDE_VPC)
def override_network_findings(
    group: InstanceGroup, *, has_vpc: bool, cluster_security_groups: int
) -> list[Finding]:
    """A group's network override that the cluster cannot complete: a subnet selection that
    needs a VPC lookup without ``vpc``, no security group to pair the subnets with, or no
    subnet to pair the security groups with.

    :param group: the instance group with an override.
    :param has_vpc: whether the cluster was given a ``vpc``.
    :param cluster_security_groups: how many security groups the cluster has.
    """
    found: list[Finding] = []
    selection = group.vpc_subnets
    if selection is not None and selection.subnets is None and not has_vpc:
        found.append(
            OVERRIDE_VPC.finding(
                field="vpc_subnets (OverrideVpcConfig.Subnets)",
                value="a selection without subnets",
                allowed="explicit subnets (SubnetSelection(subnets=...)) when the cluster has "
                "no vpc",
                fix="name the subnets, e.g. ec2.Subnet.from_subnet_id(...)",
                group=group.name,
            )
        )
    if selection is not None and group.security_groups is None and cluster_security_groups == 0:
        found.append(
            OVERRIDE_VPC.finding(
                field="security_groups (OverrideVpcConfig.SecurityGroupIds)",
                value=None,
                allowed="security groups to pair with the group's vpc_subnets (OverrideVpcConfig "
                "takes both; the cluster has none to lend)",
                fix="pass security_groups=[...] to the group",
                group=group.name,
            )
        )
    if selection is None and group.security_groups and cluster_security_groups == 0:
        found.append(
            OVERRIDE_VPC.finding(
                field="vpc_subnets (OverrideVpcConfig.Subnets)",
                value=None,
                allowed="subnets to pair with the group's security_groups (OverrideVpcConfig "
                "takes both; the cluster has no network to lend)",
                fix="pass vpc_subnets=ec2.SubnetSelection(subnets=[...]) to the group, or give "
                "the cluster a network",
                group=group.name,
            )
        )
    return found


@reports(VPC_REQUIRED)
def network_selection_findings(
    *,
    has_vpc: bool,
    security_groups_given: bool,
    subnets_given: bool,
    explicit_subnets: bool = False,
) -> list[Finding]:
    """Without a VPC, the network is complete only with explicit subnets (e.g.
    ``ec2.Subnet.from_subnet_id``) and security groups; anything less would be ignored.

    :param has_vpc: whether the cluster was given a ``vpc``.
    :param security_groups_given: whether it was given ``security_groups``.
    :param subnets_given: whether it was given ``vpc_subnets``.
    :param explicit_subnets: whether ``vpc_subnets`` names subnets (no VPC lookup needed).
        Default: False.
    """
    if has_vpc or not (security_groups_given or subnets_given):
        return []
    if security_groups_given and explicit_subnets:
        return []
    missing = "security_groups" if explicit_subnets else "vpc_subnets=SubnetSelection(subnets=...)"
    return [
        VPC_REQUIRED.finding(
            field="security_groups / vpc_subnets (VpcConfig)",
            value="given without vpc",
            allowed="vpc, or explicit subnets (SubnetSelection(subnets=...), no VPC lookup) "
            "together with security_groups",
            fix=f"pass vpc=... or {missing} as well, or drop security_groups / vpc_subnets",
        )
    ]


@reports(FSX_NEEDS_VPC, VPC_SECURITY_GROUPS, VPC_SUBNETS)
def cluster_network(spec: ClusterSpec) -> list[Finding]:
    """The cluster's ``VpcConfig``: a network whenever FSx is mounted, 1..5 security groups,
    1..16 subnets."""
    found: list[Finding] = []
    if not spec.has_vpc:
        for position, group in enumerate(spec.groups, start=1):
            storage = group.storage if isinstance(group.storage, tuple) else ()
            if any(getattr(item, "is_fsx", False) for item in storage):
                found.append(
                    FSX_NEEDS_VPC.finding(
                        value=None,
                        allowed="a VPC whenever a group mounts FSx storage "
                        "(FsxLustreConfig / FsxOpenZfsConfig): the platform-managed VPC "
                        "cannot reach the file system",
                        fix="pass vpc=... to the cluster (the VPC of the file system)",
                        group=group.name,
                        positions=(position,),
                    )
                )
        return found
    top_sg, top_subnets = limits.MAX_SECURITY_GROUPS, limits.MAX_SUBNETS
    if spec.security_group_count is not None and not 1 <= spec.security_group_count <= top_sg:
        found.append(
            VPC_SECURITY_GROUPS.finding(
                value=spec.security_group_count,
                allowed=f"1..{top_sg} security groups",
                fix=f"pass between 1 and {top_sg} security groups",
            )
        )
    if spec.subnet_count is not None and not 1 <= spec.subnet_count <= top_subnets:
        found.append(
            VPC_SUBNETS.finding(
                value=spec.subnet_count,
                allowed=f"1..{top_subnets} subnets",
                fix=f"select between 1 and {top_subnets} subnets with vpc_subnets",
            )
        )
    return found

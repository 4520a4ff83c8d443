"""Rules across the groups of one cluster. Pure: a description of the cluster in, findings out."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ..enums import NodeProvisioningMode, NodeType, SlurmConfigStrategy
from ..instance_group import InstanceGroup
from . import limits
from .finding import Finding
from .group_rules import check_name


@dataclass(frozen=True)
class ClusterSpec:
    """What the cross-group rules need to know about a cluster."""

    name: str
    mode: NodeProvisioningMode
    groups: Sequence[InstanceGroup]
    slurm_config_strategy: SlurmConfigStrategy | None = None
    has_accounting_database: bool = False
    has_vpc: bool = False
    security_group_count: int | None = None
    subnet_count: int | None = None


def _group_counts(spec: ClusterSpec) -> list[Finding]:
    found: list[Finding] = []
    total = len(spec.groups)
    if not 1 <= total <= limits.MAX_INSTANCE_GROUPS:
        found.append(Finding("HP-GROUPS-COUNT", "instance_groups (InstanceGroups)", f"{total} groups",
                             f"1..{limits.MAX_INSTANCE_GROUPS} instance groups",
                             "add a controller and at least one compute group" if total == 0
                             else "merge groups; HyperPod allows at most 100"))
    roles = Counter(group.node_type for group in spec.groups)
    names = {role: [g.name for g in spec.groups if g.node_type is role] for role in NodeType}
    if roles[NodeType.CONTROLLER] != 1:
        found.append(Finding("HP-CONTROLLER-ONE", "instance_groups (SlurmConfig.NodeType=Controller)",
                             names[NodeType.CONTROLLER], "exactly one controller group",
                             "add InstanceGroup.controller(...)" if not names[NodeType.CONTROLLER]
                             else "keep one controller group and remove the others"))
    if roles[NodeType.LOGIN] > 1:
        found.append(Finding("HP-LOGIN-MAX", "instance_groups (SlurmConfig.NodeType=Login)",
                             names[NodeType.LOGIN], "at most one login group",
                             "keep one login group; raise its instance_count for more nodes"))
    duplicates = sorted(name for name, n in Counter(g.name for g in spec.groups).items() if n > 1)
    for name in duplicates:
        found.append(Finding("HP-GROUP-UNIQUE", "name (InstanceGroupName)", name,
                             "names unique within the cluster", "rename one of the groups", name))
    return found


def _provisioning(spec: ClusterSpec) -> list[Finding]:
    found: list[Finding] = []
    continuous = spec.mode is NodeProvisioningMode.CONTINUOUS
    if not continuous:
        for group in spec.groups:
            if group.is_gated:
                found.append(Finding(
                    "HP-MIN-NEEDS-CONTINUOUS", "min_instance_count (MinInstanceCount)",
                    group.min_instance_count,
                    "min_instance_count > 0 only with NodeProvisioningMode.CONTINUOUS",
                    "use node_provisioning_mode=NodeProvisioningMode.CONTINUOUS (the default), "
                    "or drop min_instance_count", group.name))
        if spec.has_accounting_database:
            found.append(Finding("HP-ACCOUNTING-NEEDS-CONTINUOUS",
                                 "accounting_database (Orchestrator.Slurm.AccountingDatabase)",
                                 "set", "only with NodeProvisioningMode.CONTINUOUS",
                                 "use NodeProvisioningMode.CONTINUOUS or drop accounting_database"))
    elif spec.slurm_config_strategy is not None:
        found.append(Finding("HP-STRATEGY-IN-CONTINUOUS",
                             "slurm_config_strategy (Orchestrator.Slurm.SlurmConfigStrategy)",
                             spec.slurm_config_strategy.value,
                             "not set in Continuous mode (HyperPod rejects any value)",
                             "remove slurm_config_strategy; Continuous mode takes Slurm layout "
                             "from each group's SlurmConfig"))
    return found


def _network(spec: ClusterSpec) -> list[Finding]:
    found: list[Finding] = []
    if not spec.has_vpc:
        for group in spec.groups:
            if any(storage.is_fsx for storage in group.storage):
                found.append(Finding("HP-FSX-NEEDS-VPC", "storage (FsxLustreConfig/FsxOpenZfsConfig)",
                                     "FSx without vpc", "FSx storage only on a cluster with a VPC",
                                     "pass vpc=... to the cluster (the VPC of the file system)",
                                     group.name))
        return found
    if spec.security_group_count is not None and not (
        1 <= spec.security_group_count <= limits.MAX_SECURITY_GROUPS
    ):
        found.append(Finding("HP-VPC-SECURITY-GROUPS", "security_groups (VpcConfig.SecurityGroupIds)",
                             spec.security_group_count, f"1..{limits.MAX_SECURITY_GROUPS}",
                             "pass at most five security groups"))
    if spec.subnet_count is not None and not 1 <= spec.subnet_count <= limits.MAX_SUBNETS:
        found.append(Finding("HP-VPC-SUBNETS", "vpc_subnets (VpcConfig.Subnets)", spec.subnet_count,
                             f"1..{limits.MAX_SUBNETS} subnets",
                             "select between 1 and 16 subnets with vpc_subnets"))
    return found


def validate_cluster(spec: ClusterSpec) -> list[Finding]:
    """Every finding that involves the cluster as a whole or several of its groups."""
    return [
        *check_name(spec.name, rule="HP-NAME-CLUSTER", field="cluster_name (ClusterName)",
                    group=None),
        *_group_counts(spec),
        *_provisioning(spec),
        *_network(spec),
    ]

"""Rules across the groups of one cluster. Pure: a description of the cluster in, findings out."""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from .._tokens import is_unresolved
from ..enums import NodeProvisioningMode, NodeRecovery, NodeType, SlurmConfigStrategy, SlurmLayout
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
    slurm_layout: SlurmLayout = SlurmLayout.API


def _group_counts(spec: ClusterSpec) -> list[Finding]:
    found: list[Finding] = []
    total, top = len(spec.groups), limits.MAX_INSTANCE_GROUPS
    if not 1 <= total <= top:
        found.append(
            Finding(
                "HP-GROUPS-COUNT",
                "instance_groups (InstanceGroups)",
                f"{total} groups",
                f"1..{top} instance groups",
                "add a controller and at least one compute group"
                if total == 0
                else f"merge groups; HyperPod allows at most {top}",
            )
        )
    roles = Counter(group.node_type for group in spec.groups)
    names = {role: [g.name for g in spec.groups if g.node_type is role] for role in NodeType}
    if roles[NodeType.CONTROLLER] != 1:
        found.append(
            Finding(
                "HP-CONTROLLER-ONE",
                "instance_groups (SlurmConfig.NodeType=Controller)",
                names[NodeType.CONTROLLER],
                "exactly one controller group",
                "add InstanceGroup.controller(...)"
                if not names[NodeType.CONTROLLER]
                else "keep one controller group and remove the others",
            )
        )
    if roles[NodeType.LOGIN] > 1:
        found.append(
            Finding(
                "HP-LOGIN-MAX",
                "instance_groups (SlurmConfig.NodeType=Login)",
                names[NodeType.LOGIN],
                "at most one login group",
                "keep one login group; raise its instance_count for more nodes",
            )
        )
    counts = Counter(g.name for g in spec.groups if not is_unresolved(g.name))
    for name in sorted(name for name, n in counts.items() if n > 1):
        found.append(
            Finding(
                "HP-GROUP-UNIQUE",
                "name (InstanceGroupName)",
                name,
                f"a name used by one group of the cluster only ({counts[name]} groups use it)",
                "rename all but one of these groups",
                name,
            )
        )
    return found


def _provisioning(spec: ClusterSpec) -> list[Finding]:
    found: list[Finding] = []
    mode = f"node_provisioning_mode={spec.mode.name}"
    if spec.mode is not NodeProvisioningMode.CONTINUOUS:
        for group in spec.groups:
            if group.is_gated:
                found.append(
                    Finding(
                        "HP-MIN-NEEDS-CONTINUOUS",
                        "min_instance_count (MinInstanceCount)",
                        group.min_instance_count,
                        f"0 or omitted with {mode} (a minimum needs "
                        "NodeProvisioningMode.CONTINUOUS)",
                        "use node_provisioning_mode=NodeProvisioningMode.CONTINUOUS (the "
                        "default), or drop min_instance_count",
                        group.name,
                    )
                )
        if spec.has_accounting_database:
            found.append(
                Finding(
                    "HP-ACCOUNTING-NEEDS-CONTINUOUS",
                    "accounting_database (Orchestrator.Slurm.AccountingDatabase)",
                    "an AccountingDatabase",
                    f"none with {mode} (only NodeProvisioningMode.CONTINUOUS supports it)",
                    "use NodeProvisioningMode.CONTINUOUS or drop accounting_database",
                )
            )
    elif spec.slurm_layout is SlurmLayout.LIFECYCLE_SCRIPTS:
        found.append(
            Finding(
                "HP-LAYOUT-NEEDS-STANDARD",
                "slurm_layout (SlurmConfig)",
                spec.slurm_layout.name,
                f"SlurmLayout.API with {mode} (Continuous mode takes node types and "
                "partitions only from each group's SlurmConfig; provisioning_parameters.json "
                "is not read)",
                "use slurm_layout=SlurmLayout.API (the default), or "
                "node_provisioning_mode=NodeProvisioningMode.STANDARD",
            )
        )
    if spec.mode is NodeProvisioningMode.CONTINUOUS and spec.slurm_config_strategy is not None:
        found.append(
            Finding(
                "HP-STRATEGY-IN-CONTINUOUS",
                "slurm_config_strategy (Orchestrator.Slurm.SlurmConfigStrategy)",
                spec.slurm_config_strategy.value,
                f"None with {mode} (HyperPod rejects any value); only with STANDARD",
                "remove slurm_config_strategy; Continuous mode takes the Slurm layout "
                "from each group's SlurmConfig",
            )
        )
    return found


def _network(spec: ClusterSpec) -> list[Finding]:
    found: list[Finding] = []
    if not spec.has_vpc:
        for group in spec.groups:
            if any(storage.is_fsx for storage in group.storage):
                found.append(
                    Finding(
                        "HP-FSX-NEEDS-VPC",
                        "vpc (VpcConfig)",
                        None,
                        "a VPC whenever a group mounts FSx storage "
                        "(FsxLustreConfig / FsxOpenZfsConfig)",
                        "pass vpc=... to the cluster (the VPC of the file system)",
                        group.name,
                    )
                )
        return found
    top_sg, top_subnets = limits.MAX_SECURITY_GROUPS, limits.MAX_SUBNETS
    if spec.security_group_count is not None and not 1 <= spec.security_group_count <= top_sg:
        found.append(
            Finding(
                "HP-VPC-SECURITY-GROUPS",
                "security_groups (VpcConfig.SecurityGroupIds)",
                spec.security_group_count,
                f"1..{top_sg} security groups",
                f"pass between 1 and {top_sg} security groups",
            )
        )
    if spec.subnet_count is not None and not 1 <= spec.subnet_count <= top_subnets:
        found.append(
            Finding(
                "HP-VPC-SUBNETS",
                "vpc_subnets (VpcConfig.Subnets)",
                spec.subnet_count,
                f"1..{top_subnets} subnets",
                f"select between 1 and {top_subnets} subnets with vpc_subnets",
            )
        )
    return found


class AccountingDatabaseProps(Protocol):
    """What :func:`accounting_findings` reads (``cluster.AccountingDatabase`` has it)."""

    @property
    def endpoint(self) -> str: ...
    @property
    def database_name(self) -> str | None: ...
    @property
    def port(self) -> int | None: ...


def accounting_findings(database: AccountingDatabaseProps | None) -> list[Finding]:
    """``Orchestrator.Slurm.AccountingDatabase`` values against the resource schema."""
    if database is None:
        return []
    found: list[Finding] = []
    prefix = "accounting_database"
    endpoint, name, port = database.endpoint, database.database_name, database.port
    if not is_unresolved(endpoint) and not (
        isinstance(endpoint, str)
        and len(endpoint) <= limits.MAX_DB_ENDPOINT_LENGTH
        and limits.DB_ENDPOINT.match(endpoint)
    ):
        found.append(
            Finding(
                "HP-ACCOUNTING-DATABASE",
                f"{prefix}.endpoint (AccountingDatabase.Endpoint)",
                endpoint,
                f"a host name of 1..{limits.MAX_DB_ENDPOINT_LENGTH} characters: dot-separated "
                "labels of letters, digits and inner hyphens",
                "pass the database's endpoint, e.g. instance.db_instance_endpoint_address",
            )
        )
    if (
        name is not None
        and not is_unresolved(name)
        and not (
            isinstance(name, str)
            and len(name) <= limits.MAX_DB_NAME_LENGTH
            and limits.DB_NAME.match(name)
        )
    ):
        found.append(
            Finding(
                "HP-ACCOUNTING-DATABASE",
                f"{prefix}.database_name (AccountingDatabase.Name)",
                name,
                f"1..{limits.MAX_DB_NAME_LENGTH} letters, digits, '$' or '_'",
                "use e.g. 'slurm_acct_db' (the default)",
            )
        )
    if (
        port is not None
        and not is_unresolved(port)
        and not (
            isinstance(port, int)
            and not isinstance(port, bool)
            and limits.MIN_DB_PORT <= port <= limits.MAX_DB_PORT
        )
    ):
        found.append(
            Finding(
                "HP-ACCOUNTING-DATABASE",
                f"{prefix}.port (AccountingDatabase.Port)",
                port,
                f"a whole number in {limits.MIN_DB_PORT}..{limits.MAX_DB_PORT}",
                "use the database's port, e.g. 3306 (the default)",
            )
        )
    return found


def _tag_text_ok(text: str) -> bool:
    return all(
        char in limits.TAG_PUNCTUATION or unicodedata.category(char)[0] in "LNZ" for char in text
    )


def tag_findings(tags: Mapping[str, str] | None) -> list[Finding]:
    """The cluster's ``tags`` against the resource schema's ``Tags`` (keys, values, count)."""
    if not tags:
        return []
    found: list[Finding] = []
    top = limits.MAX_TAGS
    if len(tags) > top:
        found.append(
            Finding(
                "HP-TAGS",
                "tags (Tags)",
                f"{len(tags)} tags",
                f"0..{top} tags",
                "drop tags, or tag the stack instead of the cluster",
            )
        )
    allowed_text = "Unicode letters, digits, whitespace and _ . : / = + - @"
    for key, value in tags.items():
        if not is_unresolved(key) and not (
            isinstance(key, str)
            and 1 <= len(key) <= limits.MAX_TAG_KEY_LENGTH
            and _tag_text_ok(key)
        ):
            found.append(
                Finding(
                    "HP-TAGS",
                    "tags key (Tags[].Key)",
                    key,
                    f"1..{limits.MAX_TAG_KEY_LENGTH} characters: {allowed_text}",
                    "rename the tag",
                )
            )
        if not is_unresolved(value) and not (
            isinstance(value, str)
            and len(value) <= limits.MAX_TAG_VALUE_LENGTH
            and _tag_text_ok(value)
        ):
            found.append(
                Finding(
                    "HP-TAGS",
                    f"tags[{key!r}] (Tags[].Value)",
                    value,
                    f"0..{limits.MAX_TAG_VALUE_LENGTH} characters: {allowed_text}",
                    "change the tag's value",
                )
            )
    return found


def validate_cluster(spec: ClusterSpec) -> list[Finding]:
    """Every finding that involves the cluster as a whole or several of its groups."""
    return [
        *check_name(
            spec.name, rule="HP-NAME-CLUSTER", field="cluster_name (ClusterName)", group=None
        ),
        *_group_counts(spec),
        *_provisioning(spec),
        *_network(spec),
    ]


def network_selection_findings(
    *,
    has_vpc: bool,
    security_groups_given: bool,
    subnets_given: bool,
    explicit_subnets: bool = False,
) -> list[Finding]:
    """Without a VPC, the network is complete only with explicit subnets (e.g.
    ``ec2.Subnet.from_subnet_id``) and security groups; anything less would be ignored."""
    if has_vpc or not (security_groups_given or subnets_given):
        return []
    if security_groups_given and explicit_subnets:
        return []
    missing = "security_groups" if explicit_subnets else "vpc_subnets=SubnetSelection(subnets=...)"
    return [
        Finding(
            "HP-VPC-REQUIRED",
            "security_groups / vpc_subnets (VpcConfig)",
            "given without vpc",
            "vpc, or explicit subnets (SubnetSelection(subnets=...), no VPC lookup) together "
            "with security_groups",
            f"pass vpc=... or {missing} as well, or drop security_groups / vpc_subnets",
        )
    ]


def node_recovery_findings(value: object) -> list[Finding]:
    """``NodeRecovery``: a :class:`NodeRecovery`, ``None`` (omitted) or a string token."""
    if value is None or isinstance(value, NodeRecovery) or is_unresolved(value):
        return []
    return [
        Finding(
            "HP-NODE-RECOVERY",
            "node_recovery (NodeRecovery)",
            value,
            "NodeRecovery.AUTOMATIC, NodeRecovery.NONE, None, or a string token",
            "pass NodeRecovery.AUTOMATIC or NodeRecovery.NONE",
        )
    ]


def override_network_findings(
    group: InstanceGroup, *, has_vpc: bool, cluster_security_groups: int
) -> list[Finding]:
    """A group's network override that the cluster cannot complete: a subnet selection that
    needs a VPC lookup without ``vpc``, or no security group to pair the subnets with."""
    found: list[Finding] = []
    selection = group.vpc_subnets
    if selection is not None and selection.subnets is None and not has_vpc:
        found.append(
            Finding(
                "HP-OVERRIDE-VPC",
                "vpc_subnets (OverrideVpcConfig.Subnets)",
                "a selection without subnets",
                "explicit subnets (SubnetSelection(subnets=...)) when the cluster has no vpc",
                "name the subnets, e.g. ec2.Subnet.from_subnet_id(...)",
                group.name,
            )
        )
    if selection is not None and group.security_groups is None and cluster_security_groups == 0:
        found.append(
            Finding(
                "HP-OVERRIDE-VPC",
                "security_groups (OverrideVpcConfig.SecurityGroupIds)",
                None,
                "security groups for the override (the cluster has none to lend)",
                "pass security_groups=[...] to the group",
                group.name,
            )
        )
    return found

"""Rules across the groups of one cluster. Pure: a description of the cluster in, findings out."""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from .._tokens import is_unresolved
from ..enums import NodeProvisioningMode, NodeRecovery, NodeType, SlurmConfigStrategy, SlurmLayout
from . import limits
from .arguments import argument_finding, is_text_token
from .finding import Finding
from .group_rules import TOKEN, check_name

if TYPE_CHECKING:
    from ..instance_group import InstanceGroup


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
                rule="HP-GROUPS-COUNT",
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
                rule="HP-CONTROLLER-ONE",
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
                rule="HP-LOGIN-MAX",
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
                rule="HP-GROUP-UNIQUE",
                field="name (InstanceGroupName)",
                value=name,
                allowed="a name used by one group of the cluster only "
                f"({counts[name]} groups use it)",
                fix="rename all but one of these groups",
                group=name,
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
                        rule="HP-MIN-NEEDS-CONTINUOUS",
                        field="min_instance_count (MinInstanceCount)",
                        value=group.min_instance_count,
                        allowed=f"0 or omitted with {mode} (a minimum needs "
                        "NodeProvisioningMode.CONTINUOUS)",
                        fix="use node_provisioning_mode=NodeProvisioningMode.CONTINUOUS (the "
                        "default), or drop min_instance_count",
                        group=group.name,
                    )
                )
        if spec.has_accounting_database:
            found.append(
                Finding(
                    rule="HP-ACCOUNTING-NEEDS-CONTINUOUS",
                    field="accounting_database (Orchestrator.Slurm.AccountingDatabase)",
                    value="an AccountingDatabase",
                    allowed=f"none with {mode} (only NodeProvisioningMode.CONTINUOUS supports it)",
                    fix="use NodeProvisioningMode.CONTINUOUS or drop accounting_database",
                )
            )
    elif spec.slurm_layout is SlurmLayout.LIFECYCLE_SCRIPTS:
        found.append(
            Finding(
                rule="HP-LAYOUT-NEEDS-STANDARD",
                field="slurm_layout (SlurmConfig)",
                value=spec.slurm_layout.name,
                allowed=f"SlurmLayout.API with {mode} (Continuous mode takes node types and "
                "partitions only from each group's SlurmConfig; provisioning_parameters.json "
                "is not read)",
                fix="use slurm_layout=SlurmLayout.API (the default), or "
                "node_provisioning_mode=NodeProvisioningMode.STANDARD",
            )
        )
    if spec.mode is NodeProvisioningMode.CONTINUOUS and spec.slurm_config_strategy is not None:
        found.append(
            Finding(
                rule="HP-STRATEGY-IN-CONTINUOUS",
                field="slurm_config_strategy (Orchestrator.Slurm.SlurmConfigStrategy)",
                value=spec.slurm_config_strategy.value,
                allowed=f"None with {mode} (HyperPod rejects any value); only with STANDARD",
                fix="remove slurm_config_strategy; Continuous mode takes the Slurm layout "
                "from each group's SlurmConfig",
            )
        )
    return found


def _network(spec: ClusterSpec) -> list[Finding]:
    found: list[Finding] = []
    if not spec.has_vpc:
        for group in spec.groups:
            storage = group.storage if isinstance(group.storage, tuple) else ()
            if any(getattr(item, "is_fsx", False) for item in storage):
                found.append(
                    Finding(
                        rule="HP-FSX-NEEDS-VPC",
                        field="vpc (VpcConfig)",
                        value=None,
                        allowed="a VPC whenever a group mounts FSx storage "
                        "(FsxLustreConfig / FsxOpenZfsConfig)",
                        fix="pass vpc=... to the cluster (the VPC of the file system)",
                        group=group.name,
                    )
                )
        return found
    top_sg, top_subnets = limits.MAX_SECURITY_GROUPS, limits.MAX_SUBNETS
    if spec.security_group_count is not None and not 1 <= spec.security_group_count <= top_sg:
        found.append(
            Finding(
                rule="HP-VPC-SECURITY-GROUPS",
                field="security_groups (VpcConfig.SecurityGroupIds)",
                value=spec.security_group_count,
                allowed=f"1..{top_sg} security groups",
                fix=f"pass between 1 and {top_sg} security groups",
            )
        )
    if spec.subnet_count is not None and not 1 <= spec.subnet_count <= top_subnets:
        found.append(
            Finding(
                rule="HP-VPC-SUBNETS",
                field="vpc_subnets (VpcConfig.Subnets)",
                value=spec.subnet_count,
                allowed=f"1..{top_subnets} subnets",
                fix=f"select between 1 and {top_subnets} subnets with vpc_subnets",
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
        and limits.DB_ENDPOINT.fullmatch(endpoint)
    ):
        found.append(
            Finding(
                rule="HP-ACCOUNTING-DATABASE",
                field=f"{prefix}.endpoint (AccountingDatabase.Endpoint)",
                value=endpoint,
                allowed=f"a host name of 1..{limits.MAX_DB_ENDPOINT_LENGTH} characters: "
                "dot-separated "
                "labels of letters, digits and inner hyphens",
                fix="pass the database's endpoint, e.g. instance.db_instance_endpoint_address",
            )
        )
    if (
        name is not None
        and not is_unresolved(name)
        and not (
            isinstance(name, str)
            and len(name) <= limits.MAX_DB_NAME_LENGTH
            and limits.DB_NAME.fullmatch(name)
        )
    ):
        found.append(
            Finding(
                rule="HP-ACCOUNTING-DATABASE",
                field=f"{prefix}.database_name (AccountingDatabase.Name)",
                value=name,
                allowed=f"1..{limits.MAX_DB_NAME_LENGTH} letters, digits, '$' or '_'",
                fix="use e.g. 'slurm_acct_db' (the default)",
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
                rule="HP-ACCOUNTING-DATABASE",
                field=f"{prefix}.port (AccountingDatabase.Port)",
                value=port,
                allowed=f"a whole number in {limits.MIN_DB_PORT}..{limits.MAX_DB_PORT}",
                fix="use the database's port, e.g. 3306 (the default)",
            )
        )
    return found


RESERVED_TAG_PREFIX = "aws:"
"""Tag keys starting with this (any case) are reserved for AWS."""


def _tag_text_ok(text: str) -> bool:
    return all(
        char in limits.TAG_PUNCTUATION or unicodedata.category(char)[0] in "LNZ" for char in text
    )


def tag_findings(tags: Mapping[str, str] | None) -> list[Finding]:
    """The cluster's ``tags`` against the resource schema's ``Tags`` (keys, values, count)."""
    if tags is None:
        return []
    if not isinstance(tags, Mapping):
        return [argument_finding("tags", tags, "a dict of str to str")]
    found: list[Finding] = []
    top = limits.MAX_TAGS
    if len(tags) > top:
        found.append(
            Finding(
                rule="HP-TAGS",
                field="tags (Tags)",
                value=f"{len(tags)} tags",
                allowed=f"0..{top} tags",
                fix="drop tags, or tag the stack instead of the cluster",
            )
        )
    allowed_text = "Unicode letters, digits, whitespace and _ . : / = + - @"
    for key, value in tags.items():
        if not is_unresolved(key) and not (
            isinstance(key, str)
            and 1 <= len(key) <= limits.MAX_TAG_KEY_LENGTH
            and _tag_text_ok(key)
            and not key.lower().startswith(RESERVED_TAG_PREFIX)
        ):
            found.append(
                Finding(
                    rule="HP-TAGS",
                    field="tags key (Tags[].Key)",
                    value=key,
                    allowed=f"1..{limits.MAX_TAG_KEY_LENGTH} characters: {allowed_text}; "
                    f"not starting with {RESERVED_TAG_PREFIX!r} (reserved for AWS)",
                    fix="rename the tag",
                )
            )
        if not is_unresolved(value) and not (
            isinstance(value, str)
            and len(value) <= limits.MAX_TAG_VALUE_LENGTH
            and _tag_text_ok(value)
        ):
            found.append(
                Finding(
                    rule="HP-TAGS",
                    field=f"tags[{key!r}] (Tags[].Value)",
                    value=value,
                    allowed=f"0..{limits.MAX_TAG_VALUE_LENGTH} characters: {allowed_text}",
                    fix="change the tag's value",
                )
            )
    return found


def _mode(spec: ClusterSpec) -> list[Finding]:
    """The provisioning mode the other rules read (``None`` would render as STANDARD)."""
    if isinstance(spec.mode, NodeProvisioningMode):
        return _provisioning(spec)
    return [
        argument_finding(
            "node_provisioning_mode",
            spec.mode,
            "a NodeProvisioningMode, e.g. NodeProvisioningMode.CONTINUOUS (the default)",
        )
    ]


def validate_cluster(spec: ClusterSpec) -> list[Finding]:
    """Every finding that involves the cluster as a whole or several of its groups."""
    return [
        *check_name(
            spec.name, rule="HP-NAME-CLUSTER", field="cluster_name (ClusterName)", group=None
        ),
        *_group_counts(spec),
        *_mode(spec),
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
            rule="HP-VPC-REQUIRED",
            field="security_groups / vpc_subnets (VpcConfig)",
            value="given without vpc",
            allowed="vpc, or explicit subnets (SubnetSelection(subnets=...), no VPC lookup) "
            "together with security_groups",
            fix=f"pass vpc=... or {missing} as well, or drop security_groups / vpc_subnets",
        )
    ]


def node_recovery_findings(value: object) -> list[Finding]:
    """``NodeRecovery``: a :class:`NodeRecovery`, ``None`` (omitted) or a string token."""
    if value is None or isinstance(value, NodeRecovery) or is_text_token(value):
        return []
    return [
        Finding(
            rule="HP-NODE-RECOVERY",
            field="node_recovery (NodeRecovery)",
            value=TOKEN if is_unresolved(value) else value,
            allowed="NodeRecovery.AUTOMATIC, NodeRecovery.NONE, None, or a string token",
            fix="pass NodeRecovery.AUTOMATIC or NodeRecovery.NONE",
        )
    ]


def override_network_findings(
    group: InstanceGroup, *, has_vpc: bool, cluster_security_groups: int
) -> list[Finding]:
    """A group's network override that the cluster cannot complete: a subnet selection that
    needs a VPC lookup without ``vpc``, no security group to pair the subnets with, or no
    subnet to pair the security groups with."""
    found: list[Finding] = []
    selection = group.vpc_subnets
    if selection is not None and selection.subnets is None and not has_vpc:
        found.append(
            Finding(
                rule="HP-OVERRIDE-VPC",
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
            Finding(
                rule="HP-OVERRIDE-VPC",
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
            Finding(
                rule="HP-OVERRIDE-VPC",
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

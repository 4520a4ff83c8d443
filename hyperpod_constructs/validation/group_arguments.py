"""The types of an instance group's fields (rule ``HP-ARG-TYPE``). Pure: a group in, findings
out. Counts, names and identifiers have their own rules (they report wrong types too); this
module checks the fields the other rules need to read (an instance type, a node type, lists
of checks and storage, a role, lifecycle scripts), so those rules never crash."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_cdk import Duration

from .._cdk.modules import loaded_instance_of
from .._core.arguments import (
    argument_finding,
    check,
    check_items,
    instance_of,
    is_sequence,
    is_str,
)
from .._core.finding import Finding
from ..enums import BatchSizeType, CapacityType, NetworkInterfaceType, NodeType
from ..instance_type import HyperPodInstanceType
from ..lifecycle import LifecycleScripts
from ..storage import InstanceStorage
from ..updates import BatchSize, ScheduledUpdate

if TYPE_CHECKING:
    from ..instance_group import InstanceGroup


def label(group: InstanceGroup) -> str | None:
    """The group's name for messages (None when it is not a string)."""
    return group.name if isinstance(group.name, str) else None


def _instance_type(value: object, group: str | None) -> list[Finding]:
    if isinstance(value, HyperPodInstanceType):
        if isinstance(value.name, str):
            return []
        return [
            argument_finding(
                "instance_type (InstanceType)",
                value.name,
                "a str name such as 'ml.p5.48xlarge'",
                fix="use HyperPodInstanceType.of('ml.<family>.<size>')",
                group=group,
            )
        ]
    if isinstance(value, str):
        fix = f"use HyperPodInstanceType.of({value!r}) or a constant such as "
        fix += "HyperPodInstanceType.ML_P5_48XLARGE"
    else:
        fix = "use a HyperPodInstanceType constant or HyperPodInstanceType.of('ml.<family>.<size>')"
    return [
        argument_finding(
            "instance_type (InstanceType)", value, "a HyperPodInstanceType", fix=fix, group=group
        )
    ]


def _is_role(value: object) -> bool:
    return hasattr(value, "role_arn") and hasattr(value, "add_to_principal_policy")


def _update_fields(update: object, name: str | None) -> list[Finding]:
    """The fields of a ``ScheduledUpdate`` the update rule reads (``HP-SCHEDULED-UPDATE``
    checks their values)."""
    if not isinstance(update, ScheduledUpdate):
        return []
    prefix = "scheduled_update"
    found: list[Finding] = []
    for field in ("maximum_batch_size", "rollback_maximum_batch_size"):
        size = getattr(update, field)
        found += check(
            f"{prefix}.{field}",
            size,
            instance_of(BatchSize),
            "a BatchSize, e.g. BatchSize.instances(1) or BatchSize.percentage(10)",
            optional=True,
            group=name,
        )
        if isinstance(size, BatchSize):
            found += check(
                f"{prefix}.{field}.type",
                size.type,
                instance_of(BatchSizeType),
                "a BatchSizeType (use BatchSize.instances / BatchSize.percentage)",
                group=name,
            )
    found += check(
        f"{prefix}.wait_interval",
        update.wait_interval,
        instance_of(Duration),
        "a Duration, e.g. Duration.minutes(5)",
        optional=True,
        group=name,
    )
    alarms = update.rollback_alarms
    if isinstance(alarms, str) or not is_sequence(alarms):
        found.append(
            argument_finding(
                f"{prefix}.rollback_alarms",
                alarms,
                "a list of CloudWatch alarm names (or an empty list)",
                group=name,
            )
        )
    else:
        found += check_items(
            f"{prefix}.rollback_alarms", alarms, is_str, "an alarm name (a str)", group=name
        )
    return found


def _network_and_updates(group: InstanceGroup, name: str | None) -> list[Finding]:
    """The per-group network override, scheduled updates, interface and capacity types."""
    security_groups = (
        []
        if group.security_groups is None
        else check_items(
            "security_groups (OverrideVpcConfig.SecurityGroupIds)",
            group.security_groups,
            lambda value: hasattr(value, "security_group_id"),
            "ec2.ISecurityGroup",
            group=name,
        )
    )
    return [
        *security_groups,
        *check(
            "vpc_subnets (OverrideVpcConfig.Subnets)",
            group.vpc_subnets,
            loaded_instance_of("aws_ec2", "SubnetSelection"),
            "an ec2.SubnetSelection, e.g. SubnetSelection(subnets=[...])",
            optional=True,
            group=name,
        ),
        *check(
            "scheduled_update (ScheduledUpdateConfig)",
            group.scheduled_update,
            instance_of(ScheduledUpdate),
            "a ScheduledUpdate(schedule_expression='cron(...)')",
            optional=True,
            group=name,
        ),
        *_update_fields(group.scheduled_update, name),
        *check(
            "network_interface (NetworkInterface.InterfaceType)",
            group.network_interface,
            instance_of(NetworkInterfaceType),
            "a NetworkInterfaceType member",
            optional=True,
            group=name,
        ),
        *check(
            "capacity_type (CapacityRequirements)",
            group.capacity_type,
            instance_of(CapacityType),
            "a CapacityType member",
            optional=True,
            group=name,
        ),
    ]


def group_argument_findings(group: InstanceGroup) -> list[Finding]:
    """Wrong types in the fields other rules read; empty when every such field is usable."""
    name = label(group)
    found: list[Finding] = []
    if name is None:
        found.append(argument_finding("name (InstanceGroupName)", group.name, "a str"))
    found += check(
        "node_type",
        group.node_type,
        instance_of(NodeType),
        "a NodeType (use InstanceGroup.controller / .login / .compute)",
        group=name,
    )
    found += _instance_type(group.instance_type, name)
    if not is_sequence(group.deep_health_checks):
        found.append(
            argument_finding(
                "deep_health_checks (OnStartDeepHealthChecks)",
                group.deep_health_checks,
                "a list of DeepHealthCheck members (or an empty list)",
                group=name,
            )
        )
    storage = group.storage
    if not is_sequence(storage):
        found.append(
            argument_finding(
                "storage (InstanceStorageConfigs)",
                storage,
                "a list of InstanceStorage (or an empty list)",
                group=name,
            )
        )
    else:
        for index, item in enumerate(storage):
            found += check(
                f"storage[{index}]",
                item,
                instance_of(InstanceStorage),
                "an InstanceStorage, e.g. InstanceStorage.ebs(volume_size=Size.gibibytes(500))",
                group=name,
            )
    found += check(
        "execution_role", group.execution_role, _is_role, "an iam.IRole", optional=True, group=name
    )
    found += check(
        "lifecycle_scripts",
        group.lifecycle_scripts,
        instance_of(LifecycleScripts),
        "LifecycleScripts.from_directory(...) or LifecycleScripts.from_s3(...)",
        optional=True,
        group=name,
    )
    found += _network_and_updates(group, name)
    return found

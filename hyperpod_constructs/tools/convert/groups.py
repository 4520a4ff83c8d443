"""Instance groups of a CreateCluster request as ``InstanceGroup`` factory calls, with their
Slurm layout (``SlurmConfig``, or the legacy ``provisioning_parameters.json``)."""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..._core import layout as slurm_layout
from ...enums import (
    AutoPatchStrategy,
    BatchSizeType,
    CapacityType,
    NodeType,
)
from ...instance_type import HyperPodInstanceType
from .reading import ConversionError, _expect, _Fields, _Imports
from .source import Call, Code, ListOf, Raw, literal

if TYPE_CHECKING:
    from ...group_fields import GroupField

PARTITION_NAME = re.compile(r"^[a-zA-Z0-9](-*[a-zA-Z0-9])*$")


def _member(kind: type[enum.Enum], value: object) -> str | None:
    """The name of the member of ``kind`` whose value is the API's ``value`` (``"efa-only"`` ->
    ``"EFA_ONLY"``), or None: the library's enums are the one table of the API's values."""
    try:
        return kind(value).name
    except ValueError:
        return None


_CONTROLLER, _LOGIN, _COMPUTE = (
    NodeType.CONTROLLER.value,
    NodeType.LOGIN.value,
    NodeType.COMPUTE.value,
)


@dataclass(frozen=True)
class _Layout:
    """A group's Slurm role: node type and partition."""

    node_type: str
    partition: str | None


def _layouts(
    groups: list[Any], parameters: object | None, notes: list[str], *, infer: bool
) -> list[_Layout]:
    """Each group's node type and partition: from its SlurmConfig, or (legacy layout) from
    ``provisioning_parameters.json``, or (``infer``, no file) from the group names."""
    with_config = [i for i, g in enumerate(groups) if isinstance(g, Mapping) and "SlurmConfig" in g]
    if with_config:
        if len(with_config) != len(groups):
            missing = next(i for i in range(len(groups)) if i not in with_config)
            raise ConversionError(
                f"InstanceGroups[{missing}].SlurmConfig",
                "missing while other groups have one: give every group a SlurmConfig, or none "
                "(the legacy layout in provisioning_parameters.json)",
            )
        return _counted(
            [
                _slurm_config(groups[i]["SlurmConfig"], f"InstanceGroups[{i}].SlurmConfig")
                for i in range(len(groups))
            ]
        )
    if parameters is None:
        inferred = _inferred_layouts(groups, notes) if infer else None
        if inferred is not None:
            return inferred
        raise ConversionError(
            "InstanceGroups[].SlurmConfig",
            "no group has one, so the Slurm layout lives in the lifecycle scripts' "
            "provisioning_parameters.json: pass it with --provisioning-parameters",
        )
    return _legacy_layouts(groups, parameters, notes)


def _slurm_config(value: object, path: str) -> _Layout:
    config = _Fields.of(value, path)
    node_type = config.require("NodeType")
    if slurm_layout.layout_of(node_type) is None:
        raise ConversionError(
            f"{path}.NodeType",
            f"expected {', '.join(slurm_layout.NODE_TYPES)}, got {node_type!r}",
        )
    partitions = config.take("PartitionNames") or []
    _expect(partitions, list, f"{path}.PartitionNames")
    if len(partitions) > 1:
        raise ConversionError(f"{path}.PartitionNames", "at most one partition name")
    config.done()
    partition = partitions[0] if partitions else None
    return _Layout(node_type, _expect(partition, (str, type(None)), f"{path}.PartitionNames[0]"))


def _counted(layouts: list[_Layout]) -> list[_Layout]:
    """``layouts``, when they have as many groups of each node type as the Slurm layout allows
    (:mod:`hyperpod_constructs._core.layout`)."""
    for role in slurm_layout.NODE_TYPES.values():
        indexes = [i for i, found in enumerate(layouts) if found.node_type == role.node_type]
        if not role.count_allowed(len(indexes)):
            where = ", ".join(f"InstanceGroups[{i}]" for i in indexes) or "InstanceGroups"
            raise ConversionError(
                f"{where}.SlurmConfig.NodeType",
                f"a cluster has {role.groups()} ({len(indexes)} given)",
            )
    return layouts


def _group_names(groups: list[Any]) -> list[str]:
    return [
        _expect(
            g.get("InstanceGroupName") if isinstance(g, Mapping) else None,
            str,
            f"InstanceGroups[{i}].InstanceGroupName",
        )
        for i, g in enumerate(groups)
    ]


def _inferred_layouts(groups: list[Any], notes: list[str]) -> list[_Layout] | None:
    """The legacy layout the group names make obvious: one group named like ``controller``,
    at most one like ``login``, every other group a worker in the partition of its own name
    (the lifecycle scripts' default). None when the names do not say it."""
    names = _group_names(groups)
    controllers = [n for n in names if "controller" in n.lower()]
    logins = [n for n in names if "login" in n.lower()]
    if (
        not slurm_layout.CONTROLLER.count_allowed(len(controllers))
        or not slurm_layout.LOGIN.count_allowed(len(logins))
        or set(controllers) & set(logins)
    ):
        return None
    workers = [n for n in names if n not in controllers and n not in logins]
    if not workers:
        return None
    notes.append(
        "no --provisioning-parameters: assumed the layout of the group names (controller "
        f"{controllers[0]!r}"
        + (f", login {logins[0]!r}" if logins else "")
        + ", workers "
        + ", ".join(f"{w!r} in partition {w!r}" for w in workers)
        + "); the template is the same either way, pass the lifecycle scripts' "
        "provisioning_parameters.json if the partitions differ"
    )
    return [
        _Layout(_CONTROLLER, None)
        if n in controllers
        else _Layout(_LOGIN, None)
        if n in logins
        else _Layout(_COMPUTE, n)
        for n in names
    ]


def _legacy_layouts(groups: list[Any], parameters: object, notes: list[str]) -> list[_Layout]:
    path = "provisioning_parameters.json"
    if not isinstance(parameters, Mapping):
        raise ConversionError(path, "expected a JSON object")
    roles: dict[str, _Layout] = {}

    def add(name: str, layout: _Layout, where: str) -> None:
        if name in roles:
            raise ConversionError(
                where, f"{name!r} already names the {roles[name].node_type} group"
            )
        roles[name] = layout

    controller = parameters.get("controller_group")
    if not isinstance(controller, str):
        raise ConversionError(f"{path}.controller_group", "required: the controller group's name")
    add(controller, _Layout(_CONTROLLER, None), f"{path}.controller_group")
    login = parameters.get("login_group")
    if login is not None:
        add(
            _expect(login, str, f"{path}.login_group"),
            _Layout(_LOGIN, None),
            f"{path}.login_group",
        )
    workers = _expect(parameters.get("worker_groups") or [], list, f"{path}.worker_groups")
    for index, worker in enumerate(workers):
        where = f"{path}.worker_groups[{index}]"
        if not isinstance(worker, Mapping) or not isinstance(
            worker.get("instance_group_name"), str
        ):
            raise ConversionError(where, "expected {instance_group_name, partition_name}")
        name = worker["instance_group_name"]
        partition = worker.get("partition_name")
        if partition is None:
            partition = name
        partition = _expect(partition, str, f"{where}.partition_name")
        if name == login and name in roles:
            # AWS's Terraform module for HyperPod lists every group but the controller as a
            # worker: the lifecycle scripts make the login_group a login node all the same.
            notes.append(
                f"{where}: {name!r} is also the login_group: converted as the Login group, as "
                f"the lifecycle scripts decide it (its partition {partition!r} is left out: a "
                "Login group takes no partition, and its nodes are in dev)"
            )
            continue
        add(name, _Layout(_COMPUTE, partition), where)
    names = _group_names(groups)
    for role, value in (("login_group", login), ("controller_group", controller)):
        if isinstance(value, str) and value not in names:
            notes.append(
                f"{path}.{role} {value!r} names no instance group of the request "
                f"(groups: {', '.join(map(repr, names))})"
            )
    layouts = []
    for index, name in enumerate(names):
        if name not in roles:
            raise ConversionError(
                f"InstanceGroups[{index}].InstanceGroupName",
                f"{name!r} is not the controller, login or a worker group of {path}",
            )
        layouts.append(roles[name])
    return layouts


def _instance_types(group: _Fields, path: str) -> list[str]:
    """The group's one ``InstanceType``, or a flexible group's
    ``InstanceRequirements.InstanceTypes`` (in priority order); the API takes one or the other."""
    requirements = group.take("InstanceRequirements")
    if requirements is None:
        return [_expect(group.require("InstanceType"), str, f"{path}.InstanceType")]
    where = f"{path}.InstanceRequirements"
    if group.take("InstanceType") is not None:
        raise ConversionError(where, "InstanceType and InstanceRequirements exclude each other")
    config = _Fields.of(requirements, where)
    types = _expect(config.require("InstanceTypes"), list, f"{where}.InstanceTypes")
    config.done()
    if not types:
        raise ConversionError(f"{where}.InstanceTypes", "at least one instance type")
    return [_expect(t, str, f"{where}.InstanceTypes") for t in types]


def _instance_type(name: str, imports: _Imports) -> Code:
    cls = imports.library("HyperPodInstanceType").text
    attribute = "ML_" + re.sub(r"[.-]", "_", name.removeprefix("ml.")).upper()
    member = getattr(HyperPodInstanceType, attribute, None) if name.startswith("ml.") else None
    if member is not None and str(member) == name:  # ml.p5-48xlarge is not ml.p5.48xlarge
        return Raw(f"{cls}.{attribute}")
    return Call(f"{cls}.of", (literal(name),))


def _lifecycle(value: object, path: str, imports: _Imports) -> Code:
    config = _Fields.of(value, path)
    uri = _expect(config.require("SourceS3Uri"), str, f"{path}.SourceS3Uri")
    on_create, on_init = config.take("OnCreate"), config.take("OnInitComplete")
    config.done()
    if (on_create is None) == (on_init is None):
        raise ConversionError(path, "exactly one of OnCreate or OnInitComplete is required")
    entry = ("on_create", on_create) if on_create is not None else ("on_init_complete", on_init)
    cls = imports.library("LifecycleScripts").text
    return Call(f"{cls}.from_s3_uri", (literal(uri),), ((entry[0], literal(entry[1])),))


def _network(value: object, path: str, imports: _Imports) -> tuple[Code, Code]:
    config = _Fields.of(value, path)
    subnets = _expect(config.require("Subnets"), list, f"{path}.Subnets")
    groups = _expect(config.require("SecurityGroupIds"), list, f"{path}.SecurityGroupIds")
    config.done()
    return (
        ListOf(
            tuple(imports.existing("subnet", _expect(s, str, f"{path}.Subnets")) for s in subnets)
        ),
        ListOf(
            tuple(
                imports.existing("security_group", _expect(g, str, f"{path}.SecurityGroupIds"))
                for g in groups
            )
        ),
    )


def _group(
    value: object,
    path: str,
    layout: _Layout,
    imports: _Imports,
    *,
    cluster_role: str | None,
    shared_lifecycle: bool,
    continuous: bool,
    convert_to_continuous: bool,
    adds_slurm_config: bool = False,
    notes: list[str],
) -> Code:
    group = _Fields.of(value, path)
    name = _expect(group.require("InstanceGroupName"), str, f"{path}.InstanceGroupName")
    types = _instance_types(group, path)
    count = _expect(group.require("InstanceCount"), int, f"{path}.InstanceCount")
    group.take("SlurmConfig")  # read by _layouts
    kwargs: list[tuple[str, Code]] = [
        ("instance_types", ListOf(tuple(_instance_type(t, imports) for t in types)))
        if group.value.get("InstanceRequirements") is not None
        else ("instance_type", _instance_type(types[0], imports))
    ]
    role = slurm_layout.NODE_TYPES[layout.node_type]
    if layout.partition is not None and not role.partition_allowed:
        raise ConversionError(
            f"{path}.SlurmConfig.PartitionNames",
            f"a {layout.node_type} group takes no partition (the Slurm configuration reference: "
            "not allowed for Controller or Login node types)",
        )
    if layout.partition is not None:  # a Compute group without one is valid: its nodes are in dev
        partition = layout.partition
        if (convert_to_continuous or adds_slurm_config) and not PARTITION_NAME.match(partition):
            partition = re.sub(r"[^a-zA-Z0-9]+", "-", partition).strip("-")
            notes.append(
                f"{path}: partition {layout.partition!r} renamed {partition!r} "
                "(SlurmConfig.PartitionNames takes letters, digits and hyphens)"
            )
        kwargs.append(("partition", literal(partition)))
    heads = slurm_layout.CONTINUOUS_CONTROLLER_NODES
    if layout.node_type == slurm_layout.CONTROLLER.node_type and continuous and count > heads:
        raise ConversionError(
            f"{path}.InstanceCount",
            f"{count} controller nodes: multi-head node configuration is not supported with "
            f"continuous provisioning (use {heads}, or keep NodeProvisioningMode Standard)",
        )
    kwargs.append(("instance_count", literal(count)))
    minimum = group.take("MinInstanceCount")
    if minimum is not None and not continuous:
        raise ConversionError(
            f"{path}.MinInstanceCount", "only valid with NodeProvisioningMode 'Continuous'"
        )
    accelerated = any(HyperPodInstanceType.of(t).accelerator_count for t in types)
    if minimum is None and convert_to_continuous and accelerated and layout.node_type == _COMPUTE:
        minimum = count
        notes.append(f"{path}.MinInstanceCount set to InstanceCount ({count}): the group is gated")
    if minimum is not None:
        kwargs.append(
            ("min_instance_count", literal(_expect(minimum, int, f"{path}.MinInstanceCount")))
        )
    role = _expect(group.require("ExecutionRole"), str, f"{path}.ExecutionRole")
    if role != cluster_role:
        kwargs.append(("execution_role", imports.existing("role", role)))
    lifecycle = group.take("LifeCycleConfig")
    if lifecycle is not None and not shared_lifecycle:
        kwargs.append(
            ("lifecycle_scripts", _lifecycle(lifecycle, f"{path}.LifeCycleConfig", imports))
        )
    kwargs += _group_options(group, path, layout, imports)
    group.done()
    # InstanceGroup's factories are named after the node types: controller, login, compute.
    factory = f"{imports.library('InstanceGroup').text}.{NodeType(layout.node_type).name.lower()}"
    return Call(factory, (literal(name),), tuple(kwargs))


Reader = Callable[[object, str, _Imports], list[tuple[str, Code]]]
"""A reader of one ``InstanceGroups[]`` key: (its value, its path, the app's imports) -> the
factory's keyword arguments."""


def _group_options(
    group: _Fields, path: str, layout: _Layout, imports: _Imports
) -> list[tuple[str, Code]]:
    """The keyword arguments of the group's fields ``_group`` did not read, read by the table
    of group fields (``GROUP_FIELDS``): by their codec, or by the reader of their key.

    The table is imported here, when a request is converted: it loads aws_cdk, which the
    command line does not load to start (``tests/test_summary_cli.py``)."""
    from ...instance_group import GROUP_FIELDS

    node_type = NodeType(layout.node_type)
    readers: dict[str, tuple[GroupField, Reader]] = {}
    for field in GROUP_FIELDS:
        reader = _reader(field)
        if field.cfn is not None and reader is not None and field.cfn not in group.taken:
            readers.setdefault(field.cfn, (field, reader))
    for key, (field, _) in readers.items():
        if group.value.get(key) is not None and not field.takes(node_type):
            kinds = " and ".join(n.name.lower() for n in NodeType if field.takes(n))
            raise ConversionError(
                f"{path}.{key}", f"only {kinds} groups take {field.keyword} in hyperpod_constructs"
            )
    found: list[tuple[str, Code]] = []
    for key, (_, reader) in readers.items():
        value = group.take(key)
        if value is not None:
            found += reader(value, f"{path}.{key}", imports)
    return found


def _reader(field: GroupField) -> Reader | None:
    """How ``convert`` reads ``field``: the reader of its key, else by its codec; ``None``
    when ``_group`` reads it with its context."""
    from ...group_fields import Member, Members, Plain

    if field.cfn in _READERS:
        return _READERS[field.cfn]
    codec, keyword = field.codec, field.keyword
    if isinstance(codec, Plain):
        kind = codec.kind
        return lambda value, path, _imports: [(keyword, literal(_expect(value, kind, path)))]
    if isinstance(codec, Members):
        members = codec.kind
        return lambda value, path, imports: [
            (
                keyword,
                ListOf(
                    tuple(
                        _enum_code(members, item, path, imports)
                        for item in _expect(value, list, path)
                    )
                ),
            )
        ]
    if isinstance(codec, Member) and codec.key is not None:
        member, key = codec.kind, codec.key
        return lambda value, path, imports: [
            (keyword, _enum_code(member, _wrapped(value, path, key), f"{path}.{key}", imports))
        ]
    return None


def _wrapped(value: object, path: str, key: str) -> object:
    """The one ``key`` of the object ``value`` (``{"InterfaceType": "efa"}``)."""
    config = _Fields.of(value, path)
    inner = config.require(key)
    config.done()
    return inner


def _enum_code(kind: type[enum.Enum], value: object, path: str, imports: _Imports) -> Code:
    """The member of the library's enum ``kind`` whose API value is ``value``."""
    member = _member(kind, value)
    if member is None:
        raise ConversionError(path, f"unknown value {value!r}")
    return Raw(f"{imports.library(kind.__name__).text}.{member}")


def _override(value: object, path: str, imports: _Imports) -> list[tuple[str, Code]]:
    subnets, security_groups = _network(value, path, imports)
    return [
        ("vpc_subnets", Call("ec2.SubnetSelection", (), (("subnets", subnets),))),
        ("security_groups", security_groups),
    ]


def _auto_patch(value: object, path: str, imports: _Imports) -> Code:
    config = _Fields.of(value, path)
    strategy = config.require("PatchingStrategy")
    for key in ("DeploymentConfig", "DrainPolicy"):
        if config.take(key) is not None:
            raise ConversionError(
                f"{path}.{key}",
                "only for the rolling DrainFirst strategy, which AWS makes available only for "
                "clusters orchestrated by Amazon EKS",
            )
    config.done()
    member = _member(AutoPatchStrategy, strategy)
    if member is None:
        raise ConversionError(
            f"{path}.PatchingStrategy",
            f"{strategy!r}: Slurm clusters take WhenIdle or WhenAllIdle (DrainFirst is for "
            "Amazon EKS clusters only)",
        )
    return Raw(f"{imports.library('AutoPatchStrategy').text}.{member}")


def _capacity(value: object, path: str, imports: _Imports) -> Code:
    config = _Fields.of(value, path)
    chosen = [t.value for t in CapacityType if config.take(t.value) is not None]
    config.done()
    if len(chosen) != 1 or config.value[chosen[0]] != {}:
        raise ConversionError(path, 'expected exactly one of {"OnDemand": {}} or {"Spot": {}}')
    return Raw(f"{imports.library('CapacityType').text}.{CapacityType(chosen[0]).name}")


def _storage(value: object, path: str, imports: _Imports) -> Code:
    config = _Fields.of(value, path)
    ebs, lustre, zfs = (
        config.take("EbsVolumeConfig"),
        config.take("FsxLustreConfig"),
        config.take("FsxOpenZfsConfig"),
    )
    config.done()
    cls = imports.library("InstanceStorage").text
    if [ebs, lustre, zfs].count(None) != 2:
        raise ConversionError(
            path, "expected exactly one of EbsVolumeConfig, FsxLustreConfig, FsxOpenZfsConfig"
        )
    if ebs is not None:
        volume = _Fields.of(ebs, f"{path}.EbsVolumeConfig")
        root, key = volume.take("RootVolume"), volume.take("VolumeKmsKeyId")
        # A root volume (RootVolume true) has no size: HyperPod sizes it (API reference).
        size_value = (volume.take if root is True else volume.require)("VolumeSizeInGB")
        kwargs: list[tuple[str, Code]] = []
        if size_value is not None:
            size = _expect(size_value, int, f"{path}.EbsVolumeConfig.VolumeSizeInGB")
            imports.cdk.add("Size")
            kwargs.append(("volume_size", Call("Size.gibibytes", (literal(size),))))
        if root is not None:
            kwargs.append(
                ("root_volume", literal(_expect(root, bool, f"{path}.EbsVolumeConfig.RootVolume")))
            )
        if key is not None:
            kwargs.append(
                ("kms_key_id", literal(_expect(key, str, f"{path}.EbsVolumeConfig.VolumeKmsKeyId")))
            )
        volume.done()
        return Call(f"{cls}.ebs", (), tuple(kwargs))
    kind, body = ("FsxLustreConfig", lustre) if lustre is not None else ("FsxOpenZfsConfig", zfs)
    fsx = _Fields.of(body, f"{path}.{kind}")
    kwargs = [("dns_name", literal(_expect(fsx.require("DnsName"), str, f"{path}.{kind}.DnsName")))]
    if kind == "FsxLustreConfig":
        kwargs.append(
            (
                "mount_name",
                literal(_expect(fsx.require("MountName"), str, f"{path}.{kind}.MountName")),
            )
        )
    mount_path = fsx.take("MountPath")
    if mount_path is not None:
        kwargs.append(("mount_path", literal(_expect(mount_path, str, f"{path}.{kind}.MountPath"))))
    fsx.done()
    factory = "fsx_lustre" if kind == "FsxLustreConfig" else "fsx_open_zfs"
    return Call(f"{cls}.{factory}", (), tuple(kwargs))


def _batch_size(value: object, path: str, imports: _Imports) -> Code:
    config = _Fields.of(value, path)
    kind, number = config.require("Type"), _expect(config.require("Value"), int, f"{path}.Value")
    config.done()
    factories = {
        BatchSizeType.INSTANCE_COUNT: "instances",
        BatchSizeType.CAPACITY_PERCENTAGE: "percentage",
    }
    member = _member(BatchSizeType, kind)
    if member is None:
        expected = " or ".join(t.value for t in factories)
        raise ConversionError(f"{path}.Type", f"expected {expected}, got {kind!r}")
    factory = factories[BatchSizeType[member]]
    return Call(f"{imports.library('BatchSize').text}.{factory}", (literal(number),))


def _scheduled_update(value: object, path: str, imports: _Imports) -> Code:
    config = _Fields.of(value, path)
    kwargs: list[tuple[str, Code]] = [
        (
            "schedule_expression",
            literal(
                _expect(config.require("ScheduleExpression"), str, f"{path}.ScheduleExpression")
            ),
        )
    ]
    deployment_value = config.take("DeploymentConfig")
    config.done()
    if deployment_value is not None:
        where = f"{path}.DeploymentConfig"
        deployment = _Fields.of(deployment_value, where)
        policy_value = deployment.take("RollingUpdatePolicy")
        if policy_value is not None:
            policy = _Fields.of(policy_value, f"{where}.RollingUpdatePolicy")
            for key, keyword in (
                ("MaximumBatchSize", "maximum_batch_size"),
                ("RollbackMaximumBatchSize", "rollback_maximum_batch_size"),
            ):
                size = policy.take(key)
                if size is not None:
                    kwargs.append(
                        (keyword, _batch_size(size, f"{where}.RollingUpdatePolicy.{key}", imports))
                    )
            policy.done()
        wait = deployment.take("WaitIntervalInSeconds")
        if wait is not None:
            imports.cdk.add("Duration")
            kwargs.append(
                (
                    "wait_interval",
                    Call(
                        "Duration.seconds",
                        (literal(_expect(wait, int, f"{where}.WaitIntervalInSeconds")),),
                    ),
                )
            )
        alarms = deployment.take("AutoRollbackConfiguration")
        if alarms is not None:
            names = []
            for index, alarm in enumerate(
                _expect(alarms, list, f"{where}.AutoRollbackConfiguration")
            ):
                entry = _Fields.of(alarm, f"{where}.AutoRollbackConfiguration[{index}]")
                names.append(
                    literal(
                        _expect(
                            entry.require("AlarmName"),
                            str,
                            f"{where}.AutoRollbackConfiguration[{index}].AlarmName",
                        )
                    )
                )
                entry.done()
            kwargs.append(("rollback_alarms", ListOf(tuple(names))))
        deployment.done()
        if len(kwargs) == 1:
            raise ConversionError(
                where, "an empty DeploymentConfig is not expressed by hyperpod_constructs"
            )
    return Call(imports.library("ScheduledUpdate").text, (), tuple(kwargs))


_READERS: dict[str, Reader] = {
    "InstanceStorageConfigs": lambda value, path, imports: [
        (
            "storage",
            ListOf(
                tuple(
                    _storage(item, f"{path}[{i}]", imports)
                    for i, item in enumerate(_expect(value, list, path))
                )
            ),
        )
    ],
    "OverrideVpcConfig": _override,
    "ScheduledUpdateConfig": lambda value, path, imports: [
        ("scheduled_update", _scheduled_update(value, path, imports))
    ],
    "CapacityRequirements": lambda value, path, imports: [
        ("capacity_type", _capacity(value, path, imports))
    ],
    "AutoPatchConfig": lambda value, path, imports: [
        ("auto_patch", _auto_patch(value, path, imports))
    ],
}
"""The readers of the keys whose value is more than a codec reads (the group's other keys
are read by their field's codec, see :func:`_reader`)."""

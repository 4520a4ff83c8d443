"""A CreateCluster request (the JSON ``aws sagemaker create-cluster --cli-input-json`` takes)
as a typed Python CDK app using this library. Pure: a request in, source text out.

Every field of the request is either translated or reported as a :class:`ConversionError`
naming it: nothing is dropped. Existing roles, subnets and security groups are imported by
ARN / ID (never recreated).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..instance_type import HyperPodInstanceType
from .source import Call, Code, DictOf, ListOf, Raw, assignment, literal, statement

UNSUPPORTED = {
    "RestrictedInstanceGroups": "restricted instance groups (Nova model training) are not "
    "supported by hyperpod_constructs",
    "RestrictedInstanceGroupsConfig": "restricted instance groups are not supported",
    "TieredStorageConfig": "tiered storage is not supported by hyperpod_constructs yet",
    "ClusterRole": "a cluster role is used by EKS autoscaling only, which this Slurm library "
    "does not manage",
    "AutoScaling": "autoscaling (Karpenter) applies to EKS clusters only",
    "Orchestrator.Eks": "EKS-orchestrated clusters are not supported; hyperpod_constructs "
    "builds Slurm clusters",
    "KubernetesConfig": "Kubernetes labels and taints apply to EKS clusters only",
    "ImageReleaseVersion": "ImageReleaseVersion applies to EKS clusters only",
    "InstanceRequirements": "flexible instance groups (several instance types) are not "
    "supported yet; give one InstanceType",
    "AutoPatchConfig": "automatic patching is not supported by hyperpod_constructs yet",
    "CurrentCount": "read-only: the instances running now, as DescribeCluster reports them",
}
"""Fields the library deliberately does not express, and why (also in docs/guide.md)."""

ACKNOWLEDGED_WARNING = "hyperpod:ImportedRoleNotGranted"
PARTITION_NAME = re.compile(r"^[a-zA-Z0-9](-*[a-zA-Z0-9])*$")
SUBNET_WARNING = "@aws-cdk/aws-ec2:noSubnetRouteTableId"


class ConversionError(Exception):
    """A request field the library cannot express (or an invalid request)."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field
        self.problem = problem


@dataclass(frozen=True, kw_only=True)
class Options:
    """How to convert.

    :param continuous: generate a Continuous-mode app: ``MinInstanceCount`` = ``InstanceCount``
        on accelerator groups (so the readiness gate waits for them) and ``SlurmConfig`` on
        every group. Default: keep the request's mode.
    :param stack_name: the stack's name. Default: from the cluster name.
    :param source_name: the request's file name, quoted in the generated docstring.
    """

    continuous: bool = False
    stack_name: str | None = None
    source_name: str = "cluster-config.json"


@dataclass
class _Fields:
    """A JSON object being read: every key must be taken, or :meth:`done` reports it."""

    value: Mapping[str, Any]
    path: str
    taken: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, value: object, path: str) -> _Fields:
        if not isinstance(value, Mapping):
            raise ConversionError(path, f"expected a JSON object, got {type(value).__name__}")
        return cls(value, path)

    def take(self, key: str) -> Any:
        self.taken.add(key)
        return self.value.get(key)

    def require(self, key: str) -> Any:
        value = self.take(key)
        if value is None:
            raise ConversionError(f"{self.path}.{key}", "required by CreateCluster")
        return value

    def done(self) -> None:
        for key in self.value:
            if key not in self.taken:
                where = f"{self.path}.{key}" if self.path else key
                reason = UNSUPPORTED.get(key) or UNSUPPORTED.get(where)
                raise ConversionError(
                    where, reason or "not a field hyperpod_constructs knows (not converted)"
                )


def _expect(value: object, kind: type | tuple[type, ...], path: str) -> Any:
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise ConversionError(path, f"expected {names}, got {value!r}")
    return value


@dataclass
class _Imports:
    """What the app imports, and the existing resources it imports by ID."""

    names: set[str] = field(default_factory=set)
    cdk: set[str] = field(default_factory={"App", "Stack"}.copy)
    modules: set[str] = field(default_factory=set)
    lines: list[str] = field(default_factory=list)
    variables: dict[tuple[str, str], str] = field(default_factory=dict)

    def library(self, name: str) -> Raw:
        self.names.add(name)
        return Raw(name)

    def existing(self, kind: str, value: str) -> Raw:
        """A variable holding an imported role / subnet / security group (one per value)."""
        key = (kind, value)
        if key not in self.variables:
            count = sum(1 for k, _ in self.variables if k == kind) + 1
            module, call, var, construct_id, extra = _IMPORTERS[kind]
            self.modules.add(module)
            numbered = count > 1 or kind in ("subnet", "security_group")
            variable = f"{var}_{count}" if numbered else var
            construct_id = f"{construct_id}{count}" if numbered else construct_id
            self.variables[key] = variable
            self.lines.append(
                assignment(
                    variable,
                    Call(call, (Raw("stack"), literal(construct_id), literal(value)), extra),
                )
            )
        return Raw(self.variables[key])


_IMPORTERS: dict[str, tuple[str, str, str, str, tuple[tuple[str, Code], ...]]] = {
    "role": (
        "aws_iam as iam",
        "iam.Role.from_role_arn",
        "execution_role",
        "ExecutionRole",
        (("mutable", Raw("False")),),
    ),
    "subnet": ("aws_ec2 as ec2", "ec2.Subnet.from_subnet_id", "subnet", "Subnet", ()),
    "security_group": (
        "aws_ec2 as ec2",
        "ec2.SecurityGroup.from_security_group_id",
        "security_group",
        "SecurityGroup",
        (("mutable", Raw("False")),),
    ),
    "secret": (
        "aws_secretsmanager as secretsmanager",
        "secretsmanager.Secret.from_secret_complete_arn",
        "accounting_secret",
        "AccountingSecret",
        (),
    ),
}


@dataclass(frozen=True)
class _Layout:
    """A group's Slurm role: node type and partition."""

    node_type: str
    partition: str | None


def convert_request(
    request: object,
    provisioning_parameters: object | None = None,
    options: Options | None = None,
) -> tuple[str, list[str]]:
    """The app's source text, and notes for the user (what changed with ``--continuous``).

    :raises ConversionError: a field the library cannot express, naming it.
    """
    options = options or Options()
    top = _Fields.of(request, "")
    imports = _Imports()
    notes: list[str] = []
    name = _expect(top.require("ClusterName"), str, "ClusterName")
    groups = _expect(top.require("InstanceGroups"), list, "InstanceGroups")
    if not groups:
        raise ConversionError("InstanceGroups", "at least one instance group is required")
    mode = top.take("NodeProvisioningMode")
    if mode not in (None, "Continuous"):
        raise ConversionError("NodeProvisioningMode", f"expected 'Continuous', got {mode!r}")
    continuous = mode == "Continuous" or options.continuous
    orchestrator = top.take("Orchestrator")
    orchestrator_kwargs: list[tuple[str, Code]] = []
    if orchestrator is not None:
        converting = options.continuous and mode != "Continuous"
        orchestrator_kwargs = _orchestrator(
            orchestrator, continuous, imports, notes, converting=converting
        )

    layouts = _layouts(groups, provisioning_parameters)
    legacy = not continuous and all("SlurmConfig" not in g for g in groups)

    kwargs: list[tuple[str, Code]] = [("cluster_name", literal(name))]
    mode_enum = imports.library("NodeProvisioningMode")
    kwargs.append(
        (
            "node_provisioning_mode",
            Raw(f"{mode_enum.text}.{'CONTINUOUS' if continuous else 'STANDARD'}"),
        )
    )
    if legacy:
        kwargs.append(
            ("slurm_layout", Raw(f"{imports.library('SlurmLayout').text}.LIFECYCLE_SCRIPTS"))
        )
    recovery = top.take("NodeRecovery")
    if recovery is None:
        kwargs.append(("node_recovery", Raw("None")))
    elif recovery in ("Automatic", "None"):
        member = "AUTOMATIC" if recovery == "Automatic" else "NONE"
        kwargs.append(("node_recovery", Raw(f"{imports.library('NodeRecovery').text}.{member}")))
    else:
        raise ConversionError("NodeRecovery", f"expected 'Automatic' or 'None', got {recovery!r}")

    roles = Counter(
        _expect(g.get("ExecutionRole"), str, f"InstanceGroups[{i}].ExecutionRole")
        for i, g in enumerate(groups)
        if isinstance(g, Mapping)
    )
    cluster_role = roles.most_common(1)[0][0] if roles else None
    if cluster_role is not None:
        kwargs.append(("execution_role", imports.existing("role", cluster_role)))
    lifecycles = [g.get("LifeCycleConfig") if isinstance(g, Mapping) else None for g in groups]
    shared_lifecycle = lifecycles[0] if all(lc == lifecycles[0] for lc in lifecycles) else None
    if shared_lifecycle is not None:
        kwargs.append(
            (
                "lifecycle_scripts",
                _lifecycle(shared_lifecycle, "InstanceGroups[0].LifeCycleConfig", imports),
            )
        )

    vpc = top.take("VpcConfig")
    if vpc is not None:
        subnets, security_groups = _network(vpc, "VpcConfig", imports)
        kwargs.append(("vpc_subnets", Call("ec2.SubnetSelection", (), (("subnets", subnets),))))
        kwargs.append(("security_groups", security_groups))

    kwargs += orchestrator_kwargs
    tags = top.take("Tags")
    if tags is not None:
        kwargs.append(("tags", _tags(tags)))

    group_code = [
        _group(
            group,
            f"InstanceGroups[{index}]",
            layouts[index],
            imports,
            cluster_role=cluster_role,
            shared_lifecycle=shared_lifecycle is not None,
            continuous=continuous,
            convert_to_continuous=options.continuous and mode != "Continuous",
            notes=notes,
        )
        for index, group in enumerate(groups)
    ]
    kwargs.insert(1, ("instance_groups", ListOf(tuple(group_code))))
    top.done()
    cluster = Call(
        imports.library("HyperPodSlurmCluster").text,
        (Raw("stack"), literal("Cluster")),
        tuple(kwargs),
    )
    return _module(name, cluster, imports, options), notes


def _layouts(groups: list[Any], parameters: object | None) -> list[_Layout]:
    """Each group's node type and partition: from its SlurmConfig, or (legacy layout) from
    ``provisioning_parameters.json``."""
    with_config = [i for i, g in enumerate(groups) if isinstance(g, Mapping) and "SlurmConfig" in g]
    if with_config:
        if len(with_config) != len(groups):
            missing = next(i for i in range(len(groups)) if i not in with_config)
            raise ConversionError(
                f"InstanceGroups[{missing}].SlurmConfig",
                "missing while other groups have one: give every group a SlurmConfig, or none "
                "(the legacy layout in provisioning_parameters.json)",
            )
        return [
            _slurm_config(groups[i]["SlurmConfig"], f"InstanceGroups[{i}].SlurmConfig")
            for i in range(len(groups))
        ]
    if parameters is None:
        raise ConversionError(
            "InstanceGroups[].SlurmConfig",
            "no group has one, so the Slurm layout lives in the lifecycle scripts' "
            "provisioning_parameters.json: pass it with --provisioning-parameters",
        )
    return _legacy_layouts(groups, parameters)


def _slurm_config(value: object, path: str) -> _Layout:
    config = _Fields.of(value, path)
    node_type = config.require("NodeType")
    if node_type not in ("Controller", "Login", "Compute"):
        raise ConversionError(
            f"{path}.NodeType", f"expected Controller, Login or Compute, got {node_type!r}"
        )
    partitions = config.take("PartitionNames") or []
    _expect(partitions, list, f"{path}.PartitionNames")
    if len(partitions) > 1:
        raise ConversionError(f"{path}.PartitionNames", "at most one partition name")
    config.done()
    return _Layout(node_type, partitions[0] if partitions else None)


def _legacy_layouts(groups: list[Any], parameters: object) -> list[_Layout]:
    path = "provisioning_parameters.json"
    if not isinstance(parameters, Mapping):
        raise ConversionError(path, "expected a JSON object")
    roles: dict[str, _Layout] = {}
    controller = parameters.get("controller_group")
    if not isinstance(controller, str):
        raise ConversionError(f"{path}.controller_group", "required: the controller group's name")
    roles[controller] = _Layout("Controller", None)
    login = parameters.get("login_group")
    if isinstance(login, str):
        roles[login] = _Layout("Login", None)
    for index, worker in enumerate(parameters.get("worker_groups") or []):
        where = f"{path}.worker_groups[{index}]"
        if not isinstance(worker, Mapping) or not isinstance(
            worker.get("instance_group_name"), str
        ):
            raise ConversionError(where, "expected {instance_group_name, partition_name}")
        partition = worker.get("partition_name") or worker["instance_group_name"]
        roles[worker["instance_group_name"]] = _Layout("Compute", str(partition))
    layouts = []
    for index, group in enumerate(groups):
        name = group.get("InstanceGroupName") if isinstance(group, Mapping) else None
        if name not in roles:
            raise ConversionError(
                f"InstanceGroups[{index}].InstanceGroupName",
                f"{name!r} is not the controller, login or a worker group of {path}",
            )
        layouts.append(roles[name])
    return layouts


def _instance_type(name: str, imports: _Imports) -> Code:
    cls = imports.library("HyperPodInstanceType").text
    attribute = "ML_" + re.sub(r"[.-]", "_", name.removeprefix("ml.")).upper()
    if name.startswith("ml.") and hasattr(HyperPodInstanceType, attribute):
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


def _orchestrator(
    value: object, continuous: bool, imports: _Imports, notes: list[str], *, converting: bool
) -> list[tuple[str, Code]]:
    config = _Fields.of(value, "Orchestrator")
    slurm_value = config.take("Slurm")
    config.done()
    if slurm_value is None:
        raise ConversionError("Orchestrator", 'expected {"Slurm": {...}}')
    slurm = _Fields.of(slurm_value, "Orchestrator.Slurm")
    found: list[tuple[str, Code]] = []
    strategy = slurm.take("SlurmConfigStrategy")
    if strategy is not None:
        if strategy not in ("Overwrite", "Managed", "Merge"):
            raise ConversionError(
                "Orchestrator.Slurm.SlurmConfigStrategy", f"unknown value {strategy!r}"
            )
        if continuous and not converting:
            raise ConversionError(
                "Orchestrator.Slurm.SlurmConfigStrategy",
                "HyperPod rejects it with NodeProvisioningMode 'Continuous' (the layout comes "
                "from each group's SlurmConfig)",
            )
        if continuous:
            notes.append(
                "Orchestrator.Slurm.SlurmConfigStrategy left out: Continuous mode rejects it "
                "(the layout comes from each group's SlurmConfig)"
            )
        else:
            cls = imports.library("SlurmConfigStrategy").text
            found.append(("slurm_config_strategy", Raw(f"{cls}.{strategy.upper()}")))
    database = slurm.take("AccountingDatabase")
    if database is not None:
        found.append(("accounting_database", _accounting(database, imports)))
    slurm.done()
    if not found:
        found.append(("declare_slurm_orchestrator", Raw("True")))
    return found


def _accounting(value: object, imports: _Imports) -> Code:
    path = "Orchestrator.Slurm.AccountingDatabase"
    config = _Fields.of(value, path)
    kwargs: list[tuple[str, Code]] = [
        ("endpoint", literal(_expect(config.require("Endpoint"), str, f"{path}.Endpoint")))
    ]
    secret = _expect(config.require("SecretArn"), str, f"{path}.SecretArn")
    kwargs.append(("secret", imports.existing("secret", secret)))
    name, port = config.take("Name"), config.take("Port")
    if name is not None:
        kwargs.append(("database_name", literal(_expect(name, str, f"{path}.Name"))))
    if port is not None:
        kwargs.append(("port", literal(_expect(port, int, f"{path}.Port"))))
    config.done()
    return Call(imports.library("AccountingDatabase").text, (), tuple(kwargs))


def _tags(value: object) -> Code:
    entries: list[tuple[str, Code]] = []
    for index, tag in enumerate(_expect(value, list, "Tags")):
        config = _Fields.of(tag, f"Tags[{index}]")
        key = _expect(config.require("Key"), str, f"Tags[{index}].Key")
        text = config.take("Value")
        config.done()
        entries.append(
            (key, literal(_expect(text if text is not None else "", str, f"Tags[{index}].Value")))
        )
    return DictOf(tuple(entries))


_FACTORIES = {"Controller": "controller", "Login": "login", "Compute": "compute"}
_COMPUTE_ONLY = {
    "OnStartDeepHealthChecks": "deep_health_checks",
    "TrainingPlanArn": "training_plan_arn",
}


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
    notes: list[str],
) -> Code:
    group = _Fields.of(value, path)
    name = _expect(group.require("InstanceGroupName"), str, f"{path}.InstanceGroupName")
    instance_type = _expect(group.require("InstanceType"), str, f"{path}.InstanceType")
    count = _expect(group.require("InstanceCount"), int, f"{path}.InstanceCount")
    group.take("SlurmConfig")  # read by _layouts
    kwargs: list[tuple[str, Code]] = [("instance_type", _instance_type(instance_type, imports))]
    if layout.node_type == "Compute":
        if layout.partition is None:
            raise ConversionError(
                f"{path}.SlurmConfig.PartitionNames", "a Compute group needs one partition"
            )
        partition = layout.partition
        if convert_to_continuous and not PARTITION_NAME.match(partition):
            partition = re.sub(r"[^a-zA-Z0-9]+", "-", partition).strip("-")
            notes.append(
                f"{path}: partition {layout.partition!r} renamed {partition!r} "
                "(SlurmConfig.PartitionNames takes letters, digits and hyphens)"
            )
        kwargs.append(("partition", literal(partition)))
    elif layout.partition is not None:
        raise ConversionError(
            f"{path}.SlurmConfig.PartitionNames", f"a {layout.node_type} group has no partition"
        )
    kwargs.append(("instance_count", literal(count)))
    minimum = group.take("MinInstanceCount")
    if minimum is not None and not continuous:
        raise ConversionError(
            f"{path}.MinInstanceCount", "only valid with NodeProvisioningMode 'Continuous'"
        )
    accelerated = bool(HyperPodInstanceType.of(instance_type).accelerator_count)
    if minimum is None and convert_to_continuous and accelerated and layout.node_type == "Compute":
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
    factory = f"{imports.library('InstanceGroup').text}.{_FACTORIES[layout.node_type]}"
    return Call(factory, (literal(name),), tuple(kwargs))


def _group_options(
    group: _Fields, path: str, layout: _Layout, imports: _Imports
) -> list[tuple[str, Code]]:
    found: list[tuple[str, Code]] = []
    for field_name, keyword in _COMPUTE_ONLY.items():
        if group.value.get(field_name) is not None and layout.node_type != "Compute":
            raise ConversionError(
                f"{path}.{field_name}",
                f"only compute groups take {keyword} in hyperpod_constructs",
            )
    threads = group.take("ThreadsPerCore")
    if threads is not None:
        found.append(("threads_per_core", literal(_expect(threads, int, f"{path}.ThreadsPerCore"))))
    checks = group.take("OnStartDeepHealthChecks")
    if checks is not None:
        cls = imports.library("DeepHealthCheck").text
        members = {
            "InstanceStress": "INSTANCE_STRESS",
            "InstanceConnectivity": "INSTANCE_CONNECTIVITY",
        }
        items = []
        for check in _expect(checks, list, f"{path}.OnStartDeepHealthChecks"):
            if check not in members:
                raise ConversionError(f"{path}.OnStartDeepHealthChecks", f"unknown check {check!r}")
            items.append(Raw(f"{cls}.{members[check]}"))
        found.append(("deep_health_checks", ListOf(tuple(items))))
    storage = group.take("InstanceStorageConfigs")
    if storage is not None:
        configs = _expect(storage, list, f"{path}.InstanceStorageConfigs")
        found.append(
            (
                "storage",
                ListOf(
                    tuple(
                        _storage(item, f"{path}.InstanceStorageConfigs[{i}]", imports)
                        for i, item in enumerate(configs)
                    )
                ),
            )
        )
    for key, keyword in (("TrainingPlanArn", "training_plan_arn"), ("ImageId", "image_id")):
        text = group.take(key)
        if text is not None:
            found.append((keyword, literal(_expect(text, str, f"{path}.{key}"))))
    override = group.take("OverrideVpcConfig")
    if override is not None:
        subnets, security_groups = _network(override, f"{path}.OverrideVpcConfig", imports)
        found.append(("vpc_subnets", Call("ec2.SubnetSelection", (), (("subnets", subnets),))))
        found.append(("security_groups", security_groups))
    update = group.take("ScheduledUpdateConfig")
    if update is not None:
        found.append(
            (
                "scheduled_update",
                _scheduled_update(update, f"{path}.ScheduledUpdateConfig", imports),
            )
        )
    interface = group.take("NetworkInterface")
    if interface is not None:
        config = _Fields.of(interface, f"{path}.NetworkInterface")
        kind = config.require("InterfaceType")
        config.done()
        members = {"efa": "EFA", "efa-only": "EFA_ONLY"}
        if kind not in members:
            raise ConversionError(
                f"{path}.NetworkInterface.InterfaceType", f"unknown value {kind!r}"
            )
        found.append(
            (
                "network_interface",
                Raw(f"{imports.library('NetworkInterfaceType').text}.{members[kind]}"),
            )
        )
    capacity = group.take("CapacityRequirements")
    if capacity is not None:
        found.append(
            ("capacity_type", _capacity(capacity, f"{path}.CapacityRequirements", imports))
        )
    return found


def _capacity(value: object, path: str, imports: _Imports) -> Code:
    config = _Fields.of(value, path)
    chosen = [key for key in ("OnDemand", "Spot") if config.take(key) is not None]
    config.done()
    if len(chosen) != 1 or config.value[chosen[0]] != {}:
        raise ConversionError(path, 'expected exactly one of {"OnDemand": {}} or {"Spot": {}}')
    member = "ON_DEMAND" if chosen[0] == "OnDemand" else "SPOT"
    return Raw(f"{imports.library('CapacityType').text}.{member}")


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
        size = _expect(
            volume.require("VolumeSizeInGB"), int, f"{path}.EbsVolumeConfig.VolumeSizeInGB"
        )
        imports.cdk.add("Size")
        kwargs: list[tuple[str, Code]] = [("volume_size", Call("Size.gibibytes", (literal(size),)))]
        root, key = volume.take("RootVolume"), volume.take("VolumeKmsKeyId")
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
    factories = {"INSTANCE_COUNT": "instances", "CAPACITY_PERCENT": "percentage"}
    if kind not in factories:
        raise ConversionError(
            f"{path}.Type", f"expected INSTANCE_COUNT or CAPACITY_PERCENT, got {kind!r}"
        )
    return Call(f"{imports.library('BatchSize').text}.{factories[kind]}", (literal(number),))


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


def _stack_name(cluster_name: str, options: Options) -> str:
    if options.stack_name is not None:
        return options.stack_name
    return (
        cluster_name
        if re.match(r"^[A-Za-z][A-Za-z0-9-]*$", cluster_name)
        else f"HyperPod-{cluster_name}"
    )


def _import_line(module: str, names: list[str]) -> str:
    one_line = f"from {module} import {', '.join(names)}\n"
    if len(one_line) <= 89:
        return one_line
    return f"from {module} import (\n" + "".join(f"    {name},\n" for name in names) + ")\n"


def _sorted_names(names: set[str]) -> list[str]:
    """isort's order: CONSTANTS, then Classes, then functions, each alphabetical."""

    def rank(name: str) -> tuple[int, str]:
        if name.isupper():
            return (0, name)
        return (1 if name[:1].isupper() else 2, name)

    return sorted(names, key=rank)


def _plain(text: str) -> str:
    """``text`` safe inside the generated docstring (names only: no quotes or backslashes)."""
    return re.sub(r"[^A-Za-z0-9._ -]", "_", text)[:80]


def _module(cluster_name: str, cluster: Call, imports: _Imports, options: Options) -> str:
    imports.names.add("report_validation_errors")
    has_roles = any(kind == "role" for kind, _ in imports.variables)
    if imports.variables:
        imports.cdk.add("Annotations")
    lines = [
        f'"""CDK app for the HyperPod cluster {_plain(cluster_name)}.\n',
        "\n",
        "Generated by ``python -m hyperpod_constructs convert`` from\n",
        f"{_plain(options.source_name)}. ``python app.py`` (or ``cdk synth`` with this file as "
        "the\n",
        "app) synthesizes one AWS::SageMaker::Cluster whose properties equal that CreateCluster\n",
        "request. Existing roles, subnets and security groups are imported by ARN / ID, never\n",
        "recreated.\n",
        '"""\n',
        "\n",
        "from __future__ import annotations\n",
        "\n",
        _import_line("aws_cdk", _sorted_names(imports.cdk)),
    ]
    lines += [f"from aws_cdk import {module}\n" for module in sorted(imports.modules)]
    lines.append(_import_line("hyperpod_constructs", _sorted_names(imports.names)))
    lines += [
        "\n",
        f"STACK_NAME = {literal(_stack_name(cluster_name, options)).render(0, 0)}\n",
        "\n",
        "\n",
        "def build(app: App) -> Stack:\n",
        '    """The stack with the cluster and the existing resources it uses."""\n',
        "    stack = Stack(app, STACK_NAME)\n",
        *imports.lines,
        assignment("cluster", cluster),
    ]
    if has_roles:
        lines += [
            "    # The imported roles are immutable: they already hold what the cluster needs.\n",
            statement(
                Call(
                    "Annotations.of(cluster).acknowledge_warning",
                    (
                        literal(ACKNOWLEDGED_WARNING),
                        literal("the existing execution roles already run this cluster"),
                    ),
                )
            ),
        ]
    if any(kind == "subnet" for kind, _ in imports.variables):
        lines += [
            "    # Subnets imported by ID have no route table; the cluster does not need one.\n",
            statement(
                Call(
                    "Annotations.of(stack).acknowledge_warning",
                    (
                        literal(SUBNET_WARNING),
                        literal("HyperPod only needs the subnet IDs"),
                    ),
                )
            ),
        ]
    lines += [
        "    return stack\n",
        "\n",
        "\n",
        'if __name__ == "__main__":\n',
        "    with report_validation_errors():\n",
        "        app = App()\n",
        "        build(app)\n",
        "        app.synth()\n",
    ]
    return "".join(lines)

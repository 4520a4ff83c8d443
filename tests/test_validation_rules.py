"""Every validation rule (``HP-...``), table-driven, through the public construct API.

For each rule a bad input must be built without an error and then fail the synth (the
cluster's node validation reports every finding of every stage at once), with a message
that names the construct path, the group, the field, the value and what is allowed, and
without writing a template. A second table of boundary values that must pass
shows that each rule fails only when it should. Rules the cluster does not call yet are
tested as pure functions below the table too. docs/validation.md lists
the same rules (checked by the last test).
"""

from __future__ import annotations

import ast
import dis
import functools
import inspect
import re
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aws_cdk
import pytest
from aws_cdk import App, CfnParameter, Duration, Fn, Size, Stack, Token
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk.assertions import Annotations, Match

from hyperpod_constructs import (
    AccountingDatabase,
    DeepHealthCheck,
    HyperPodInstanceType,
    HyperPodSlurmCluster,
    InstanceGroup,
    InstanceStorage,
    LifecycleScripts,
    MinCountGateOptions,
    NodeProvisioningMode,
    SlurmConfigStrategy,
)
from hyperpod_constructs.updates import BatchSize, ScheduledUpdate
from hyperpod_constructs.validation import (
    FAMILIES,
    RULES,
    Check,
    Rule,
    Scope,
    Severity,
    accounting_findings,
    gate_findings,
    reports,
    tag_findings,
    validate_group,
)
from hyperpod_constructs.validation.group_rules import GROUP_RULES
from hyperpod_constructs.validation.registry import (
    MODE_TABLE_BEGIN,
    MODE_TABLE_END,
    TABLE_BEGIN,
    TABLE_END,
    with_rule_table,
)
from tests.support.groups import Groups

REPO = Path(__file__).resolve().parent.parent
PATH = "Test/Cluster"
CPU = HyperPodInstanceType.ML_C5_XLARGE
GPU = HyperPodInstanceType.ML_P5_48XLARGE
BOTH_CHECKS = (DeepHealthCheck.INSTANCE_STRESS, DeepHealthCheck.INSTANCE_CONNECTIVITY)
FSX_DNS = "fs-0123456789abcdef0.fsx.us-east-1.amazonaws.com"
PLAN_ARN = "arn:aws:sagemaker:us-east-1:123456789012:training-plan/my-plan"
RULE_ID = re.compile(r"\[(HP-[A-Z0-9-]+)\]")

Build = Callable[[Stack, Path], object]


# -- small builders: a valid cluster unless the case changes one thing ------------------


GROUPS = Groups(controller_type=CPU, compute_type=GPU, deep_health_checks=BOTH_CHECKS)
"""A GPU compute group with deep health checks (so no warning), 4 instances."""
controller, login, compute = GROUPS.controller, GROUPS.login, GROUPS.compute


def cluster(
    stack: Stack, groups: Sequence[InstanceGroup] | None = None, **props: Any
) -> HyperPodSlurmCluster:
    """``Test/Cluster``: a controller and a compute group unless ``groups`` is given."""
    chosen = [controller(), compute()] if groups is None else list(groups)
    return HyperPodSlurmCluster(stack, "Cluster", instance_groups=chosen, **props)


def with_group(**props: Any) -> Build:
    """A cluster whose compute group ``gpu`` gets ``props``."""
    return lambda stack, _tmp: cluster(stack, [controller(), compute(**props)])


def with_storage(*storage: InstanceStorage, vpc: bool = False) -> Build:
    def build(stack: Stack, _tmp: Path) -> object:
        network = private_vpc(stack) if vpc else None
        return cluster(stack, [controller(), compute(storage=storage)], vpc=network)

    return build


def ports_opened(build: Build) -> Build:
    """``build`` whose FSx for Lustre ports its owner opened (``HP-FSX-PORTS`` acknowledged)."""

    def opened(stack: Stack, tmp: Path) -> object:
        built = build(stack, tmp)
        aws_cdk.Annotations.of(stack).acknowledge_warning("hyperpod:HP-FSX-PORTS", "opened")
        return built

    return opened


def with_cluster(**props: Any) -> Build:
    return lambda stack, _tmp: cluster(stack, **props)


def with_groups(make: Callable[[], Sequence[InstanceGroup]], **props: Any) -> Build:
    return lambda stack, _tmp: cluster(stack, make(), **props)


def gated(**gate: Any) -> Build:
    """A cluster with one gated group (so the readiness gate is built) and gate options."""
    options = MinCountGateOptions(**gate)
    return lambda stack, _tmp: cluster(
        stack, [controller(), compute(min_instance_count=2)], readiness_gate=options
    )


def private_vpc(stack: Stack, subnets: int = 2) -> ec2.IVpc:
    return ec2.Vpc.from_vpc_attributes(
        stack,
        "Vpc",
        vpc_id="vpc-0123456789abcdef0",
        availability_zones=["us-east-1a"],
        private_subnet_ids=[f"subnet-{i:017x}" for i in range(subnets)],
        private_subnet_route_table_ids=[f"rtb-{i:017x}" for i in range(subnets)],
    )


def security_groups(stack: Stack, count: int) -> list[ec2.ISecurityGroup]:
    return [
        ec2.SecurityGroup.from_security_group_id(stack, f"Sg{i}", f"sg-{i:017x}")
        for i in range(count)
    ]


def with_network(subnets: int = 2, groups: int = 1, select_none: bool = False) -> Build:
    def build(stack: Stack, _tmp: Path) -> object:
        return cluster(
            stack,
            vpc=private_vpc(stack, subnets),
            security_groups=security_groups(stack, groups),
            vpc_subnets=ec2.SubnetSelection(subnets=[]) if select_none else None,
        )

    return build


def scripts_dir(tmp: Path, *files: str) -> str:
    folder = tmp / "scripts"
    folder.mkdir(exist_ok=True)
    for name in files:
        (folder / name).write_text("#!/bin/bash\n")
    return str(folder)


def with_lifecycle(
    make: Callable[[Stack, Path], LifecycleScripts], *, on_group: bool = False
) -> Build:
    """Lifecycle scripts on the cluster (checked in its constructor) or on group ``gpu``."""

    def build(stack: Stack, tmp: Path) -> object:
        scripts = make(stack, tmp)
        if on_group:
            return cluster(stack, [controller(), compute(lifecycle_scripts=scripts)])
        return cluster(stack, lifecycle_scripts=scripts)

    return build


def bucket(stack: Stack, name: str) -> s3.IBucket:
    return s3.Bucket.from_bucket_name(stack, "Scripts", name)


def secret(stack: Stack) -> secretsmanager.ISecret:
    return secretsmanager.Secret.from_secret_name_v2(stack, "DbSecret", "slurm-db")


def many_computes(count: int) -> list[InstanceGroup]:
    return [compute(f"gpu{i}", partition=f"p{i}") for i in range(count)]


# -- the table of bad inputs -------------------------------------------------------------


@dataclass(frozen=True)
class Bad:
    """One bad input and the message it must produce."""

    build: Build
    rule: str
    field: str
    value: str
    """The value as the message shows it (its repr); ``{tmp}`` stands for the test's tmp_path."""
    allowed: str
    """The start of what the message says is allowed; ``{tmp}`` as in ``value``."""
    group: str | None = "gpu"
    also: tuple[str, ...] = ()
    """Other rules the same input breaks (reported in the same failure)."""
    raw: bool = False
    """``value`` is the raw string, shown as messages show strings (see :func:`shown`)."""
    positions: str = ""
    """How the message places ``group`` when two groups share its name, e.g. ``" (position 2)"``."""


def long(value: str) -> str:
    """How a message shows a string longer than 64 characters: its start and its length."""
    return f"{value[:32]!r}... ({len(value)} characters)"


def shown(value: str) -> str:
    return long(value) if len(value) > 64 else repr(value)


def bad(case_id: str, marks: Any = (), **fields: Any) -> Any:
    return pytest.param(Bad(**fields), id=case_id, marks=marks)


MIN = "min_instance_count (MinInstanceCount)"
COUNT = "instance_count (InstanceCount)"
ACCEL = "min_accelerators (sizes MinInstanceCount)"
PARTITION = "partition (SlurmConfig.PartitionNames)"
NAME_ALLOWED = "1..63 characters: letters and digits, with single or repeated hyphens"
DHC = "deep_health_checks (OnStartDeepHealthChecks)"
EBS = "storage[].volume_size (EbsVolumeConfig.VolumeSizeInGB)"
EBS_ALLOWED = "a whole number of GiB, 1..16384"
ON_CREATE = "lifecycle_scripts.on_create (LifeCycleConfig.OnCreate)"
SOURCE = "LifeCycleConfig.SourceS3Uri"
UNKNOWN_GPU = HyperPodInstanceType.of("ml.p9.48xlarge")
AMI_ALLOWED = "'ami-' and 8 or 17 lowercase hex digits, or 'default'"
WRONG_PLAN = "arn:aws:sagemaker:us-east-1:123456789012:capacity/plan"

# fmt: off
BAD = [
    # Counts
    bad("min-above-count", build=with_group(instance_count=4, min_instance_count=5),
        rule="HP-MIN-ABOVE-COUNT", field=MIN, value="5",
        allowed="0..instance_count (4)"),
    bad("min-above-count-via-add_instance_group",
        build=lambda stack, _tmp: cluster(stack).add_instance_group(
            compute("late", partition="late", instance_count=1, min_instance_count=3)),
        rule="HP-MIN-ABOVE-COUNT", field=MIN, value="3", group="late",
        allowed="0..instance_count (1)"),
    bad("min-negative", build=with_group(min_instance_count=-1),
        rule="HP-MIN-RANGE", field=MIN, value="-1",
        allowed="0..6758 and at most instance_count (4)"),
    bad("min-above-6758", build=with_group(instance_count=6758, min_instance_count=6759),
        rule="HP-MIN-RANGE", field=MIN, value="6759",
        allowed="0..6758 and at most instance_count (6758)"),
    bad("min-float", build=with_group(min_instance_count=2.0),
        rule="HP-COUNT-INT", field=MIN, value="2.0",
        allowed="a whole number (int) in 0..instance_count (4)"),
    bad("count-above-6758", build=with_group(instance_count=6759),
        rule="HP-COUNT-RANGE", field=COUNT, value="6759", allowed="0..6758"),
    bad("count-negative", build=with_group(instance_count=-1),
        rule="HP-COUNT-RANGE", field=COUNT, value="-1", allowed="0..6758"),
    bad("count-float", build=with_group(instance_count=2.5),
        rule="HP-COUNT-INT", field=COUNT, value="2.5",
        allowed="a whole number (int) in 0..6758"),
    bad("count-bool", build=with_group(instance_count=True),
        rule="HP-COUNT-INT", field=COUNT, value="True",
        allowed="a whole number (int) in 0..6758"),
    # Sizing from accelerators
    bad("compute-without-count-or-accelerators", build=with_group(instance_count=None),
        rule="HP-SIZING", field=COUNT, value="None",
        allowed="a whole number in 0..6758; required unless min_accelerators is given"),
    bad("min_accelerators-unknown-accelerator-count",
        build=with_group(instance_type=UNKNOWN_GPU, instance_count=None, min_accelerators=16),
        rule="HP-SIZING", field=ACCEL, value="16",
        allowed="only on an instance type whose accelerators per instance the library knows "
        "(ml.p9.48xlarge is not one"),
    bad("min_accelerators-and-min_instance_count",
        build=with_group(min_accelerators=16, min_instance_count=2),
        rule="HP-SIZING", field=ACCEL, value="16",
        allowed="min_accelerators or min_instance_count, not both (min_instance_count = 2)"),
    bad("min_accelerators-zero", build=with_group(instance_count=None, min_accelerators=0),
        rule="HP-SIZING", field=ACCEL, value="0",
        allowed="a whole number of accelerators >= 1"),
    # Provisioning mode
    bad("min-in-standard-mode",
        build=with_groups(lambda: [controller(), compute(min_instance_count=2)],
                          node_provisioning_mode=NodeProvisioningMode.STANDARD),
        rule="HP-MIN-NEEDS-CONTINUOUS", field=MIN, value="2",
        allowed="0 or omitted with node_provisioning_mode=STANDARD"),
    bad("accounting-database-in-standard",
        build=lambda stack, _tmp: cluster(
            stack, node_provisioning_mode=NodeProvisioningMode.STANDARD,
            accounting_database=AccountingDatabase(endpoint="db.example.com",
                                                   secret=secret(stack))),
        rule="HP-ACCOUNTING-NEEDS-CONTINUOUS", group=None,
        field="accounting_database (Orchestrator.Slurm.AccountingDatabase)",
        value="'an AccountingDatabase'",
        allowed="none with node_provisioning_mode=STANDARD (only NodeProvisioningMode.CONTINUOUS"),
    # Slurm layout and group counts
    bad("duplicate-group-names", build=with_groups(lambda: [controller(), compute(), compute()]),
        rule="HP-GROUP-UNIQUE", field="name (InstanceGroupName)", value="'gpu'",
        allowed="a name used by one group of the cluster only (2 groups use it)",
        positions=" (positions 2, 3)"),
    bad("zero-groups", build=with_groups(list),
        rule="HP-GROUPS-COUNT", group=None, field="instance_groups (InstanceGroups)",
        value="'0 groups'", allowed="1..100 instance groups", also=("HP-CONTROLLER-REQUIRED",)),
    bad("101-groups", build=with_groups(lambda: [controller(), *many_computes(100)]),
        rule="HP-GROUPS-COUNT", group=None, field="instance_groups (InstanceGroups)",
        value="'101 groups'", allowed="1..100 instance groups"),
    # Partitions
    bad("compute-partition-empty", build=with_group(partition=""),
        rule="HP-PARTITION-NAME", field=PARTITION, value="''",
        allowed="1..1024 characters: letters and digits"),
    bad("no-controller", build=with_groups(lambda: [compute()]),
        rule="HP-CONTROLLER-REQUIRED", group=None,
        field="instance_groups (SlurmConfig.NodeType=Controller)", value="[]",
        allowed="a controller group"),
    bad("bad-partition-name", build=with_group(partition="gpu_a100"),
        rule="HP-PARTITION-NAME", field=PARTITION, value="'gpu_a100'",
        allowed="1..1024 characters: letters and digits"),
    bad("partition-1025-chars", build=with_group(partition="p" * 1025),
        rule="HP-PARTITION-NAME", field=PARTITION, value=long("p" * 1025),
        allowed="1..1024 characters"),
    # Names
    bad("bad-cluster-name", build=with_cluster(cluster_name="my_cluster"),
        rule="HP-NAME-CLUSTER", group=None, field="cluster_name (ClusterName)",
        value="'my_cluster'", allowed=NAME_ALLOWED),
    bad("cluster-name-64-chars", build=with_cluster(cluster_name="c" * 64),
        rule="HP-NAME-CLUSTER", group=None, field="cluster_name (ClusterName)",
        value=repr("c" * 64), allowed=NAME_ALLOWED),
    bad("cluster-name-65-chars", build=with_cluster(cluster_name="c" * 65),
        rule="HP-NAME-CLUSTER", group=None, field="cluster_name (ClusterName)",
        value="'" + "c" * 32 + "'... (65 characters)", allowed=NAME_ALLOWED),
    bad("cluster-name-trailing-hyphen", build=with_cluster(cluster_name="hyperpod-"),
        rule="HP-NAME-CLUSTER", group=None, field="cluster_name (ClusterName)",
        value="'hyperpod-'", allowed=NAME_ALLOWED),
    bad("bad-group-name", build=with_groups(lambda: [controller(), compute("gpu nodes")]),
        rule="HP-NAME-GROUP", group="gpu nodes", field="name (InstanceGroupName)",
        value="'gpu nodes'", allowed=NAME_ALLOWED),
    bad("group-name-64-chars", build=with_groups(lambda: [controller("k" * 64), compute()]),
        rule="HP-NAME-GROUP", group="k" * 64, field="name (InstanceGroupName)",
        value=repr("k" * 64), allowed=NAME_ALLOWED),
    # Threads and deep health checks
    bad("threads_per_core-3", build=with_group(threads_per_core=3),
        rule="HP-THREADS", field="threads_per_core (ThreadsPerCore)", value="3",
        allowed="1 (hyperthreading off) or 2 (on)"),
    bad("threads_per_core-0", build=with_group(threads_per_core=0),
        rule="HP-THREADS", field="threads_per_core (ThreadsPerCore)", value="0",
        allowed="1 (hyperthreading off) or 2 (on)"),
    bad("duplicate-deep-health-checks",
        build=with_group(deep_health_checks=[DeepHealthCheck.INSTANCE_STRESS] * 2),
        rule="HP-DHC-DISTINCT", field=DHC, value="['InstanceStress', 'InstanceStress']",
        allowed="1..2 distinct checks"),
    bad("deep-health-check-as-string", build=with_group(deep_health_checks=["InstanceStress"]),
        rule="HP-DHC-UNKNOWN", field=DHC, value="['InstanceStress']",
        allowed="DeepHealthCheck members: DeepHealthCheck.INSTANCE_STRESS (InstanceStress)"),
    bad("unknown-deep-health-check", build=with_group(deep_health_checks=["GpuBurn"]),
        rule="HP-DHC-UNKNOWN", field=DHC, value="['GpuBurn']",
        allowed="DeepHealthCheck members"),
    # Storage
    bad("five-storage-configs",
        build=with_storage(*[InstanceStorage.ebs(volume_size=Size.gibibytes(100))] * 5),
        rule="HP-STORAGE-COUNT", field="storage (InstanceStorageConfigs)",
        value="'5 configs'", allowed="0..4 configs"),
    bad("ebs-0-gib", build=with_storage(InstanceStorage.ebs(volume_size=Size.gibibytes(0))),
        rule="HP-EBS-SIZE", field=EBS, value="'0 GiB'", allowed=EBS_ALLOWED),
    bad("ebs-16385-gib",
        build=with_storage(InstanceStorage.ebs(volume_size=Size.gibibytes(16385))),
        rule="HP-EBS-SIZE", field=EBS, value="'16385 GiB'", allowed=EBS_ALLOWED),
    bad("ebs-fractional-gib",
        build=with_storage(InstanceStorage.ebs(volume_size=Size.mebibytes(1536))),
        rule="HP-EBS-SIZE", field=EBS, value="'1.5 GiB'", allowed=EBS_ALLOWED),
    bad("ebs-2000-tib",
        build=with_storage(InstanceStorage.ebs(volume_size=Size.tebibytes(2000))),
        rule="HP-EBS-SIZE", field=EBS, value="'2048000 GiB'", allowed=EBS_ALLOWED),
    bad("ebs-bad-kms-key",
        build=with_storage(InstanceStorage.ebs(volume_size=Size.gibibytes(100),
                                               kms_key_id="alias/my key")),
        rule="HP-EBS-KMS", field="storage[].kms_key_id (EbsVolumeConfig.VolumeKmsKeyId)",
        value="'alias/my key'", allowed="a KMS key id or ARN"),
    bad("fsx-bad-dns-name",
        build=with_storage(InstanceStorage.fsx_lustre(dns_name="fsx.example.com",
                                                      mount_name="abcdefgh"), vpc=True),
        rule="HP-FSX-DNS", field="storage[].dns_name (FsxLustreConfig.DnsName)",
        value="'fsx.example.com'", allowed="an FSx DNS name like fs-0123456789abcdef0.fsx."),
    bad("fsx-bad-mount-name",
        build=with_storage(InstanceStorage.fsx_lustre(dns_name=FSX_DNS, mount_name="toolongname"),
                           vpc=True),
        rule="HP-FSX-MOUNT-NAME", field="storage[].mount_name (FsxLustreConfig.MountName)",
        value="'toolongname'", allowed="1..8 letters, digits, '_' or '-'"),
    bad("fsx-mount-path-trailing-slash",
        build=with_storage(InstanceStorage.fsx_lustre(dns_name=FSX_DNS, mount_name="abcdefgh",
                                                      mount_path="/fsx/"), vpc=True),
        rule="HP-MOUNT-PATH", field="storage[].mount_path (FsxLustreConfig.MountPath)",
        value="'/fsx/'", allowed="an absolute path without '//' or a trailing '/'"),
    bad("openzfs-relative-mount-path",
        build=with_storage(InstanceStorage.fsx_open_zfs(dns_name=FSX_DNS, mount_path="home"),
                           vpc=True),
        rule="HP-MOUNT-PATH", field="storage[].mount_path (FsxOpenZfsConfig.MountPath)",
        value="'home'", allowed="an absolute path without '//' or a trailing '/'"),
    # Network
    bad("six-security-groups", build=with_network(groups=6),
        rule="HP-VPC-SECURITY-GROUPS", group=None,
        field="security_groups (VpcConfig.SecurityGroupIds)", value="6",
        allowed="1..5 security groups"),
    bad("seventeen-subnets", build=with_network(subnets=17),
        rule="HP-VPC-SUBNETS", group=None, field="vpc_subnets (VpcConfig.Subnets)",
        value="17", allowed="1..16 subnets"),
    bad("no-subnets-selected", build=with_network(select_none=True),
        rule="HP-VPC-SUBNETS", group=None, field="vpc_subnets (VpcConfig.Subnets)",
        value="0", allowed="1..16 subnets"),
    # Identifiers
    bad("training-plan-arn-wrong-resource",
        build=with_group(training_plan_arn=WRONG_PLAN),
        rule="HP-TRAINING-PLAN", field="training_plan_arn (TrainingPlanArn)",
        value=repr(WRONG_PLAN),
        allowed="arn:<partition>:sagemaker:<region>:<account>:training-plan/<name> (50..2048"),
    bad("training-plan-arn-too-short",
        build=with_group(training_plan_arn="arn:aws:sagemaker::123456789012:training-plan/x"),
        rule="HP-TRAINING-PLAN", field="training_plan_arn (TrainingPlanArn)",
        value="'arn:aws:sagemaker::123456789012:training-plan/x'",
        allowed="arn:<partition>:sagemaker:<region>:<account>:training-plan/<name> (50..2048"),
    bad("bad-image-id", build=with_group(image_id="ami-123"),
        rule="HP-IMAGE-ID", field="image_id (ImageId)", value="'ami-123'",
        allowed=AMI_ALLOWED),
    bad("image-id-10-hex-digits", build=with_group(image_id="ami-0123456789"),
        rule="HP-IMAGE-ID", field="image_id (ImageId)", value="'ami-0123456789'",
        allowed=AMI_ALLOWED),
    bad("image-id-uppercase", build=with_group(image_id="ami-0123456789ABCDEF0"),
        rule="HP-IMAGE-ID", field="image_id (ImageId)", value="'ami-0123456789ABCDEF0'",
        allowed=AMI_ALLOWED),
    bad("malformed-instance-type",
        build=with_group(instance_type=HyperPodInstanceType.of("p5.48xlarge")),
        rule="HP-INSTANCE-TYPE", field="instance_type (InstanceType)",
        value="'p5.48xlarge'", allowed="ml.<family>.<size>, e.g. ml.p5.48xlarge"),
    # Lifecycle scripts (cluster-wide, checked in the cluster's constructor, or per group)
    bad("lifecycle-on_create-missing-in-directory",
        build=with_lifecycle(lambda _s, tmp: LifecycleScripts.from_directory(
            scripts_dir(tmp, "setup.sh"))),
        rule="HP-LIFECYCLE", group=None, field=ON_CREATE, value="'on_create.sh'",
        allowed="a file that exists in '{tmp}/scripts'"),
    bad("lifecycle-on_create-missing-on-group",
        build=with_lifecycle(lambda _s, tmp: LifecycleScripts.from_directory(
            scripts_dir(tmp, "setup.sh")), on_group=True),
        rule="HP-LIFECYCLE", field=ON_CREATE, value="'on_create.sh'",
        allowed="a file that exists in '{tmp}/scripts'"),
    bad("lifecycle-on_create-excluded-from-the-upload",
        build=with_lifecycle(lambda _s, tmp: LifecycleScripts.from_directory(
            scripts_dir(tmp, "on_create.sh", "setup.sh"), exclude=["on_create.sh"])),
        rule="HP-LIFECYCLE-FILES", group=None, field=ON_CREATE, value="'on_create.sh'",
        allowed="a file the upload keeps (not left out by the excludes"),
    bad("lifecycle-on_create-not-included-on-group",
        build=with_lifecycle(lambda _s, tmp: LifecycleScripts.from_directory(
            scripts_dir(tmp, "on_create.sh", "setup.py"), include=["*.py"]), on_group=True),
        rule="HP-LIFECYCLE-FILES", field=ON_CREATE, value="'on_create.sh'",
        allowed="a file the upload keeps (not left out by the excludes, and matched by include"),
    bad("lifecycle-directory-missing",
        build=with_lifecycle(lambda _s, tmp: LifecycleScripts.from_directory(
            str(tmp / "no-such-folder"))),
        rule="HP-LIFECYCLE", group=None,
        field=f"lifecycle_scripts.path ({SOURCE})", value="{tmp}/no-such-folder", raw=True,
        allowed="an existing directory"),
    bad("lifecycle-prefix-with-dot-dot",
        build=with_lifecycle(lambda stack, _tmp: LifecycleScripts.from_s3(
            bucket(stack, "sagemaker-scripts"), on_create="on_create.sh", prefix="a/../b")),
        rule="HP-LIFECYCLE", group=None,
        field=f"lifecycle_scripts.prefix ({SOURCE})", value="'a/../b'",
        allowed="a folder of the bucket, e.g. 'lifecycle/v1': no '.' or '..' segments"),
    bad("lifecycle-prefix-with-s3-uri",
        build=with_lifecycle(lambda stack, _tmp: LifecycleScripts.from_s3(
            bucket(stack, "sagemaker-scripts"), on_create="on_create.sh",
            prefix="s3://sagemaker-scripts/x")),
        rule="HP-LIFECYCLE", group=None,
        field=f"lifecycle_scripts.prefix ({SOURCE})", value="'s3://sagemaker-scripts/x'",
        allowed="a folder of the bucket, e.g. 'lifecycle/v1': a key prefix, not an S3 URI"),
    bad("lifecycle-prefix-with-space",
        build=with_lifecycle(lambda stack, _tmp: LifecycleScripts.from_s3(
            bucket(stack, "sagemaker-scripts"), on_create="on_create.sh", prefix="my scripts")),
        rule="HP-LIFECYCLE", group=None,
        field=f"lifecycle_scripts.prefix ({SOURCE})", value="'my scripts'",
        allowed="a folder of the bucket, e.g. 'lifecycle/v1': no whitespace"),
    bad("lifecycle-on_create-with-slash",
        build=with_lifecycle(lambda stack, _tmp: LifecycleScripts.from_s3(
            bucket(stack, "sagemaker-scripts"), on_create="bin/on_create.sh")),
        rule="HP-LIFECYCLE", group=None, field=ON_CREATE, value="'bin/on_create.sh'",
        allowed="a file name (1..128 characters, no '/')"),
    bad("lifecycle-on_create-129-chars",
        build=with_lifecycle(lambda stack, _tmp: LifecycleScripts.from_s3(
            bucket(stack, "sagemaker-scripts"), on_create="x" * 126 + ".sh")),
        rule="HP-LIFECYCLE", group=None, field=ON_CREATE, value=long("x" * 126 + ".sh"),
        allowed="a file name (1..128 characters, no '/')"),
    bad("lifecycle-without-source",
        build=with_lifecycle(lambda _s, _tmp: LifecycleScripts(on_create="on_create.sh")),
        rule="HP-LIFECYCLE", group=None,
        field=f"lifecycle_scripts.directory / .bucket ({SOURCE})", value="'neither given'",
        allowed="exactly one of a directory or a bucket"),
    bad("lifecycle-source-uri-1025-chars",
        build=with_lifecycle(lambda stack, _tmp: LifecycleScripts.from_s3(
            bucket(stack, "sagemaker-scripts"), on_create="on_create.sh", prefix="p" * 1001)),
        rule="HP-LIFECYCLE", group=None,
        field=f"lifecycle_scripts.prefix ({SOURCE})",
        value=long("s3://sagemaker-scripts/" + "p" * 1001 + "/"),
        allowed="an S3 URI of at most 1024 characters"),
    # Cluster-level props
    bad("accounting-database-port-0",
        build=lambda stack, _tmp: cluster(stack, accounting_database=AccountingDatabase(
            endpoint="db.example.com", secret=secret(stack), port=0)),
        rule="HP-ACCOUNTING-DATABASE", group=None,
        field="accounting_database.port (AccountingDatabase.Port)", value="0",
        allowed="a whole number in 1..65535"),
    bad("tag-value-with-comma",
        build=with_cluster(tags={"project": "a,b"}),
        rule="HP-TAGS", group=None, field="tags['project'] (Tags[].Value)",
        value="'a,b'", allowed="0..256 characters: Unicode letters, digits, whitespace"),
    # The readiness gate (checked when the first gated group is added)
    bad("gate-timeout-13h-poll-1min",
        build=gated(timeout=Duration.hours(13), poll_interval=Duration.minutes(1)),
        rule="HP-GATE-TIMEOUT", group=None, field="readiness_gate.timeout",
        value="'13 hours'", allowed="more than 0 and at most 11 h 29 min with poll_interval"),
    bad("gate-timeout-0", build=gated(timeout=Duration.seconds(0)),
        rule="HP-GATE-TIMEOUT", group=None, field="readiness_gate.timeout",
        value="'0 seconds'", allowed="more than 0 and at most 11 h 29 min 50 s",
        also=("HP-GATE-POLL",)),
    bad("gate-history-11h-poll-10s",
        build=gated(timeout=Duration.hours(11), poll_interval=Duration.seconds(10)),
        rule="HP-GATE-HISTORY", group=None, field="readiness_gate.poll_interval",
        value="'10 seconds'", allowed="a poll interval with which 11 hours of polling writes"),
    bad("gate-timeout-token",
        build=gated(timeout=Duration.seconds(Token.as_number(Fn.ref("GateTimeout")))),
        rule="HP-GATE-TOKEN-DURATION", group=None, field="readiness_gate.timeout",
        value="'a token'", allowed="a concrete Duration"),
    bad("subnets-without-vpc",
        build=lambda stack, _tmp: cluster(stack, vpc_subnets=ec2.SubnetSelection(
            subnet_type=ec2.SubnetType.PRIVATE_ISOLATED)),
        rule="HP-VPC-REQUIRED", group=None,
        field="security_groups / vpc_subnets (VpcConfig)", value="'given without vpc'",
        allowed="vpc, or explicit subnets (SubnetSelection(subnets=...), no VPC lookup) "
        "together with security_groups"),
    bad("gate-poll-5s", build=gated(poll_interval=Duration.seconds(5)),
        rule="HP-GATE-POLL", group=None, field="readiness_gate.poll_interval",
        value="'5 seconds'", allowed="10 seconds .. 15 minutes"),
    bad("gate-poll-16min", build=gated(poll_interval=Duration.minutes(16)),
        rule="HP-GATE-POLL", group=None, field="readiness_gate.poll_interval",
        value="'16 minutes'", allowed="10 seconds .. 15 minutes"),
    bad("gate-poll-not-shorter-than-timeout",
        build=gated(timeout=Duration.minutes(10), poll_interval=Duration.minutes(10)),
        rule="HP-GATE-POLL", group=None, field="readiness_gate.poll_interval",
        value="'10 minutes'", allowed="10 seconds .. 15 minutes, and shorter than the timeout"),
    # Shapes AWS accepts: legacy layout, node recovery, scheduled updates, per-group network
    bad("node-recovery-string", build=with_cluster(node_recovery="automatic"),
        rule="HP-NODE-RECOVERY", group=None, field="node_recovery (NodeRecovery)",
        value="'automatic'", allowed="NodeRecovery.AUTOMATIC, NodeRecovery.NONE, None"),
    bad("schedule-not-cron",
        build=with_group(scheduled_update=ScheduledUpdate(schedule_expression="rate(7 days)")),
        rule="HP-SCHEDULED-UPDATE",
        field="scheduled_update.schedule_expression (ScheduleExpression)",
        value="'rate(7 days)'", allowed="cron(minute hour day-of-month month day-of-week year)"),
    bad("schedule-wait-over-an-hour",
        build=with_group(scheduled_update=ScheduledUpdate(
            schedule_expression="cron(0 3 ? * SUN *)", wait_interval=Duration.hours(2))),
        rule="HP-SCHEDULED-UPDATE",
        field="scheduled_update.wait_interval (WaitIntervalInSeconds)",
        value="7200.0", allowed="0..3600 whole seconds"),
    bad("schedule-batch-zero",
        build=with_group(scheduled_update=ScheduledUpdate(
            schedule_expression="cron(0 3 ? * SUN *)", maximum_batch_size=BatchSize.instances(0))),
        rule="HP-SCHEDULED-UPDATE",
        field="scheduled_update.maximum_batch_size (MaximumBatchSize)",
        value="0", allowed="a whole number of at least 1"),
    bad("override-vpc-selection-without-vpc",
        build=lambda stack, _tmp: cluster(stack, [controller(), compute(
            vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_ISOLATED),
            security_groups=[ec2.SecurityGroup.from_security_group_id(stack, "G", "sg-01234567")],
        )]),
        rule="HP-OVERRIDE-VPC", field="vpc_subnets (OverrideVpcConfig.Subnets)",
        value="'a selection without subnets'",
        allowed="explicit subnets (SubnetSelection(subnets=...)) when the cluster has no vpc"),
    bad("override-vpc-no-security-groups", build=with_group(security_groups=[]),
        rule="HP-OVERRIDE-VPC",
        field="security_groups (OverrideVpcConfig.SecurityGroupIds)",
        value="0", allowed="1..5 security groups"),
]
# fmt: on


def _templates(outdir: Path) -> list[Path]:
    return sorted(outdir.rglob("*.template.json"))


def _line(message: str, rule: str) -> str:
    lines = [line.strip() for line in message.splitlines() if f"[{rule}]" in line]
    assert len(lines) == 1, f"expected one {rule} line in:\n{message}"
    return lines[0]


@pytest.mark.deep(sample=20)
@pytest.mark.parametrize("case", BAD)
def test_bad_input_fails_with_a_precise_message(case: Bad, tmp_path: Path) -> None:
    """Construction succeeds; the synth reports the finding (once) and writes no template."""
    outdir = tmp_path / "cdk.out"
    app = App(outdir=str(outdir))
    stack = Stack(app, "Test")
    case.build(stack, tmp_path)
    with pytest.raises(RuntimeError, match="Validation failed") as failed:
        app.synth()
    # The errors' lines (the warnings, marked "warning: ", follow them).
    lines = str(failed.value).splitlines()
    message = "\n".join(line for line in lines if "] warning: " not in line)
    assert set(RULE_ID.findall(message)) == {case.rule, *case.also}
    line = _line(message, case.rule)
    value, allowed = case.value.format(tmp=tmp_path), case.allowed.format(tmp=tmp_path)
    if case.raw:
        value = shown(value)
    assert line.startswith(f"[{PATH}] ")
    if case.group is not None:
        where = f"instance group {case.group!r}{case.positions}"
        assert f"] {where}: {case.field} = {value}" in line
    else:
        assert f"] {case.field} = {value}" in line
    assert f" is not allowed; allowed: {allowed}" in line
    assert ". Fix: " in line
    assert _templates(outdir) == []


# -- the table of valid boundary inputs --------------------------------------------------


def good(case_id: str, build: Build) -> Any:
    return pytest.param(build, id=case_id)


# fmt: off
GOOD = [
    good("min-equals-count", with_group(instance_count=4, min_instance_count=4)),
    good("min-0", with_group(min_instance_count=0)),
    good("count-0", with_group(instance_count=0)),
    good("count-6758-min-6758", with_group(instance_count=6758, min_instance_count=6758)),
    good("min_accelerators-known-type", with_group(instance_count=None, min_accelerators=17)),
    good("100-groups", with_groups(lambda: [controller(), *many_computes(99)])),
    good("one-group", with_groups(lambda: [controller()])),
    good("one-login", with_groups(lambda: [controller(), login(), compute()])),
    good("threads_per_core-1", with_group(threads_per_core=1)),
    good("threads_per_core-2", with_group(threads_per_core=2)),
    good("one-deep-health-check", with_group(deep_health_checks=[DeepHealthCheck.INSTANCE_STRESS])),
    good("ebs-1-gib", with_storage(InstanceStorage.ebs(volume_size=Size.gibibytes(1)))),
    good("ebs-16384-gib", with_storage(InstanceStorage.ebs(volume_size=Size.gibibytes(16384)))),
    good("ebs-16-tib", with_storage(InstanceStorage.ebs(volume_size=Size.tebibytes(16)))),
    good("four-storage-configs", ports_opened(with_storage(
        InstanceStorage.ebs(volume_size=Size.gibibytes(500), kms_key_id="alias/hyperpod"),
        InstanceStorage.fsx_lustre(dns_name=FSX_DNS, mount_name="abcdefgh", mount_path="/fsx"),
        InstanceStorage.fsx_open_zfs(dns_name=FSX_DNS, mount_path="/home/shared"),
        InstanceStorage.fsx_lustre(dns_name=FSX_DNS, mount_name="a_b-1", mount_path="/scratch"),
        vpc=True))),
    good("partition-1024-chars", with_group(partition="p" * 1024)),
    good("names-63-chars-and-repeated-hyphens", lambda stack, _tmp: cluster(
        stack, [controller("c" * 63), compute("gpu--a", partition="a--b")], cluster_name="h" * 63)),
    good("training-plan-and-ami", with_group(training_plan_arn=PLAN_ARN,
                                             image_id="ami-0123456789abcdef0")),
    good("image-id-default", with_group(image_id="default")),
    good("image-id-8-hex-digits", with_group(image_id="ami-0123abcd")),
    good("lifecycle-source-uri-1024-chars", with_lifecycle(
        lambda stack, _tmp: LifecycleScripts.from_s3(bucket(stack, "sagemaker-scripts"),
                                                     on_create="on_create.sh", prefix="p" * 1000))),
    good("accounting-database-limits", lambda stack, _tmp: cluster(
        stack, accounting_database=AccountingDatabase(
            endpoint=".".join(["a" * 63] * 4), secret=secret(stack), database_name="d" * 64,
            port=65535))),
    good("50-tags", with_cluster(tags={f"k{i}": "v" * 256 for i in range(49)} | {"k" * 128: ""})),
    good("standard-mode-with-strategy-and-no-minimum", with_cluster(
        node_provisioning_mode=NodeProvisioningMode.STANDARD,
        slurm_config_strategy=SlurmConfigStrategy.MANAGED)),
    good("accounting-database-in-continuous", lambda stack, _tmp: cluster(
        stack, accounting_database=AccountingDatabase(endpoint="db.example.com",
                                                      secret=secret(stack)))),
    good("5-security-groups-16-subnets", with_network(subnets=16, groups=5)),
    good("lifecycle-directory", with_lifecycle(
        lambda _s, tmp: LifecycleScripts.from_directory(scripts_dir(tmp, "on_create.sh")))),
    good("lifecycle-sagemaker-bucket", with_lifecycle(lambda stack, _tmp: LifecycleScripts.from_s3(
        bucket(stack, "sagemaker-scripts"), on_create="x" * 125 + ".sh"), on_group=True)),
    good("lifecycle-other-bucket-with-the-library's-role", with_lifecycle(
        lambda stack, _tmp: LifecycleScripts.from_s3(bucket(stack, "my-scripts"),
                                                     on_create="on_create.sh",
                                                     prefix="lifecycle/v1"))),
    good("gate-timeout-11h29m-poll-1min",
         gated(timeout=Duration.seconds(41340), poll_interval=Duration.minutes(1))),
    # 5 h at 10 s no longer fits: the worst iteration (16 events in 10 s) would write 28,816
    good("gate-timeout-4h-poll-10s", gated(timeout=Duration.hours(4),
                                           poll_interval=Duration.seconds(10))),
    good("gate-poll-15min", gated(poll_interval=Duration.minutes(15))),
]
# fmt: on


@pytest.mark.deep(sample=8)
@pytest.mark.parametrize("build", GOOD)
def test_boundary_input_passes(build: Build, tmp_path: Path) -> None:
    outdir = tmp_path / "cdk.out"
    app = App(outdir=str(outdir))
    stack = Stack(app, "Test")
    build(stack, tmp_path)
    annotations = Annotations.from_stack(stack)  # synthesizes the app (validations included)
    assert [path.name for path in _templates(outdir)] == ["Test.template.json"]
    assert annotations.find_error("*", Match.any_value()) == []
    assert annotations.find_warning("*", Match.any_value()) == []


def test_all_problems_of_a_group_are_reported_together() -> None:
    stack = Stack(App(), "Test")
    hyperpod = cluster(
        stack, [controller(), compute(threads_per_core=3, image_id="ami-1", partition="")]
    )
    assert [f.rule for f in hyperpod.findings()] == [
        "HP-PARTITION-NAME",
        "HP-THREADS",
        "HP-IMAGE-ID",
    ]


def test_a_group_with_errors_is_reported_and_not_rendered() -> None:
    stack = Stack(App(), "Test")
    hyperpod = cluster(stack)
    hyperpod.add_instance_group(compute("late", partition="late", threads_per_core=3))
    assert [group.name for group in hyperpod.instance_groups] == ["controller", "gpu", "late"]
    assert [(f.rule, f.group) for f in hyperpod.findings()] == [("HP-THREADS", "late")]
    assert [g.name for g in hyperpod._wired] == ["controller", "gpu"]


# -- rules for cluster props, tested as pure functions until cluster.py calls them -------


@dataclass(frozen=True)
class Database:
    """The fields of AccountingDatabase the rule reads (no secret, no stack needed)."""

    endpoint: str = "slurm-db.cluster-abc.us-east-1.rds.amazonaws.com"
    database_name: str | None = None
    port: int | None = None


# fmt: off
DATABASES = [
    pytest.param(Database(), None, id="defaults"),
    pytest.param(Database(".".join(["a" * 63] * 4), "d" * 64, 65535), None, id="upper-limits"),
    pytest.param(Database("db", "$_x", 1), None, id="lower-limits"),
    pytest.param(Database("bad_host"), "endpoint", id="endpoint-underscore"),
    pytest.param(Database("-db.example.com"), "endpoint", id="endpoint-leading-hyphen"),
    pytest.param(Database("a" * 64 + ".example.com"), "endpoint", id="endpoint-label-64"),
    pytest.param(Database(".".join(["a" * 63] * 4) + "a"), "endpoint", id="endpoint-256"),
    pytest.param(Database(database_name="slurm-acct"), "database_name", id="name-hyphen"),
    pytest.param(Database(database_name="a" * 65), "database_name", id="name-65"),
    pytest.param(Database(database_name=""), "database_name", id="name-empty"),
    pytest.param(Database(port=0), "port", id="port-0"),
    pytest.param(Database(port=65536), "port", id="port-65536"),
    pytest.param(Database(port=True), "port", id="port-bool"),
]
TAGS = [
    pytest.param({}, [], id="none"),
    pytest.param({"k" * 128: "", "équipe": "données ü", "cost center": "a b_.:/=+-@"}, [],
                 id="limits-unicode-whitespace"),
    pytest.param({f"k{i}": "v" for i in range(50)}, [], id="50-tags"),
    pytest.param({f"k{i}": "v" for i in range(51)}, ["tags (Tags)"], id="51-tags"),
    pytest.param({"": "v"}, ["tags key (Tags[].Key)"], id="key-empty"),
    pytest.param({"k" * 129: "v"}, ["tags key (Tags[].Key)"], id="key-129"),
    pytest.param({"bad<key>": "v"}, ["tags key (Tags[].Key)"], id="key-angle-bracket"),
    pytest.param({"k": "v" * 257}, ["tags['k'] (Tags[].Value)"], id="value-257"),
    pytest.param({"k": "a,b"}, ["tags['k'] (Tags[].Value)"], id="value-comma"),
]
# fmt: on


@pytest.mark.parametrize(("database", "field"), DATABASES)
def test_accounting_database_rule(database: Database, field: str | None) -> None:
    found = accounting_findings(database)
    if field is None:
        assert found == []
        return
    assert [(f.rule, f.field.split(" ")[0]) for f in found] == [
        ("HP-ACCOUNTING-DATABASE", f"accounting_database.{field}")
    ]
    value = getattr(database, field)
    value = shown(value) if isinstance(value, str) else repr(value)
    assert f" = {value} is not allowed; allowed: " in found[0].message()


@pytest.mark.parametrize(("tags", "fields"), TAGS)
def test_tags_rule(tags: dict[str, str], fields: list[str]) -> None:
    found = tag_findings(tags)
    assert [f.field for f in found] == fields
    assert {f.rule for f in found} <= {"HP-TAGS"}


def test_gate_findings_warn_about_token_counts_of_a_gated_group() -> None:
    stack = Stack(App(), "Test")
    count = CfnParameter(stack, "Count", type="Number").value_as_number
    minimum = CfnParameter(stack, "Min", type="Number").value_as_number
    token_count = compute(instance_count=count, min_instance_count=2)
    (finding,) = gate_findings(token_count)
    assert (finding.rule, finding.severity, finding.field) == (
        "HP-WARN-GATE-TOKEN-COUNT",
        "warning",
        "instance_count (InstanceCount)",
    )
    assert "instance_count (InstanceCount) = <token>: recommended: a number, if an update" in (
        finding.message()
    )
    (finding,) = gate_findings(compute(min_instance_count=minimum))
    assert finding.field == "min_instance_count (MinInstanceCount)"
    (finding,) = gate_findings(compute(instance_count=count, min_instance_count=minimum))
    assert (
        finding.field == "min_instance_count (MinInstanceCount) and instance_count (InstanceCount)"
    )
    # Not gated: no minimum, or a minimum of 0.
    assert gate_findings(compute(instance_count=count, min_instance_count=0)) == []
    assert gate_findings(compute(instance_count=count)) == []
    assert gate_findings(compute(min_instance_count=2)) == []
    # Only for clusters whose gate is on: validate_group(..., gate=False) is the default.
    assert validate_group(token_count) == []
    assert [f.rule for f in validate_group(token_count, gate=True)] == ["HP-WARN-GATE-TOKEN-COUNT"]


# -- warnings ----------------------------------------------------------------------------


def test_accelerator_group_without_deep_health_checks_warns(tmp_path: Path) -> None:
    app = App(outdir=str(tmp_path))
    stack = Stack(app, "Test")
    cluster(stack, [controller(), compute("gpu", deep_health_checks=()),
                    compute("trn", instance_type=HyperPodInstanceType.ML_TRN1_32XLARGE,
                            partition="trn", deep_health_checks=())])  # fmt: skip
    annotations = Annotations.from_stack(stack)
    for group in ("gpu", "trn"):
        annotations.has_warning(
            f"/{PATH}",
            Match.string_like_regexp(
                rf"^instance group '{group}': deep_health_checks \(OnStartDeepHealthChecks\) = "
                r"\[\]: recommended: InstanceStress and InstanceConnectivity .*\[HP-WARN-DHC\]"
            ),
        )
    assert len(annotations.find_warning("*", Match.string_like_regexp("HP-WARN-DHC"))) == 2
    assert _templates(tmp_path) != []  # a warning does not stop the synth


@pytest.mark.parametrize(
    "group",
    [
        pytest.param(compute("cpu", instance_type=CPU, deep_health_checks=()), id="cpu-compute"),
        pytest.param(compute(deep_health_checks=[DeepHealthCheck.INSTANCE_STRESS]), id="one-dhc"),
        pytest.param(compute(deep_health_checks=BOTH_CHECKS), id="both-dhc"),
    ],
)
def test_no_deep_health_check_warning_when_not_needed(group: InstanceGroup) -> None:
    stack = Stack(App(), "Test")
    cluster(stack, [controller(), group])
    warnings = Annotations.from_stack(stack).find_warning("*", Match.string_like_regexp("HP-WARN"))
    assert warnings == []


def test_gpu_controller_does_not_warn() -> None:
    stack = Stack(App(), "Test")
    cluster(stack, [InstanceGroup.controller("controller", instance_type=GPU), compute()])
    assert Annotations.from_stack(stack).find_warning("*", Match.any_value()) == []


@pytest.mark.parametrize(
    ("timeout", "shown"),
    [(Duration.hours(2), "2 hours"), (Duration.minutes(179), "2 hours 59 minutes")],
    ids=["2h", "2h59m"],
)
def test_gate_timeout_under_3_hours_warns(timeout: Duration, shown: str) -> None:
    stack = Stack(App(), "Test")
    gated(timeout=timeout)(stack, Path())
    Annotations.from_stack(stack).has_warning(
        f"/{PATH}/MinCountGate",
        Match.string_like_regexp(
            rf"^readiness_gate\.timeout = '{shown}': recommended: at least 3 hours, HyperPod's "
            r"MinCount window: .*Fix: use at least Duration\.hours\(3\).* \[HP-WARN-GATE-TIMEOUT\]"
        ),
    )


def test_the_gate_timeout_warning_is_acknowledged_by_its_rule_id() -> None:
    stack = Stack(App(), "Test")
    gated(timeout=Duration.hours(2))(stack, Path())
    assert Annotations.from_stack(stack).find_warning("*", Match.any_value()) != []
    stack = Stack(App(), "Test")
    gated(timeout=Duration.hours(2))(stack, Path())
    aws_cdk.Annotations.of(stack).acknowledge_warning("hyperpod:HP-WARN-GATE-TIMEOUT", "short")
    assert Annotations.from_stack(stack).find_warning("*", Match.any_value()) == []


def test_gate_timeout_of_3_hours_does_not_warn() -> None:
    stack = Stack(App(), "Test")
    gated(timeout=Duration.hours(3))(stack, Path())
    assert Annotations.from_stack(stack).find_warning("*", Match.any_value()) == []


# -- the tables cover every rule, and the docs list every rule ---------------------------


@functools.cache
def _ids_named_by_tests() -> dict[str, frozenset[str]]:
    """The rule ids each test module's code names, by its path from the repository root."""
    rule_id = re.compile(r"HP-[A-Z0-9]+(?:-[A-Z0-9]+)*")
    return {
        path.relative_to(REPO).as_posix(): frozenset(
            rule_id.findall(path.read_text(encoding="utf-8"))
        )
        for path in sorted((REPO / "tests").rglob("*.py"))
    }


def _tests_naming(rule_id: str, *, here: bool = False) -> list[str]:
    """The test modules whose code names ``rule_id`` (not this one, unless ``here``)."""
    this = Path(__file__).resolve().relative_to(REPO).as_posix()
    return [
        module
        for module, ids in _ids_named_by_tests().items()
        if (here or module != this) and rule_id in ids
    ]


WARNINGS = frozenset(
    rule.id
    for rule in RULES.values()
    if Severity.WARNING in {rule.severity_in(mode) for mode in NodeProvisioningMode}
)
"""The registry's warnings: tested by the warning tests of this module,
tests/test_rules_from_real_configs.py, tests/test_rule_claims.py and the gate's."""
BAD_RULES = frozenset(param.values[0].rule for param in BAD)
ELSEWHERE = {
    rule.id: rule.checked_by or ", ".join(_tests_naming(rule.id))
    for rule in RULES.values()
    if rule.id not in BAD_RULES and (rule.checked_by or _tests_naming(rule.id))
}
"""The rules without a case in the tables, and where they are tested: with the construct or
factory that checks them (``Rule.checked_by``), or in the test modules that name them."""


def _rules_in_source() -> set[str]:
    sources = [
        *sorted((REPO / "hyperpod_constructs").rglob("*.py")),
    ]
    rule = re.compile(r"[\"`](HP-[A-Z0-9]+(?:-[A-Z0-9]+)*)[\"`]")
    return {found for path in sources for found in rule.findall(path.read_text())}


def test_every_rule_id_in_the_source_is_registered() -> None:
    assert _rules_in_source() <= set(RULES)


def test_every_registered_rule_has_a_failing_case() -> None:
    tested = BAD_RULES | WARNINGS | set(ELSEWHERE)
    assert set(RULES) == tested
    unnamed = [
        rule
        for rule in sorted(WARNINGS - BAD_RULES)
        if not (RULES[rule].checked_by or _tests_naming(rule, here=True))
    ]
    assert unnamed == [], f"warnings no test names: {unnamed}"


def _rules_a_check_names(check: Check[...]) -> set[str]:
    """The rule ids a check's own code names: ``"HP-..."`` literals and ``Rule`` constants
    (in nested functions too)."""
    function = check.function
    ids = set(re.findall(r"\"(HP-[A-Z0-9-]+)\"", inspect.getsource(function)))
    codes = [function.__code__]
    while codes:
        code = codes.pop()
        codes += [const for const in code.co_consts if isinstance(const, types.CodeType)]
        globals_read = {i.argval for i in dis.get_instructions(code) if i.opname == "LOAD_GLOBAL"}
        ids |= {
            value.id
            for name in globals_read
            if isinstance(value := function.__globals__.get(name), Rule)
        }
    return ids


def _checks() -> list[Check[...]]:
    return [
        value
        for family in FAMILIES
        for value in vars(family).values()
        if isinstance(value, Check) and value.function.__module__ == family.__name__
    ]


def test_every_rule_is_bound_to_the_check_that_reports_it() -> None:
    """A rule is its metadata and its check together (or names the construct that checks it),
    and a check reports its own rules only (``HP-ARG-TYPE`` is every check's: a wrong type)."""
    checks = _checks()
    assert len(checks) > 20
    for rule in RULES.values():
        assert rule.checks or rule.checked_by, f"{rule.id} has no check"
        assert all(check in checks for check in rule.checks), rule.id
    for check in checks:
        own = {rule.id for rule in check.rules}
        assert _rules_a_check_names(check) <= own | {"HP-ARG-TYPE"}, check
        assert own <= set(RULES), check


def test_validate_group_runs_a_check_of_every_group_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """The group's checks are declared once (``GROUP_RULES``, the registry's
    ``GROUP_CHECKS``); a check of a GROUP-scope rule left out of them would never run."""
    called: list[Check[...]] = []
    run = Check.__call__

    def spy(check: Check[...], *args: Any, **kwargs: Any) -> list[Any]:
        called.append(check)
        return run(check, *args, **kwargs)

    monkeypatch.setattr(Check, "__call__", spy)
    assert validate_group(compute()) == []
    missed = [
        rule.id
        for rule in RULES.values()
        if rule.scope is Scope.GROUP and not set(rule.checks) & set(called)
    ]
    assert missed == [], f"validate_group runs no check of {missed}"
    assert [check for check in called if check in GROUP_RULES] == list(GROUP_RULES)


def test_the_group_checks_are_family_checks_declared_once() -> None:
    """The registry declares the group's checks and their order in one place: each is a check
    of a family, listed once, and no family check says where it runs."""
    assert len(set(GROUP_RULES)) == len(GROUP_RULES)
    assert set(GROUP_RULES) <= set(_checks())
    for family in FAMILIES:
        source = Path(inspect.getfile(family)).read_text(encoding="utf-8")
        assert "group_order" not in source, family.__name__


def test_a_group_order_is_deprecated_and_ignored() -> None:
    def one(group: InstanceGroup) -> list[Any]:
        return []

    with pytest.warns(DeprecationWarning, match="GROUP_CHECKS"):
        check = reports(group_order=1)(one)
    assert check(compute()) == [] and check not in GROUP_RULES


def test_a_family_declares_its_rules_once() -> None:
    declared = [rule.id for family in FAMILIES for rule in family.RULES]
    assert declared == list(RULES)
    for family in FAMILIES:
        defined = [value for value in vars(family).values() if isinstance(value, Rule)]
        assert set(defined) <= set(family.RULES) | set(RULES.values()), family.__name__


def _direct_findings() -> dict[str, int]:
    """How many ``Finding(...)`` calls each module of the library writes itself."""
    root = REPO / "hyperpod_constructs"
    found: dict[str, int] = {}
    for path in sorted(root.rglob("*.py")):
        module = path.relative_to(root).as_posix()
        if module.startswith(("policy/", "_runtime/")):
            continue  # the policy's user-facing Finding API; the gate's separate Lambda code
        calls = [
            node
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Call)
            and (
                (isinstance(node.func, ast.Name) and node.func.id == "Finding")
                or (isinstance(node.func, ast.Attribute) and node.func.attr == "Finding")
            )
        ]
        if calls:
            found[module] = len(calls)
    return found


def test_every_library_finding_is_built_by_its_rule() -> None:
    """A rule's id, severity and field are bound once, in its ``Rule``: the library builds
    each finding with ``RULE.finding(...)``. Only ``Rule.finding`` itself builds a
    ``Finding``, and ``check_name`` for a rule id of the caller's own (a ``str``)."""
    assert _direct_findings() == {"_core/rule.py": 1, "validation/name_rules.py": 1}


def _hand_written_annotations() -> dict[str, int]:
    """How many annotations each module of the library writes with a message of its own,
    not a finding's ``message()``."""
    root = REPO / "hyperpod_constructs"
    found: dict[str, int] = {}
    for path in sorted(root.rglob("*.py")):
        module = path.relative_to(root).as_posix()
        if module.startswith(("policy/", "_runtime/")):
            continue  # a policy's messages are its author's; the gate's Lambda code
        calls = [
            node
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in {"add_warning_v2", "add_warning", "add_error", "add_info"}
            and not (
                isinstance(message := [*node.args, *(k.value for k in node.keywords)][-1], ast.Call)
                and isinstance(message.func, ast.Attribute)
                and message.func.attr == "message"
            )
        ]
        if calls:
            found[module] = len(calls)
    return found


def test_every_annotation_is_a_findings_message() -> None:
    """The warnings the constructs annotate are built by their rule as well (the gate's
    timeout advice, ``gate_timeout_advice``); only the subscription aspect writes its own."""
    assert _hand_written_annotations() == {"_gate/subscriptions.py": 1}


def test_a_rules_finding_carries_its_id_severity_and_field() -> None:
    name_group, multi_head = RULES["HP-NAME-GROUP"], RULES["HP-MULTI-HEAD-IN-CONTINUOUS"]
    warning = RULES["HP-WARN-DHC"]
    found = name_group.finding(value="a_b", allowed="a name", fix="use a-b", group="a_b")
    assert (found.rule, found.severity, found.field) == (
        "HP-NAME-GROUP",
        Severity.ERROR,
        "name (InstanceGroupName)",
    )
    assert warning.finding(value=[], allowed="checks", fix="add them").severity is Severity.WARNING
    indexed = warning.finding(field="instance_types[1]", value=[], allowed="a", fix="b")
    assert indexed.field == "instance_types[1]"
    assert multi_head.finding_field is None  # not one property: each finding names its field
    with pytest.raises(ValueError, match="HP-MULTI-HEAD-IN-CONTINUOUS finding names its field"):
        multi_head.finding(value=2, allowed="1", fix="use 1")
    standard, continuous = NodeProvisioningMode.STANDARD, NodeProvisioningMode.CONTINUOUS
    in_continuous = multi_head.finding(
        field="instance_count", value=2, allowed="1", fix="use 1", mode=continuous
    )
    assert in_continuous.severity is multi_head.severity_in(continuous)
    with pytest.raises(ValueError, match="does not apply"):
        multi_head.finding(field="instance_count", value=2, allowed="1", fix="1", mode=standard)


def test_a_rules_field_names_one_property_or_none() -> None:
    """``Rule.finding_field`` reads ``name`` / ``CloudFormationName`` (each in backticks) as
    ``name (CloudFormationName)``; a field of several properties, a wildcard or words has
    none."""
    fields = {rule.id: rule.finding_field for rule in RULES.values()}
    assert fields["HP-THREADS"] == "threads_per_core (ThreadsPerCore)"
    assert fields["HP-EBS-KMS"] == "storage[].kms_key_id (EbsVolumeConfig.VolumeKmsKeyId)"
    for rule_id in ("HP-COUNT-INT", "HP-LIFECYCLE", "HP-MOUNT-PATH", "HP-GATE-HISTORY"):
        assert fields[rule_id] is None, rule_id


def test_docs_rule_table_is_generated_from_the_registry() -> None:
    docs = (REPO / "docs" / "validation.md").read_text(encoding="utf-8")
    assert with_rule_table(docs) == docs, (
        "docs/validation.md is stale: run python -m hyperpod_constructs.validation --write"
    )
    table = docs.split(TABLE_BEGIN, 1)[1].split(TABLE_END, 1)[0]
    listed = re.findall(
        r"^\| <a id=\"[^\"]+\"[^>]*><code>(HP-[A-Z0-9-]+)</code></a> \|", table, flags=re.MULTILINE
    )
    assert listed == list(RULES)


def test_docs_show_each_rules_severity_per_provisioning_mode() -> None:
    """The rule table's Standard and Continuous columns, and the table of what changes when a
    cluster switches modes, are the registry's (``Rule.severity_in``), not a hand-kept copy."""
    docs = (REPO / "docs" / "validation.md").read_text(encoding="utf-8")
    table = docs.split(TABLE_BEGIN, 1)[1].split(TABLE_END, 1)[0]
    rows = re.findall(
        r"^\| <a id=\"[^\"]+\"[^>]*><code>(HP-[A-Z0-9-]+)</code></a> \| ([a-z-]+) \| ([a-z-]+) \|",
        table,
        re.MULTILINE,
    )
    cell = {None: "-", Severity.ERROR: "error", Severity.WARNING: "warning"}
    standard, continuous = NodeProvisioningMode.STANDARD, NodeProvisioningMode.CONTINUOUS
    assert rows == [
        (r.id, cell[r.severity_in(standard)], cell[r.severity_in(continuous)])
        for r in RULES.values()
    ]
    modes = docs.split(MODE_TABLE_BEGIN, 1)[1].split(MODE_TABLE_END, 1)[0]
    switched = re.findall(r"^\| `(HP-[A-Z0-9-]+)` \|", modes, flags=re.MULTILINE)
    assert switched == [
        r.id for r in RULES.values() if r.severity_in(standard) != r.severity_in(continuous)
    ]
    assert {"HP-MULTI-HEAD-IN-CONTINUOUS", "HP-STRATEGY-IN-CONTINUOUS"} <= set(switched)


def test_gate_option_findings_name_the_parameter_given() -> None:
    """A finding of the gate's options names the cluster's ``readiness_gate=`` parameter."""
    late = MinCountGateOptions(poll_interval=Duration.seconds(5))
    stack = Stack(App(), "Test")
    built = cluster(stack, [controller(), compute(min_instance_count=2)], readiness_gate=late)
    assert [f.field for f in built.findings()] == ["readiness_gate.poll_interval"]


@pytest.mark.parametrize(
    ("arn", "says"),
    [
        (WRONG_PLAN, "the resource 'capacity/plan' is wrong: it must be 'training-plan/<name>'"),
        (
            "arn:aws:sagemaker:us-east-1:12345678901:training-plan/my-plan",
            "the account '12345678901' is wrong: it must be 12 digits",
        ),
        (
            "arn:aws:ec2:us-east-1:123456789012:training-plan/my-long-plan-name",
            "the service 'ec2' is wrong: it must be 'sagemaker'",
        ),
        ("my-plan", "it has 1 of the 6 ':'-separated parts"),
        (
            "arn:aws:sagemaker::123456789012:training-plan/x",
            "it has 47 characters; allowed: 50..2048",
        ),
    ],
)
def test_a_training_plan_arn_error_says_which_part_is_wrong(arn: str, says: str) -> None:
    built = cluster(Stack(App(), "Test"), [controller(), compute(training_plan_arn=arn)])
    (finding,) = [f for f in built.findings() if f.rule == "HP-TRAINING-PLAN"]
    assert f"Fix: {says}" in finding.message()
    assert "\n" not in finding.message()

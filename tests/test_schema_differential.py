"""Differential test: the library's validation against the CloudFormation resource schema.

For a cluster configuration (random from hypothesis, or a hand-picked boundary case):

- the *library* renders it: ``HyperPodSlurmCluster`` in a fresh stack, synthesized;
- the *direct* render: the same props as a plain L1 ``CfnCluster`` (no library involved);
- cfn-lint (its schema checks for ``AWS::SageMaker::Cluster``) judges the rendered resource.

Properties checked on every configuration:

A. Whatever the library accepts synthesizes a cluster cfn-lint accepts.
B. Whatever cfn-lint rejects in the direct render, the library rejects with its own error
   (``HyperPodValidationError`` while building, or a ``[HP-...]`` node validation at synth).
B'. The converse, except for ``STRICTER_BY_DESIGN``: when cfn-lint accepts the direct render,
   every rule the library rejects it with is a HyperPod rule the schema cannot express.
C. Whatever the library accepts, it renders exactly the direct props (nothing dropped,
   renamed or defaulted).
D. Whatever the library accepts satisfies every enum, pattern, length, range and required
   member of the ``CreateCluster`` shapes in botocore's API model (one generic walk driven by
   the model: tests/support/api_model.py), so an AWS change to a shape fails here.

Speed: each configuration builds two tiny apps (~25 ms) and lints one resource (~25 ms):
only the ``AWS::SageMaker::Cluster`` resource is linted, with every value a literal (imported
role, VPC, security groups, bucket and secret), with cfn-lint's rules loaded once. The
library's and the direct render are linted once when they are equal (they are, whenever C
holds). The readiness gate is disabled: it adds Lambda assets but nothing to the cluster.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import CfnTag, Size, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sagemaker as sagemaker
from aws_cdk import aws_secretsmanager as secretsmanager
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hyperpod_constructs import (
    AccountingDatabase,
    AutoPatchStrategy,
    DeepHealthCheck,
    HyperPodInstanceType,
    HyperPodSlurmCluster,
    HyperPodValidationError,
    InstanceGroup,
    InstanceStorage,
    LifecycleScripts,
    MinCountGateOptions,
    NodeProvisioningMode,
    NodeRecovery,
    NodeType,
    SlurmConfigStrategy,
)
from hyperpod_constructs._report.records import WARNING_PREFIX
from hyperpod_constructs.instance_type import known_names
from tests.conftest import new_app
from tests.support import api_model
from tests.support.depth import DEEP, examples
from tests.template_utils import CLUSTER_TYPE, cfn_lint, describe_matches, only, references

ROLE_ARN = "arn:aws:iam::123456789012:role/hyperpod-execution"
SECRET_ARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:slurm-accounting-AbCdEf"
KMS_ARN = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
FSX_DNS = "fs-0123456789abcdef0.fsx.us-east-1.amazonaws.com"
PLAN_PREFIX = "arn:aws:sagemaker::123456789012:training-plan/"  # 46 characters
DNS_275 = "fs-" + "0" * 18 + "." + "a" * 253  # the longest the schema allows
DNS_276 = "fs-" + "0" * 19 + "." + "a" * 253
UNNAMED = "unnamed-cluster"

STRICTER_BY_DESIGN: dict[str, str] = {
    # Rules HyperPod enforces that the resource schema cannot express; Property B' does not
    # hold for them (the library rejects, cfn-lint accepts), on purpose.
    "HP-CONTROLLER-REQUIRED": "a Controller group (the schema does not count NodeTypes)",
    "HP-GROUP-UNIQUE": "group names unique in the cluster (JSON schema cannot say so)",
    "HP-MIN-ABOVE-COUNT": "MinInstanceCount <= InstanceCount (a cross-field rule)",
    "HP-MIN-NEEDS-CONTINUOUS": "MinInstanceCount > 0 needs NodeProvisioningMode Continuous",
    "HP-ACCOUNTING-NEEDS-CONTINUOUS": "AccountingDatabase only in Continuous mode",
    "HP-EBS-ROOT-VOLUME": "RootVolume true: no VolumeSizeInGB, a VolumeKmsKeyId (API reference)",
    "HP-DHC-DISTINCT": "each deep health check at most once (schema: up to 3, repeats allowed)",
    "HP-INSTANCE-TYPE": "the ml.<family>.<size> shape (schema: any string; the API: an enum)",
    "HP-CONTROLLER-COUNT": "the controller group has at least one instance",
    "HP-DHC-CONNECTIVITY": "InstanceConnectivity only on GPU / Trainium types with EFA",
    "HP-LIFECYCLE": "a key prefix without '..', '//', 's3://' or whitespace, and OnCreate a "
    "file name without '/'",
    # The Slurm layout AWS's pages state (sources in the rule table):
    "HP-CONTROLLER-ONE": "exactly one Controller group (the Slurm configuration reference)",
    "HP-LOGIN-MAX": "at most one Login group (the Slurm configuration reference)",
    "HP-PARTITION-HEAD-NODE": "no PartitionNames on Controller or Login groups (the reference)",
    "HP-FSX-NEEDS-VPC": "FSx needs the cluster's VpcConfig (the reference)",
    "HP-MULTI-HEAD-IN-CONTINUOUS": "one controller node with continuous provisioning (its guide)",
    "HP-STRATEGY-IN-CONTINUOUS": "no SlurmConfigStrategy in Continuous mode (an API error)",
    # (HP-LAYOUT-NEEDS-STANDARD too, but these specs always render SlurmConfig: see
    # tests/test_rule_claims.py.)
}

# cfn-lint findings that are not schema limits of the cluster (documented exceptions):
# - E1152 applies EC2's AMI id format to ImageId, but "default" (HyperPod's public AMI) is
#   valid: it is in the schema's own pattern and in the API's.
# - E3644 is cfn-lint's list of instance types available per region (an extension, not the
#   resource schema). The library accepts any ml.<family>.<size> on purpose (new types, and
#   stacks whose region is unknown at synth); its own constants include types missing from
#   that list (ml.p6e-gb200.36xlarge, in the API model).
IGNORED: list[Callable[[Any], bool]] = [
    lambda m: m.rule.id == "E1152" and m.path[-1] == "ImageId" and "'default'" in m.message,
    lambda m: m.rule.id == "E3644" and m.path[-1] == "InstanceType",
]


# -- configurations -----------------------------------------------------------------------------


@dataclass(frozen=True)
class StorageSpec:
    kind: str  # "ebs" | "fsx_lustre" | "fsx_open_zfs"
    size_gib: int | None = 100
    root_volume: bool | None = None
    kms_key_id: str | None = None
    dns_name: str = FSX_DNS
    mount_name: str = "abcdefgh"
    mount_path: str | None = None


@dataclass(frozen=True)
class GroupSpec:
    name: str
    node_type: NodeType
    instance_type: str = "ml.c5.4xlarge"
    count: int = 2
    minimum: int | None = None
    partition: str | None = None
    threads: int | None = None
    checks: tuple[DeepHealthCheck, ...] = ()
    storage: tuple[StorageSpec, ...] = ()
    training_plan_arn: str | None = None
    image_id: str | None = None
    instance_types: tuple[str, ...] = ()
    """A flexible group's types (``InstanceRequirements``); empty: ``instance_type``."""
    auto_patch: AutoPatchStrategy | None = None


@dataclass(frozen=True)
class LifecycleSpec:
    bucket: str = "sagemaker-lifecycle-scripts"
    prefix: str = "hyperpod"
    on_create: str = "on_create.sh"


@dataclass(frozen=True)
class AccountingSpec:
    endpoint: str = "slurm-db.cluster-abc.us-east-1.rds.amazonaws.com"
    name: str | None = None
    port: int | None = None


@dataclass(frozen=True)
class ClusterSpec:
    groups: tuple[GroupSpec, ...]
    name: str | None = "train"
    mode: NodeProvisioningMode = NodeProvisioningMode.CONTINUOUS
    recovery: NodeRecovery = NodeRecovery.AUTOMATIC
    vpc: tuple[int, int] | None = None  # (security groups, subnets)
    lifecycle: LifecycleSpec | None = None
    strategy: SlurmConfigStrategy | None = None
    accounting: AccountingSpec | None = None
    tags: tuple[tuple[str, str], ...] = field(default=())


BASELINE = ClusterSpec(
    groups=(
        GroupSpec("controller", NodeType.CONTROLLER, "ml.m5.xlarge", 1),
        GroupSpec("login", NodeType.LOGIN, "ml.m5.xlarge", 1),
        GroupSpec(
            "gpu",
            NodeType.COMPUTE,
            "ml.p5.48xlarge",
            4,
            minimum=2,
            partition="gpu",
            checks=(DeepHealthCheck.INSTANCE_STRESS,),
        ),
    )
)


def security_group_id(index: int) -> str:
    return f"sg-{index:017x}"


def subnet_id(index: int) -> str:
    return f"subnet-{index:017x}"


def source_uri(spec: LifecycleSpec) -> str:
    prefix = spec.prefix.strip("/")
    return f"s3://{spec.bucket}/{prefix + '/' if prefix else ''}"


URI_1024 = "p" * (1024 - len(source_uri(LifecycleSpec(prefix=""))) - 1)
"""The prefix that makes SourceS3Uri exactly 1024 characters (the schema's limit)."""


# -- the library render -------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    accepted: bool
    properties: dict[str, Any] | None = None
    rules: frozenset[str] = frozenset()


_RULE = re.compile(r"\[(HP-[A-Z0-9-]+)\]")


def _library_group(spec: GroupSpec) -> InstanceGroup:
    storage = []
    for item in spec.storage:
        if item.kind == "ebs":
            storage.append(
                InstanceStorage.ebs(
                    volume_size=Size.gibibytes(item.size_gib)
                    if item.size_gib is not None
                    else None,
                    root_volume=item.root_volume,
                    kms_key_id=item.kms_key_id,
                )
            )
        elif item.kind == "fsx_lustre":
            storage.append(
                InstanceStorage.fsx_lustre(
                    dns_name=item.dns_name, mount_name=item.mount_name, mount_path=item.mount_path
                )
            )
        else:
            storage.append(
                InstanceStorage.fsx_open_zfs(dns_name=item.dns_name, mount_path=item.mount_path)
            )
    types = tuple(HyperPodInstanceType.of(t) for t in spec.instance_types)
    return InstanceGroup(
        name=spec.name,
        node_type=spec.node_type,
        instance_type=types[0] if types else HyperPodInstanceType.of(spec.instance_type),
        instance_types=types,
        auto_patch=spec.auto_patch,
        instance_count=spec.count,
        min_instance_count=spec.minimum,
        partition=spec.partition,
        threads_per_core=spec.threads,
        deep_health_checks=spec.checks,
        storage=tuple(storage),
        training_plan_arn=spec.training_plan_arn,
        image_id=spec.image_id,
    )


def library_render(spec: ClusterSpec, outdir: Path | None = None) -> Verdict:
    app = new_app(outdir=str(outdir)) if outdir is not None else new_app()
    stack = Stack(app, "Lib")
    kwargs: dict[str, Any] = {}
    if spec.vpc is not None:
        groups, subnets = spec.vpc
        kwargs["vpc"] = ec2.Vpc.from_vpc_attributes(
            stack,
            "Vpc",
            vpc_id="vpc-0123456789abcdef0",
            availability_zones=["us-east-1a"],
            private_subnet_ids=[subnet_id(i) for i in range(subnets)],
        )
        kwargs["security_groups"] = [
            ec2.SecurityGroup.from_security_group_id(stack, f"Sg{i}", security_group_id(i))
            for i in range(groups)
        ]
    if spec.lifecycle is not None:
        bucket = s3.Bucket.from_bucket_name(stack, "Scripts", spec.lifecycle.bucket)
        kwargs["lifecycle_scripts"] = LifecycleScripts.from_s3(
            bucket, on_create=spec.lifecycle.on_create, prefix=spec.lifecycle.prefix
        )
    if spec.accounting is not None:
        kwargs["accounting_database"] = AccountingDatabase(
            endpoint=spec.accounting.endpoint,
            secret=secretsmanager.Secret.from_secret_complete_arn(stack, "Db", SECRET_ARN),
            database_name=spec.accounting.name,
            port=spec.accounting.port,
        )
    try:
        HyperPodSlurmCluster(
            stack,
            "Cluster",
            cluster_name=spec.name,
            node_provisioning_mode=spec.mode,
            node_recovery=spec.recovery,
            execution_role=iam.Role.from_role_arn(stack, "Role", ROLE_ARN, mutable=False),
            slurm_config_strategy=spec.strategy,
            tags=dict(spec.tags) or None,
            readiness_gate=MinCountGateOptions(enabled=False),
            instance_groups=[_library_group(g) for g in spec.groups],
            **kwargs,
        )
    except HyperPodValidationError as error:
        assert error.findings, "a HyperPodValidationError names its findings"
        return Verdict(False, rules=frozenset(f.rule for f in error.findings))
    try:
        template = app.synth().get_stack_by_name("Lib").template
    except RuntimeError as error:  # node validation (cross-group rules), raised through jsii
        # The report lists the unacknowledged warnings after the errors, marked as such: only
        # the errors are the library's rejection.
        rules = frozenset(
            rule
            for line in str(error).splitlines()
            if not re.sub(r"^\s*\[[^\]]*\]\s*", "", line).startswith(WARNING_PREFIX)
            for rule in _RULE.findall(line)
        )
        if not rules:
            raise  # not a rejection by the library: a crash
        return Verdict(False, rules=rules)
    _, cluster = only(template, CLUSTER_TYPE)
    properties = cluster["Properties"]
    assert references(properties) == set(), "every value is a literal in this test"
    return Verdict(True, properties=properties)


# -- the direct render (plain L1, no library) ---------------------------------------------------


def _direct_storage(item: StorageSpec) -> sagemaker.CfnCluster.ClusterInstanceStorageConfigProperty:
    C = sagemaker.CfnCluster
    if item.kind == "ebs":
        return C.ClusterInstanceStorageConfigProperty(
            ebs_volume_config=C.ClusterEbsVolumeConfigProperty(
                volume_size_in_gb=item.size_gib,
                root_volume=item.root_volume,
                volume_kms_key_id=item.kms_key_id,
            )
        )
    if item.kind == "fsx_lustre":
        return C.ClusterInstanceStorageConfigProperty(
            fsx_lustre_config=C.ClusterFsxLustreConfigProperty(
                dns_name=item.dns_name, mount_name=item.mount_name, mount_path=item.mount_path
            )
        )
    return C.ClusterInstanceStorageConfigProperty(
        fsx_open_zfs_config=C.ClusterFsxOpenZfsConfigProperty(
            dns_name=item.dns_name, mount_path=item.mount_path
        )
    )


def direct_render(spec: ClusterSpec, name: str, outdir: Path | None = None) -> dict[str, Any]:
    C = sagemaker.CfnCluster
    lifecycle = (
        C.ClusterLifeCycleConfigProperty(
            source_s3_uri=source_uri(spec.lifecycle), on_create=spec.lifecycle.on_create
        )
        if spec.lifecycle is not None
        else None
    )
    groups = [
        C.ClusterInstanceGroupProperty(
            instance_group_name=g.name,
            instance_type=None if g.instance_types else g.instance_type,
            instance_requirements=(
                C.InstanceRequirementsProperty(instance_types=list(g.instance_types))
                if g.instance_types
                else None
            ),
            auto_patch_config=(
                C.AutoPatchConfigProperty(patching_strategy=g.auto_patch.value)
                if g.auto_patch is not None
                else None
            ),
            instance_count=g.count,
            execution_role=ROLE_ARN,
            slurm_config=C.ClusterSlurmConfigProperty(
                node_type=g.node_type.value,
                partition_names=[g.partition] if g.partition is not None else None,
            ),
            min_instance_count=g.minimum,
            life_cycle_config=lifecycle,
            threads_per_core=g.threads,
            on_start_deep_health_checks=[c.value for c in g.checks] or None,
            instance_storage_configs=[_direct_storage(s) for s in g.storage] or None,
            training_plan_arn=g.training_plan_arn,
            image_id=g.image_id,
        )
        for g in spec.groups
    ]
    slurm: dict[str, Any] = {}
    if spec.strategy is not None:
        slurm["slurm_config_strategy"] = spec.strategy.value
    if spec.accounting is not None:
        slurm["accounting_database"] = C.ClusterAccountingDatabaseProperty(
            endpoint=spec.accounting.endpoint,
            secret_arn=SECRET_ARN,
            name=spec.accounting.name,
            port=spec.accounting.port,
        )
    app = new_app(outdir=str(outdir)) if outdir is not None else new_app()
    stack = Stack(app, "Direct")
    C(
        stack,
        "Cluster",
        cluster_name=name,
        instance_groups=groups,
        node_provisioning_mode=(
            "Continuous" if spec.mode is NodeProvisioningMode.CONTINUOUS else None
        ),
        node_recovery=spec.recovery.value,
        orchestrator=(
            C.OrchestratorProperty(slurm=C.ClusterOrchestratorSlurmConfigProperty(**slurm))
            if slurm
            else None
        ),
        vpc_config=(
            C.VpcConfigProperty(
                security_group_ids=[security_group_id(i) for i in range(spec.vpc[0])],
                subnets=[subnet_id(i) for i in range(spec.vpc[1])],
            )
            if spec.vpc is not None
            else None
        ),
        tags=[CfnTag(key=k, value=v) for k, v in sorted(spec.tags)] or None,
    )
    _, cluster = only(app.synth().get_stack_by_name("Direct").template, CLUSTER_TYPE)
    properties: dict[str, Any] = cluster["Properties"]
    return properties


# -- the oracle ---------------------------------------------------------------------------------

_lint_cache: dict[str, list[str]] = {}


def schema_findings(properties: dict[str, Any]) -> list[str]:
    """cfn-lint's findings for one cluster resource with these properties (memoized)."""
    key = json.dumps(properties, sort_keys=True)
    if key not in _lint_cache:
        template = {"Resources": {"Cluster": {"Type": CLUSTER_TYPE, "Properties": properties}}}
        matches = [m for m in cfn_lint(template) if not any(ignore(m) for ignore in IGNORED)]
        _lint_cache[key] = describe_matches(matches).splitlines() if matches else []
    return _lint_cache[key]


def canonical(properties: dict[str, Any]) -> str:
    body = dict(properties)
    if "Tags" in body:
        body["Tags"] = sorted(body["Tags"], key=lambda t: (t["Key"], t["Value"]))
    return json.dumps(body, sort_keys=True)


@dataclass
class Stats:
    examples: int = 0
    library_accepted: int = 0
    schema_rejected: int = 0
    seconds: float = 0.0


def check(spec: ClusterSpec, outdir: Path, stats: Stats | None = None) -> bool:
    """Assert A, B, B' and C for ``spec``; return cfn-lint's verdict on the direct render.

    Both apps synthesize into ``outdir`` (one folder for all, instead of a temporary folder
    per app that nobody deletes)."""
    started = time.perf_counter()
    library = library_render(spec, outdir)
    name = spec.name if spec.name is not None else UNNAMED
    if spec.name is None and library.properties is not None:
        name = library.properties["ClusterName"]  # the library derives one from the path
    direct = direct_render(spec, name, outdir)
    direct_findings = schema_findings(direct)
    stats = stats if stats is not None else Stats()
    stats.examples += 1
    stats.library_accepted += library.accepted
    stats.schema_rejected += bool(direct_findings)
    try:
        if library.accepted:
            assert library.properties is not None
            library_findings = (
                direct_findings
                if canonical(library.properties) == canonical(direct)
                else schema_findings(library.properties)
            )
            assert not library_findings, (
                "A: the library accepted a cluster cfn-lint rejects:\n"
                + "\n".join(library_findings)
                + f"\n{spec}"
            )
            assert not direct_findings, (
                "B: cfn-lint rejects the direct render, the library accepted it:\n"
                + "\n".join(direct_findings)
                + f"\n{spec}"
            )
            assert canonical(library.properties) == canonical(direct), (
                f"C: the library rendered other props than given:\n{spec}"
            )
            off_model = api_model.violations(library.properties)
            assert not off_model, (
                "D: the library accepted a cluster the API model rejects:\n"
                + "\n".join(off_model)
                + f"\n{spec}"
            )
        elif not direct_findings:
            unexplained = sorted(library.rules - STRICTER_BY_DESIGN.keys())
            assert not unexplained, (
                f"B': the library rejects {unexplained}, which cfn-lint accepts:\n{spec}"
            )
    finally:
        stats.seconds += time.perf_counter() - started
    return not direct_findings


# -- random configurations ----------------------------------------------------------------------

# Each random configuration is a *valid* cluster (values drawn up to the limits) with 0..2
# *mutations* that break one rule each (just past a limit, a bad pattern, or a HyperPod rule
# the schema cannot express). Drawing every field from valid and invalid values alike would
# make nearly every configuration invalid many times over, and test little.

_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
_word = st.text(_ALNUM, min_size=1, max_size=4)
valid_names = st.one_of(
    st.lists(_word, min_size=1, max_size=3).map("-".join),
    st.sampled_from(["a" * 63, "A1" + "-b" * 30 + "c", "x--y", "7"]),
)
bad_names = st.one_of(
    st.sampled_from(["a" * 64, "-a", "a-", "a_b", "a.b", "gpü", "a b"]),
    st.tuples(_word, st.sampled_from("_.:/ ü+"), _word).map("".join),
)
VALID_TYPES = [
    "ml.m5.xlarge",
    "ml.c5.4xlarge",
    "ml.p5.48xlarge",
    "ml.g5.2xlarge",
    "ml.trn1.32xlarge",
    "ml.p6-b200.48xlarge",
    "ml.g7e.2xlarge",
]
TYPES_21 = tuple(sorted(known_names())[:21])
"""21 distinct types the API knows: one more than InstanceRequirements takes."""
valid_kms = st.sampled_from([None, None, KMS_ARN, "alias/aws/ebs", "", "k" * 2048])
valid_paths = st.sampled_from([None, "/fsx", "/a/b-c.d_e", "/" + "a" * 1023])
valid_plans = st.sampled_from(
    [None, None, PLAN_PREFIX + "p" * 4, PLAN_PREFIX + "p" * (2048 - len(PLAN_PREFIX))]
)
valid_images = st.sampled_from([None, None, "ami-0123456789abcdef0", "ami-01234567", "default"])


@st.composite
def valid_storage(draw: st.DrawFn, fsx: bool) -> StorageSpec:
    kind = draw(st.sampled_from(["ebs", "fsx_lustre", "fsx_open_zfs"] if fsx else ["ebs"]))
    if kind == "ebs":
        if draw(st.integers(0, 3)) == 0:  # a root volume: no size, a key (API reference)
            return StorageSpec("ebs", size_gib=None, root_volume=True, kms_key_id=KMS_ARN)
        return StorageSpec(
            "ebs",
            size_gib=draw(st.one_of(st.integers(1, 16384), st.just(16384))),
            root_volume=draw(st.sampled_from([None, False])),
            kms_key_id=draw(valid_kms),
        )
    return StorageSpec(
        kind,
        dns_name=draw(st.sampled_from([FSX_DNS, DNS_275])),
        mount_name=draw(st.sampled_from(["abcdefgh", "fsx_1-a", "m"])),
        mount_path=draw(valid_paths),
    )


@st.composite
def valid_group(
    draw: st.DrawFn, name: str, node_type: NodeType, fsx: bool, gated: bool
) -> GroupSpec:
    count = draw(st.one_of(st.integers(0, 16), st.just(6758)))
    if node_type is NodeType.CONTROLLER and gated:  # Continuous mode: one controller node
        count = draw(st.integers(0, 1))
    compute = node_type is NodeType.COMPUTE
    itype = draw(st.sampled_from(VALID_TYPES))
    catalogued = HyperPodInstanceType.of(itype)
    connectivity = catalogued.is_accelerated and bool(catalogued.efa_capable)
    all_checks = [(), (), tuple(DeepHealthCheck), *[(c,) for c in DeepHealthCheck]]
    return GroupSpec(
        name=name,
        node_type=node_type,
        instance_type=itype,
        count=count,
        minimum=draw(st.one_of(st.none(), st.integers(0, count))) if gated else None,
        # A Compute group may have no partition (API ClusterSlurmConfig: only NodeType).
        partition=draw(st.one_of(valid_names, st.just("p" * 1024), st.none())) if compute else None,
        threads=draw(st.sampled_from([None, 1, 2])),
        checks=draw(  # InstanceConnectivity only where it can run (HP-DHC-CONNECTIVITY)
            st.sampled_from(
                all_checks if connectivity else [(), (), (DeepHealthCheck.INSTANCE_STRESS,)]
            )
        ),
        storage=tuple(draw(st.lists(valid_storage(fsx), max_size=2))),
        training_plan_arn=draw(valid_plans),
        image_id=draw(valid_images),
        instance_types=tuple(
            draw(
                st.one_of(
                    st.just([]),
                    st.lists(st.sampled_from(VALID_TYPES), min_size=1, max_size=3, unique=True),
                )
            )
        ),
        auto_patch=draw(st.sampled_from([None, None, *AutoPatchStrategy])),
    )


@st.composite
def valid_cluster(draw: st.DrawFn) -> ClusterSpec:
    mode = draw(
        st.sampled_from([NodeProvisioningMode.CONTINUOUS] * 3 + [NodeProvisioningMode.STANDARD])
    )
    continuous = mode is NodeProvisioningMode.CONTINUOUS
    vpc = draw(st.one_of(st.none(), st.tuples(st.integers(1, 5), st.integers(1, 16))))
    layout = [NodeType.CONTROLLER] + [NodeType.LOGIN] * draw(st.integers(0, 1))
    layout += [NodeType.COMPUTE] * draw(st.integers(1, 2))
    groups = tuple(
        draw(valid_group(f"{kind.value.lower()}{i}", kind, vpc is not None, continuous))
        for i, kind in enumerate(layout)
    )
    if draw(st.booleans()):  # one group with a drawn (valid) name instead of a plain one
        index = draw(st.integers(0, len(groups) - 1))
        groups = tuple(
            replace(g, name=draw(valid_names)) if i == index else g for i, g in enumerate(groups)
        )
    return ClusterSpec(
        groups=groups,
        name=draw(st.one_of(st.none(), valid_names)),
        mode=mode,
        recovery=draw(st.sampled_from(list(NodeRecovery))),
        vpc=vpc,
        lifecycle=draw(
            st.one_of(
                st.none(),
                st.builds(
                    LifecycleSpec,
                    prefix=st.sampled_from(["", "hyperpod", "a/b", URI_1024]),
                    on_create=st.sampled_from(["on_create.sh", "x" * 128]),
                ),
            )
        ),
        strategy=None if continuous else draw(st.sampled_from([None, *SlurmConfigStrategy])),
        accounting=draw(
            st.one_of(
                st.none(),
                st.builds(
                    AccountingSpec,
                    endpoint=st.sampled_from(
                        ["slurm-db.example.com", "db", "a" * 63 + ".example.com"]
                    ),
                    name=st.sampled_from([None, "slurm_acct_db", "acct$1", "a" * 64]),
                    port=st.sampled_from([None, 1, 3306, 65535]),
                ),
            )
        )
        if continuous
        else None,
        tags=tuple(
            sorted(
                draw(
                    st.dictionaries(
                        st.sampled_from(
                            ["project", "k" * 128, "team/ml:x=y+z@a-b_c.d", "aws-cost"]
                        ),
                        st.sampled_from(["llm", "", "v" * 256, "a b"]),
                        max_size=3,
                    )
                ).items()
            )
        ),
    )


Mutation = Callable[[st.DrawFn, ClusterSpec], ClusterSpec]


def _on_group(change: Callable[[st.DrawFn, GroupSpec], dict[str, Any]]) -> Mutation:
    def mutate(draw: st.DrawFn, spec: ClusterSpec) -> ClusterSpec:
        index = draw(st.integers(0, len(spec.groups) - 1))
        groups = list(spec.groups)
        groups[index] = replace(groups[index], **change(draw, groups[index]))
        return replace(spec, groups=tuple(groups))

    return mutate


def _on_storage(change: Callable[[st.DrawFn], StorageSpec]) -> Mutation:
    return _on_group(lambda draw, g: {"storage": (*g.storage, change(draw))})


def _on_cluster(change: Callable[[st.DrawFn, ClusterSpec], dict[str, Any]]) -> Mutation:
    return lambda draw, spec: replace(spec, **change(draw, spec))


def _pick(*values: Any) -> Callable[[st.DrawFn], Any]:
    return lambda draw: draw(st.sampled_from(values))


MUTATIONS: dict[str, Mutation] = {
    "cluster name": _on_cluster(lambda d, s: {"name": d(st.one_of(bad_names, st.just("")))}),
    "group name": _on_group(lambda d, g: {"name": d(bad_names)}),
    "duplicate name": lambda d, s: replace(s, groups=(*s.groups, replace(s.groups[-1]))),
    "partition": _on_group(
        lambda d, g: {"partition": d(st.one_of(bad_names, st.sampled_from(["", "p" * 1025, None])))}
    ),
    "instance type": _on_group(
        lambda d, g: {
            "instance_type": _pick("ml.p5", "p5.48xlarge", "ML.P5.48XLARGE", "ml.p5.48xlarge ")(d)
        }
    ),
    "count": _on_group(lambda d, g: {"count": _pick(-1, 6759)(d), "minimum": None}),
    "minimum": _on_group(lambda d, g: {"minimum": _pick(-1, 6759, g.count + 1)(d)}),
    "threads": _on_group(lambda d, g: {"threads": _pick(0, 3, -1)(d)}),
    "checks": _on_group(
        lambda d, g: {
            "checks": d(
                st.lists(st.sampled_from(list(DeepHealthCheck)), min_size=3, max_size=4).map(tuple)
            )
        }
    ),
    "repeated check": _on_group(lambda d, g: {"checks": (DeepHealthCheck.INSTANCE_STRESS,) * 2}),
    "storage count": _on_group(lambda d, g: {"storage": (StorageSpec("ebs"),) * 5}),
    "ebs size": _on_storage(lambda d: StorageSpec("ebs", size_gib=_pick(0, 16385)(d))),
    "kms key": _on_storage(
        lambda d: StorageSpec("ebs", kms_key_id=_pick("bad key!", "k" * 2049)(d))
    ),
    "fsx dns": _on_storage(
        lambda d: StorageSpec(
            "fsx_lustre", dns_name=_pick("fs-0123.fsx.x", "files.example.com", DNS_276)(d)
        )
    ),
    "fsx mount name": _on_storage(
        lambda d: StorageSpec("fsx_lustre", mount_name=_pick("abcdefghi", "ab c", "")(d))
    ),
    "fsx mount path": _on_storage(
        lambda d: StorageSpec(
            _pick("fsx_lustre", "fsx_open_zfs")(d),
            mount_path=_pick("/fsx/", "fsx", "//fsx", "/", "", "/" + "a" * 1024)(d),
        )
    ),
    "training plan": _on_group(
        lambda d, g: {
            "training_plan_arn": _pick(
                PLAN_PREFIX + "ppp",
                PLAN_PREFIX + "p" * (2049 - len(PLAN_PREFIX)),
                "arn:aws:sagemaker:us-east-1:12345:training-plan/reserved-capacity-for-training",
                "arn:aws:iam::123456789012:role/not-a-training-plan-but-long-enough-xx",
            )(d)
        }
    ),
    "instance types": _on_group(lambda d, g: {"instance_types": TYPES_21}),
    "image id": _on_group(
        lambda d, g: {
            "image_id": _pick(
                "ami-0123456789",
                "ami-0123456789ABCDEF0",
                "ami-0123456",
                "ami-0123456789abcdef01",
                "Default",
                "ami-xyz12345",
                "",
            )(d)
        }
    ),
    "controllers": lambda d, s: replace(
        s,
        groups=tuple(
            replace(g, node_type=NodeType.COMPUTE, partition="c")
            if g.node_type is NodeType.CONTROLLER
            else g
            for g in s.groups
        )
        if d(st.booleans())
        else (*s.groups, GroupSpec("second-controller", NodeType.CONTROLLER)),
    ),
    "multi-head": lambda d, s: replace(
        s,
        groups=tuple(
            replace(g, count=d(st.integers(2, 3))) if g.node_type is NodeType.CONTROLLER else g
            for g in s.groups
        ),
    ),
    "logins": lambda d, s: replace(
        s,
        groups=(
            *s.groups,
            GroupSpec("login-a", NodeType.LOGIN),
            GroupSpec("login-b", NodeType.LOGIN),
        ),
    ),
    "provisioning mode": _on_cluster(
        lambda d, s: {
            "mode": NodeProvisioningMode.STANDARD
            if s.mode is NodeProvisioningMode.CONTINUOUS
            else NodeProvisioningMode.CONTINUOUS,
            "strategy": d(st.sampled_from(list(SlurmConfigStrategy))),
            "accounting": AccountingSpec(),
        }
    ),
    "vpc": _on_cluster(lambda d, s: {"vpc": _pick((6, 1), (1, 17), (6, 17))(d)}),
    "lifecycle": _on_cluster(
        lambda d, s: {
            "lifecycle": d(
                st.builds(
                    LifecycleSpec,
                    bucket=st.sampled_from(["sagemaker-lifecycle-scripts", "lifecycle-scripts"]),
                    prefix=st.sampled_from(["hyperpod", URI_1024 + "p"]),
                    on_create=st.sampled_from(["on_create.sh", "x" * 129, "", "dir/x.sh"]),
                )
            )
        }
    ),
    "accounting": _on_cluster(
        lambda d, s: {
            "accounting": d(
                st.builds(
                    AccountingSpec,
                    endpoint=st.sampled_from(
                        ["slurm-db.example.com", "bad_host", "-db.example", "a" * 64]
                    ),
                    name=st.sampled_from([None, "bad-name", "a" * 65, ""]),
                    port=st.sampled_from([None, 0, 65536, -1]),
                )
            )
        }
    ),
    "tags": _on_cluster(
        lambda d, s: {
            "tags": tuple(
                sorted(
                    {
                        **dict(s.tags),
                        **d(
                            st.dictionaries(
                                st.sampled_from(["k" * 129, "", "bad<key>", "project"]),
                                st.sampled_from(["v" * 257, "a,b", "ok"]),
                                min_size=1,
                                max_size=2,
                            )
                        ),
                    }.items()
                )
            )
        }
    ),
    "many tags": _on_cluster(lambda d, s: {"tags": tuple((f"k{i}", "v") for i in range(51))}),
}


@st.composite
def clusters(draw: st.DrawFn) -> ClusterSpec:
    spec = draw(valid_cluster())
    for name in draw(st.lists(st.sampled_from(sorted(MUTATIONS)), max_size=2)):
        spec = MUTATIONS[name](draw, spec)
    return spec


@pytest.fixture(scope="module")
def outdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("differential")


RANDOM_CLUSTERS = 300
"""Random clusters ``make test-deep`` tries (the same 300 on every machine and every run)."""
SAMPLED_CLUSTERS = 50
"""Random clusters ``make test`` tries: a sample drawn from the run's seed
(tests/support/depth.py)."""


@pytest.mark.deep
def test_library_and_schema_agree_on_random_clusters(outdir: Path) -> None:
    stats = Stats()
    count = examples(RANDOM_CLUSTERS, SAMPLED_CLUSTERS)

    @settings(
        max_examples=count,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(spec=clusters())
    def agree(spec: ClusterSpec) -> None:
        check(spec, outdir, stats)

    agree()
    assert stats.examples >= count, stats
    # The generator is useful only if it lands on both sides of the limits. Its rates are
    # asserted on the fixed set of a deep run: on a random sample they are random too (37 of
    # a sample of 150 accepted is 4 % below the bound while the set's rate is well above it).
    if DEEP:
        assert 0.25 < stats.library_accepted / stats.examples < 0.85, stats
        assert 0.15 < stats.schema_rejected / stats.examples < 0.75, stats
    else:
        assert 0 < stats.library_accepted < stats.examples, stats
        assert 0 < stats.schema_rejected < stats.examples, stats


# -- hand-picked boundaries ---------------------------------------------------------------------


def _group(index: int, **changes: Any) -> Callable[[ClusterSpec], ClusterSpec]:
    def mutate(spec: ClusterSpec) -> ClusterSpec:
        groups = list(spec.groups)
        groups[index] = replace(groups[index], **changes)
        return replace(spec, groups=tuple(groups))

    return mutate


def _cluster(**changes: Any) -> Callable[[ClusterSpec], ClusterSpec]:
    return lambda spec: replace(spec, **changes)


def _many_groups(count: int) -> Callable[[ClusterSpec], ClusterSpec]:
    def mutate(spec: ClusterSpec) -> ClusterSpec:
        extra = tuple(
            GroupSpec(f"c{i}", NodeType.COMPUTE, count=1, partition=f"c{i}")
            for i in range(count - 1)
        )
        return replace(spec, groups=(spec.groups[0], *extra))

    return mutate


def _many_login_groups(spec: ClusterSpec) -> ClusterSpec:
    """BASELINE with two login groups (and its controller kept first)."""
    controller = GroupSpec("controller", NodeType.CONTROLLER, "ml.m5.xlarge", 1)
    return replace(spec, groups=(controller, *spec.groups))


GPU = 2  # index of the compute group in BASELINE
EBS = StorageSpec("ebs")
LUSTRE = StorageSpec("fsx_lustre")
IN_VPC = _cluster(vpc=(1, 1))

BOUNDARIES: list[tuple[str, list[Callable[[ClusterSpec], ClusterSpec]], bool]] = [
    # (id, mutations of BASELINE, does the schema accept the result?)
    ("baseline", [], True),
    ("cluster-name-63", [_cluster(name="c" * 63)], True),
    ("cluster-name-64", [_cluster(name="c" * 64)], False),
    ("cluster-name-empty", [_cluster(name="")], False),
    ("cluster-name-underscore", [_cluster(name="a_b")], False),
    ("group-name-64", [_group(GPU, name="g" * 64)], False),
    ("group-name-trailing-hyphen", [_group(GPU, name="gpu-")], False),
    ("groups-100", [_many_groups(100)], True),
    ("groups-101", [_many_groups(101)], False),
    ("count-6758", [_group(GPU, count=6758)], True),
    ("count-6759", [_group(GPU, count=6759, minimum=None)], False),
    ("count-negative", [_group(GPU, count=-1, minimum=None)], False),
    ("min-negative", [_group(GPU, minimum=-1)], False),
    ("threads-0", [_group(GPU, threads=0)], False),
    ("threads-2", [_group(GPU, threads=2)], True),
    ("threads-3", [_group(GPU, threads=3)], False),
    ("partition-64", [_group(GPU, partition="p" * 64)], True),
    ("partition-1024", [_group(GPU, partition="p" * 1024)], True),
    ("partition-1025", [_group(GPU, partition="p" * 1025)], False),
    ("partition-bad", [_group(GPU, partition="gpu_a")], False),
    ("ebs-0", [_group(GPU, storage=(replace(EBS, size_gib=0),))], False),
    ("ebs-16384", [_group(GPU, storage=(replace(EBS, size_gib=16384),))], True),
    ("ebs-16385", [_group(GPU, storage=(replace(EBS, size_gib=16385),))], False),
    ("kms-2048", [_group(GPU, storage=(replace(EBS, kms_key_id="k" * 2048),))], True),
    ("kms-2049", [_group(GPU, storage=(replace(EBS, kms_key_id="k" * 2049),))], False),
    ("storage-4", [_group(GPU, storage=(EBS,) * 4)], True),
    ("storage-5", [_group(GPU, storage=(EBS,) * 5)], False),
    ("fsx-dns-275", [IN_VPC, _group(GPU, storage=(replace(LUSTRE, dns_name=DNS_275),))], True),
    ("fsx-dns-276", [IN_VPC, _group(GPU, storage=(replace(LUSTRE, dns_name=DNS_276),))], False),
    (
        "mount-path-1024",
        [IN_VPC, _group(GPU, storage=(replace(LUSTRE, mount_path="/" + "a" * 1023),))],
        True,
    ),
    (
        "mount-path-1025",
        [IN_VPC, _group(GPU, storage=(replace(LUSTRE, mount_path="/" + "a" * 1024),))],
        False,
    ),
    ("mount-name-9", [IN_VPC, _group(GPU, storage=(replace(LUSTRE, mount_name="m" * 9),))], False),
    ("dhc-both", [_group(GPU, checks=tuple(DeepHealthCheck))], True),
    ("plan-50", [_group(GPU, training_plan_arn=PLAN_PREFIX + "p" * (50 - len(PLAN_PREFIX)))], True),
    (
        "plan-49",
        [_group(GPU, training_plan_arn=PLAN_PREFIX + "p" * (49 - len(PLAN_PREFIX)))],
        False,
    ),
    (
        "plan-2048",
        [_group(GPU, training_plan_arn=PLAN_PREFIX + "p" * (2048 - len(PLAN_PREFIX)))],
        True,
    ),
    (
        "plan-2049",
        [_group(GPU, training_plan_arn=PLAN_PREFIX + "p" * (2049 - len(PLAN_PREFIX)))],
        False,
    ),
    ("flexible-1", [_group(GPU, instance_types=TYPES_21[:1])], True),
    ("flexible-20", [_group(GPU, instance_types=TYPES_21[:20])], True),
    ("flexible-21", [_group(GPU, instance_types=TYPES_21)], False),
    ("auto-patch", [_group(GPU, auto_patch=AutoPatchStrategy.WHEN_ALL_IDLE)], True),
    ("image-8-hex", [_group(GPU, image_id="ami-01234567")], True),
    ("image-17-hex", [_group(GPU, image_id="ami-0123456789abcdef0")], True),
    ("image-default", [_group(GPU, image_id="default")], True),
    ("image-10-hex", [_group(GPU, image_id="ami-0123456789")], False),
    ("image-uppercase", [_group(GPU, image_id="ami-0123456789ABCDEF0")], False),
    ("image-18-hex", [_group(GPU, image_id="ami-0123456789abcdef01")], False),
    ("security-groups-5", [_cluster(vpc=(5, 1))], True),
    ("security-groups-6", [_cluster(vpc=(6, 1))], False),
    ("subnets-16", [_cluster(vpc=(1, 16))], True),
    ("subnets-17", [_cluster(vpc=(1, 17))], False),
    ("on-create-128", [_cluster(lifecycle=LifecycleSpec(on_create="x" * 128))], True),
    ("on-create-129", [_cluster(lifecycle=LifecycleSpec(on_create="x" * 129))], False),
    ("source-uri-1024", [_cluster(lifecycle=LifecycleSpec(prefix=URI_1024))], True),
    ("source-uri-1025", [_cluster(lifecycle=LifecycleSpec(prefix=URI_1024 + "p"))], False),
    ("db-port-65535", [_cluster(accounting=AccountingSpec(port=65535))], True),
    ("db-port-0", [_cluster(accounting=AccountingSpec(port=0))], False),
    ("db-port-65536", [_cluster(accounting=AccountingSpec(port=65536))], False),
    ("db-name-64", [_cluster(accounting=AccountingSpec(name="a" * 64))], True),
    ("db-name-65", [_cluster(accounting=AccountingSpec(name="a" * 65))], False),
    ("db-name-hyphen", [_cluster(accounting=AccountingSpec(name="slurm-acct"))], False),
    ("db-endpoint-underscore", [_cluster(accounting=AccountingSpec(endpoint="bad_host"))], False),
    ("tag-key-128", [_cluster(tags=(("k" * 128, "v"),))], True),
    ("tag-key-129", [_cluster(tags=(("k" * 129, "v"),))], False),
    ("tag-key-empty", [_cluster(tags=(("", "v"),))], False),
    ("tag-value-256", [_cluster(tags=(("k", "v" * 256),))], True),
    ("tag-value-257", [_cluster(tags=(("k", "v" * 257),))], False),
    ("tag-value-comma", [_cluster(tags=(("k", "a,b"),))], False),
    ("tags-50", [_cluster(tags=tuple((f"k{i}", "v") for i in range(50)))], True),
    ("tags-51", [_cluster(tags=tuple((f"k{i}", "v") for i in range(51)))], False),
]


def _apply(mutations: list[Callable[[ClusterSpec], ClusterSpec]]) -> ClusterSpec:
    spec = BASELINE
    for mutate in mutations:
        spec = mutate(spec)
    return spec


@pytest.mark.deep(sample=20)
@pytest.mark.parametrize(
    ("mutations", "schema_accepts"),
    [pytest.param(m, ok, id=case) for case, m, ok in BOUNDARIES],
)
def test_library_and_schema_agree_at_the_limits(
    mutations: list[Callable[[ClusterSpec], ClusterSpec]], schema_accepts: bool, outdir: Path
) -> None:
    spec = _apply(mutations)
    assert check(spec, outdir) is schema_accepts, "the case is on the side of the limit it claims"


STRICTER_CASES: list[tuple[str, list[Callable[[ClusterSpec], ClusterSpec]]]] = [
    ("HP-CONTROLLER-REQUIRED", [_group(0, node_type=NodeType.COMPUTE, partition="c")]),
    ("HP-GROUP-UNIQUE", [_group(1, name="gpu", node_type=NodeType.COMPUTE, partition="a")]),
    ("HP-MIN-ABOVE-COUNT", [_group(GPU, minimum=5)]),
    ("HP-MIN-NEEDS-CONTINUOUS", [_cluster(mode=NodeProvisioningMode.STANDARD)]),
    (
        "HP-ACCOUNTING-NEEDS-CONTINUOUS",
        [
            _group(GPU, minimum=None),
            _cluster(mode=NodeProvisioningMode.STANDARD, accounting=AccountingSpec()),
        ],
    ),
    ("HP-EBS-ROOT-VOLUME", [_group(GPU, storage=(replace(EBS, root_volume=True),))]),
    ("HP-EBS-ROOT-VOLUME", [_group(GPU, storage=(replace(EBS, size_gib=None, root_volume=True),))]),
    ("HP-DHC-DISTINCT", [_group(GPU, checks=(DeepHealthCheck.INSTANCE_STRESS,) * 2)]),
    ("HP-INSTANCE-TYPE", [_group(GPU, instance_type="p5.48xlarge")]),
    ("HP-LIFECYCLE", [_cluster(lifecycle=LifecycleSpec(prefix="scripts/../other"))]),
    ("HP-CONTROLLER-COUNT", [_group(0, count=0)]),
    (
        "HP-DHC-CONNECTIVITY",
        [
            _group(
                GPU, instance_type="ml.c5.xlarge", checks=(DeepHealthCheck.INSTANCE_CONNECTIVITY,)
            )
        ],
    ),
    ("HP-LIFECYCLE", [_cluster(lifecycle=LifecycleSpec(on_create="dir/setup.sh"))]),
    ("HP-CONTROLLER-ONE", [_group(1, node_type=NodeType.CONTROLLER)]),
    ("HP-LOGIN-MAX", [_group(0, node_type=NodeType.LOGIN), _many_login_groups]),
    ("HP-PARTITION-HEAD-NODE", [_group(1, partition="login")]),
    ("HP-FSX-NEEDS-VPC", [_group(GPU, storage=(LUSTRE,))]),
    ("HP-MULTI-HEAD-IN-CONTINUOUS", [_group(0, count=2)]),
    ("HP-STRATEGY-IN-CONTINUOUS", [_cluster(strategy=SlurmConfigStrategy.MERGE)]),
]


@pytest.mark.parametrize(
    ("rule", "mutations"), [pytest.param(r, m, id=r) for r, m in STRICTER_CASES]
)
def test_stricter_by_design_rules_reject_what_the_schema_accepts(
    rule: str, mutations: list[Callable[[ClusterSpec], ClusterSpec]], outdir: Path
) -> None:
    spec = _apply(mutations)
    assert check(spec, outdir), "the schema accepts it: only the library knows this rule"
    verdict = library_render(spec, outdir)
    assert not verdict.accepted and rule in verdict.rules, verdict


def test_every_stricter_by_design_rule_has_a_case() -> None:
    assert {rule for rule, _ in STRICTER_CASES} == set(STRICTER_BY_DESIGN)

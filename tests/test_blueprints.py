"""Blueprints: the two example blueprint stacks (snapshots, cdk-nag, what they build), argument
errors, and the policy the blueprints bake in.

Update the snapshots after an intended change:
``pytest tests/test_blueprints.py --snapshot-update``.
"""

from __future__ import annotations

import json
from dataclasses import fields, replace
from pathlib import Path
from typing import Any, ClassVar

import pytest
from aws_cdk import Aspects, Stack, Tags
from aws_cdk import aws_ec2 as ec2
from aws_cdk.cx_api import CloudAssembly
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.json import JSONSnapshotExtension

from examples.blueprints import ACME_PLATFORM, AcmeFsdpCluster, AcmeMegatronCluster
from hyperpod_constructs import (
    HyperPodInstanceType,
    HyperPodSlurmCluster,
    HyperPodValidationError,
    InstanceGroup,
    MinCountGateOptions,
)
from hyperpod_constructs.blueprints import (
    ARGUMENT_RULE,
    SIZING_RULE,
    BlueprintDefaults,
    FsdpTrainingCluster,
    FsdpTrainingClusterProps,
    MegatronTrainingCluster,
    MegatronTrainingClusterProps,
    TrainingClusterOptions,
    TrainingClusterProps,
)
from hyperpod_constructs.sizing import FsdpLayout, MegatronLayout
from tests.conftest import new_app
from tests.support.synth_result import synth
from tests.template_utils import normalize_asset_hashes, only, resources, statements

T = HyperPodInstanceType
BLUEPRINT_STACKS = ("FsdpBlueprint", "MegatronBlueprint")


@pytest.fixture
def json_snapshot(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(JSONSnapshotExtension)


def compute(template: dict[str, Any]) -> dict[str, Any]:
    _, cluster = only(template, "AWS::SageMaker::Cluster")
    (group,) = [
        g
        for g in cluster["Properties"]["InstanceGroups"]
        if g["SlurmConfig"]["NodeType"] == "Compute"
    ]
    return dict(group)


def tags(template: dict[str, Any]) -> dict[str, str]:
    _, cluster = only(template, "AWS::SageMaker::Cluster")
    return {tag["Key"]: tag["Value"] for tag in cluster["Properties"]["Tags"]}


# -- the example stacks ---------------------------------------------------------------------


GATE_PREFIX = "ClusterMinCountGate"
GATE_INTERNALS = "<MinCountGate internals: snapshotted by tests/test_snapshots.py>"


def blueprint_view(template: dict[str, Any]) -> dict[str, Any]:
    """The template with asset hashes normalized (they change with handler sources) and the
    readiness gate's resources reduced to their types: the gate is the gate owners' snapshot,
    and its internals must not churn the blueprint's."""
    resources_ = {
        logical_id: {"Type": resource["Type"], "Properties": GATE_INTERNALS}
        if logical_id.startswith(GATE_PREFIX)
        else resource
        for logical_id, resource in template["Resources"].items()
    }
    view: dict[str, Any] = normalize_asset_hashes({**template, "Resources": resources_})
    return view


def test_the_snapshot_view_hides_only_gate_internals_and_hashes() -> None:
    template = {
        "Resources": {
            "ClusterMinCountGateWait1": {"Type": "W", "Properties": {"Timeout": "1"}},
            "Fn": {"Type": "F", "Properties": {"Code": {"S3Key": f"{'ab' * 32}.zip"}}},
            "ClusterEB0386A7": {"Type": "C", "Properties": {"Name": "n"}},
        },
        "Rules": {"R": 1},
    }
    assert blueprint_view(template) == {
        "Resources": {
            "ClusterMinCountGateWait1": {"Type": "W", "Properties": GATE_INTERNALS},
            "Fn": {"Type": "F", "Properties": {"Code": {"S3Key": "<asset-hash-1>.zip"}}},
            "ClusterEB0386A7": {"Type": "C", "Properties": {"Name": "n"}},
        },
        "Rules": {"R": 1},
    }


@pytest.mark.parametrize("stack_name", BLUEPRINT_STACKS)
def test_blueprint_stack_matches_its_snapshot(
    stack_name: str,
    example_templates: dict[str, dict[str, Any]],
    json_snapshot: SnapshotAssertion,
) -> None:
    view = blueprint_view(example_templates[stack_name])
    gate = [r for logical_id, r in view["Resources"].items() if logical_id.startswith(GATE_PREFIX)]
    assert len(gate) >= 5 and all(r["Properties"] == GATE_INTERNALS for r in gate)
    assert "<asset-hash-1>" in json.dumps(view)  # the VPC's custom resource handler
    assert view == json_snapshot


def test_blueprint_stacks_pass_cdk_nag_and_the_policy(example_assembly: CloudAssembly) -> None:
    # The fixture synthesized with AwsSolutionsChecks: it would have raised on any
    # unacknowledged finding or policy error. The report must not name our stacks either.
    report = Path(example_assembly.directory) / "validation-report.json"
    if report.exists():
        for plugin in json.loads(report.read_text())["pluginReports"]:
            for violation in plugin["violations"]:
                paths = [c["constructPath"] for c in violation["violatingConstructs"]]
                assert not [p for p in paths if p.split("/")[0] in BLUEPRINT_STACKS], violation
    for stack_name in BLUEPRINT_STACKS:
        messages = example_assembly.get_stack_by_name(stack_name).messages
        assert [m.entry.data for m in messages if "[HPP-" in str(m.entry.data)] == []


@pytest.mark.parametrize(
    ("stack_name", "instance_type", "count", "minimum", "layout"),
    [
        ("FsdpBlueprint", "ml.p5.48xlarge", 9, 8, "FSDP dp=64"),
        ("MegatronBlueprint", "ml.p5en.48xlarge", 16, 16, "Megatron tp=8 pp=4 dp=4"),
    ],
)
def test_blueprint_sizes_and_gates_the_compute_group(
    stack_name: str,
    instance_type: str,
    count: int,
    minimum: int,
    layout: str,
    example_templates: dict[str, dict[str, Any]],
) -> None:
    template = example_templates[stack_name]
    group = compute(template)
    assert (group["InstanceType"], group["InstanceCount"], group["MinInstanceCount"]) == (
        instance_type,
        count,
        minimum,
    )
    assert group["OnStartDeepHealthChecks"] == ["InstanceStress", "InstanceConnectivity"]
    assert group["ThreadsPerCore"] == 1
    assert len(resources(template, "AWS::CloudFormation::WaitCondition")) == 1  # gated
    assert tags(template) == {
        **ACME_PLATFORM.tags,
        "team": tags(template)["team"],
        "cost-center": tags(template)["cost-center"],
        "hyperpod:layout": layout,
        "hyperpod:blueprint": "AcmeFsdpCluster" if "Fsdp" in stack_name else "AcmeMegatronCluster",
    }


@pytest.mark.parametrize("stack_name", BLUEPRINT_STACKS)
def test_every_volume_uses_the_rotated_customer_key(
    stack_name: str, example_templates: dict[str, dict[str, Any]]
) -> None:
    template = example_templates[stack_name]
    key_id, key = only(template, "AWS::KMS::Key")
    assert key["Properties"]["EnableKeyRotation"] is True
    _, cluster = only(template, "AWS::SageMaker::Cluster")
    volumes = [
        config["EbsVolumeConfig"]
        for group in cluster["Properties"]["InstanceGroups"]
        for config in group["InstanceStorageConfigs"]
    ]
    assert [v["VolumeKmsKeyId"] for v in volumes] == [{"Fn::GetAtt": [key_id, "Arn"]}] * 3
    assert [v["VolumeSizeInGB"] for v in volumes] == [100, 100, 500]
    role = cluster["Properties"]["InstanceGroups"][0]["ExecutionRole"]["Fn::GetAtt"][0]
    grants = [s for s in statements(template, role) if s.get("Sid", "").startswith("HyperPodVol")]
    assert sorted(g["Action"] for g in grants) == ["kms:CreateGrant", "kms:DescribeKey"]
    assert [g["Resource"] for g in grants] == [{"Fn::GetAtt": [key_id, "Arn"]}] * 2


# -- building blueprints in tests ---------------------------------------------------------

NO_GATE = MinCountGateOptions(enabled=False)


def imported_vpc(stack: Stack) -> ec2.IVpc:
    return ec2.Vpc.from_vpc_attributes(
        stack,
        "Vpc",
        vpc_id="vpc-0example",
        availability_zones=["us-east-1a"],
        private_subnet_ids=["subnet-0example"],
    )


def build_error(make: Any) -> HyperPodValidationError:
    stack = Stack(new_app(), "S")
    with pytest.raises(HyperPodValidationError) as caught:
        make(stack, imported_vpc(stack))
    assert caught.value.path == "S/Cluster"
    return caught.value


@pytest.mark.parametrize(
    ("make", "rule", "expected_text"),
    [
        (
            lambda s, v: AcmeMegatronCluster(
                s,
                "Cluster",
                MegatronTrainingClusterProps(
                    vpc=v, tensor_parallel=3, data_parallel=8, tags={"team": "t"}
                ),
            ),
            SIZING_RULE,
            "tensor_parallel (Megatron tp=3 pp=1 dp=8 on ml.p5.48xlarge) = 3 is not "
            "allowed; allowed: a divisor of 8 (the accelerators per instance). Fix: use "
            "tensor_parallel=2 or 4",
        ),
        (
            lambda s, v: AcmeFsdpCluster(
                s, "Cluster", FsdpTrainingClusterProps(vpc=v, data_parallel=100)
            ),
            SIZING_RULE,
            "Fix: use data_parallel=96 or 104 (96 = 12 instances, 104 = 13 instances)",
        ),
        (
            lambda s, v: AcmeFsdpCluster(
                s, "Cluster", FsdpTrainingClusterProps(vpc=v, data_parallel=96, shard_group_size=7)
            ),
            SIZING_RULE,
            "shard_group_size (FSDP layout) = 7",
        ),
        (
            lambda s, v: AcmeMegatronCluster(
                s,
                "Cluster",
                MegatronTrainingClusterProps(vpc=v, tensor_parallel=0, data_parallel=8),
            ),
            SIZING_RULE,
            "tensor_parallel=0 must be a positive whole number",
        ),
        (
            lambda s, v: AcmeFsdpCluster(
                s,
                "Cluster",
                FsdpTrainingClusterProps(vpc=v, data_parallel=64, instance_type=T.ML_P4D_24XLARGE),
            ),
            ARGUMENT_RULE,
            "instance_type = 'ml.p4d.24xlarge' is not allowed; allowed: "
            "ml.p5.48xlarge, ml.p5en.48xlarge",
        ),
        (
            lambda s, v: AcmeFsdpCluster(
                s, "Cluster", FsdpTrainingClusterProps(vpc=v, data_parallel=64, spare_instances=5)
            ),
            ARGUMENT_RULE,
            "spare_instances = 5 is not allowed; allowed: 0..4",
        ),
        (
            lambda s, v: AcmeFsdpCluster(
                s, "Cluster", FsdpTrainingClusterProps(vpc=v, data_parallel=64, spare_instances=-1)
            ),
            ARGUMENT_RULE,
            "spare_instances = -1",
        ),
        (
            lambda s, v: AcmeFsdpCluster(
                s,
                "Cluster",
                FsdpTrainingClusterProps(vpc=v, data_parallel=64, tags={"org": "not-acme"}),
            ),
            ARGUMENT_RULE,
            "tags['org'] = 'not-acme' is not allowed; allowed: 'acme' (set by acme-ml-platform)",
        ),
        (
            lambda s, v: AcmeFsdpCluster(
                s,
                "Cluster",
                FsdpTrainingClusterProps(vpc=v, data_parallel=64, tags={"hyperpod:layout": "mine"}),
            ),
            ARGUMENT_RULE,
            "the blueprint sets this tag",
        ),
        (
            lambda s, v: AcmeFsdpCluster(
                s,
                "Cluster",
                FsdpTrainingClusterProps(vpc=v, data_parallel=64, instance_type="ml.p5.48xlarge"),
            ),
            "HP-ARG-TYPE",
            "instance_type = 'ml.p5.48xlarge' is not allowed; allowed: a HyperPodInstanceType "
            "(got str). Fix: use HyperPodInstanceType.of('ml.p5.48xlarge') or a constant",
        ),
    ],
)
def test_invalid_arguments_fail_before_anything_is_built(
    make: Any, rule: str, expected_text: str
) -> None:
    error = build_error(make)
    assert rule in [f.rule for f in error.findings]
    assert expected_text in str(error)


def test_all_argument_problems_are_reported_together() -> None:
    error = build_error(
        lambda s, v: AcmeMegatronCluster(
            s,
            "Cluster",
            MegatronTrainingClusterProps(
                vpc=v, tensor_parallel=3, data_parallel=5, spare_instances=9
            ),
        )
    )
    assert sorted(f.field.split(" ")[0] for f in error.findings) == [
        "data_parallel",
        "spare_instances",
        "tensor_parallel",
    ]


class Lean(FsdpTrainingCluster):
    """A platform without login node, volume encryption or gate, for fast synths."""

    DEFAULTS: ClassVar[BlueprintDefaults] = BlueprintDefaults(
        name="lean",
        login_instance_type=None,
        encrypt_volumes=False,
        compute_instance_types=(T.ML_G5_48XLARGE, T.of("ml.p9.96xlarge")),
        required_tags=("team",),
        gate=NO_GATE,
    )


def test_the_blueprint_policy_requires_the_team_tag(tmp_path: Path) -> None:
    app = new_app(outdir=str(tmp_path))
    stack = Stack(app, "S")
    lean = Lean(
        stack, "Cluster", FsdpTrainingClusterProps(vpc=imported_vpc(stack), data_parallel=16)
    )
    assert lean.volume_key is None
    assert [g.name for g in lean.instance_groups] == ["controller", "train"]
    assert (lean.compute_group.instance_count, lean.compute_group.min_instance_count) == (2, 2)
    assert lean.min_count_gate is None
    assert synth(app, tmp_path).errors() == [
        "[HPP-TAGS] lean: tag 'team' is missing. Fix: pass tags={'team': "
        "'<value>'} to the cluster, or Tags.of(scope).add('team', '<value>')"
    ]


def test_a_tag_from_the_app_satisfies_the_blueprint_policy(tmp_path: Path) -> None:
    app = new_app(outdir=str(tmp_path))
    stack = Stack(app, "S")
    Lean(stack, "Cluster", FsdpTrainingClusterProps(vpc=imported_vpc(stack), data_parallel=16))
    Tags.of(app).add("team", "vision")
    assert synth(app, tmp_path).errors() == []


def test_unknown_accelerator_counts_need_an_explicit_count() -> None:
    stack = Stack(new_app(), "S")
    vpc = imported_vpc(stack)
    with pytest.raises(HyperPodValidationError, match="pass accelerators_per_instance="):
        Lean(
            stack,
            "Cluster",
            FsdpTrainingClusterProps(
                vpc=vpc, data_parallel=32, instance_type=T.of("ml.p9.96xlarge")
            ),
        )
    lean = Lean(
        stack,
        "Cluster2",
        FsdpTrainingClusterProps(
            vpc=vpc,
            data_parallel=32,
            instance_type=T.of("ml.p9.96xlarge"),
            accelerators_per_instance=16,
        ),
    )
    assert lean.compute_group.min_instance_count == 2
    assert lean.world_size == 32
    assert lean.layout == FsdpLayout(32)


def test_megatron_blueprint_exposes_its_layout() -> None:
    stack = Stack(new_app(), "S")

    class LeanMegatron(MegatronTrainingCluster):
        DEFAULTS = Lean.DEFAULTS

    cluster = LeanMegatron(
        stack,
        "Cluster",
        MegatronTrainingClusterProps(
            vpc=imported_vpc(stack),
            tensor_parallel=4,
            pipeline_parallel=2,
            context_parallel=2,
            data_parallel=2,
        ),
    )
    assert cluster.layout == MegatronLayout(4, 2, 2, 2)
    assert cluster.compute_group.instance_type == T.ML_G5_48XLARGE
    assert (cluster.compute_group.instance_count, cluster.world_size) == (4, 32)


def test_the_platform_policy_also_holds_hand_built_clusters(tmp_path: Path) -> None:
    app = new_app(outdir=str(tmp_path))
    Aspects.of(app).add(ACME_PLATFORM.policy())
    HyperPodSlurmCluster(
        Stack(app, "S"),
        "Cluster",
        tags={"team": "x", "cost-center": "y"},
        instance_groups=[
            InstanceGroup.controller("c", instance_type=T.ML_M5_2XLARGE),
            InstanceGroup.compute(
                "gpu",
                instance_type=T.ML_P4D_24XLARGE,
                partition="gpu",
                instance_count=2,
                min_instance_count=2,
            ),
        ],
    )
    errors = synth(app, tmp_path).errors()
    assert sorted(e.split("]")[0][1:] for e in errors) == [
        "HPP-DEEP-HEALTH",
        "HPP-INSTANCE-TYPE",
        "HPP-VPC",
    ]


def test_defaults_reject_contradictions() -> None:
    with pytest.raises(ValueError, match="compute_instance_types must not be empty"):
        BlueprintDefaults(compute_instance_types=())
    with pytest.raises(ValueError, match="team are set in tags and required from ML teams"):
        BlueprintDefaults(tags={"team": "platform"}, required_tags=("team",))


def test_defaults_policy_mirrors_the_defaults() -> None:
    policy = ACME_PLATFORM.policy()
    assert policy.name == "acme-ml-platform"
    assert [r.rule_id for r in policy.rules] == [
        "HPP-INSTANCE-TYPE",
        "HPP-MAX-COUNT",
        "HPP-MIN-FLOOR",
        "HPP-DEEP-HEALTH",
        "HPP-TAGS",
        "HPP-EBS-KMS",
        "HPP-VPC",
    ]
    assert ACME_PLATFORM.allowed_instance_types() == (
        T.ML_M5_2XLARGE,
        T.ML_M5_XLARGE,
        T.ML_P5_48XLARGE,
        T.ML_P5EN_48XLARGE,
    )
    assert [r.rule_id for r in Lean.DEFAULTS.policy().rules] == [
        "HPP-INSTANCE-TYPE",
        "HPP-DEEP-HEALTH",
        "HPP-TAGS",
        "HPP-VPC",
    ]


def test_every_blueprints_props_extend_one_options_class() -> None:
    stack = Stack(new_app(), "S")
    vpc = imported_vpc(stack)
    fsdp = FsdpTrainingClusterProps(
        vpc=vpc,
        data_parallel=32,
        instance_type=T.ML_G5_48XLARGE,
        accelerators_per_instance=4,
        spare_instances=1,
        tags={"team": "t"},
        cluster_name="c",
        partition="p",
    )
    assert isinstance(fsdp, TrainingClusterOptions)
    assert isinstance(
        MegatronTrainingClusterProps(vpc=vpc, tensor_parallel=2, data_parallel=2),
        TrainingClusterOptions,
    )
    props = fsdp.with_layout(FsdpLayout(32))
    assert isinstance(props, TrainingClusterProps)
    assert props.layout == FsdpLayout(32)
    for option in fields(TrainingClusterOptions):
        assert getattr(props, option.name) == getattr(fsdp, option.name), option.name


# -- an existing estate: everything imported by id or attributes -----------------------------


class Encrypted(Lean):
    """The lean platform with its volume key (granted to the execution role)."""

    DEFAULTS: ClassVar[BlueprintDefaults] = replace(Lean.DEFAULTS, encrypt_volumes=True)


ESTATE_ROLE = "arn:aws:iam::111111111111:role/org/hyperpod-execution"
ESTATE_PLAN = "arn:aws:sagemaker:us-east-1:111111111111:training-plan/org-plan"
ESTATE_DNS = "fs-0123456789abcdef0.fsx.us-east-1.amazonaws.com"


def _estate(stack: Stack, *, role_mutable: bool) -> FsdpTrainingClusterProps:
    """An existing VPC, subnet, security group, FSx for Lustre file system, execution role,
    lifecycle scripts in S3 and training plan, all imported without a lookup."""
    from aws_cdk import aws_fsx as fsx
    from aws_cdk import aws_iam as iam

    from hyperpod_constructs import InstanceStorage, LifecycleScripts

    fsx_group = ec2.SecurityGroup.from_security_group_id(stack, "FsxSg", "sg-0f5000000000000a0")
    shared = fsx.LustreFileSystem.from_lustre_file_system_attributes(
        stack,
        "Shared",
        dns_name=ESTATE_DNS,
        file_system_id="fs-0123456789abcdef0",
        security_group=fsx_group,
    )
    return FsdpTrainingClusterProps(
        vpc=imported_vpc(stack),
        vpc_subnets=ec2.SubnetSelection(
            subnets=[ec2.Subnet.from_subnet_id(stack, "Subnet", "subnet-0e5000000000000a0")]
        ),
        security_groups=[
            ec2.SecurityGroup.from_security_group_id(stack, "NodesSg", "sg-0e5000000000000a0")
        ],
        execution_role=iam.Role.from_role_arn(stack, "Role", ESTATE_ROLE, mutable=role_mutable),
        storage=[InstanceStorage.lustre_file_system(shared, mount_name="abcdefgh")],
        lifecycle_scripts=LifecycleScripts.from_s3_uri(
            "s3://sagemaker-org-scripts/lifecycle/", on_create="on_create.sh"
        ),
        training_plan_arn=ESTATE_PLAN,
        tags={"team": "vision"},
        data_parallel=16,
    )


def _synth_estate(tmp_path: Path, *, role_mutable: bool) -> Any:
    """The encrypted blueprint on the estate, synthesized (it must succeed)."""
    app = new_app(outdir=str(tmp_path))
    stack = Stack(app, "S", env={"account": "111111111111", "region": "us-east-1"})
    Encrypted(stack, "Cluster", _estate(stack, role_mutable=role_mutable))
    result = synth(app, tmp_path)
    assert result.succeeded, result.error
    return result


def test_a_blueprint_builds_on_an_existing_estate(tmp_path: Path) -> None:
    result = _synth_estate(tmp_path, role_mutable=True)
    template = json.loads((tmp_path / "S.template.json").read_text())
    _, cluster = only(template, "AWS::SageMaker::Cluster")
    properties = cluster["Properties"]
    assert properties["VpcConfig"] == {
        "SecurityGroupIds": ["sg-0e5000000000000a0"],
        "Subnets": ["subnet-0e5000000000000a0"],
    }
    groups = {group["InstanceGroupName"]: group for group in properties["InstanceGroups"]}
    lustre = {"DnsName": ESTATE_DNS, "MountName": "abcdefgh"}
    for group in groups.values():  # the shared file system on every group, after the volume
        assert group["ExecutionRole"] == ESTATE_ROLE
        assert group["InstanceStorageConfigs"][1] == {"FsxLustreConfig": lustre}
    assert groups["train"]["TrainingPlanArn"] == ESTATE_PLAN
    assert "TrainingPlanArn" not in groups["controller"]
    assert not any(role["Type"] == "AWS::IAM::Role" for role in template["Resources"].values())
    # The file system's Lustre ports, opened to the nodes' security group as for an owned one.
    ingress = [
        rule["Properties"]
        for rule in resources(template, "AWS::EC2::SecurityGroupIngress").values()
        if rule["Properties"]["GroupId"] == "sg-0f5000000000000a0"
    ]
    assert [(r["FromPort"], r["ToPort"], r["SourceSecurityGroupId"]) for r in ingress] == [
        (988, 1023, "sg-0e5000000000000a0")
    ]
    # The volume key's statements reach the imported role (a policy attached by CDK).
    granted = [
        action
        for policy in resources(template, "AWS::IAM::Policy").values()
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
        for action in (
            [statement["Action"]] if isinstance(statement["Action"], str) else statement["Action"]
        )
    ]
    assert "kms:CreateGrant" in granted
    assert [w for _, _, w in [r for r in result.found if r[0] == "warning"] if "HP-" in w] == []


def test_an_immutable_estate_role_is_one_warning_naming_all_it_lacks(tmp_path: Path) -> None:
    result = _synth_estate(tmp_path, role_mutable=False)
    (warning,) = [text for kind, _, text in result.found if "HP-WARN-ROLE-IMMUTABLE" in text]
    assert "S/Role" in warning
    for missing in ("the network-interface actions", "the use of the volume key"):
        assert missing in warning

"""Unresolved CDK tokens (parameters, imports, attributes of other resources).

A check that cannot evaluate a token skips it: no error, no crash, and the token reaches the
template unchanged. Concrete values next to a token are still checked.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App, CfnParameter, Duration, Fn, Size, Stack
from aws_cdk import aws_s3 as s3
from aws_cdk.assertions import Match, Template

from hyperpod_constructs import (
    DeepHealthCheck,
    HyperPodInstanceType,
    HyperPodSlurmCluster,
    InstanceGroup,
    InstanceStorage,
    LifecycleScripts,
    MinCountGateOptions,
    NodeProvisioningMode,
)
from hyperpod_constructs.validation import ClusterSpec, validate_cluster, validate_group
from tests.support.estate import imported_vpc as vpc
from tests.support.findings import errors_in, report_of
from tests.support.groups import Groups

CPU = HyperPodInstanceType.ML_C5_XLARGE
GPU = HyperPodInstanceType.ML_P5_48XLARGE
CHECKS = (DeepHealthCheck.INSTANCE_STRESS, DeepHealthCheck.INSTANCE_CONNECTIVITY)
FSX_DNS = "fs-0123456789abcdef0.fsx.us-east-1.amazonaws.com"

Build = Callable[[Stack], object]


def number(stack: Stack, name: str) -> Any:
    """A number parameter's value: a token CDK encodes as a (huge negative) float."""
    return CfnParameter(stack, name, type="Number").value_as_number


def text(stack: Stack, name: str) -> str:
    return CfnParameter(stack, name).value_as_string


GROUPS = Groups(controller_type=CPU, compute_type=GPU, deep_health_checks=CHECKS)
controller, compute = GROUPS.controller, GROUPS.compute


def cluster(stack: Stack, *groups: InstanceGroup, **props: Any) -> HyperPodSlurmCluster:
    chosen = list(groups) or [controller(), compute()]
    return HyperPodSlurmCluster(stack, "Cluster", instance_groups=chosen, **props)


def group(make: Callable[[Stack], dict[str, Any]]) -> Build:
    """A cluster whose compute group ``gpu`` gets the props ``make(stack)`` returns."""
    return lambda stack: cluster(stack, controller(), compute(**make(stack)))


def fsx_with_tokens(stack: Stack) -> object:
    storage = [
        InstanceStorage.fsx_lustre(
            dns_name=Fn.import_value("FsxDns"), mount_name=Fn.import_value("FsxMount")
        ),
        InstanceStorage.ebs(volume_size=Size.gibibytes(100), kms_key_id=Fn.import_value("Key")),
    ]
    return cluster(stack, controller(), compute(storage=storage), vpc=vpc(stack))


def groups_like(fragment: dict[str, Any]) -> dict[str, Any]:
    return {"InstanceGroups": Match.array_with([Match.object_like(fragment)])}


def s3_uri(bucket_name: Any) -> dict[str, Any]:
    return {"Fn::Join": ["", ["s3://", bucket_name, "/"]]}


# -- a token is skipped and reaches the template unchanged -------------------------------

# fmt: off
PASSES = [
    pytest.param(group(lambda s: {"instance_count": number(s, "Count")}),
                 groups_like({"InstanceCount": {"Ref": "Count"}}), id="instance_count-parameter"),
    pytest.param(group(lambda s: {"min_instance_count": number(s, "Min")}),
                 groups_like({"MinInstanceCount": {"Ref": "Min"}, "InstanceCount": 4}),
                 id="min_instance_count-parameter"),
    pytest.param(group(lambda s: {"instance_count": number(s, "Count"),
                                  "min_instance_count": number(s, "Min")}),
                 groups_like({"MinInstanceCount": {"Ref": "Min"},
                              "InstanceCount": {"Ref": "Count"}}),
                 id="both-counts-parameters"),
    pytest.param(group(lambda s: {"partition": Fn.import_value("Partition")}),
                 groups_like({"SlurmConfig": {
                     "NodeType": "Compute", "PartitionNames": [{"Fn::ImportValue": "Partition"}]}}),
                 id="partition-import"),
    pytest.param(group(lambda s: {"training_plan_arn": Fn.import_value("Plan")}),
                 groups_like({"TrainingPlanArn": {"Fn::ImportValue": "Plan"}}),
                 id="training-plan-import"),
    pytest.param(group(lambda s: {"threads_per_core": number(s, "Threads")}),
                 groups_like({"ThreadsPerCore": {"Ref": "Threads"}}), id="threads-parameter"),
    pytest.param(group(lambda s: {"image_id": text(s, "Ami")}),
                 groups_like({"ImageId": {"Ref": "Ami"}}), id="image-id-parameter"),
    pytest.param(group(lambda s: {"instance_type": HyperPodInstanceType.of(text(s, "Type"))}),
                 groups_like({"InstanceType": {"Ref": "Type"}}), id="instance-type-parameter"),
    pytest.param(lambda s: cluster(s, controller(), compute(Fn.import_value("GroupName"))),
                 groups_like({"InstanceGroupName": {"Fn::ImportValue": "GroupName"}}),
                 id="group-name-import"),
    pytest.param(group(lambda s: {"storage": [
                     InstanceStorage.ebs(volume_size=Size.gibibytes(number(s, "Size")))]}),
                 groups_like({"InstanceStorageConfigs": [
                     {"EbsVolumeConfig": {"VolumeSizeInGB": {"Ref": "Size"}}}]}),
                 id="ebs-size-parameter"),
    pytest.param(fsx_with_tokens,
                 groups_like({"InstanceStorageConfigs": [
                     {"FsxLustreConfig": {"DnsName": {"Fn::ImportValue": "FsxDns"},
                                          "MountName": {"Fn::ImportValue": "FsxMount"}}},
                     {"EbsVolumeConfig": {"VolumeSizeInGB": 100,
                                          "VolumeKmsKeyId": {"Fn::ImportValue": "Key"}}}]}),
                 id="fsx-dns-mount-name-kms-imports"),
    pytest.param(lambda s: cluster(s, cluster_name=text(s, "Name")),
                 {"ClusterName": {"Ref": "Name"}}, id="cluster-name-parameter"),
    pytest.param(group(lambda s: {"lifecycle_scripts": LifecycleScripts.from_s3(
                     s3.Bucket(s, "Scripts"), on_create="on_create.sh")}),
                 groups_like({"LifeCycleConfig": {"SourceS3Uri": s3_uri({"Ref": Match.any_value()}),
                                                  "OnCreate": "on_create.sh"}}),
                 id="from_s3-bucket-with-generated-name"),
    pytest.param(lambda s: cluster(s, lifecycle_scripts=LifecycleScripts.from_s3(
                     s3.Bucket.from_bucket_name(s, "Scripts", Fn.import_value("Bucket")),
                     on_create="on_create.sh")),
                 groups_like({"LifeCycleConfig": {
                     "SourceS3Uri": s3_uri({"Fn::ImportValue": "Bucket"}),
                     "OnCreate": "on_create.sh"}}),
                 id="from_s3-imported-bucket-name"),
]
# fmt: on


@pytest.mark.parametrize(("build", "expected"), PASSES)
def test_token_is_skipped_and_rendered(build: Build, expected: dict[str, Any]) -> None:
    stack = Stack(App(), "Test")
    build(stack)
    Template.from_stack(stack).has_resource_properties("AWS::SageMaker::Cluster", expected)


def test_rules_return_nothing_for_a_group_made_of_tokens() -> None:
    stack = Stack(App(), "Test")
    tokens = InstanceGroup.compute(
        Fn.import_value("Name"),
        instance_type=HyperPodInstanceType.of(text(stack, "Type")),
        partition=Fn.import_value("Partition"),
        instance_count=number(stack, "Count"),
        min_instance_count=number(stack, "Min"),
        threads_per_core=number(stack, "Threads"),
        training_plan_arn=Fn.import_value("Plan"),
        image_id=Fn.import_value("Ami"),
        deep_health_checks=CHECKS,
        storage=[
            InstanceStorage.ebs(
                volume_size=Size.gibibytes(number(stack, "Size")),
                kms_key_id=Fn.import_value("Key"),
            ),
            InstanceStorage.fsx_open_zfs(
                dns_name=Fn.import_value("Dns"), mount_path=Fn.import_value("Path")
            ),
        ],
        lifecycle_scripts=LifecycleScripts.from_s3(
            s3.Bucket.from_bucket_name(stack, "B", Fn.import_value("Bucket")),
            on_create=Fn.import_value("OnCreate"),
        ),
    )
    assert validate_group(tokens) == []
    spec = ClusterSpec(
        name=text(stack, "ClusterName"),
        mode=NodeProvisioningMode.CONTINUOUS,
        groups=[controller(), tokens, compute(Fn.import_value("Other"))],
        has_vpc=True,
        security_group_count=1,
        subnet_count=1,
    )
    assert validate_cluster(spec) == []


# -- concrete values next to tokens are still checked ------------------------------------

# fmt: off
STILL_CHECKED = [
    pytest.param(group(lambda s: {"instance_count": number(s, "Count"), "min_instance_count": -1}),
                 "HP-MIN-RANGE", "min_instance_count (MinInstanceCount) = -1",
                 id="token-count-negative-min"),
    pytest.param(group(lambda s: {"instance_count": number(s, "Count"),
                                  "min_instance_count": 2.5}),
                 "HP-COUNT-INT", "min_instance_count (MinInstanceCount) = 2.5",
                 id="token-count-float-min"),
    pytest.param(group(lambda s: {"instance_count": 6759, "min_instance_count": number(s, "Min")}),
                 "HP-COUNT-RANGE", "instance_count (InstanceCount) = 6759",
                 id="token-min-count-above-6758"),
    pytest.param(group(lambda s: {"partition": Fn.import_value("P"), "threads_per_core": 3}),
                 "HP-THREADS", "threads_per_core (ThreadsPerCore) = 3",
                 id="token-partition-threads-3"),
    pytest.param(group(lambda s: {"training_plan_arn": Fn.import_value("Plan"),
                                  "image_id": "ami-1"}),
                 "HP-IMAGE-ID", "image_id (ImageId) = 'ami-1'", id="token-plan-bad-image"),
    pytest.param(group(lambda s: {"image_id": Fn.import_value("Ami"),
                                  "training_plan_arn": "arn:aws:sagemaker:::plan"}),
                 "HP-TRAINING-PLAN",
                 "training_plan_arn (TrainingPlanArn) = 'arn:aws:sagemaker:::plan'",
                 id="token-image-bad-plan"),
    pytest.param(lambda s: cluster(s, lifecycle_scripts=LifecycleScripts.from_s3(
                     s3.Bucket(s, "Scripts"), on_create="bin/on_create.sh")),
                 "HP-LIFECYCLE", "lifecycle_scripts.on_create (LifeCycleConfig.OnCreate) = "
                 "'bin/on_create.sh'", id="token-bucket-on_create-with-slash"),
    pytest.param(lambda s: cluster(s, controller(), compute("gpu_nodes"),
                                   cluster_name=text(s, "Name")),
                 "HP-NAME-GROUP", "name (InstanceGroupName) = 'gpu_nodes'",
                 id="token-cluster-name-bad-group-name"),
    pytest.param(lambda s: cluster(s, controller(), compute(Fn.import_value("G"), partition="a_b")),
                 "HP-PARTITION-NAME", "partition (SlurmConfig.PartitionNames) = 'a_b'",
                 id="token-group-name-bad-partition"),
    pytest.param(group(lambda s: {"instance_type": HyperPodInstanceType.of(text(s, "Type")),
                                  "threads_per_core": 0}),
                 "HP-THREADS", "threads_per_core (ThreadsPerCore) = 0",
                 id="token-instance-type-threads-0"),
    pytest.param(group(lambda s: {"storage": [
                     InstanceStorage.ebs(volume_size=Size.gibibytes(number(s, "Size"))),
                     InstanceStorage.ebs(volume_size=Size.gibibytes(0),
                                         kms_key_id=Fn.import_value("Key"))]}),
                 "HP-EBS-SIZE", "= '0 GiB'", id="token-ebs-next-to-0-gib"),
    pytest.param(lambda s: cluster(s, controller(), compute(storage=[InstanceStorage.fsx_lustre(
                     dns_name=Fn.import_value("Dns"), mount_name="abc", mount_path="/fsx/")]),
                     vpc=vpc(s)),  # FSx needs the cluster's VPC (HP-FSX-NEEDS-VPC)
                 "HP-MOUNT-PATH", "= '/fsx/'", id="token-fsx-dns-bad-mount-path"),
    pytest.param(group(lambda s: {"storage": [
                     InstanceStorage.ebs(volume_size=Size.tebibytes(number(s, "Size")))]}),
                 "HP-EBS-SIZE", "= 'a token in a unit other than GiB'",
                 id="token-ebs-size-in-tebibytes"),
]
# fmt: on


@pytest.mark.parametrize(("build", "rule", "text_"), STILL_CHECKED)
def test_concrete_values_next_to_tokens_are_checked(build: Build, rule: str, text_: str) -> None:
    stack = Stack(App(), "Test")
    build(stack)
    rules = [finding.rule for finding in errors_in(stack)]
    assert rules == [rule]
    assert text_ in report_of(stack)


@pytest.mark.parametrize(
    ("groups", "rule"),
    [
        pytest.param(
            lambda: [controller(), compute(Fn.import_value("G")), compute(), compute()],
            "HP-GROUP-UNIQUE",
            id="token-name-next-to-duplicates",
        ),
        pytest.param(
            lambda: [
                InstanceGroup.compute(
                    Fn.import_value("C"), instance_type=CPU, instance_count=1, partition="p"
                )
            ],
            "HP-CONTROLLER-REQUIRED",
            id="token-named-compute-group-is-no-controller",
        ),
    ],
)
def test_cross_group_rules_still_see_concrete_values(
    groups: Callable[[], list[InstanceGroup]], rule: str, tmp_path: Path
) -> None:
    app = App(outdir=str(tmp_path))
    cluster(Stack(app, "Test"), *groups())
    with pytest.raises(RuntimeError, match=rf"\[Test/Cluster\] .*\[{rule}\]"):
        app.synth()
    assert list(tmp_path.rglob("*.template.json")) == []


# -- tokens that reach the readiness gate ------------------------------------------------


def _fails_with_rule(build: Build, rule: str) -> None:
    """The build reports ``rule`` (not a crash), and the synth fails with it."""
    app = App()
    stack = Stack(app, "Test")
    build(stack)
    assert [finding.rule for finding in errors_in(stack)] == [rule]
    with pytest.raises(RuntimeError, match=rf"\[{rule}\]"):
        app.synth()


def _gated_by_parameters(stack: Stack, *, minimum: str = "GpuMin") -> None:
    count = number(stack, "GpuCount")
    cluster(
        stack,
        controller(),
        compute(instance_count=count, min_instance_count=number(stack, minimum)),
        compute(
            "cpu", instance_type=CPU, partition="cpu", deep_health_checks=(), min_instance_count=1
        ),
    )


def _gate_of(build: Callable[[Stack], None]) -> tuple[dict[str, Any], str, dict[str, Any]]:
    """The arm resource's properties, the wait condition's logical id and the synth's
    warnings (rule ids) of a cluster ``build`` defines."""
    app = App()
    stack = Stack(app, "Test")
    build(stack)
    template = Template.from_stack(stack).to_json()
    ((_, arm),) = [
        (k, v) for k, v in template["Resources"].items() if v["Type"].startswith("Custom::")
    ]
    ((condition, _),) = [
        (k, v)
        for k, v in template["Resources"].items()
        if v["Type"] == "AWS::CloudFormation::WaitCondition"
    ]
    return arm["Properties"], condition, template


def test_token_counts_of_a_gated_group_reach_the_gate_as_references() -> None:
    properties, condition, template = _gate_of(_gated_by_parameters)
    assert properties["Requirements"] == [
        {"GroupName": "cpu", "MinCount": "1", "TargetCount": "4"},
        {"GroupName": "gpu", "MinCount": {"Ref": "GpuMin"}, "TargetCount": {"Ref": "GpuCount"}},
    ]
    (group,) = [
        g
        for r in template["Resources"].values()
        if r["Type"] == "AWS::SageMaker::Cluster"
        for g in r["Properties"]["InstanceGroups"]
        if g["InstanceGroupName"] == "gpu"
    ]
    # The gate waits for exactly what the cluster asks HyperPod for.
    assert (group["MinInstanceCount"], group["InstanceCount"]) == (
        properties["Requirements"][1]["MinCount"],
        properties["Requirements"][1]["TargetCount"],
    )
    # The EventBridge fast path carries no counts: it reads them from the running execution.
    (rule,) = [r for r in template["Resources"].values() if r["Type"] == "AWS::Events::Rule"]
    assert rule["Properties"]["Targets"][0]["Input"] == '{"fastPath": true}'
    # The logical ids depend on which parameters the counts name, not on creation order.
    assert _gate_of(_gated_by_parameters)[1] == condition
    assert _gate_of(lambda s: _gated_by_parameters(s, minimum="OtherMin"))[1] != condition


def test_token_counts_of_a_gated_group_synthesize_with_one_warning() -> None:
    app = App()
    stack = Stack(app, "Test")
    _gated_by_parameters(stack)
    warnings = [
        m.entry.data
        for m in app.synth().get_stack_by_name("Test").messages
        if "HP-WARN-GATE-TOKEN-COUNT" in str(m.entry.data)
    ]
    assert len(warnings) == 1
    assert str(warnings[0]).startswith(
        "instance group 'gpu': min_instance_count (MinInstanceCount) and instance_count "
        "(InstanceCount) = <token>: recommended: a number, if an update that changes only"
    )


@pytest.mark.parametrize(
    "unit",
    [
        pytest.param(Duration.seconds, id="seconds"),
        pytest.param(Duration.hours, id="hours"),
    ],
)
def test_token_gate_timeout_is_rejected_clearly(unit: Callable[[float], Duration]) -> None:
    def build(stack: Stack) -> object:
        options = MinCountGateOptions(timeout=unit(number(stack, "Timeout")))
        return cluster(stack, controller(), compute(min_instance_count=2), readiness_gate=options)

    _fails_with_rule(build, "HP-GATE-TOKEN-DURATION")

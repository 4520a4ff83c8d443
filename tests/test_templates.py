"""What HyperPodSlurmCluster renders into CloudFormation, feature by feature."""

from __future__ import annotations

import re
from typing import Any

import pytest
from aws_cdk import CfnOutput, CfnResource, Size, Stack, Token
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3
from aws_cdk.assertions import Template
from constructs import Construct, IConstruct

from hyperpod_constructs import (
    DeepHealthCheck,
    HyperPodInstanceType,
    HyperPodSlurmCluster,
    InstanceGroup,
    InstanceStorage,
    LifecycleScripts,
    NodeProvisioningMode,
    NodeRecovery,
)
from tests.conftest import ROOT, new_app, synth_template
from tests.support.groups import Groups
from tests.template_utils import (
    CLUSTER_TYPE,
    actions,
    as_dict,
    depends_on,
    flatten,
    only,
    references,
    resources,
    statement_resources,
    statements,
)

LIFECYCLE_DIR = str(ROOT / "examples" / "lifecycle")
MANAGED_POLICY = "AmazonSageMakerClusterInstanceRolePolicy"
DESCRIBE_ACTIONS = {
    "sagemaker:DescribeCluster",
    "sagemaker:DescribeClusterNode",
    "sagemaker:ListClusterNodes",
    "sagemaker:ListClusterEvents",
}
ENI_ACTIONS = {"ec2:CreateNetworkInterface", "ec2:DeleteNetworkInterface"}
TRAINING_PLAN = "arn:aws:sagemaker:us-east-1:123456789012:training-plan/reserved-p5-capacity"
IMAGE_ID = "ami-0123456789abcdef0"
KMS_KEY = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
LUSTRE_DNS = "fs-0123456789abcdef0.fsx.us-east-1.amazonaws.com"
ZFS_DNS = "fs-0fedcba9876543210.fsx.us-east-1.amazonaws.com"
IMPORTED_ARN = "arn:aws:sagemaker:us-east-1:123456789012:cluster/abcdef123456"
NAME = re.compile(r"^[a-zA-Z0-9](-*[a-zA-Z0-9])*$")


GROUPS = Groups(
    controller_type=HyperPodInstanceType.ML_M5_XLARGE,
    compute_type=HyperPodInstanceType.ML_C5_4XLARGE,
    instance_count=2,
    partition=None,
    deep_health_checks=(),
)
controller = GROUPS.controller


def cpu(name: str = "cpu", **kwargs: Any) -> InstanceGroup:
    return GROUPS.compute(name, **kwargs)


def cluster_of(template: Template | dict[str, Any]) -> tuple[str, dict[str, Any]]:
    data = as_dict(template) if isinstance(template, Template) else template
    return only(data, CLUSTER_TYPE)


def groups_by_name(template: Template | dict[str, Any]) -> dict[str, dict[str, Any]]:
    _, cluster = cluster_of(template)
    return {g["InstanceGroupName"]: g for g in cluster["Properties"]["InstanceGroups"]}


def subtree_logical_ids(template: dict[str, Any], prefix: str) -> set[str]:
    return {logical_id for logical_id in template["Resources"] if logical_id.startswith(prefix)}


# -- a full-featured cluster, synthesized once ------------------------------------------------


class FullStack(Stack):
    """VPC, lifecycle scripts, tags, per-group role, every per-group field, a late group."""

    def __init__(self, scope: Construct, id: str) -> None:
        super().__init__(scope, id)
        self.vpc = ec2.Vpc(self, "Vpc", max_azs=2)
        self.gpu_role = iam.Role(
            self, "GpuRole", assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com")
        )
        self.cluster = HyperPodSlurmCluster(
            self,
            "Cluster",
            cluster_name="full",
            vpc=self.vpc,
            lifecycle_scripts=LifecycleScripts.from_directory(LIFECYCLE_DIR),
            tags={"team": "ml-platform", "cost-center": "42"},
            instance_groups=[
                controller(
                    threads_per_core=2,
                    storage=[InstanceStorage.ebs(root_volume=True, kms_key_id=KMS_KEY)],
                ),
                InstanceGroup.login("login", instance_type=HyperPodInstanceType.ML_M5_XLARGE),
                InstanceGroup.compute(
                    "gpu",
                    instance_type=HyperPodInstanceType.ML_P5_48XLARGE,
                    instance_count=4,
                    min_instance_count=2,
                    partition="gpu",
                    threads_per_core=1,
                    deep_health_checks=[
                        DeepHealthCheck.INSTANCE_STRESS,
                        DeepHealthCheck.INSTANCE_CONNECTIVITY,
                    ],
                    storage=[
                        InstanceStorage.ebs(volume_size=Size.gibibytes(500), kms_key_id=KMS_KEY),
                        InstanceStorage.fsx_lustre(
                            dns_name=LUSTRE_DNS, mount_name="abcdefgh", mount_path="/fsx"
                        ),
                        InstanceStorage.fsx_open_zfs(dns_name=ZFS_DNS, mount_path="/home"),
                    ],
                    training_plan_arn=TRAINING_PLAN,
                    image_id=IMAGE_ID,
                    execution_role=self.gpu_role,
                ),
                cpu(min_instance_count=0),
            ],
        )
        self.cluster.add_instance_group(cpu("spare", instance_count=1))
        CfnOutput(self, "ClusterArn", value=self.cluster.cluster_arn)
        CfnOutput(self, "ClusterName", value=self.cluster.cluster_name)


@pytest.fixture(scope="module")
def full() -> FullStack:
    return FullStack(new_app(), "Full")


@pytest.fixture(scope="module")
def full_template(full: FullStack) -> dict[str, Any]:
    return as_dict(Template.from_stack(full))


@pytest.fixture(scope="module")
def standard_template() -> dict[str, Any]:
    """No VPC, STANDARD provisioning, no node recovery, no lifecycle scripts."""

    def define(stack: Stack) -> None:
        HyperPodSlurmCluster(
            stack,
            "Cluster",
            cluster_name="standard",
            node_provisioning_mode=NodeProvisioningMode.STANDARD,
            node_recovery=NodeRecovery.NONE,
            instance_groups=[controller(), cpu(min_instance_count=0)],
        )

    return as_dict(synth_template(define))


def logical_id_of(stack: Stack, construct: IConstruct) -> str:
    child = construct.node.default_child
    assert child is not None
    return str(stack.resolve(child.logical_id))  # type: ignore[attr-defined]


# -- instance groups --------------------------------------------------------------------------


def test_groups_are_rendered_in_the_order_they_were_added(full_template: dict[str, Any]) -> None:
    _, cluster = cluster_of(full_template)
    names = [g["InstanceGroupName"] for g in cluster["Properties"]["InstanceGroups"]]
    assert names == ["controller", "login", "gpu", "cpu", "spare"]


def test_group_types_counts_and_slurm_layout(full_template: dict[str, Any]) -> None:
    groups = groups_by_name(full_template)
    expected = {
        "controller": ("ml.m5.xlarge", 1, {"NodeType": "Controller"}),
        "login": ("ml.m5.xlarge", 1, {"NodeType": "Login"}),
        "gpu": ("ml.p5.48xlarge", 4, {"NodeType": "Compute", "PartitionNames": ["gpu"]}),
        "cpu": ("ml.c5.4xlarge", 2, {"NodeType": "Compute", "PartitionNames": ["cpu"]}),
        "spare": ("ml.c5.4xlarge", 1, {"NodeType": "Compute", "PartitionNames": ["spare"]}),
    }
    for name, (instance_type, count, slurm) in expected.items():
        group = groups[name]
        assert group["InstanceType"] == instance_type, name
        assert group["InstanceCount"] == count, name
        assert group["SlurmConfig"] == slurm, name


def test_min_instance_count_is_rendered_only_when_set(full_template: dict[str, Any]) -> None:
    groups = groups_by_name(full_template)
    assert groups["gpu"]["MinInstanceCount"] == 2
    assert groups["cpu"]["MinInstanceCount"] == 0  # explicitly set to 0: rendered as given
    for name in ("controller", "login", "spare"):
        assert "MinInstanceCount" not in groups[name], name


def test_optional_group_fields_are_rendered_only_where_given(
    full_template: dict[str, Any],
) -> None:
    groups = groups_by_name(full_template)
    gpu = groups["gpu"]
    assert gpu["ThreadsPerCore"] == 1
    assert groups["controller"]["ThreadsPerCore"] == 2
    assert gpu["OnStartDeepHealthChecks"] == ["InstanceStress", "InstanceConnectivity"]
    assert gpu["TrainingPlanArn"] == TRAINING_PLAN
    assert gpu["ImageId"] == IMAGE_ID
    for name in ("login", "cpu", "spare"):
        for key in (
            "ThreadsPerCore",
            "OnStartDeepHealthChecks",
            "InstanceStorageConfigs",
            "TrainingPlanArn",
            "ImageId",
        ):
            assert key not in groups[name], (name, key)


def test_instance_storage_ebs_and_fsx(full_template: dict[str, Any]) -> None:
    groups = groups_by_name(full_template)
    assert groups["controller"]["InstanceStorageConfigs"] == [
        {"EbsVolumeConfig": {"RootVolume": True, "VolumeKmsKeyId": KMS_KEY}}
    ]
    assert groups["gpu"]["InstanceStorageConfigs"] == [
        {"EbsVolumeConfig": {"VolumeSizeInGB": 500, "VolumeKmsKeyId": KMS_KEY}},
        {"FsxLustreConfig": {"DnsName": LUSTRE_DNS, "MountName": "abcdefgh", "MountPath": "/fsx"}},
        {"FsxOpenZfsConfig": {"DnsName": ZFS_DNS, "MountPath": "/home"}},
    ]


def test_ebs_size_is_rendered_in_gib() -> None:
    template = synth_template(
        lambda stack: HyperPodSlurmCluster(
            stack,
            "Cluster",
            instance_groups=[
                controller(storage=[InstanceStorage.ebs(volume_size=Size.tebibytes(2))]),
                cpu(),
            ],
        )
    )
    storage = groups_by_name(template)["controller"]["InstanceStorageConfigs"]
    assert storage == [{"EbsVolumeConfig": {"VolumeSizeInGB": 2048}}]


# -- lifecycle scripts ------------------------------------------------------------------------


def test_lifecycle_config_points_every_group_at_the_uploaded_scripts(
    full_template: dict[str, Any],
) -> None:
    bucket_id, bucket = only(full_template, "AWS::S3::Bucket")
    _, upload = only(full_template, "Custom::CDKBucketDeployment")
    assert flatten(bucket["Properties"]["BucketName"]).startswith("sagemaker-")
    assert upload["Properties"]["DestinationBucketName"] == {"Ref": bucket_id}
    prefix = upload["Properties"]["DestinationBucketKeyPrefix"]
    for name, group in groups_by_name(full_template).items():
        config = group["LifeCycleConfig"]
        assert config["OnCreate"] == "on_create.sh", name
        uri = flatten(config["SourceS3Uri"], full_template)
        assert uri.startswith("s3://sagemaker-"), (name, uri)
        # The folder the nodes read is the folder the upload writes.
        assert references(config["SourceS3Uri"]) == {bucket_id}
        assert uri.endswith(f"/{prefix}/"), (name, uri, prefix)


def test_lifecycle_scripts_from_s3_keep_the_bucket_and_prefix() -> None:
    def define(stack: Stack) -> None:
        bucket = s3.Bucket.from_bucket_name(stack, "Scripts", "sagemaker-hp-scripts")
        HyperPodSlurmCluster(
            stack,
            "Cluster",
            lifecycle_scripts=LifecycleScripts.from_s3(
                bucket, on_create="setup.sh", prefix="/hp/scripts/"
            ),
            instance_groups=[controller(), cpu()],
        )

    template = synth_template(define)
    data = as_dict(template)
    for group in groups_by_name(data).values():
        assert group["LifeCycleConfig"] == {
            "SourceS3Uri": "s3://sagemaker-hp-scripts/hp/scripts/",
            "OnCreate": "setup.sh",
        }
    assert not resources(data, "AWS::S3::Bucket")
    assert not resources(data, "Custom::CDKBucketDeployment")
    role_id, _ = only(data, "AWS::IAM::Role")
    granted = {
        frozenset(actions(s)): flatten(statement_resources(s)[0]) for s in statements(data, role_id)
    }
    # Read access to the scripts folder only, not to the whole bucket.
    bucket_arn = "arn:{Ref:AWS::Partition}:s3:::sagemaker-hp-scripts"
    assert granted == {
        frozenset({"s3:GetObject"}): f"{bucket_arn}/hp/scripts/*",
        frozenset({"s3:ListBucket"}): bucket_arn,
    }


def test_lifecycle_scripts_are_optional(standard_template: dict[str, Any]) -> None:
    for group in groups_by_name(standard_template).values():
        assert "LifeCycleConfig" not in group
    assert not resources(standard_template, "AWS::S3::Bucket")


# -- provisioning mode and node recovery ----------------------------------------------------


def test_continuous_provisioning_and_automatic_recovery_by_default(
    full_template: dict[str, Any],
) -> None:
    _, cluster = cluster_of(full_template)
    assert cluster["Properties"]["NodeProvisioningMode"] == "Continuous"
    assert cluster["Properties"]["NodeRecovery"] == "Automatic"
    assert cluster["Properties"]["ClusterName"] == "full"


def test_standard_mode_omits_the_provisioning_mode(standard_template: dict[str, Any]) -> None:
    _, cluster = cluster_of(standard_template)
    assert "NodeProvisioningMode" not in cluster["Properties"]
    assert cluster["Properties"]["NodeRecovery"] == "None"
    assert "Orchestrator" not in cluster["Properties"]
    # MinInstanceCount only exists in Continuous mode, even an explicit 0 is left out.
    assert all("MinInstanceCount" not in g for g in cluster["Properties"]["InstanceGroups"])


# -- network --------------------------------------------------------------------------------


def test_vpc_config_uses_a_self_referencing_security_group_and_private_subnets(
    full: FullStack, full_template: dict[str, Any]
) -> None:
    _, cluster = cluster_of(full_template)
    vpc_config = cluster["Properties"]["VpcConfig"]
    sg_id, sg = only(full_template, "AWS::EC2::SecurityGroup")
    assert vpc_config["SecurityGroupIds"] == [{"Fn::GetAtt": [sg_id, "GroupId"]}]
    assert [(e["CidrIp"], e["IpProtocol"]) for e in sg["Properties"]["SecurityGroupEgress"]] == [
        ("0.0.0.0/0", "-1")
    ]
    _, ingress = only(full_template, "AWS::EC2::SecurityGroupIngress")
    self_ref = {"Fn::GetAtt": [sg_id, "GroupId"]}
    assert ingress["Properties"]["IpProtocol"] == "-1"  # all protocols, all ports
    assert ingress["Properties"]["GroupId"] == self_ref
    assert ingress["Properties"]["SourceSecurityGroupId"] == self_ref
    private = [{"Ref": logical_id_of(full, subnet)} for subnet in full.vpc.private_subnets]
    assert len(private) == 2
    assert vpc_config["Subnets"] == private


def test_explicit_subnets_and_security_groups_are_used_as_given() -> None:
    def define(stack: Stack) -> None:
        vpc = ec2.Vpc(
            stack,
            "Vpc",
            max_azs=2,
            nat_gateways=0,
            subnet_configuration=[
                ec2.SubnetConfiguration(name="a", subnet_type=ec2.SubnetType.PUBLIC),
                ec2.SubnetConfiguration(name="b", subnet_type=ec2.SubnetType.PRIVATE_ISOLATED),
            ],
        )
        group = ec2.SecurityGroup.from_security_group_id(stack, "Sg", "sg-0123456789abcdef0")
        HyperPodSlurmCluster(
            stack,
            "Cluster",
            vpc=vpc,
            vpc_subnets=ec2.SubnetSelection(subnet_group_name="b"),
            security_groups=[group],
            instance_groups=[controller(), cpu()],
        )

    data = as_dict(synth_template(define))
    _, cluster = cluster_of(data)
    vpc_config = cluster["Properties"]["VpcConfig"]
    assert vpc_config["SecurityGroupIds"] == ["sg-0123456789abcdef0"]
    isolated = sorted(k for k in resources(data, "AWS::EC2::Subnet") if k.startswith("Vpcb"))
    assert len(isolated) == 2
    assert sorted(ref["Ref"] for ref in vpc_config["Subnets"]) == isolated
    assert not resources(data, "AWS::EC2::SecurityGroup")


def test_a_given_security_group_and_its_rules_outlive_the_cluster() -> None:
    """Rules added to a security group the app passes in (EFA self-rule, FSx ports) must
    exist before nodes start and be deleted only after the cluster."""

    def define(stack: Stack) -> None:
        vpc = ec2.Vpc(stack, "Vpc", max_azs=1)
        group = ec2.SecurityGroup(stack, "Nodes", vpc=vpc)
        HyperPodSlurmCluster(
            stack, "Cluster", vpc=vpc, security_groups=[group], instance_groups=[controller()]
        )
        group.add_ingress_rule(group, ec2.Port.all_traffic(), "EFA")  # added afterwards

    data = as_dict(synth_template(define))
    _, cluster = cluster_of(data)
    (rule_id,) = resources(data, "AWS::EC2::SecurityGroupIngress")
    (group_id,) = resources(data, "AWS::EC2::SecurityGroup")
    # The group is ordered by the cluster's reference to it (a DependsOn would repeat it:
    # cfn-lint W3005); its rule, which the cluster does not name, by DependsOn.
    assert rule_id in depends_on(cluster)
    assert group_id in references(cluster["Properties"]["VpcConfig"])


def test_no_vpc_config_without_a_vpc(standard_template: dict[str, Any]) -> None:
    _, cluster = cluster_of(standard_template)
    assert "VpcConfig" not in cluster["Properties"]
    assert not resources(standard_template, "AWS::EC2::SecurityGroup")


# -- execution roles ------------------------------------------------------------------------


def _role_with_managed_policy(template: dict[str, Any]) -> str:
    found = [
        logical_id
        for logical_id, role in resources(template, "AWS::IAM::Role").items()
        if any(
            MANAGED_POLICY in flatten(arn)
            for arn in role["Properties"].get("ManagedPolicyArns", [])
        )
    ]
    assert len(found) == 1, found
    return found[0]


def test_default_role_has_the_managed_policy_and_the_eni_policy_with_a_vpc(
    full_template: dict[str, Any],
) -> None:
    role_id = _role_with_managed_policy(full_template)
    role = full_template["Resources"][role_id]
    assert role["Properties"]["AssumeRolePolicyDocument"]["Statement"] == [
        {
            "Action": "sts:AssumeRole",
            "Effect": "Allow",
            "Principal": {"Service": "sagemaker.amazonaws.com"},
            "Condition": {"StringEqualsIfExists": {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}},
        }
    ]
    granted = set().union(*(actions(s) for s in statements(full_template, role_id)))
    assert granted >= ENI_ACTIONS
    groups = groups_by_name(full_template)
    for name in ("controller", "login", "cpu", "spare"):
        assert groups[name]["ExecutionRole"] == {"Fn::GetAtt": [role_id, "Arn"]}, name


def test_default_role_has_no_eni_policy_without_a_vpc(standard_template: dict[str, Any]) -> None:
    role_id = _role_with_managed_policy(standard_template)
    granted = set().union(set(), *(actions(s) for s in statements(standard_template, role_id)))
    assert not {a for a in granted if a.startswith("ec2:")}


def test_a_group_can_bring_its_own_execution_role(
    full: FullStack, full_template: dict[str, Any]
) -> None:
    gpu_role_id = logical_id_of(full, full.gpu_role)
    assert groups_by_name(full_template)["gpu"]["ExecutionRole"] == {
        "Fn::GetAtt": [gpu_role_id, "Arn"]
    }
    _, cluster = cluster_of(full_template)
    assert gpu_role_id in references(cluster["Properties"])  # ordered by the reference


def test_a_group_role_in_a_vpc_gets_the_eni_policy_too(
    full: FullStack, full_template: dict[str, Any]
) -> None:
    """HyperPod assumes each group's own execution role for that group's nodes, so a role the
    app defines needs the network-interface permissions as much as the default role does."""
    gpu_role_id = logical_id_of(full, full.gpu_role)
    granted = set().union(set(), *(actions(s) for s in statements(full_template, gpu_role_id)))
    assert granted >= ENI_ACTIONS
    (policy_id,) = [
        logical_id
        for logical_id, resource in full_template["Resources"].items()
        if resource["Type"] == "AWS::IAM::Policy" and "VpcAccess" in logical_id
    ]
    _, cluster = cluster_of(full_template)
    assert policy_id in depends_on(cluster)


def test_a_group_with_its_own_role_can_read_the_lifecycle_scripts(
    full: FullStack, full_template: dict[str, Any]
) -> None:
    """The gpu nodes run the cluster's lifecycle scripts as the gpu role: it must be able to
    read them, exactly as the default role can."""
    bucket_id, _ = only(full_template, "AWS::S3::Bucket")
    gpu_role_id = logical_id_of(full, full.gpu_role)
    readable = [
        s
        for s in statements(full_template, gpu_role_id)
        if "s3:GetObject" in actions(s)
        and any(bucket_id in references(r) for r in statement_resources(s))
    ]
    assert readable, "the gpu group's execution role cannot read the lifecycle scripts"
    _, cluster = cluster_of(full_template)
    policies = {
        logical_id
        for logical_id, policy in resources(full_template, "AWS::IAM::Policy").items()
        if {"Ref": gpu_role_id} in policy["Properties"]["Roles"]
    }
    assert policies <= depends_on(cluster)


def test_a_cluster_role_given_by_the_user_is_used_for_every_group() -> None:
    def define(stack: Stack) -> None:
        role = iam.Role.from_role_arn(
            stack, "Role", "arn:aws:iam::123456789012:role/hyperpod", mutable=False
        )
        HyperPodSlurmCluster(
            stack, "Cluster", execution_role=role, instance_groups=[controller(), cpu()]
        )

    data = as_dict(synth_template(define))
    assert not resources(data, "AWS::IAM::Role")
    for group in groups_by_name(data).values():
        assert group["ExecutionRole"] == "arn:aws:iam::123456789012:role/hyperpod"


# -- teardown order ---------------------------------------------------------------------------


def test_cluster_depends_on_everything_it_needs_while_being_deleted(
    full_template: dict[str, Any],
) -> None:
    _, cluster = cluster_of(full_template)
    needed = depends_on(cluster) | references(cluster["Properties"])
    role_id = _role_with_managed_policy(full_template)
    role_policies = {
        logical_id
        for logical_id, policy in resources(full_template, "AWS::IAM::Policy").items()
        if {"Ref": role_id} in policy["Properties"]["Roles"]
    }
    assert len(role_policies) == 2  # lifecycle read + VPC network interfaces
    assert role_policies <= depends_on(cluster)
    assert role_id in references(cluster["Properties"])  # ordered by the reference (W3005)
    vpc_resources = subtree_logical_ids(full_template, "Vpc")
    assert len(vpc_resources) > 10, "the VPC, its subnets, routes, gateways..."
    assert vpc_resources <= needed, sorted(vpc_resources - needed)
    upload_id, _ = only(full_template, "Custom::CDKBucketDeployment")
    assert upload_id in depends_on(cluster)


def test_cluster_waits_for_the_efa_ingress_rule(full_template: dict[str, Any]) -> None:
    """Nodes (and the connectivity deep health check) need all traffic within the security
    group from the start, and the rule must outlive the cluster's nodes."""
    _, cluster = cluster_of(full_template)
    ingress_id, _ = only(full_template, "AWS::EC2::SecurityGroupIngress")
    sg_id, _ = only(full_template, "AWS::EC2::SecurityGroup")
    assert sg_id in depends_on(cluster) | references(cluster["Properties"])
    assert ingress_id in depends_on(cluster)


def test_cluster_depends_on_its_role_without_a_vpc(standard_template: dict[str, Any]) -> None:
    _, cluster = cluster_of(standard_template)
    role_id = _role_with_managed_policy(standard_template)
    assert role_id in references(cluster["Properties"])  # ordered by the reference (W3005)
    assert role_id not in depends_on(cluster)


# -- tags -------------------------------------------------------------------------------------


def test_tags_go_on_the_cluster_and_the_resources_it_creates(
    full_template: dict[str, Any],
) -> None:
    expected = [{"Key": "cost-center", "Value": "42"}, {"Key": "team", "Value": "ml-platform"}]
    _, cluster = cluster_of(full_template)
    assert sorted(cluster["Properties"]["Tags"], key=lambda t: t["Key"]) == expected
    role_id = _role_with_managed_policy(full_template)
    _, bucket = only(full_template, "AWS::S3::Bucket")
    _, sg = only(full_template, "AWS::EC2::SecurityGroup")
    for resource in (full_template["Resources"][role_id], bucket, sg):
        tags = [t for t in resource["Properties"]["Tags"] if not t["Key"].startswith("aws-cdk:")]
        assert sorted(tags, key=lambda t: t["Key"]) == expected
    # ...and nowhere outside the cluster construct.
    vpc_id, vpc = only(full_template, "AWS::EC2::VPC")
    assert all(t["Key"] != "team" for t in vpc["Properties"].get("Tags", [])), vpc_id


def test_no_tags_unless_asked(standard_template: dict[str, Any]) -> None:
    _, cluster = cluster_of(standard_template)
    assert "Tags" not in cluster["Properties"]


# -- names and tokens -------------------------------------------------------------------------


def test_cluster_arn_and_name(full: FullStack, full_template: dict[str, Any]) -> None:
    cluster_id, cluster = cluster_of(full_template)
    assert Token.is_unresolved(full.cluster.cluster_arn)
    assert full.resolve(full.cluster.cluster_arn) == {"Fn::GetAtt": [cluster_id, "ClusterArn"]}
    assert full.cluster.cluster_name == "full"
    assert not Token.is_unresolved(full.cluster.cluster_name)
    outputs = full_template["Outputs"]
    assert outputs["ClusterArn"]["Value"] == {"Fn::GetAtt": [cluster_id, "ClusterArn"]}
    assert outputs["ClusterName"]["Value"] == cluster["Properties"]["ClusterName"] == "full"


def test_default_cluster_names_are_valid_and_unique_per_stack() -> None:
    app = new_app()
    clusters = {}
    for stack_id in ("Dev", "Prod" + "x" * 80):
        stack = Stack(app, stack_id)
        scope = Construct(stack, "Deeply" + "Nested" * 10)
        clusters[stack_id] = HyperPodSlurmCluster(
            scope, "Cluster", instance_groups=[controller(), cpu()]
        )
    assembly = app.synth()
    for stack_id, cluster in clusters.items():
        name = cluster.cluster_name
        assert 1 <= len(name) <= 63 and NAME.match(name), name
        rendered = assembly.get_stack_by_name(stack_id).template
        assert cluster_of(rendered)[1]["Properties"]["ClusterName"] == name
    assert len({c.cluster_name for c in clusters.values()}) == 2


# -- imported clusters and grants -------------------------------------------------------------


def test_imported_cluster_grants_describe_on_that_cluster_only() -> None:
    created: dict[str, Any] = {}

    def define(stack: Stack) -> None:
        imported = HyperPodSlurmCluster.from_cluster_attributes(
            stack, "Imported", cluster_arn=IMPORTED_ARN
        )
        role = iam.Role(stack, "Reader", assumed_by=iam.AccountRootPrincipal())
        created["grant"] = imported.grant_describe(role)
        created["cluster"] = imported

    data = as_dict(synth_template(define))
    assert created["grant"].success
    imported = created["cluster"]
    assert imported.cluster_arn == IMPORTED_ARN
    assert imported.cluster_name == IMPORTED_ARN  # the API accepts the ARN as the name
    role_id, _ = only(data, "AWS::IAM::Role")
    (statement,) = statements(data, role_id)
    assert statement["Effect"] == "Allow"
    assert actions(statement) == DESCRIBE_ACTIONS
    assert statement_resources(statement) == [IMPORTED_ARN]


def test_imported_cluster_keeps_a_given_name() -> None:
    app = new_app()
    stack = Stack(app, "Stack")
    imported = HyperPodSlurmCluster.from_cluster_attributes(
        stack, "Imported", cluster_arn=IMPORTED_ARN, cluster_name="training"
    )
    assert imported.cluster_name == "training"
    assert HyperPodSlurmCluster.from_cluster_arn(stack, "ByArn", IMPORTED_ARN).cluster_arn == (
        IMPORTED_ARN
    )


def test_defined_cluster_grants_describe_on_its_own_arn() -> None:
    def define(stack: Stack) -> None:
        cluster = HyperPodSlurmCluster(stack, "Cluster", instance_groups=[controller(), cpu()])
        cluster.grant_describe(iam.Role(stack, "Reader", assumed_by=iam.AccountRootPrincipal()))

    data = as_dict(synth_template(define))
    cluster_id, _ = cluster_of(data)
    reader = next(k for k in resources(data, "AWS::IAM::Role") if k.startswith("Reader"))
    (statement,) = statements(data, reader)
    assert actions(statement) == DESCRIBE_ACTIONS
    assert statement_resources(statement) == [{"Fn::GetAtt": [cluster_id, "ClusterArn"]}]
    assert "*" not in statement_resources(statement)


# -- adding groups after construction ---------------------------------------------------------


def test_a_gated_group_added_later_creates_the_gate() -> None:
    app = new_app()
    stack = Stack(app, "Late")
    cluster = HyperPodSlurmCluster(stack, "Cluster", instance_groups=[controller(), cpu()])
    assert cluster.min_count_gate is None
    cluster.add_instance_group(cpu("gpu", instance_count=4, min_instance_count=3))
    assert cluster.min_count_gate is not None
    data = as_dict(Template.from_stack(stack))
    assert [
        g["InstanceGroupName"] for g in cluster_of(data)[1]["Properties"]["InstanceGroups"]
    ] == [
        "controller",
        "cpu",
        "gpu",
    ]
    _, arm = only(data, "Custom::HyperPodMinCountGate")
    assert arm["Properties"]["Requirements"] == [
        {"GroupName": "gpu", "MinCount": "3", "TargetCount": "4"}
    ]


def test_an_invalid_group_is_reported_at_synth_with_the_cluster_path() -> None:
    app = new_app()
    stack = Stack(app, "Late")
    cluster = HyperPodSlurmCluster(stack, "Cluster", instance_groups=[controller(), cpu()])
    cluster.add_instance_group(cpu("bad", instance_count=2, min_instance_count=3))
    assert [f.rule for f in cluster.findings()] == ["HP-MIN-ABOVE-COUNT"]
    with pytest.raises(RuntimeError, match=r"\[Late/Cluster\] instance group 'bad': "):
        app.synth()


def test_a_group_added_after_the_groups_were_resolved_is_an_error_not_an_omission() -> None:
    """``InstanceGroups`` is produced once, the first time anything resolves it; a group
    added after that is not in the template, and the synth says so instead of dropping it."""
    app = new_app()
    stack = Stack(app, "Early")
    cluster = HyperPodSlurmCluster(stack, "Cluster", instance_groups=[controller(), cpu()])
    resource = cluster.node.default_child
    assert isinstance(resource, CfnResource)
    early = stack.resolve(resource.instance_groups)  # type: ignore[attr-defined]
    assert len(early) == 2  # controller and cpu, as the L1's property (before its renderer)
    cluster.add_instance_group(cpu("late"))
    with pytest.raises(RuntimeError, match=r"Early/Cluster: instance group\(s\) late were added"):
        app.synth()

"""The FSDP example's cluster written by hand with the L1 ``CfnCluster`` only (no library).

It declares the same ``AWS::SageMaker::Cluster`` (same groups, counts, VPC config, role,
lifecycle scripts, tags, teardown dependencies) and the same surrounding resources the
cluster needs to deploy: the VPC with its flow log, the execution role with the managed
policy and the ENI permissions, the self-referencing security group, the lifecycle bucket
with its upload, and the SSM marker parameter. What it does not have is what the library
adds on top of the L1: synth-time validation and the MinCount readiness gate. It imports
nothing of the library (``bench/run.py`` checks), so its figures are the baseline a team pays
without it.
"""

from __future__ import annotations

import _harness

_harness.start()

from typing import Any  # noqa: E402

from aws_cdk import Aws, CfnTag, Fn, RemovalPolicy, Stack  # noqa: E402
from aws_cdk import aws_ec2 as ec2  # noqa: E402
from aws_cdk import aws_iam as iam  # noqa: E402
from aws_cdk import aws_s3 as s3  # noqa: E402
from aws_cdk import aws_s3_deployment as s3deploy  # noqa: E402
from aws_cdk import aws_sagemaker as sagemaker  # noqa: E402
from aws_cdk import aws_ssm as ssm  # noqa: E402

LIFECYCLE_DIR = str(_harness.ROOT / "examples" / "lifecycle")
"""The scripts of examples/fsdp.py (the library app)."""

Group = sagemaker.CfnCluster.ClusterInstanceGroupProperty
Slurm = sagemaker.CfnCluster.ClusterSlurmConfigProperty
LifeCycle = sagemaker.CfnCluster.ClusterLifeCycleConfigProperty
Storage = sagemaker.CfnCluster.ClusterInstanceStorageConfigProperty
Ebs = sagemaker.CfnCluster.ClusterEbsVolumeConfigProperty

ENI_ACTIONS = list(_harness.library_literal("permissions", "NETWORK_INTERFACE_ACTIONS"))


def define(app: Any) -> None:
    """Add the hand-written FSDP stack to ``app``."""
    stack = Stack(app, "FsdpTraining", description="HyperPod FSDP training cluster (L1)")
    vpc = ec2.Vpc(stack, "Vpc", max_azs=1, nat_gateways=1)
    vpc.add_flow_log("FlowLog")
    role = iam.Role(
        stack,
        "ExecutionRole",
        assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"),
        managed_policies=[
            iam.ManagedPolicy.from_aws_managed_policy_name(
                "AmazonSageMakerClusterInstanceRolePolicy"
            )
        ],
    )
    eni_policy = iam.Policy(
        stack,
        "VpcAccess",
        statements=[
            iam.PolicyStatement(actions=ENI_ACTIONS, resources=["*"]),
            iam.PolicyStatement(
                actions=["ec2:CreateTags"], resources=["arn:aws:ec2:*:*:network-interface/*"]
            ),
        ],
    )
    eni_policy.attach_to_role(role)
    security_group = ec2.SecurityGroup(stack, "SecurityGroup", vpc=vpc, allow_all_outbound=True)
    security_group.add_ingress_rule(security_group, ec2.Port.all_traffic(), "EFA")
    bucket = s3.Bucket(
        stack,
        "LifecycleBucket",
        bucket_name=Fn.join(
            "", ["sagemaker-lifecycle-", Fn.select(2, Fn.split("/", Aws.STACK_ID))]
        ),
        block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
        encryption=s3.BucketEncryption.S3_MANAGED,
        enforce_ssl=True,
        removal_policy=RemovalPolicy.RETAIN,
    )
    upload = s3deploy.BucketDeployment(
        stack,
        "Upload",
        sources=[s3deploy.Source.asset(LIFECYCLE_DIR, exclude=["__pycache__", "*.pyc"])],
        destination_bucket=bucket,
        destination_key_prefix="lifecycle",
        retain_on_delete=True,
    )
    bucket.grant_read(role)
    lifecycle = LifeCycle(
        source_s3_uri=f"s3://{bucket.bucket_name}/lifecycle/", on_create="on_create.sh"
    )
    subnets = vpc.select_subnets(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS).subnet_ids
    cluster = sagemaker.CfnCluster(
        stack,
        "Cluster",
        cluster_name="fsdp-train",
        node_provisioning_mode="Continuous",
        node_recovery="Automatic",
        vpc_config=sagemaker.CfnCluster.VpcConfigProperty(
            security_group_ids=[security_group.security_group_id], subnets=subnets
        ),
        instance_groups=[
            Group(
                instance_group_name="controller",
                instance_type="ml.m5.2xlarge",
                instance_count=1,
                execution_role=role.role_arn,
                slurm_config=Slurm(node_type="Controller"),
                life_cycle_config=lifecycle,
            ),
            Group(
                instance_group_name="login",
                instance_type="ml.m5.xlarge",
                instance_count=1,
                execution_role=role.role_arn,
                slurm_config=Slurm(node_type="Login"),
                life_cycle_config=lifecycle,
            ),
            Group(
                instance_group_name="gpu",
                instance_type="ml.p5.48xlarge",
                instance_count=16,
                min_instance_count=16,
                execution_role=role.role_arn,
                slurm_config=Slurm(node_type="Compute", partition_names=["gpu"]),
                life_cycle_config=lifecycle,
                threads_per_core=1,
                on_start_deep_health_checks=["InstanceStress", "InstanceConnectivity"],
                instance_storage_configs=[Storage(ebs_volume_config=Ebs(volume_size_in_gb=500))],
            ),
        ],
        tags=[CfnTag(key="project", value="llm-pretraining")],
    )
    cluster.node.add_dependency(role, eni_policy, vpc, upload)
    ssm.StringParameter(
        stack,
        "ReadyMarker",
        parameter_name="/hyperpod/fsdp-train/ready",
        string_value=cluster.attr_cluster_arn,
        description="Written once all 16 GPU nodes are in service",
    )


if __name__ == "__main__":
    _harness.run(define)

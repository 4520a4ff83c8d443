"""PyTorch FSDP training: 16 x ml.p5.48xlarge (128 GPUs), no job before all 16 are up."""

from __future__ import annotations

import os
from typing import Any

from aws_cdk import Aspects, Size, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_ssm as ssm
from constructs import Construct

from hyperpod_constructs import (
    DeepHealthCheck,
    HyperPodInstanceType,
    HyperPodSlurmCluster,
    InstanceGroup,
    InstanceStorage,
    LifecycleScripts,
    MinCountGateOptions,
)
from hyperpod_constructs.policy import DropImpliedDependsOn

LIFECYCLE_DIR = os.path.join(os.path.dirname(__file__), "lifecycle")


class FsdpTrainingStack(Stack):
    """A 128-GPU FSDP cluster in its own VPC, gated at its full world size."""

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        readiness_gate: MinCountGateOptions | None = None,
        cluster_name: str = "fsdp-train",
        gpu_group: str = "gpu",
        gpu_nodes: int = 16,
        gpu_instance_type: HyperPodInstanceType = HyperPodInstanceType.ML_P5_48XLARGE,
        lifecycle_dir: str = LIFECYCLE_DIR,
        **stack_props: Any,
    ) -> None:
        """:param readiness_gate: the gate's options. Default: the library's defaults.
        :param stack_props: any other ``Stack`` keyword (``env``, ``synthesizer``, ...).

        The other parameters are the edits the "Safe updates" guide plans (docs/
        safe-updates.md); their defaults are this example as deployed.
        """
        stack_props.setdefault("description", "HyperPod FSDP training cluster (example)")
        super().__init__(scope, id, **stack_props)
        self.cluster = add_fsdp_cluster(
            self,
            name=cluster_name,
            readiness_gate=readiness_gate,
            gpu_group=gpu_group,
            gpu_nodes=gpu_nodes,
            gpu_instance_type=gpu_instance_type,
            lifecycle_dir=lifecycle_dir,
        )


def add_fsdp_cluster(
    scope: Construct,
    *,
    name: str = "fsdp-train",
    readiness_gate: MinCountGateOptions | None = None,
    vpc: ec2.IVpc | None = None,
    gpu_group: str = "gpu",
    gpu_nodes: int = 16,
    gpu_instance_type: HyperPodInstanceType = HyperPodInstanceType.ML_P5_48XLARGE,
    lifecycle_dir: str = LIFECYCLE_DIR,
) -> HyperPodSlurmCluster:
    """The example's VPC, cluster and ready marker in ``scope`` (a stack, a nested stack or
    a construct in one), for the cluster named ``name``.

    :param vpc: the VPC of the cluster. Default: a new one with a flow log."""
    if vpc is None:
        vpc = ec2.Vpc(scope, "Vpc", max_azs=1, nat_gateways=1)
        vpc.add_flow_log("FlowLog")
        # The Vpc's default-security-group handler (aws-cdk-lib's singleton provider, a
        # `Custom::*` child of the stack) repeats a reference in its DependsOn, which cfn-lint
        # warns about (W3005); the library's own resources never do. The aspect goes on the
        # provider only: an aspect costs a jsii round trip for every construct below it.
        for child in Stack.of(vpc).node.children:
            if child.node.id.startswith("Custom::"):
                Aspects.of(child).add(
                    DropImpliedDependsOn(resource_types=["AWS::Lambda::Function"])
                )
    cluster = HyperPodSlurmCluster(
        scope,
        "Cluster",
        cluster_name=name,
        vpc=vpc,
        lifecycle_scripts=LifecycleScripts.from_directory(lifecycle_dir),
        instance_groups=[
            InstanceGroup.controller(
                "controller", instance_type=HyperPodInstanceType.ML_M5_2XLARGE
            ),
            InstanceGroup.login("login", instance_type=HyperPodInstanceType.ML_M5_XLARGE),
            InstanceGroup.compute(
                gpu_group,
                instance_type=gpu_instance_type,
                instance_count=gpu_nodes,
                min_instance_count=gpu_nodes,
                partition="gpu",
                threads_per_core=1,
                deep_health_checks=[
                    DeepHealthCheck.INSTANCE_STRESS,
                    DeepHealthCheck.INSTANCE_CONNECTIVITY,
                ],
                storage=[InstanceStorage.ebs(volume_size=Size.gibibytes(500))],
            ),
        ],
        tags={"project": "llm-pretraining"},
        readiness_gate=readiness_gate,
    )
    # Anything that must not start before the full world size is up depends on the gate.
    ready = ssm.StringParameter(
        scope,
        "ReadyMarker",
        parameter_name=f"/hyperpod/{name}/ready",
        string_value=cluster.cluster_arn,
        description=f"Written once all {gpu_nodes} GPU nodes are in service",
    )
    ready.node.add_dependency(cluster.ready)
    return cluster

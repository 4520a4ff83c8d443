"""PyTorch FSDP training: 16 x ml.p5.48xlarge (128 GPUs), no job before all 16 are up."""

from __future__ import annotations

import os

from aws_cdk import Size, Stack
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
    ) -> None:
        """:param readiness_gate: the gate's options. Default: the library's defaults.

        The other parameters are the edits the "Safe updates" guide plans (docs/
        safe-updates.md); their defaults are this example as deployed.
        """
        super().__init__(scope, id, description="HyperPod FSDP training cluster (example)")
        vpc = ec2.Vpc(self, "Vpc", max_azs=1, nat_gateways=1)
        vpc.add_flow_log("FlowLog")
        self.cluster = HyperPodSlurmCluster(
            self,
            "Cluster",
            cluster_name=cluster_name,
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
            self,
            "ReadyMarker",
            parameter_name=f"/hyperpod/{cluster_name}/ready",
            string_value=self.cluster.cluster_arn,
            description=f"Written once all {gpu_nodes} GPU nodes are in service",
        )
        ready.node.add_dependency(self.cluster.ready)

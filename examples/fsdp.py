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
        self, scope: Construct, id: str, *, readiness_gate: MinCountGateOptions | None = None
    ) -> None:
        """:param readiness_gate: the gate's options. Default: the library's defaults."""
        super().__init__(scope, id, description="HyperPod FSDP training cluster (example)")
        vpc = ec2.Vpc(self, "Vpc", max_azs=1, nat_gateways=1)
        vpc.add_flow_log("FlowLog")
        self.cluster = HyperPodSlurmCluster(
            self,
            "Cluster",
            cluster_name="fsdp-train",
            vpc=vpc,
            lifecycle_scripts=LifecycleScripts.from_directory(LIFECYCLE_DIR),
            instance_groups=[
                InstanceGroup.controller(
                    "controller", instance_type=HyperPodInstanceType.ML_M5_2XLARGE
                ),
                InstanceGroup.login("login", instance_type=HyperPodInstanceType.ML_M5_XLARGE),
                InstanceGroup.compute(
                    "gpu",
                    instance_type=HyperPodInstanceType.ML_P5_48XLARGE,
                    instance_count=16,
                    min_instance_count=16,
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
            parameter_name="/hyperpod/fsdp-train/ready",
            string_value=self.cluster.cluster_arn,
            description="Written once all 16 GPU nodes are in service",
        )
        ready.node.add_dependency(self.cluster.ready)

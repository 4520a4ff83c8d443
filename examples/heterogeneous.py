"""A gated GPU partition next to an ungated CPU partition and a login node."""

from __future__ import annotations

from aws_cdk import Stack
from aws_cdk import aws_ssm as ssm
from constructs import Construct

from hyperpod_constructs import (
    DeepHealthCheck,
    HyperPodInstanceType,
    HyperPodSlurmCluster,
    InstanceGroup,
    MinCountGateOptions,
)


class HeterogeneousStack(Stack):
    """GPU nodes gated at 8 of 10 (two spares may arrive later); CPU nodes never hold the gate."""

    def __init__(self, scope: Construct, id: str) -> None:
        super().__init__(scope, id, description="HyperPod heterogeneous cluster (example)")
        self.cluster = HyperPodSlurmCluster(
            self,
            "Cluster",
            cluster_name="hetero",
            instance_groups=[
                InstanceGroup.controller(
                    "controller", instance_type=HyperPodInstanceType.ML_M5_2XLARGE
                ),
                InstanceGroup.login("login", instance_type=HyperPodInstanceType.ML_M5_XLARGE),
                InstanceGroup.compute(
                    "gpu",
                    instance_type=HyperPodInstanceType.ML_P4D_24XLARGE,
                    instance_count=10,
                    min_instance_count=8,
                    partition="gpu",
                    deep_health_checks=[DeepHealthCheck.INSTANCE_STRESS],
                ),
            ],
            readiness_gate=MinCountGateOptions(create_notification_topic=True, dashboard=True),
        )
        self.cluster.add_instance_group(
            InstanceGroup.compute(
                "cpu",
                instance_type=HyperPodInstanceType.ML_C5_4XLARGE,
                instance_count=4,
                partition="cpu",
            )
        )
        ready = ssm.StringParameter(
            self,
            "GpuPartitionReady",
            parameter_name="/hyperpod/hetero/gpu-ready",
            string_value="8",
            description="Written once the GPU partition has its minimum of 8 nodes",
        )
        ready.node.add_dependency(self.cluster.ready)

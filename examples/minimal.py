"""The smallest useful cluster: a controller and two single-GPU nodes for development."""

from __future__ import annotations

from aws_cdk import Stack
from constructs import Construct

from hyperpod_constructs import (
    DeepHealthCheck,
    HyperPodInstanceType,
    HyperPodSlurmCluster,
    InstanceGroup,
)


class MinimalDevStack(Stack):
    """No VPC, no lifecycle scripts, no gate."""

    def __init__(self, scope: Construct, id: str) -> None:
        super().__init__(scope, id, description="HyperPod minimal dev cluster (example)")
        self.cluster = HyperPodSlurmCluster(
            self,
            "Cluster",
            instance_groups=[
                InstanceGroup.controller(
                    "controller", instance_type=HyperPodInstanceType.ML_T3_XLARGE
                ),
                InstanceGroup.compute(
                    "dev",
                    instance_type=HyperPodInstanceType.ML_G5_2XLARGE,
                    instance_count=2,
                    partition="dev-gpu",
                    deep_health_checks=[DeepHealthCheck.INSTANCE_STRESS],
                ),
            ],
        )

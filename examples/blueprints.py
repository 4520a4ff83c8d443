"""Blueprints: a platform team publishes preconfigured clusters, ML teams size them from the job.

The first half is what the platform team ships (its defaults and two blueprint classes); the
second half is what an ML team writes: a VPC and one line per cluster.
"""

from __future__ import annotations

from aws_cdk import Aspects, Stack
from aws_cdk import aws_ec2 as ec2
from constructs import Construct

from hyperpod_constructs import HyperPodInstanceType
from hyperpod_constructs.blueprints import (
    BlueprintDefaults,
    FsdpTrainingCluster,
    FsdpTrainingClusterProps,
    MegatronTrainingCluster,
    MegatronTrainingClusterProps,
)
from hyperpod_constructs.policy import DropImpliedDependsOn

# -- published by the ML platform team ------------------------------------------------------

ACME_PLATFORM = BlueprintDefaults(
    name="acme-ml-platform",
    compute_instance_types=(
        HyperPodInstanceType.ML_P5_48XLARGE,
        HyperPodInstanceType.ML_P5EN_48XLARGE,
    ),
    tags={"org": "acme", "managed-by": "ml-platform"},
    required_tags=("team", "cost-center"),
    max_instance_count=64,
    max_spare_instances=4,
    min_instance_fraction=0.75,
)
"""Acme's defaults: p5 / p5en only, at most 64 instances a group, gated at 75 % or more,
encrypted volumes, both deep health checks, a VPC, and every cluster tagged with its team
and cost center."""


class AcmeFsdpCluster(FsdpTrainingCluster):
    """Acme's FSDP training cluster."""

    DEFAULTS = ACME_PLATFORM


class AcmeMegatronCluster(MegatronTrainingCluster):
    """Acme's Megatron-LM / NeMo training cluster."""

    DEFAULTS = ACME_PLATFORM


# -- written by ML teams ------------------------------------------------------------------


def _training_vpc(scope: Construct) -> ec2.Vpc:
    vpc = ec2.Vpc(scope, "Vpc", max_azs=1, nat_gateways=1)
    vpc.add_flow_log("FlowLog")
    # The Vpc's default-security-group handler (aws-cdk-lib's singleton provider, a `Custom::*`
    # child of the stack) repeats a reference in its DependsOn, which cfn-lint warns about
    # (W3005); the library's own resources never do. On the provider only: an aspect costs a
    # jsii round trip for every construct below it.
    for child in Stack.of(vpc).node.children:
        if child.node.id.startswith("Custom::"):
            Aspects.of(child).add(DropImpliedDependsOn(resource_types=["AWS::Lambda::Function"]))
    return vpc


class FsdpBlueprintStack(Stack):
    """FSDP over 64 GPUs: 8 x ml.p5.48xlarge gated at 8, plus one spare."""

    def __init__(self, scope: Construct, id: str) -> None:
        super().__init__(scope, id, description="HyperPod FSDP blueprint cluster (example)")
        self.cluster = AcmeFsdpCluster(
            self,
            "Cluster",
            FsdpTrainingClusterProps(
                vpc=_training_vpc(self),
                cluster_name="nlp-fsdp",
                data_parallel=64,
                spare_instances=1,
                tags={"team": "nlp", "cost-center": "cc-1234"},
            ),
        )


class MegatronBlueprintStack(Stack):
    """Megatron TP=8 x PP=4 x DP=4 = 128 GPUs: 16 x ml.p5en.48xlarge gated at 16."""

    def __init__(self, scope: Construct, id: str) -> None:
        super().__init__(scope, id, description="HyperPod Megatron blueprint cluster (example)")
        self.cluster = AcmeMegatronCluster(
            self,
            "Cluster",
            MegatronTrainingClusterProps(
                vpc=_training_vpc(self),
                cluster_name="llm-megatron",
                instance_type=HyperPodInstanceType.ML_P5EN_48XLARGE,
                tensor_parallel=8,
                pipeline_parallel=4,
                data_parallel=4,
                tags={"team": "llm", "cost-center": "cc-5678"},
            ),
        )

"""The FSDP example (``examples/fsdp.py``) synthesized through the library, as is.

With ``--no-gate``: the same cluster with its readiness gate disabled (a diagnostic that
separates the construct's own overhead from the cost of the gate's extra resources).
"""

from __future__ import annotations

import _harness

_harness.start()

import sys  # noqa: E402
from typing import Any  # noqa: E402

from aws_cdk import Size, Stack  # noqa: E402
from aws_cdk import aws_ec2 as ec2  # noqa: E402
from aws_cdk import aws_ssm as ssm  # noqa: E402

from examples.fsdp import LIFECYCLE_DIR, FsdpTrainingStack  # noqa: E402
from hyperpod_constructs import (  # noqa: E402
    DeepHealthCheck,
    HyperPodInstanceType,
    HyperPodSlurmCluster,
    InstanceGroup,
    InstanceStorage,
    LifecycleScripts,
    MinCountGateOptions,
)


def _without_gate(app: Any) -> None:
    """``examples/fsdp.py`` with ``min_count_gate=MinCountGateOptions(enabled=False)``."""
    stack = Stack(app, "FsdpTraining", description="HyperPod FSDP training cluster (example)")
    vpc = ec2.Vpc(stack, "Vpc", max_azs=1, nat_gateways=1)
    vpc.add_flow_log("FlowLog")
    cluster = HyperPodSlurmCluster(
        stack,
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
        min_count_gate=MinCountGateOptions(enabled=False),
    )
    ssm.StringParameter(
        stack,
        "ReadyMarker",
        parameter_name="/hyperpod/fsdp-train/ready",
        string_value=cluster.cluster_arn,
        description="Written once all 16 GPU nodes are in service",
    )


def define(app: Any) -> None:
    """Add the FSDP stack to ``app``."""
    if "--no-gate" in sys.argv[1:]:
        _without_gate(app)
    else:
        FsdpTrainingStack(app, "FsdpTraining")


if __name__ == "__main__":
    _harness.run(define)

"""A cluster whose gated group's counts are CloudFormation parameters, as a Service Catalog
product or an org template writes it: ``GpuCount`` (default 8) and ``GpuMin`` (default 4)."""

from __future__ import annotations

from typing import Any

from aws_cdk import CfnParameter, Stack
from aws_cdk.cx_api import CloudAssembly

from hyperpod_constructs import (
    DeepHealthCheck,
    HyperPodInstanceType,
    HyperPodSlurmCluster,
    InstanceGroup,
)

DEFAULTS = {"GpuCount": 8, "GpuMin": 4}


def parameterized_assembly(stack_name: str, *, cluster_name: str, **app: Any) -> CloudAssembly:
    """The app with one stack ``stack_name``: a controller and the gated group ``gpu``
    (``ml.p5.48xlarge``) whose counts are the Number parameters ``GpuCount`` / ``GpuMin``."""
    from tests.conftest import new_app

    application = new_app(**app)
    stack = Stack(application, stack_name)
    count, minimum = (
        CfnParameter(stack, name, type="Number", default=default).value_as_number
        for name, default in DEFAULTS.items()
    )
    HyperPodSlurmCluster(
        stack,
        "Cluster",
        cluster_name=cluster_name,
        instance_groups=[
            InstanceGroup.controller("controller", instance_type=HyperPodInstanceType.ML_M5_XLARGE),
            InstanceGroup.compute(
                "gpu",
                instance_type=HyperPodInstanceType.ML_P5_48XLARGE,
                instance_count=count,
                min_instance_count=minimum,
                deep_health_checks=[DeepHealthCheck.INSTANCE_STRESS],
                partition="gpu",
            ),
        ],
    )
    return application.synth()

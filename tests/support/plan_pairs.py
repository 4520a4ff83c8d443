"""Update pairs for ``plan`` tests: one stack shape, edited one way per variant, every variant a
stack of ONE app synthesized once by the library (never a template typed by hand).

:class:`Shape` is a small HyperPod cluster (controller, login, a gated GPU group) in explicit
subnets; each field is a knob a user turns between two deployments. :func:`synthesize` builds
each named shape as its own stack and returns the templates, so a test takes a baseline and a
new template by name.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import pytest
from aws_cdk import Annotations, CfnParameter, RemovalPolicy, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_ssm as ssm

from hyperpod_constructs import (
    DeepHealthCheck,
    HyperPodInstanceType,
    HyperPodSlurmCluster,
    InstanceGroup,
    LifecycleScripts,
    NodeRecovery,
)

from ..conftest import new_app

LIFECYCLE_V1 = "s3://sagemaker-plan-tests/lifecycle/v1/"
LIFECYCLE_V2 = "s3://sagemaker-plan-tests/lifecycle/v2/"
CHECKS = [DeepHealthCheck.INSTANCE_STRESS, DeepHealthCheck.INSTANCE_CONNECTIVITY]


@dataclass(frozen=True)
class Shape:
    """The knobs of the test cluster (defaults: the baseline)."""

    cluster: bool = True
    cluster_name: str | None = "plan-train"
    subnet: str = "subnet-0a1b2c3d4e5f60001"
    gpu_name: str = "gpu"
    gpu_count: int = 4
    gpu_min: int | None = 4
    gpu_type: HyperPodInstanceType = HyperPodInstanceType.ML_P5_48XLARGE
    gpu_threads: int = 1
    gpu_image: str | None = None
    gpu_training_plan: str | None = None
    second_gpu: int | None = None
    """Instance count of a second compute group ``gpu2`` (None: no such group)."""
    second_gpu_min: int | None = None
    lifecycle: str = LIFECYCLE_V1
    node_recovery: NodeRecovery = NodeRecovery.AUTOMATIC
    removal_policy: RemovalPolicy | None = None
    gpu_count_parameter: bool = False
    """The GPU count and minimum come from a ``GpuCount`` parameter (default ``gpu_count``)."""
    own_role: bool = False
    """The GPU group brings its own execution role."""
    controller_name: str = "controller"
    construct_id: str = "Cluster"
    """The cluster's construct id (a new one is a new logical id: a new resource)."""


BASE = Shape()

VARIANTS: Mapping[str, Shape] = {
    "base": BASE,
    "scale-out": replace(BASE, gpu_count=8),
    "scale-out-gated": replace(BASE, gpu_count=8, gpu_min=8),
    "scale-in": replace(BASE, gpu_count=2, gpu_min=2),
    "min-raised": replace(BASE, gpu_count=8, gpu_min=6),
    "group-added-gated": replace(BASE, second_gpu=2, second_gpu_min=2),
    "group-added-ungated": replace(BASE, second_gpu=2),
    "renamed": replace(BASE, gpu_name="gpu-b"),
    "cluster-renamed": replace(BASE, cluster_name="plan-train-b"),
    "cluster-renamed-retained": replace(
        BASE, cluster_name="plan-train-b", removal_policy=RemovalPolicy.RETAIN
    ),
    "retained": replace(BASE, removal_policy=RemovalPolicy.RETAIN),
    "subnet-moved": replace(BASE, subnet="subnet-0a1b2c3d4e5f60002"),
    "subnet-moved-renamed": replace(
        BASE, subnet="subnet-0a1b2c3d4e5f60002", cluster_name="plan-train-b"
    ),
    "instance-type": replace(BASE, gpu_type=HyperPodInstanceType.ML_P5EN_48XLARGE),
    "threads": replace(BASE, gpu_threads=2),
    "own-role": replace(BASE, own_role=True),
    "lifecycle": replace(BASE, lifecycle=LIFECYCLE_V2),
    "image": replace(BASE, gpu_image="ami-0123456789abcdef0"),
    "node-recovery": replace(BASE, node_recovery=NodeRecovery.NONE),
    "training-plan": replace(
        BASE,
        gpu_training_plan="arn:aws:sagemaker:us-east-1:123456789012:training-plan/plan-tests",
    ),
    "ungated": replace(BASE, gpu_min=None),
    "no-cluster": replace(BASE, cluster=False),
    "parameter": replace(BASE, gpu_count_parameter=True),
    "controller-renamed": replace(BASE, controller_name="head"),
    "construct-moved": replace(BASE, construct_id="Training"),
}
"""Variant name -> shape; ``base`` is the usual baseline."""


def define(stack: Stack, shape: Shape, *, count: Any = None) -> None:
    """The test cluster of ``shape`` in ``stack`` (a nested stack too); ``count``: the GPU
    group's count and minimum (e.g. a parent stack's parameter), instead of the shape's."""
    # A resource every variant has (as a real stack has more than its cluster).
    ssm.StringParameter(stack, "Marker", string_value="plan-tests")
    if not shape.cluster:
        return
    minimum: Any = shape.gpu_min if count is None else count
    if count is None:
        count = shape.gpu_count
    if shape.gpu_count_parameter:
        parameter = CfnParameter(stack, "GpuCount", type="Number", default=shape.gpu_count)
        count = minimum = parameter.value_as_number
    role = (
        iam.Role(stack, "GpuRole", assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"))
        if shape.own_role
        else None
    )
    groups = [
        InstanceGroup.controller(
            shape.controller_name, instance_type=HyperPodInstanceType.ML_M5_2XLARGE
        ),
        InstanceGroup.login("login", instance_type=HyperPodInstanceType.ML_M5_XLARGE),
        InstanceGroup.compute(
            shape.gpu_name,
            instance_type=shape.gpu_type,
            instance_count=count,
            min_instance_count=minimum,
            partition="gpu",
            threads_per_core=shape.gpu_threads,
            image_id=shape.gpu_image,
            training_plan_arn=shape.gpu_training_plan,
            execution_role=role,
            deep_health_checks=CHECKS,
        ),
    ]
    if shape.second_gpu is not None:
        groups.append(
            InstanceGroup.compute(
                "gpu2",
                instance_type=HyperPodInstanceType.ML_P5_48XLARGE,
                instance_count=shape.second_gpu,
                min_instance_count=shape.second_gpu_min,
                partition="gpu2",
                deep_health_checks=CHECKS,
            )
        )
    cluster = HyperPodSlurmCluster(
        stack,
        shape.construct_id,
        cluster_name=shape.cluster_name,
        vpc_subnets=ec2.SubnetSelection(
            subnets=[
                ec2.Subnet.from_subnet_attributes(
                    stack, "Subnet", subnet_id=shape.subnet, route_table_id="rtb-0a1b2c3d4e5f6"
                )
            ]
        ),
        security_groups=[
            ec2.SecurityGroup.from_security_group_id(stack, "Sg", "sg-0a1b2c3d4e5f60001")
        ],
        lifecycle_scripts=LifecycleScripts.from_s3_uri(shape.lifecycle, on_create="on_create.sh"),
        node_recovery=shape.node_recovery,
        removal_policy=shape.removal_policy,
        instance_groups=groups,
    )
    if shape.gpu_count_parameter:
        Annotations.of(cluster).acknowledge_warning(
            "hyperpod:HP-WARN-GATE-TOKEN-COUNT", "the tests change the value on purpose"
        )


def stack_name(variant: str) -> str:
    """The stack id of a variant (``scale-out`` -> ``PlanScaleOut``)."""
    return "Plan" + "".join(part.capitalize() for part in variant.split("-"))


def synthesize(outdir: str) -> dict[str, dict[str, Any]]:
    """Every variant as its own stack of one app, synthesized once into ``outdir``; variant
    name -> template."""
    app = new_app(outdir=outdir)
    for variant, shape in VARIANTS.items():
        define(Stack(app, stack_name(variant)), shape)
    assembly = app.synth()
    return {
        variant: assembly.get_stack_by_name(stack_name(variant)).template for variant in VARIANTS
    }


@dataclass(frozen=True)
class PlanPairs:
    """The synthesized variants: their cloud assembly folder and templates."""

    outdir: str
    templates: Mapping[str, dict[str, Any]]

    def template_file(self, variant: str) -> str:
        """The variant's template in the assembly folder (a baseline file)."""
        return f"{self.outdir}/{stack_name(variant)}.template.json"


_SYNTHESIZED: list[PlanPairs] = []
"""The variants synthesized by this test process (at most one)."""


@pytest.fixture(scope="session")
def plan_pairs(tmp_path_factory: pytest.TempPathFactory) -> PlanPairs:
    """Every variant, synthesized once per test process. Each module that imports this
    fixture holds a definition of its own, which pytest runs once per module: they share the
    one synthesis (about 3 s of CPU each before), each module with its own copy of the
    templates, as when each synthesized them."""
    if not _SYNTHESIZED:
        outdir = str(tmp_path_factory.mktemp("plan-cdk.out"))
        _SYNTHESIZED.append(PlanPairs(outdir, synthesize(outdir)))
    (pairs,) = _SYNTHESIZED
    return PlanPairs(pairs.outdir, copy.deepcopy(dict(pairs.templates)))


def with_cdk_paths(template: Mapping[str, Any], stack: str) -> dict[str, Any]:
    """A copy of ``template`` whose resources carry the ``aws:cdk:path`` metadata the cdk CLI
    writes (``App`` in the tests does not): ``<stack>/<logical id>/Resource``."""
    copied = copy.deepcopy(dict(template))
    for logical_id, resource in copied["Resources"].items():
        resource.setdefault("Metadata", {})["aws:cdk:path"] = f"{stack}/{logical_id}/Resource"
    return copied

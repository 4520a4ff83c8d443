"""A cluster of N instance groups: one controller and N - 1 gated compute groups.

Usage: ``scale.py N`` (through the library), ``scale.py N --no-gate`` (the same with the
readiness gate disabled), or ``scale.py N --l1`` (the same cluster with the L1 ``CfnCluster``
and its property structs, plus the same execution role; the library is not imported). No VPC
and no lifecycle scripts, so that the per-group cost is not hidden behind fixed costs.
``scale.py 2`` is the smallest gated cluster: a controller and one gated compute group.
"""

from __future__ import annotations

import _harness

_harness.start()

import sys  # noqa: E402
from typing import Any  # noqa: E402

from aws_cdk import Stack  # noqa: E402
from aws_cdk import aws_iam as iam  # noqa: E402
from aws_cdk import aws_sagemaker as sagemaker  # noqa: E402


def _library(stack: Stack, groups: int, *, gate: bool = True) -> None:
    # Imported here: the L1 app must not pay for the library's import.
    from hyperpod_constructs import (
        DeepHealthCheck,
        HyperPodInstanceType,
        HyperPodSlurmCluster,
        InstanceGroup,
        MinCountGateOptions,
    )

    checks = [DeepHealthCheck.INSTANCE_STRESS, DeepHealthCheck.INSTANCE_CONNECTIVITY]
    cluster = HyperPodSlurmCluster(
        stack,
        "Cluster",
        cluster_name="scale",
        readiness_gate=None if gate else MinCountGateOptions(enabled=False),
        instance_groups=[
            InstanceGroup.controller("controller", instance_type=HyperPodInstanceType.ML_M5_2XLARGE)
        ],
    )
    for index in range(1, groups):
        cluster.add_instance_group(
            InstanceGroup.compute(
                f"gpu{index}",
                instance_type=HyperPodInstanceType.ML_P5_48XLARGE,
                instance_count=2,
                min_instance_count=2,
                partition=f"p{index}",
                deep_health_checks=checks,
            )
        )


def _l1(stack: Stack, groups: int) -> None:
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
    role_arn = role.role_arn
    group = sagemaker.CfnCluster.ClusterInstanceGroupProperty
    slurm = sagemaker.CfnCluster.ClusterSlurmConfigProperty
    instance_groups = [
        group(
            instance_group_name="controller",
            instance_type="ml.m5.2xlarge",
            instance_count=1,
            execution_role=role_arn,
            slurm_config=slurm(node_type="Controller"),
        )
    ]
    instance_groups += [
        group(
            instance_group_name=f"gpu{index}",
            instance_type="ml.p5.48xlarge",
            instance_count=2,
            min_instance_count=2,
            execution_role=role_arn,
            slurm_config=slurm(node_type="Compute", partition_names=[f"p{index}"]),
            on_start_deep_health_checks=["InstanceStress", "InstanceConnectivity"],
        )
        for index in range(1, groups)
    ]
    cluster = sagemaker.CfnCluster(
        stack,
        "Cluster",
        cluster_name="scale",
        node_provisioning_mode="Continuous",
        node_recovery="Automatic",
        instance_groups=instance_groups,
    )
    cluster.node.add_dependency(role)


def define_groups(app: Any, groups: int, *, l1: bool = False, gate: bool = True) -> None:
    """Add the stack with a cluster of ``groups`` instance groups to ``app``."""
    stack = Stack(app, "Scale")
    if l1:
        _l1(stack, groups)
    else:
        _library(stack, groups, gate=gate)


def define(app: Any) -> None:
    """Add the stack of ``scale.py N [--l1 | --no-gate]`` to ``app``."""
    flags = sys.argv[2:]
    define_groups(app, int(sys.argv[1]), l1="--l1" in flags, gate="--no-gate" not in flags)


if __name__ == "__main__":
    _harness.run(define)

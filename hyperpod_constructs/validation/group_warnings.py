"""Rules for one instance group learned from real configurations: settings HyperPod accepts
but that do not do what the user meant. Pure: a group in, findings out."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import TYPE_CHECKING

from .._tokens import is_unresolved
from ..enums import DeepHealthCheck, NodeType
from ..instance_type import known_names
from . import limits
from .finding import Finding

if TYPE_CHECKING:
    from ..instance_group import InstanceGroup

DHC = "deep_health_checks (OnStartDeepHealthChecks)"
DEV_PARTITION = "dev"
"""HyperPod puts every node in this Slurm partition."""


def _connectivity(group: InstanceGroup) -> list[Finding]:
    """``InstanceConnectivity`` runs cluster-level collective tests (NCCL on GPUs, NCCOM on
    Trainium) across the group's nodes over EFA: it needs an accelerator type with multi-node
    networking, and at least two nodes to test between.

    Source: "Deep health checks" in the SageMaker HyperPod Slurm guide
    (docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-resiliency-slurm-deep-health-checks.html)
    and the cluster-level checks table of the HyperPod deep health check reference.
    """
    if DeepHealthCheck.INSTANCE_CONNECTIVITY not in group.deep_health_checks:
        return []
    itype = group.instance_type
    known = not is_unresolved(itype.name) and limits.INSTANCE_TYPE.fullmatch(itype.name)
    if known and not itype.is_accelerated:
        return [
            Finding(
                rule="HP-DHC-CONNECTIVITY",
                field=DHC,
                value=[check.value for check in group.deep_health_checks],
                allowed="InstanceConnectivity only on GPU or Trainium types with multi-node "
                f"networking (EFA); {itype.name} has no accelerators",
                fix="drop DeepHealthCheck.INSTANCE_CONNECTIVITY (keep INSTANCE_STRESS)",
                group=group.name,
            )
        ]
    count = group.instance_count
    if count == 1:  # 0 is a group scaled in, which may grow later
        return [
            Finding(
                rule="HP-WARN-DHC-CONNECTIVITY",
                field=DHC,
                value=[check.value for check in group.deep_health_checks],
                allowed=f"InstanceConnectivity only on groups of 2 or more instances (this one "
                f"has {count}): it tests the network between the group's nodes",
                fix="drop DeepHealthCheck.INSTANCE_CONNECTIVITY, or raise instance_count",
                group=group.name,
            )
        ]
    return []


def _dev_partition(group: InstanceGroup) -> list[Finding]:
    if group.node_type is not NodeType.COMPUTE or group.partition != DEV_PARTITION:
        return []
    return [
        Finding(
            rule="HP-WARN-PARTITION-DEV",
            field="partition (SlurmConfig.PartitionNames)",
            value=group.partition,
            allowed="a partition other than 'dev': HyperPod already puts every node in 'dev', "
            "so this group's nodes would not be separable from the others",
            fix="name the partition after the group's hardware, e.g. 'gpu'",
            group=group.name,
        )
    ]


def _unknown_type(group: InstanceGroup) -> list[Finding]:
    name = group.instance_type.name
    if is_unresolved(name) or not limits.INSTANCE_TYPE.fullmatch(name):
        return []
    known = known_names()
    if name in known:
        return []
    close = difflib.get_close_matches(name, known, n=2, cutoff=0.9)
    if not close:
        return []  # a newer type than the library knows: accepted without a word
    return [
        Finding(
            rule="HP-WARN-INSTANCE-TYPE",
            field="instance_type (InstanceType)",
            value=name,
            allowed=f"a known type; did you mean {' or '.join(close)}?",
            fix=f"use HyperPodInstanceType.of({close[0]!r}); acknowledge the warning if "
            f"{name} is a type newer than the library",
            group=group.name,
        )
    ]


def _controller_count(group: InstanceGroup) -> list[Finding]:
    if group.node_type is not NodeType.CONTROLLER or group.instance_count != 0:
        return []
    return [
        Finding(
            rule="HP-CONTROLLER-COUNT",
            field="instance_count (InstanceCount)",
            value=0,
            allowed="at least 1 on the controller group (Slurm cannot run without it)",
            fix="use instance_count=1 (the default)",
            group=group.name,
        )
    ]


GROUP_WARNINGS: tuple[Callable[[InstanceGroup], list[Finding]], ...] = (
    _controller_count,
    _connectivity,
    _dev_partition,
    _unknown_type,
)
"""Run after the group's own rules, only when its fields have the right types."""

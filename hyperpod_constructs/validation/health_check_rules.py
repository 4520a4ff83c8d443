"""On-start deep health checks of a group (``OnStartDeepHealthChecks``). Pure: a group in,
findings out."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._cdk.tokens import is_unresolved
from .._core import limits
from .._core.finding import Finding
from .._core.rule import E, Rule, Scope, Source, W, reports
from .._core.sources import SLURM_DEEP_HEALTH_CHECKS
from ..enums import DeepHealthCheck, NodeType

if TYPE_CHECKING:
    from ..instance_group import InstanceGroup
    from ..instance_type import HyperPodInstanceType

DHC_UNKNOWN = Rule(
    "HP-DHC-UNKNOWN",
    E,
    Scope.GROUP,
    "`deep_health_checks` / `OnStartDeepHealthChecks`",
    "`DeepHealthCheck` members only (plain strings are rejected)",
    source=Source.api(
        "DeepHealthCheckType",
        "InstanceStress | InstanceConnectivity (| MultiNodeTrainingValidation, which the "
        "CloudFormation schema does not list)",
    ),
)

DHC_DISTINCT = Rule(
    "HP-DHC-DISTINCT",
    E,
    Scope.GROUP,
    "`deep_health_checks` / `OnStartDeepHealthChecks`",
    "none, or 1..2 distinct checks",
    source=Source.library(
        "the library takes the checks as a set: the schema's enum has two values and a repeat is "
        "a mistake (the API allows 1..3 items and says nothing on repeats)"
    ),
)

DHC_CONNECTIVITY = Rule(
    "HP-DHC-CONNECTIVITY",
    E,
    Scope.GROUP,
    "`deep_health_checks` / `OnStartDeepHealthChecks`",
    "`InstanceConnectivity` only on a GPU or Trainium type with EFA (multi-node accelerator "
    "networking)",
    source=Source(
        SLURM_DEEP_HEALTH_CHECKS,
        "InstanceConnectivity runs NCCL tests across nodes and is only supported on instances "
        "with multi-node GPU communication (EFA); the cluster-level table lists GPU (NCCL) and "
        "Trainium (NCCOM)",
    ),
)

WARN_DHC_CONNECTIVITY = Rule(
    "HP-WARN-DHC-CONNECTIVITY",
    W,
    Scope.GROUP,
    "`deep_health_checks` / `OnStartDeepHealthChecks`",
    "`InstanceConnectivity` only on groups of at least 2 instances",
    source=Source(SLURM_DEEP_HEALTH_CHECKS, "InstanceConnectivity requires at least 2 nodes"),
)

WARN_DHC = Rule(
    "HP-WARN-DHC",
    W,
    Scope.GROUP,
    "`deep_health_checks` / `OnStartDeepHealthChecks`",
    "deep health checks on GPU and Trainium compute groups",
    source=Source(
        SLURM_DEEP_HEALTH_CHECKS,
        "deep health checks test GPU and Trainium instances before jobs land on them",
    ),
)

WARN_DHC_CPU = Rule(
    "HP-WARN-DHC-CPU",
    W,
    Scope.GROUP,
    "`deep_health_checks` / `OnStartDeepHealthChecks`",
    "no deep health checks on CPU-only types: AWS lists every check for GPU and Trainium types",
    source=Source(
        SLURM_DEEP_HEALTH_CHECKS,
        "each utility of the deep health checks lists GPU, Trainium, or both as its instance "
        "type compatibility (no CPU-only type); the API does not say it refuses them",
    ),
)

RULES = (
    DHC_UNKNOWN,
    DHC_DISTINCT,
    DHC_CONNECTIVITY,
    WARN_DHC_CONNECTIVITY,
    WARN_DHC,
    WARN_DHC_CPU,
)
"""This family's rules, in documentation order."""


@reports(DHC_UNKNOWN, DHC_DISTINCT)
def health_checks(group: InstanceGroup) -> list[Finding]:
    """Deep health checks are ``DeepHealthCheck`` members, each at most once."""
    checks: list[object] = list(group.deep_health_checks)
    found: list[Finding] = []
    known: dict[object, DeepHealthCheck] = {check.value: check for check in DeepHealthCheck}
    unknown = [check for check in checks if not isinstance(check, DeepHealthCheck)]
    if unknown:
        # Plain strings are rejected too: the group renders ``check.value``.
        hints = [f"DeepHealthCheck.{known[v].name}" for v in unknown if v in known]
        found.append(
            DHC_UNKNOWN.finding(
                value=unknown,
                allowed="DeepHealthCheck members: "
                + ", ".join(f"DeepHealthCheck.{c.name} ({c.value})" for c in DeepHealthCheck),
                fix=f"use {', '.join(hints)}"
                if hints
                else "use DeepHealthCheck.INSTANCE_STRESS / DeepHealthCheck.INSTANCE_CONNECTIVITY",
                group=group.name,
            )
        )
    values = [getattr(check, "value", check) for check in checks]
    if len(set(values)) != len(values) or len(values) > limits.MAX_DEEP_HEALTH_CHECKS:
        found.append(
            DHC_DISTINCT.finding(
                value=values,
                allowed=f"1..{limits.MAX_DEEP_HEALTH_CHECKS} distinct checks (or none)",
                fix="list each check at most once",
                group=group.name,
            )
        )
    return found


def _connectivity_gap(itype: HyperPodInstanceType) -> str:
    """Why ``itype`` cannot run ``InstanceConnectivity`` (``""`` when it can, or when the
    library does not know: a token, or a type outside the catalogue that is accelerated)."""
    if is_unresolved(itype.name) or not limits.INSTANCE_TYPE.fullmatch(itype.name):
        return ""
    if not itype.is_accelerated:
        return "has no GPUs or Trainium chips"
    if itype.efa_capable is False:
        return "has no EFA"
    return ""


@reports(DHC_CONNECTIVITY, WARN_DHC_CONNECTIVITY)
def connectivity(group: InstanceGroup) -> list[Finding]:
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
    unsupported = _connectivity_gap(itype)
    if unsupported:
        return [
            DHC_CONNECTIVITY.finding(
                value=[check.value for check in group.deep_health_checks],
                allowed="InstanceConnectivity only on GPU or Trainium types with multi-node "
                f"networking (EFA); {itype.name} {unsupported}",
                fix="drop DeepHealthCheck.INSTANCE_CONNECTIVITY (keep INSTANCE_STRESS)",
                group=group.name,
            )
        ]
    count = group.instance_count
    if count == 1:  # 0 is a group scaled in, which may grow later
        return [
            WARN_DHC_CONNECTIVITY.finding(
                value=[check.value for check in group.deep_health_checks],
                allowed=f"InstanceConnectivity only on groups of 2 or more instances (this one "
                f"has {count}): it tests the network between the group's nodes",
                fix="drop DeepHealthCheck.INSTANCE_CONNECTIVITY, or raise instance_count",
                group=group.name,
            )
        ]
    return []


@reports(WARN_DHC)
def missing_health_checks(group: InstanceGroup) -> list[Finding]:
    """Accelerator compute groups should run deep health checks (a warning)."""
    found: list[Finding] = []
    accelerated = group.instance_type.is_accelerated and group.node_type is NodeType.COMPUTE
    if accelerated and not group.deep_health_checks:
        found.append(
            WARN_DHC.finding(
                value=[],
                allowed="InstanceStress and InstanceConnectivity on accelerator groups",
                fix="pass deep_health_checks=[DeepHealthCheck.INSTANCE_STRESS, "
                "DeepHealthCheck.INSTANCE_CONNECTIVITY] so faulty GPUs are caught "
                "before jobs land on them",
                group=group.name,
            )
        )
    return found


@reports(WARN_DHC_CPU)
def cpu_health_checks(group: InstanceGroup) -> list[Finding]:
    """Deep health checks on a CPU-only type of the catalogue (a warning): AWS documents them
    for GPU and Trainium types only, so they would test little and delay the nodes."""
    itype = group.instance_type
    if not group.deep_health_checks or is_unresolved(itype.name) or itype.is_accelerated:
        return []
    if not itype.is_known:
        return []  # a type newer than the library: its accelerators are unknown
    return [
        WARN_DHC_CPU.finding(
            value=[getattr(check, "value", check) for check in group.deep_health_checks],
            allowed=f"none on {itype.name}, a CPU-only type (AWS lists the deep health checks "
            "for GPU and Trainium types)",
            fix="drop deep_health_checks on this group, or acknowledge this warning",
            group=group.name,
        )
    ]

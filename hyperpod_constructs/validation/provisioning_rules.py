"""What needs which ``NodeProvisioningMode``. Pure: a description of the cluster in, findings
out."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._core.arguments import (
    argument_finding,
)
from .._core.finding import Finding, Severity
from .._core.rule import UNCONFIRMED, Rule, Scope, Source, reports
from .._core.sources import SEARCHED, SLURM_SCALING
from ..enums import NodeProvisioningMode, SlurmLayout

if TYPE_CHECKING:
    from .spec import ClusterSpec

E, W = Severity.ERROR, Severity.WARNING

MIN_NEEDS_CONTINUOUS = Rule(
    "HP-MIN-NEEDS-CONTINUOUS",
    E,
    Scope.CROSS_GROUP,
    "`min_instance_count` / `MinInstanceCount`",
    "> 0 only with `NodeProvisioningMode.CONTINUOUS`",
    source=Source(
        SLURM_SCALING,
        "MinInstanceCount is a feature of continuous provisioning (NodeProvisioningMode "
        "Continuous)",
    ),
)

ACCOUNTING_NEEDS_CONTINUOUS = Rule(
    "HP-ACCOUNTING-NEEDS-CONTINUOUS",
    E,
    Scope.CROSS_GROUP,
    "`accounting_database` / `Orchestrator.Slurm.AccountingDatabase`",
    "only with `NodeProvisioningMode.CONTINUOUS`",
    source=Source(
        SLURM_SCALING,
        "the Slurm accounting database is supported with continuous provisioning only",
    ),
)

WARN_LAYOUT_NEEDS_STANDARD = Rule(
    "HP-WARN-LAYOUT-NEEDS-STANDARD",
    W,
    Scope.CROSS_GROUP,
    "`slurm_layout` / `SlurmConfig`",
    f"`SlurmLayout.LIFECYCLE_SCRIPTS` only with `NodeProvisioningMode.STANDARD` ({UNCONFIRMED})",
    source=Source.unconfirmed(
        SEARCHED,
        "no statement found that continuous provisioning ignores provisioning_parameters.json",
    ),
)

WARN_STRATEGY_IN_CONTINUOUS = Rule(
    "HP-WARN-STRATEGY-IN-CONTINUOUS",
    W,
    Scope.CROSS_GROUP,
    "`slurm_config_strategy` / `Orchestrator.Slurm.SlurmConfigStrategy`",
    f"only with `NodeProvisioningMode.STANDARD` ({UNCONFIRMED})",
    source=Source.unconfirmed(
        SEARCHED,
        "no statement found that SlurmConfigStrategy is refused in Continuous mode (API "
        "ClusterOrchestratorSlurmConfig.SlurmConfigStrategy: Overwrite | Managed | Merge, "
        "optional)",
    ),
)

RULES = (
    MIN_NEEDS_CONTINUOUS,
    ACCOUNTING_NEEDS_CONTINUOUS,
    WARN_LAYOUT_NEEDS_STANDARD,
    WARN_STRATEGY_IN_CONTINUOUS,
)
"""This family's rules, in documentation order."""


def _provisioning(spec: ClusterSpec) -> list[Finding]:
    found: list[Finding] = []
    mode = f"node_provisioning_mode={spec.mode.name}"
    if spec.mode is not NodeProvisioningMode.CONTINUOUS:
        for position, group in enumerate(spec.groups, start=1):
            if group.is_gated:
                found.append(
                    Finding(
                        rule=MIN_NEEDS_CONTINUOUS.id,
                        field="min_instance_count (MinInstanceCount)",
                        value=group.min_instance_count,
                        allowed=f"0 or omitted with {mode} (a minimum needs "
                        "NodeProvisioningMode.CONTINUOUS)",
                        fix="use node_provisioning_mode=NodeProvisioningMode.CONTINUOUS (the "
                        "default), or drop min_instance_count",
                        group=group.name,
                        positions=(position,),
                    )
                )
        if spec.has_accounting_database:
            found.append(
                Finding(
                    rule=ACCOUNTING_NEEDS_CONTINUOUS.id,
                    field="accounting_database (Orchestrator.Slurm.AccountingDatabase)",
                    value="an AccountingDatabase",
                    allowed=f"none with {mode} (only NodeProvisioningMode.CONTINUOUS supports it)",
                    fix="use NodeProvisioningMode.CONTINUOUS or drop accounting_database",
                )
            )
    elif spec.slurm_layout is SlurmLayout.LIFECYCLE_SCRIPTS:
        found.append(
            Finding(
                rule=WARN_LAYOUT_NEEDS_STANDARD.id,
                field="slurm_layout (SlurmConfig)",
                value=spec.slurm_layout.name,
                allowed=f"SlurmLayout.API with {mode} (Continuous mode is said to take node "
                "types and partitions only from each group's SlurmConfig, not from "
                f"provisioning_parameters.json; {UNCONFIRMED})",
                fix="use slurm_layout=SlurmLayout.API (the default), or "
                "node_provisioning_mode=NodeProvisioningMode.STANDARD, or acknowledge this "
                "warning",
            )
        )
    if spec.mode is NodeProvisioningMode.CONTINUOUS and spec.slurm_config_strategy is not None:
        found.append(
            Finding(
                rule=WARN_STRATEGY_IN_CONTINUOUS.id,
                field="slurm_config_strategy (Orchestrator.Slurm.SlurmConfigStrategy)",
                value=spec.slurm_config_strategy.value,
                allowed=f"None with {mode} (HyperPod is said to reject any value; "
                f"{UNCONFIRMED}); only with STANDARD",
                fix="remove slurm_config_strategy (Continuous mode takes the Slurm layout "
                "from each group's SlurmConfig), or acknowledge this warning",
            )
        )
    return found


@reports(
    MIN_NEEDS_CONTINUOUS,
    ACCOUNTING_NEEDS_CONTINUOUS,
    WARN_LAYOUT_NEEDS_STANDARD,
    WARN_STRATEGY_IN_CONTINUOUS,
)
def provisioning_mode(spec: ClusterSpec) -> list[Finding]:
    """The provisioning mode the other rules read (``None`` would render as STANDARD)."""
    if isinstance(spec.mode, NodeProvisioningMode):
        return _provisioning(spec)
    return [
        argument_finding(
            "node_provisioning_mode",
            spec.mode,
            "a NodeProvisioningMode, e.g. NodeProvisioningMode.CONTINUOUS (the default)",
        )
    ]

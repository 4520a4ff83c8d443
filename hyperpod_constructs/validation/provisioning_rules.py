"""What needs which ``NodeProvisioningMode``. Pure: a description of the cluster in, findings
out."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..enums import NodeProvisioningMode, SlurmLayout
from .arguments import (
    argument_finding,
)
from .finding import Finding, Severity
from .rule import Rule, Scope, reports

if TYPE_CHECKING:
    from .cluster_rules import ClusterSpec

E = Severity.ERROR

MIN_NEEDS_CONTINUOUS = Rule(
    "HP-MIN-NEEDS-CONTINUOUS",
    E,
    Scope.CROSS_GROUP,
    "`min_instance_count` / `MinInstanceCount`",
    "> 0 only with `NodeProvisioningMode.CONTINUOUS`",
)

ACCOUNTING_NEEDS_CONTINUOUS = Rule(
    "HP-ACCOUNTING-NEEDS-CONTINUOUS",
    E,
    Scope.CROSS_GROUP,
    "`accounting_database` / `Orchestrator.Slurm.AccountingDatabase`",
    "only with `NodeProvisioningMode.CONTINUOUS`",
)

LAYOUT_NEEDS_STANDARD = Rule(
    "HP-LAYOUT-NEEDS-STANDARD",
    E,
    Scope.CROSS_GROUP,
    "`slurm_layout` / `SlurmConfig`",
    "`SlurmLayout.LIFECYCLE_SCRIPTS` only with `NodeProvisioningMode.STANDARD`",
)

STRATEGY_IN_CONTINUOUS = Rule(
    "HP-STRATEGY-IN-CONTINUOUS",
    E,
    Scope.CROSS_GROUP,
    "`slurm_config_strategy` / `Orchestrator.Slurm.SlurmConfigStrategy`",
    "only with `NodeProvisioningMode.STANDARD`",
)

RULES = (
    MIN_NEEDS_CONTINUOUS,
    ACCOUNTING_NEEDS_CONTINUOUS,
    LAYOUT_NEEDS_STANDARD,
    STRATEGY_IN_CONTINUOUS,
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
                rule=LAYOUT_NEEDS_STANDARD.id,
                field="slurm_layout (SlurmConfig)",
                value=spec.slurm_layout.name,
                allowed=f"SlurmLayout.API with {mode} (Continuous mode takes node types and "
                "partitions only from each group's SlurmConfig; provisioning_parameters.json "
                "is not read)",
                fix="use slurm_layout=SlurmLayout.API (the default), or "
                "node_provisioning_mode=NodeProvisioningMode.STANDARD",
            )
        )
    if spec.mode is NodeProvisioningMode.CONTINUOUS and spec.slurm_config_strategy is not None:
        found.append(
            Finding(
                rule=STRATEGY_IN_CONTINUOUS.id,
                field="slurm_config_strategy (Orchestrator.Slurm.SlurmConfigStrategy)",
                value=spec.slurm_config_strategy.value,
                allowed=f"None with {mode} (HyperPod rejects any value); only with STANDARD",
                fix="remove slurm_config_strategy; Continuous mode takes the Slurm layout "
                "from each group's SlurmConfig",
            )
        )
    return found


@reports(
    MIN_NEEDS_CONTINUOUS, ACCOUNTING_NEEDS_CONTINUOUS, LAYOUT_NEEDS_STANDARD, STRATEGY_IN_CONTINUOUS
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

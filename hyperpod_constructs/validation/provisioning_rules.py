"""What needs which ``NodeProvisioningMode``. Pure: a description of the cluster in, findings
out."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._core import layout
from .._core.arguments import (
    argument_finding,
)
from .._core.finding import Finding
from .._core.rule import E, Rule, Scope, Source, reports
from .._core.sources import SLURM_SCALING
from ..enums import NodeProvisioningMode, SlurmLayout

if TYPE_CHECKING:
    from .spec import ClusterSpec

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
    modes=((NodeProvisioningMode.CONTINUOUS, None),),
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
    modes=((NodeProvisioningMode.CONTINUOUS, None),),
)

LAYOUT_NEEDS_STANDARD = Rule(
    "HP-LAYOUT-NEEDS-STANDARD",
    E,
    Scope.CROSS_GROUP,
    "`slurm_layout` / `SlurmConfig`",
    "`SlurmLayout.LIFECYCLE_SCRIPTS` only with `NodeProvisioningMode.STANDARD`",
    source=Source(
        SLURM_SCALING,
        'Prerequisites: "Clusters that rely on the legacy provisioning_parameters.json file in '
        'Amazon S3 are not compatible with continuous provisioning"',
    ),
    modes=((NodeProvisioningMode.STANDARD, None),),
)

STRATEGY_IN_CONTINUOUS = Rule(
    "HP-STRATEGY-IN-CONTINUOUS",
    E,
    Scope.CROSS_GROUP,
    "`slurm_config_strategy` / `Orchestrator.Slurm.SlurmConfigStrategy`",
    "only with `NodeProvisioningMode.STANDARD`",
    source=Source(
        SLURM_SCALING,
        '"Passing any SlurmConfigStrategy value results in an API error"; "Continuous '
        'provisioning operates exclusively in merge mode for slurm.conf management"',
    ),
    modes=((NodeProvisioningMode.STANDARD, None),),
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
                    MIN_NEEDS_CONTINUOUS.finding(
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
                ACCOUNTING_NEEDS_CONTINUOUS.finding(
                    value="an AccountingDatabase",
                    allowed=f"none with {mode} (only NodeProvisioningMode.CONTINUOUS supports it)",
                    fix="use NodeProvisioningMode.CONTINUOUS or drop accounting_database",
                )
            )
    elif spec.slurm_layout is SlurmLayout.LIFECYCLE_SCRIPTS:
        found.append(
            LAYOUT_NEEDS_STANDARD.finding(
                value=spec.slurm_layout.name,
                allowed=f"SlurmLayout.API with {mode} (continuous provisioning takes node "
                "types and partitions from each group's SlurmConfig; clusters that rely on "
                f"{layout.LEGACY_LAYOUT_FILE} are not compatible with it)",
                fix="use slurm_layout=SlurmLayout.API (the default) and remove "
                f"{layout.LEGACY_LAYOUT_FILE} from the lifecycle scripts, or use "
                "node_provisioning_mode=NodeProvisioningMode.STANDARD",
            )
        )
    if spec.mode is NodeProvisioningMode.CONTINUOUS and spec.slurm_config_strategy is not None:
        found.append(
            STRATEGY_IN_CONTINUOUS.finding(
                value=spec.slurm_config_strategy.value,
                allowed=f"None with {mode} (any value is an API error); only with STANDARD",
                fix="remove slurm_config_strategy: continuous provisioning always merges its "
                "partition changes into slurm.conf (merge mode)",
            )
        )
    return found


@reports(
    MIN_NEEDS_CONTINUOUS,
    ACCOUNTING_NEEDS_CONTINUOUS,
    LAYOUT_NEEDS_STANDARD,
    STRATEGY_IN_CONTINUOUS,
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

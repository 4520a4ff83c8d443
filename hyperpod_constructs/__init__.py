"""Typed AWS CDK constructs for Amazon SageMaker HyperPod clusters orchestrated by Slurm.

Start with :class:`HyperPodSlurmCluster` and :class:`InstanceGroup`; see the README and the
guides in ``docs/``.

The exports are loaded on first use (PEP 562), so that ``python -m hyperpod_constructs`` and
``hyperpod_constructs.summary`` start without importing ``aws_cdk`` (and Node.js).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .cluster import (
        AccountingDatabase,
        HyperPodClusterBase,
        HyperPodSlurmCluster,
        IHyperPodCluster,
    )
    from .enums import (
        DeepHealthCheck,
        NodeProvisioningMode,
        NodeRecovery,
        NodeType,
        SlurmConfigStrategy,
    )
    from .gate import GateDecision, GroupRequirement, MinCountGateOptions, evaluate_gate
    from .gate.construct import MinCountGate
    from .instance_group import InstanceGroup
    from .instance_type import HyperPodInstanceType
    from .lifecycle import LifecycleScripts
    from .reporting import report_validation_errors
    from .sizing import SizingError, instances_for_accelerators
    from .storage import InstanceStorage
    from .validation import Finding, HyperPodValidationError

_EXPORTS = {
    "AccountingDatabase": ".cluster",
    "HyperPodClusterBase": ".cluster",
    "HyperPodSlurmCluster": ".cluster",
    "IHyperPodCluster": ".cluster",
    "DeepHealthCheck": ".enums",
    "NodeProvisioningMode": ".enums",
    "NodeRecovery": ".enums",
    "NodeType": ".enums",
    "SlurmConfigStrategy": ".enums",
    "GateDecision": ".gate",
    "GroupRequirement": ".gate",
    "MinCountGateOptions": ".gate",
    "evaluate_gate": ".gate",
    "MinCountGate": ".gate.construct",
    "InstanceGroup": ".instance_group",
    "HyperPodInstanceType": ".instance_type",
    "LifecycleScripts": ".lifecycle",
    "report_validation_errors": ".reporting",
    "SizingError": ".sizing",
    "instances_for_accelerators": ".sizing",
    "InstanceStorage": ".storage",
    "Finding": ".validation",
    "HyperPodValidationError": ".validation",
}

__all__ = [
    "AccountingDatabase",
    "DeepHealthCheck",
    "Finding",
    "GateDecision",
    "GroupRequirement",
    "HyperPodClusterBase",
    "HyperPodInstanceType",
    "HyperPodSlurmCluster",
    "HyperPodValidationError",
    "IHyperPodCluster",
    "InstanceGroup",
    "InstanceStorage",
    "LifecycleScripts",
    "MinCountGate",
    "MinCountGateOptions",
    "NodeProvisioningMode",
    "NodeRecovery",
    "NodeType",
    "SizingError",
    "SlurmConfigStrategy",
    "evaluate_gate",
    "instances_for_accelerators",
    "report_validation_errors",
]


def __getattr__(name: str) -> Any:
    """Import an export on first access (PEP 562) and cache it in the module."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})

"""Typed AWS CDK constructs for Amazon SageMaker HyperPod clusters orchestrated by Slurm.

Start with :class:`HyperPodSlurmCluster` and :class:`InstanceGroup`; see the README and the
guides in ``docs/``.

The exports are loaded on first use (PEP 562), so that ``python -m hyperpod_constructs`` and
``hyperpod_constructs.summary`` start without importing ``aws_cdk`` (and Node.js).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:
    from .blueprints import (
        BlueprintDefaults,
        FsdpTrainingCluster,
        MegatronTrainingCluster,
        TrainingClusterBlueprint,
    )
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
    from .policy import (
        AllowedInstanceTypes,
        ClusterFacts,
        EbsCustomerManagedKey,
        HyperPodPolicy,
        MaxInstanceCount,
        MinInstanceFloor,
        PolicyExemption,
        PolicyRule,
        PolicyRuleId,
        PolicySeverity,
        PolicyViolation,
        RequiredDeepHealthChecks,
        RequiredTags,
        VpcRequired,
    )
    from .reporting import report_validation_errors
    from .sizing import (
        FsdpLayout,
        MegatronLayout,
        ParallelLayout,
        SizingError,
        SizingProblem,
        accelerator_count_of,
        fsdp_world_size,
        instances_for_accelerators,
    )
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
    "FsdpLayout": ".sizing",
    "MegatronLayout": ".sizing",
    "ParallelLayout": ".sizing",
    "SizingProblem": ".sizing",
    "accelerator_count_of": ".sizing",
    "fsdp_world_size": ".sizing",
    "AllowedInstanceTypes": ".policy",
    "ClusterFacts": ".policy",
    "EbsCustomerManagedKey": ".policy",
    "HyperPodPolicy": ".policy",
    "MaxInstanceCount": ".policy",
    "MinInstanceFloor": ".policy",
    "PolicyExemption": ".policy",
    "PolicyRule": ".policy",
    "PolicyRuleId": ".policy",
    "PolicySeverity": ".policy",
    "PolicyViolation": ".policy",
    "RequiredDeepHealthChecks": ".policy",
    "RequiredTags": ".policy",
    "VpcRequired": ".policy",
    "BlueprintDefaults": ".blueprints",
    "FsdpTrainingCluster": ".blueprints",
    "MegatronTrainingCluster": ".blueprints",
    "TrainingClusterBlueprint": ".blueprints",
}

__all__ = [
    "AccountingDatabase",
    "AllowedInstanceTypes",
    "BlueprintDefaults",
    "ClusterFacts",
    "DeepHealthCheck",
    "EbsCustomerManagedKey",
    "Finding",
    "FsdpLayout",
    "FsdpTrainingCluster",
    "GateDecision",
    "GroupRequirement",
    "HyperPodClusterBase",
    "HyperPodInstanceType",
    "HyperPodPolicy",
    "HyperPodSlurmCluster",
    "HyperPodValidationError",
    "IHyperPodCluster",
    "InstanceGroup",
    "InstanceStorage",
    "LifecycleScripts",
    "MaxInstanceCount",
    "MegatronLayout",
    "MegatronTrainingCluster",
    "MinCountGate",
    "MinCountGateOptions",
    "MinInstanceFloor",
    "NodeProvisioningMode",
    "NodeRecovery",
    "NodeType",
    "ParallelLayout",
    "PolicyExemption",
    "PolicyRule",
    "PolicyRuleId",
    "PolicySeverity",
    "PolicyViolation",
    "RequiredDeepHealthChecks",
    "RequiredTags",
    "SizingError",
    "SizingProblem",
    "SlurmConfigStrategy",
    "TrainingClusterBlueprint",
    "VpcRequired",
    "__version__",
    "accelerator_count_of",
    "evaluate_gate",
    "fsdp_world_size",
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

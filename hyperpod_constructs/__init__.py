"""Typed AWS CDK constructs for Amazon SageMaker HyperPod clusters orchestrated by Slurm.

Start with :class:`HyperPodSlurmCluster` and :class:`InstanceGroup`; see the README and the
guides in ``docs/``.
"""

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

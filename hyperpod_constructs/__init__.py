"""Typed AWS CDK constructs for Amazon SageMaker HyperPod clusters orchestrated by Slurm.

Start with :class:`HyperPodSlurmCluster` and :class:`InstanceGroup`; see the README and the
guides in ``docs/``. The top level holds what a CDK app writes: the constructs, their props
and options, enums, instance types, storage, lifecycle scripts, the validation error and
``report_validation_errors``. Importing the package changes nothing outside it (no
``sys.excepthook``, no other process-wide state): a failing synth raises aws-cdk-lib's
validation error, whose message is the library's report; ``report_validation_errors`` prints it
without a traceback for those who want that (``hyperpod_constructs.reporting``).
Everything else lives in its sub-package:

- ``hyperpod_constructs.sizing``: layouts and world sizes (``FsdpLayout``, ``MegatronLayout``);
- ``hyperpod_constructs.policy``: organisation policies as CDK Aspects (``HyperPodPolicy``);
- ``hyperpod_constructs.blueprints``: training cluster blueprints;
- ``hyperpod_constructs.gate``: the readiness gate's decision logic and requirements.

The exports are loaded on first use (PEP 562), so that ``python -m hyperpod_constructs`` and
``hyperpod_constructs.summary`` start without importing ``aws_cdk`` (and Node.js).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__

_EXPORTS: dict[str, str] = {
    # constructs and their interface
    "HyperPodSlurmCluster": ".cluster",
    "HyperPodClusterBase": ".cluster",
    "IHyperPodCluster": ".cluster",
    "MinCountGate": "._gate.construct",
    # props and options
    "InstanceGroup": ".instance_group",
    "MinCountGateOptions": ".gate.options",
    "AccountingDatabase": ".cluster",
    "LifecycleScripts": ".lifecycle",
    "InstanceStorage": ".storage",
    "HyperPodInstanceType": ".instance_type",
    # enums
    "DeepHealthCheck": ".enums",
    "NodeProvisioningMode": ".enums",
    "NodeRecovery": ".enums",
    "NodeType": ".enums",
    "SlurmConfigStrategy": ".enums",
    "SlurmLayout": ".enums",
    "BatchSizeType": ".enums",
    "CapacityType": ".enums",
    "NetworkInterfaceType": ".enums",
    "AutoPatchStrategy": ".enums",
    # scheduled updates of a group's AMI
    "BatchSize": ".updates",
    "ScheduledUpdate": ".updates",
    # errors
    "HyperPodValidationError": ".validation",
    "Finding": ".validation",
    "report_validation_errors": ".reporting",
}
"""The public names and the module each one comes from: the one list of the top level."""

# Written out (not computed from _EXPORTS) so that the docs tooling (griffe), which reads the
# source without running it, sees the exports; tests/test_api.py keeps it equal to _EXPORTS.
__all__ = [
    "AccountingDatabase",
    "AutoPatchStrategy",
    "BatchSize",
    "BatchSizeType",
    "CapacityType",
    "DeepHealthCheck",
    "Finding",
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
    "NetworkInterfaceType",
    "NodeProvisioningMode",
    "NodeRecovery",
    "NodeType",
    "ScheduledUpdate",
    "SlurmConfigStrategy",
    "SlurmLayout",
    "__version__",
    "report_validation_errors",
]

if TYPE_CHECKING:  # for type checkers only; tests/test_api.py keeps this block and _EXPORTS equal
    from ._gate.construct import MinCountGate as MinCountGate
    from .cluster import AccountingDatabase as AccountingDatabase
    from .cluster import HyperPodClusterBase as HyperPodClusterBase
    from .cluster import HyperPodSlurmCluster as HyperPodSlurmCluster
    from .cluster import IHyperPodCluster as IHyperPodCluster
    from .enums import AutoPatchStrategy as AutoPatchStrategy
    from .enums import BatchSizeType as BatchSizeType
    from .enums import CapacityType as CapacityType
    from .enums import DeepHealthCheck as DeepHealthCheck
    from .enums import NetworkInterfaceType as NetworkInterfaceType
    from .enums import NodeProvisioningMode as NodeProvisioningMode
    from .enums import NodeRecovery as NodeRecovery
    from .enums import NodeType as NodeType
    from .enums import SlurmConfigStrategy as SlurmConfigStrategy
    from .enums import SlurmLayout as SlurmLayout
    from .gate.options import MinCountGateOptions as MinCountGateOptions
    from .instance_group import InstanceGroup as InstanceGroup
    from .instance_type import HyperPodInstanceType as HyperPodInstanceType
    from .lifecycle import LifecycleScripts as LifecycleScripts
    from .reporting import report_validation_errors as report_validation_errors
    from .storage import InstanceStorage as InstanceStorage
    from .updates import BatchSize as BatchSize
    from .updates import ScheduledUpdate as ScheduledUpdate
    from .validation import Finding as Finding
    from .validation import HyperPodValidationError as HyperPodValidationError


_SUBPACKAGES = (".sizing", ".policy", ".blueprints", ".gate", ".validation")
"""Where the names that are not at the top level live (named in the AttributeError)."""


def _missing(name: str) -> AttributeError:
    message = f"module {__name__!r} has no attribute {name!r}"
    if not name.startswith("_"):  # tools probe dunder names; those never import anything
        for package in _SUBPACKAGES:
            if name in vars(importlib.import_module(package, __name__)):
                message += f"; import it from {__name__}{package}"
                break
    return AttributeError(message)


if not TYPE_CHECKING:  # hidden from type checkers, so that they reject a name not exported

    def __getattr__(name: str) -> Any:
        """Import an export on first access (PEP 562) and cache it in the module."""
        module = _EXPORTS.get(name)
        if module is None:
            raise _missing(name)
        value = getattr(importlib.import_module(module, __name__), name)
        globals()[name] = value
        return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})

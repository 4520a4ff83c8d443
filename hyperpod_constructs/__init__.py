"""Typed AWS CDK constructs for Amazon SageMaker HyperPod clusters orchestrated by Slurm.

Start with :class:`HyperPodSlurmCluster` and :class:`InstanceGroup`; see the README and the
guides in ``docs/``. The top level holds what a CDK app writes: the constructs, their props
and options, enums, instance types, storage, lifecycle scripts, the validation error and
``report_validation_errors``. Importing the package changes nothing outside it (no
``sys.excepthook``, no other process-wide state): a failing synth raises aws-cdk-lib's
validation error, whose message is the library's report; ``report_validation_errors`` prints it
without a traceback for those who want that (``hyperpod_constructs.reporting``).
Everything else lives in its public sub-package (``_SUBPACKAGES``, in this order):

- ``hyperpod_constructs.gate``: the readiness gate's decision logic and requirements;
- ``hyperpod_constructs.policy``: organisation policies as CDK Aspects (``HyperPodPolicy``);
- ``hyperpod_constructs.sizing``: layouts and world sizes (``FsdpLayout``, ``MegatronLayout``);
- ``hyperpod_constructs.validation``: the validation rules and their table;
- ``hyperpod_constructs.blueprints``: training cluster blueprints;
- ``hyperpod_constructs.tools.summary``: the clusters of a synthesized ``cdk.out``, summarized;
- ``hyperpod_constructs.tools.convert``: CreateCluster requests as CDK apps;
- ``hyperpod_constructs.tools.watch``: a live view of a deployment's gated instance groups;
- ``hyperpod_constructs.tools.plan``: what an update does to a running cluster;
- ``hyperpod_constructs.tools.preflight``: whether each gated minimum can be met, before a deploy.

The exports are loaded on first use (PEP 562), so that ``python -m hyperpod_constructs`` and
``hyperpod_constructs.tools.summary`` start without importing ``aws_cdk`` (and Node.js).
"""

from __future__ import annotations

import ast
import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__ as __version__

# The public names of the top level, the one list: type checkers and the docs tooling (griffe)
# read these imports; at run time the package reads them from its own source (_exports), so
# that ``_EXPORTS`` and ``__all__`` follow them. ``X as X`` marks an explicit re-export.
if TYPE_CHECKING:
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


def _exports(source: str) -> dict[str, str]:
    """Name -> module (``.cluster``) of the ``if TYPE_CHECKING:`` imports in ``source``."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            return {
                alias.asname or alias.name: "." * statement.level + (statement.module or "")
                for statement in node.body
                if isinstance(statement, ast.ImportFrom)
                for alias in statement.names
            }
    return {}


def _own_source() -> str:
    """This module's source, from its loader (a zip import included)."""
    get_source = getattr(__spec__.loader if __spec__ else None, "get_source", None)
    source = get_source(__name__) if get_source else None
    if not isinstance(source, str):  # pragma: no cover - installed without its .py files
        raise ImportError(f"{__name__} reads its public names from its source, which is missing")
    return source


_EXPORTS: dict[str, str] = _exports(_own_source())
"""The public names and the module each one comes from, as the imports above list them."""

__all__ = sorted([*_EXPORTS, "__version__"])

_SUBPACKAGES = (
    ".gate",
    ".policy",
    ".sizing",
    ".validation",
    ".blueprints",
    ".tools.summary",
    ".tools.convert",
    ".tools.watch",
    ".tools.plan",
    ".tools.preflight",
)
"""The public sub-packages, the one list: where the names that are not at the top level live
(named in the AttributeError); the docstring above, the docs' navigation and
docs/versioning.md list them in this order (docs/hooks.py fails the docs build otherwise)."""


def _missing(name: str) -> AttributeError:
    message = f"module {__name__!r} has no attribute {name!r}"
    if not name.startswith("_"):  # tools probe dunder names; those never import anything
        for package in _SUBPACKAGES:
            if name in getattr(importlib.import_module(package, __name__), "__all__", ()):
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

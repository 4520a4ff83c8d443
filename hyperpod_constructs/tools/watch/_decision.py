"""The gate's own readiness decision, loaded without importing ``aws_cdk``.

``watch`` calls the very function the gate's check Lambda calls
(``hyperpod_gate.decision.evaluate_gate``), so both agree on what "ready" and "rolled back"
mean. ``decision.py`` (in ``hyperpod_constructs/_runtime/hyperpod_gate/``) is standard library
only and has no relative imports, so it is loaded here from its file under a private name,
without running any package's ``__init__`` (nothing of ``aws_cdk`` is imported).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

_NAME = "hyperpod_constructs.watch._gate_decision"
_PACKAGE_NAME = "hyperpod_constructs._runtime.hyperpod_gate.decision"
_FILE = Path(__file__).resolve().parents[2] / "_runtime" / "hyperpod_gate" / "decision.py"


def _load() -> ModuleType:
    for name in (_PACKAGE_NAME, _NAME):
        if name in sys.modules:
            return sys.modules[name]
    spec = importlib.util.spec_from_file_location(_NAME, _FILE)
    if spec is None or spec.loader is None:  # pragma: no cover - the file ships with the package
        raise ImportError(f"cannot load the gate decision from {_FILE}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[_NAME] = module  # dataclasses look their module up while the body runs
    spec.loader.exec_module(module)
    return module


if TYPE_CHECKING:
    from ..._runtime.hyperpod_gate.decision import (
        GateDecision,
        GroupProgress,
        GroupRequirement,
        evaluate_gate,
    )
else:
    _module = _load()
    GateDecision = _module.GateDecision
    GroupProgress = _module.GroupProgress
    GroupRequirement = _module.GroupRequirement
    evaluate_gate = _module.evaluate_gate

__all__ = ["GateDecision", "GroupProgress", "GroupRequirement", "evaluate_gate"]

"""The MinCount readiness gate's values: the pure decision, its options and its state machine's
definition. The construct, ``MinCountGate``, is imported from ``hyperpod_constructs``.

The pure parts (the decision, the arm properties' contract) import without aws_cdk, so the
template summary CLI can use them; ``MinCountGateOptions`` loads aws_cdk on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._runtime.hyperpod_gate.contract import Requirement
from .._runtime.hyperpod_gate.decision import GateDecision, GroupRequirement, evaluate_gate

if TYPE_CHECKING:
    from .options import MinCountGateOptions

__all__ = [
    "GateDecision",
    "GroupRequirement",
    "MinCountGateOptions",
    "Requirement",
    "evaluate_gate",
]


def __getattr__(name: str) -> Any:
    if name == "MinCountGateOptions":
        from .options import MinCountGateOptions

        return MinCountGateOptions
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""Lambda code of the HyperPod MinCount gate.

This folder's parent (``_runtime/``) is the Lambda asset root: the handlers are
``hyperpod_gate.poll.handler`` and ``hyperpod_gate.arm.handler``.  The package
uses relative imports only, so it also imports as
``hyperpod_constructs._runtime.hyperpod_gate``.  Importing the package
itself pulls in only the pure decision code (no boto3).
"""

from .decision import (
    NOT_LISTED,
    GateDecision,
    GateStatus,
    GroupProgress,
    GroupRequirement,
    evaluate_gate,
)

__all__ = [
    "NOT_LISTED",
    "GateDecision",
    "GateStatus",
    "GroupProgress",
    "GroupRequirement",
    "evaluate_gate",
]

"""The MinCount readiness gate: the pure decision, its options and the CDK construct."""

from .options import MinCountGateOptions
from .runtime.hyperpod_gate.decision import GateDecision, GroupRequirement, evaluate_gate

__all__ = ["GateDecision", "GroupRequirement", "MinCountGateOptions", "evaluate_gate"]

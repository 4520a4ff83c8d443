"""The validation rules of HyperPod clusters (docs/validation.md): each rule's metadata bound to
the pure check that reports it (:class:`Rule`, :class:`Check`), in one module per family of
related rules (``*_rules.py``), and the one registry of every rule (:data:`RULES`).

The cluster collects the findings of every stage (its own props, each group, the readiness
gate's options, the cross-group rules) and reports them all at synth, in one node validation
per cluster."""

from .._core.arguments import argument_finding
from .._core.finding import Finding, HyperPodArgumentError, HyperPodValidationError, Severity
from .._core.rule import Check, Rule, Scope, reports
from .cluster_rules import (
    ClusterSpec,
    accounting_findings,
    network_selection_findings,
    node_recovery_findings,
    override_network_findings,
    tag_findings,
    validate_cluster,
)
from .gate_rules import gate_findings, gate_option_findings
from .group_rules import validate_group
from .lifecycle_rules import lifecycle_findings
from .name_rules import check_name
from .registry import FAMILIES, RULES, rule_table

__all__ = [
    "FAMILIES",
    "RULES",
    "Check",
    "ClusterSpec",
    "Finding",
    "HyperPodArgumentError",
    "HyperPodValidationError",
    "Rule",
    "Scope",
    "Severity",
    "accounting_findings",
    "argument_finding",
    "check_name",
    "gate_findings",
    "gate_option_findings",
    "lifecycle_findings",
    "network_selection_findings",
    "node_recovery_findings",
    "override_network_findings",
    "reports",
    "rule_table",
    "tag_findings",
    "validate_cluster",
    "validate_group",
]

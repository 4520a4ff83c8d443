"""The validation rules of HyperPod clusters (docs/validation.md): pure functions returning
:class:`Finding` lists, and the one registry of every rule (:data:`RULES`).

The cluster collects the findings of every stage (its own props, each group, the readiness
gate's options, the cross-group rules) and reports them all at synth, in one node validation
per cluster."""

from .arguments import argument_finding
from .cluster_rules import (
    ClusterSpec,
    accounting_findings,
    network_selection_findings,
    node_recovery_findings,
    override_network_findings,
    tag_findings,
    validate_cluster,
)
from .finding import Finding, HyperPodArgumentError, HyperPodValidationError, Severity
from .gate_rules import gate_option_findings
from .group_rules import check_name, gate_findings, validate_group
from .lifecycle_rules import lifecycle_findings
from .registry import RULES, Rule, Scope, rule_table

__all__ = [
    "RULES",
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
    "rule_table",
    "tag_findings",
    "validate_cluster",
    "validate_group",
]

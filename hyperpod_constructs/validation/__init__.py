"""The validation rules of HyperPod clusters (docs/validation.md): pure functions returning
:class:`Finding` lists. The cluster runs the per-group rules when a group is added and the
cross-group rules as a node validation at synth."""

from .cluster_rules import (
    ClusterSpec,
    accounting_findings,
    network_selection_findings,
    node_recovery_findings,
    override_network_findings,
    tag_findings,
    validate_cluster,
)
from .finding import Finding, HyperPodValidationError, Severity
from .group_rules import check_name, gate_findings, lifecycle_findings, validate_group

__all__ = [
    "ClusterSpec",
    "Finding",
    "HyperPodValidationError",
    "Severity",
    "accounting_findings",
    "check_name",
    "gate_findings",
    "lifecycle_findings",
    "network_selection_findings",
    "node_recovery_findings",
    "override_network_findings",
    "tag_findings",
    "validate_cluster",
    "validate_group",
]

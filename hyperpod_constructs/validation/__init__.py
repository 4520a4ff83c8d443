"""Synth-time rules for HyperPod clusters: pure functions returning :class:`Finding` lists."""

from .cluster_rules import ClusterSpec, validate_cluster
from .finding import Finding, HyperPodValidationError, Severity
from .group_rules import check_name, lifecycle_findings, validate_group

__all__ = [
    "ClusterSpec",
    "Finding",
    "HyperPodValidationError",
    "Severity",
    "check_name",
    "lifecycle_findings",
    "validate_cluster",
    "validate_group",
]

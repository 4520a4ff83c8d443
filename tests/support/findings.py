"""The errors every HyperPod cluster in a scope collected (what its node validation reports
at synth), for tests that look at findings without synthesizing."""

from __future__ import annotations

from constructs import IConstruct

from hyperpod_constructs import HyperPodSlurmCluster
from hyperpod_constructs.validation import Finding


def errors_in(scope: IConstruct) -> list[Finding]:
    """Every error finding of every cluster at or below ``scope``, in construct order."""
    return [
        finding
        for node in scope.node.find_all()
        if isinstance(node, HyperPodSlurmCluster)
        for finding in node.findings()
    ]


def report_of(scope: IConstruct) -> str:
    """The findings as the synth prints them: ``[path] message``, one per line."""
    return "\n".join(
        f"[{node.node.path}] {finding.message()}"
        for node in scope.node.find_all()
        if isinstance(node, HyperPodSlurmCluster)
        for finding in node.findings()
    )

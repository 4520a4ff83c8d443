"""What ``UpdateCluster`` (or AWS's guides) refuses in a new template's cluster (pure): the
limits of ``_core/limits.py`` and the rules the constructs check with (their ids, statements and
sources from ``validation/``), applied to the template's evaluated values. A value plan cannot
evaluate is not refused here (the plan says "cannot tell" for it elsewhere).

The rule modules load ``aws_cdk`` (their checks ask whether a value is a token), so a rule is
imported only to word a refusal that was found: a plan that refuses nothing starts fast.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..._core import limits
from ..._core.sources import SLURM_SCALING
from ...enums import NodeProvisioningMode
from ..summary.model import render_value
from .resolve import as_count

if TYPE_CHECKING:
    from ..._core.rule import Rule

CONTINUOUS = NodeProvisioningMode.CONTINUOUS.value
MODE_SWITCH = (
    f"AWS's continuous-provisioning guide ({SLURM_SCALING}): existing clusters of the previous "
    "scaling model cannot be migrated to continuous provisioning"
)


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _refused(rule: Rule, where: str, value: object) -> str:
    """One refusal in the rule's words:
    ``group gpu InstanceCount 7000: ... must be 0..6758 [HP-COUNT-RANGE; API ...]``."""
    source = f"; {rule.source.where}" if rule.source is not None else ""
    return (
        f"refused: {where} {render_value(value)}: {rule.field} must be {rule.summary} "
        f"[{rule.id}{source}]"
    )


def _group_refusals(group: Mapping[str, Any], continuous: bool) -> list[str]:
    name = render_value(group.get("InstanceGroupName"))
    count, minimum = as_count(group.get("InstanceCount")), as_count(group.get("MinInstanceCount"))
    found = []
    top = limits.MAX_INSTANCE_COUNT
    if count is not None and not 0 <= count <= top:
        from ...validation.count_rules import COUNT_RANGE

        found.append(_refused(COUNT_RANGE, f"group {name} InstanceCount", count))
    if minimum is not None and not 0 <= minimum <= top:
        from ...validation.count_rules import MIN_RANGE

        found.append(_refused(MIN_RANGE, f"group {name} MinInstanceCount", minimum))
    elif minimum is not None and count is not None and minimum > count:
        from ...validation.count_rules import MIN_ABOVE_COUNT

        where = f"group {name} MinInstanceCount"
        found.append(_refused(MIN_ABOVE_COUNT, where, f"{minimum} > {count}"))
    if minimum is not None and minimum > 0 and not continuous:
        from ...validation.provisioning_rules import MIN_NEEDS_CONTINUOUS

        where = f"group {name} MinInstanceCount without NodeProvisioningMode {CONTINUOUS}:"
        found.append(_refused(MIN_NEEDS_CONTINUOUS, where, minimum))
    return found


def refusals(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> tuple[str, ...]:
    """Why ``UpdateCluster`` (``old``: the running cluster's resource) or ``CreateCluster``
    (``old`` None) refuses the cluster resource ``new`` (both evaluated); empty: nothing
    refused that plan can read.

    :param old: the baseline's cluster resource, or None for a new cluster.
    :param new: the new template's cluster resource.
    """
    properties = _mapping(new.get("Properties"))
    continuous = properties.get("NodeProvisioningMode") == CONTINUOUS
    found: list[str] = []
    groups = properties.get("InstanceGroups")
    if isinstance(groups, list):
        if len(groups) > limits.MAX_INSTANCE_GROUPS:
            from ...validation.layout_rules import GROUPS_COUNT

            found.append(_refused(GROUPS_COUNT, "InstanceGroups", f"{len(groups)} groups"))
        for group in groups:
            if isinstance(group, Mapping):
                found += _group_refusals(group, continuous)
    slurm = _mapping(_mapping(properties.get("Orchestrator")).get("Slurm"))
    strategy = slurm.get("SlurmConfigStrategy")
    if continuous and strategy is not None:
        from ...validation.provisioning_rules import STRATEGY_IN_CONTINUOUS

        where = f"Orchestrator.Slurm.SlurmConfigStrategy with NodeProvisioningMode {CONTINUOUS}:"
        found.append(_refused(STRATEGY_IN_CONTINUOUS, where, strategy))
    if old is not None:
        before = _mapping(old.get("Properties")).get("NodeProvisioningMode")
        if before is None and continuous:
            found.append(
                f"refused: NodeProvisioningMode (not set) -> {CONTINUOUS} on a running cluster: "
                + MODE_SWITCH
            )
    return tuple(found)

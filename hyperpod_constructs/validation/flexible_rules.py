"""Flexible instance groups (several instance types in priority order) and automatic patching.
Pure: a group in, findings out.

Sources:

- ``InstanceRequirements``: API reference ``ClusterInstanceRequirements`` and botocore's
  ``ClusterInstanceTypes`` (1..20 types; "HyperPod attempts to provision instances using the
  first instance type in the list and falls back to subsequent types if capacity is
  unavailable"); ``ClusterInstanceGroupSpecification``: "The InstanceType and
  InstanceRequirements properties are mutually exclusive". The CloudFormation schema
  (``AWS::SageMaker::Cluster`` ``InstanceRequirements``) says the same 1..20.
- ``AutoPatchConfig``: API reference ``ClusterAutoPatchConfig`` (``WhenIdle`` /
  ``WhenAllIdle``; ``DrainFirst`` "available only for clusters that use Amazon EKS"), and the
  CloudFormation schema, whose ``PatchingStrategy`` enum has only ``WhenIdle`` / ``WhenAllIdle``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from .._core.arguments import check, check_items, instance_of
from .._core.finding import Finding
from .._core.rule import E, Rule, Scope, Source, W, reports
from .._core.sources import SEARCHED
from ..enums import AutoPatchStrategy
from ..instance_type import HyperPodInstanceType, known_names

if TYPE_CHECKING:
    from ..instance_group import InstanceGroup

TYPES_FIELD = "instance_types (InstanceRequirements.InstanceTypes)"
MAX_TYPES = 20
"""``ClusterInstanceTypes`` max (botocore) and the schema's ``maxItems``."""

FLEX_TYPES = Rule(
    "HP-FLEX-TYPES",
    E,
    Scope.GROUP,
    "`instance_types` / `InstanceRequirements.InstanceTypes`",
    f"1..{MAX_TYPES} instance types in priority order (the API's limit), instead of "
    "`instance_type`, never both",
    source=Source.api(
        "ClusterInstanceRequirements.InstanceTypes",
        "1..20 types in priority order; InstanceType and InstanceRequirements are mutually "
        "exclusive (ClusterInstanceGroupSpecification)",
    ),
)

WARN_FLEX_REPEAT = Rule(
    "HP-WARN-FLEX-REPEAT",
    W,
    Scope.GROUP,
    "`instance_types` / `InstanceRequirements.InstanceTypes`",
    "each type once (a repeated type adds no fallback; not confirmed by AWS's documentation "
    "as an error)",
    source=Source.unconfirmed(
        SEARCHED, "no statement on repeated types in InstanceRequirements.InstanceTypes"
    ),
)

WARN_FLEX_MIXED = Rule(
    "HP-WARN-FLEX-MIXED",
    W,
    Scope.GROUP,
    "`instance_types` / `InstanceRequirements.InstanceTypes`",
    "types with the same accelerators per instance: the group is one Slurm partition, and a "
    "job sized for the first type's GPUs per node does not fit a fallback with fewer",
    source=Source.library(
        "advice: a flexible group is one Slurm partition, and jobs are sized per node"
    ),
)

RULES = (FLEX_TYPES, WARN_FLEX_REPEAT, WARN_FLEX_MIXED)
"""This family's rules."""


def _finding(rule: Rule, group: InstanceGroup, value: object, allowed: str, fix: str) -> Finding:
    return rule.finding(field=TYPES_FIELD, value=value, allowed=allowed, fix=fix, group=group.name)


@reports(FLEX_TYPES, WARN_FLEX_REPEAT, WARN_FLEX_MIXED)
def flexible_types(group: InstanceGroup) -> list[Finding]:
    """A flexible group's types: 1..20, each a :class:`HyperPodInstanceType`, the first one
    also its ``instance_type`` (the factories set it so), each listed once, with the same
    accelerator count."""
    types = group.instance_types
    if types == ():
        return []
    found = check_items(
        "instance_types",
        types,
        instance_of(HyperPodInstanceType),
        "HyperPodInstanceType",
        fix="pass HyperPodInstanceType constants, e.g. HyperPodInstanceType.ML_P5_48XLARGE",
        group=group.name,
    )
    if found:
        return found
    names = [t.name for t in types]
    if not 1 <= len(types) <= MAX_TYPES:
        found.append(
            _finding(
                FLEX_TYPES,
                group,
                f"{len(types)} types",
                f"1..{MAX_TYPES} instance types",
                f"keep the {MAX_TYPES} you prefer most, in priority order",
            )
        )
    if group.instance_type != types[0]:
        found.append(
            _finding(
                FLEX_TYPES,
                group,
                {"instance_type": group.instance_type, "instance_types": names},
                "instance_type or instance_types, not both (the API: mutually exclusive)",
                "build the group with InstanceGroup.compute(..., instance_types=[...]) "
                "(or .controller / .login) and no instance_type",
            )
        )
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        found.append(
            _finding(
                WARN_FLEX_REPEAT,
                group,
                names,
                f"each type once ({', '.join(repeated)} is listed more than once)",
                "drop the repeated entries",
            )
        )
    counts = {t.name: _accelerators(t) for t in types}
    if len({count for count in counts.values() if count is not None}) > 1:
        listed = ", ".join(f"{name} {count}" for name, count in counts.items() if count is not None)
        found.append(
            _finding(
                WARN_FLEX_MIXED,
                group,
                names,
                f"types with the same accelerators per instance (here: {listed})",
                "give the fallbacks their own group and partition, or size jobs for the "
                "smallest count (min_accelerators does: it sizes by the fewest per instance)",
            )
        )
    return found


def _accelerators(itype: HyperPodInstanceType) -> int | None:
    """Accelerators per instance: 0 for a CPU type, ``None`` when the library does not know."""
    if itype.accelerator_count is not None:
        return itype.accelerator_count
    return None if itype.is_accelerated or itype.name not in known_names() else 0


@reports()
def auto_patch(group: InstanceGroup) -> list[Finding]:
    """``auto_patch`` is an :class:`AutoPatchStrategy` member (or ``None``): ``HP-ARG-TYPE``."""
    return check(
        "auto_patch (AutoPatchConfig.PatchingStrategy)",
        group.auto_patch,
        instance_of(AutoPatchStrategy),
        "an AutoPatchStrategy member, e.g. AutoPatchStrategy.WHEN_IDLE",
        optional=True,
        group=group.name,
    )


def per_type_findings(
    group: InstanceGroup, rules: Iterable[Callable[[InstanceGroup], list[Finding]]]
) -> list[Finding]:
    """Every group rule run once per fallback type of a flexible group: what a rule reports
    for the group with ``instance_types[i]`` that it does not report for the first type (the
    group as validated) is reported once more, naming that type. So each type gets the
    checks of ``instance_type`` (its shape, a likely typo, deep health checks it cannot run)
    without any rule knowing about flexible groups.
    """
    types = group.instance_types
    if len(types) < 2 or not all(isinstance(t, HyperPodInstanceType) for t in types):
        return []
    rules = tuple(rules)
    primary = {_key(f) for f in _run(rules, group)}
    found: list[Finding] = []
    for index, itype in enumerate(types[1:], start=1):
        variant = dataclasses.replace(group, instance_type=itype, instance_types=())
        for item in _run(rules, variant):
            if _key(item) not in primary:
                found.append(_for_type(item, index, itype))
    return found


def _run(
    rules: tuple[Callable[[InstanceGroup], list[Finding]], ...], group: InstanceGroup
) -> list[Finding]:
    return [item for rule in rules for item in rule(group)]


def _key(item: Finding) -> tuple[str, str, str, str]:
    return (item.rule, item.field, repr(item.value), item.allowed)


def _for_type(item: Finding, index: int, itype: HyperPodInstanceType) -> Finding:
    where = f"instance_types[{index}] (InstanceRequirements.InstanceTypes[{index}])"
    if item.field.startswith("instance_type ("):
        return dataclasses.replace(item, field=where)
    return dataclasses.replace(item, allowed=f"with {itype.name} ({where}): {item.allowed}")

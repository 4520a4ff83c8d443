"""Every rule for one instance group, in order. Pure: a group in, findings out.

The rules live in their families (``name_rules``, ``count_rules``, ``partition_rules``,
``node_rules``, ``health_check_rules``, ``storage_rules``, ``update_rules``, ``network_rules``,
``lifecycle_rules``, ``gate_rules``); this module runs them: the name, the group checks in
the order the registry declares (``GROUP_CHECKS``), the lifecycle scripts and the gate.
Every rule skips a value that is an unresolved CDK token of the documented kind (it is only
known at deploy time) and still checks the concrete values next to it.
"""

from __future__ import annotations

from collections.abc import Callable

from .._core.arguments import TOKEN, check, instance_of, is_bool, raise_if_any
from .._core.finding import Finding
from ..instance_group import InstanceGroup
from .count_rules import sizing
from .flexible_rules import per_type_findings
from .gate_rules import gate_findings
from .group_arguments import group_argument_findings, label
from .lifecycle_rules import lifecycle_findings
from .name_rules import check_name, group_name
from .registry import GROUP_CHECKS

__all__ = ["GROUP_RULES", "TOKEN", "check_name", "gate_findings", "validate_group"]
"""``TOKEN``, ``check_name`` and ``gate_findings`` live in their families; kept importable
from here for code written against the former single module."""

GROUP_RULES: tuple[Callable[[InstanceGroup], list[Finding]], ...] = GROUP_CHECKS
"""The group's checks in reporting order (errors first, then what real configurations taught:
settings HyperPod accepts that do not do what the user meant), as the registry declares them
(:data:`~.registry.GROUP_CHECKS`)."""


def validate_group(
    group: InstanceGroup, *, gate: bool = False, role_owned: bool = True
) -> list[Finding]:
    """Every finding (errors and warnings) for one instance group, in rule order.

    A field of the wrong type (``HP-ARG-TYPE``) that other rules must read stops the group's
    other rules (they could not read it); its name and the factory's findings are still
    reported.

    :param group: the instance group.
    :param gate: whether the cluster's readiness gate is enabled; adds
        :func:`gate_findings`. Default: False.
    :param role_owned: whether the group's execution role is defined in the app (see
        :func:`lifecycle_findings`). Default: True.
    """
    raise_if_any(
        "validate_group",
        [
            *check("group", group, instance_of(InstanceGroup), "an InstanceGroup"),
            *check("gate", gate, is_bool, "a bool"),
            *check("role_owned", role_owned, is_bool, "a bool"),
        ],
    )
    name = label(group)
    found = group_name(group)
    arguments = group_argument_findings(group)
    if arguments:
        return [*found, *arguments, *sizing(group)]
    for rule in GROUP_RULES:
        found += rule(group)
    found += per_type_findings(group, GROUP_RULES)
    found += lifecycle_findings(group.lifecycle_scripts, group=name, role_owned=role_owned)
    if gate:
        found += gate_findings(group)
    return found

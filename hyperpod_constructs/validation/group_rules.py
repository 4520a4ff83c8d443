"""Every rule for one instance group, in order. Pure: a group in, findings out.

The rules live in their families (``name_rules``, ``count_rules``, ``partition_rules``,
``node_rules``, ``health_check_rules``, ``storage_rules``, ``update_rules``, ``network_rules``,
``lifecycle_rules``, ``gate_rules``); this module runs them. Every rule skips a value that is an
unresolved CDK token of the documented kind (it is only known at deploy time) and still checks
the concrete values next to it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .._core.arguments import TOKEN
from .._core.finding import Finding
from .count_rules import controller_count, counts, sizing
from .flexible_rules import auto_patch, flexible_types, per_type_findings
from .gate_rules import gate_findings
from .group_arguments import group_argument_findings, label
from .health_check_rules import (
    connectivity,
    cpu_health_checks,
    health_checks,
    missing_health_checks,
)
from .lifecycle_rules import lifecycle_findings
from .name_rules import check_name, group_name
from .network_rules import override_network
from .node_rules import identifiers, threads_per_core, unknown_instance_type
from .partition_rules import dev_partition, partition_name
from .storage_rules import storage_configs
from .update_rules import scheduled_update

if TYPE_CHECKING:
    from ..instance_group import InstanceGroup

__all__ = ["GROUP_RULES", "TOKEN", "check_name", "gate_findings", "validate_group"]
"""``TOKEN``, ``check_name`` and ``gate_findings`` live in their families; kept importable
from here for code written against the former single module."""

GROUP_RULES: tuple[Callable[[InstanceGroup], list[Finding]], ...] = (
    counts,
    sizing,
    partition_name,
    threads_per_core,
    health_checks,
    storage_configs,
    identifiers,
    scheduled_update,
    override_network,
    missing_health_checks,
    controller_count,
    connectivity,
    cpu_health_checks,
    dev_partition,
    unknown_instance_type,
    flexible_types,
    auto_patch,
)
"""The group's checks in reporting order (errors first, then what real configurations taught:
settings HyperPod accepts that do not do what the user meant)."""


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

"""The one rule registry: every rule of the library, collected from its families.

A rule is one :class:`~hyperpod_constructs.validation.Rule` (id, severity, scope, field,
one-line summary) bound to the pure check that reports it
(:func:`~hyperpod_constructs.validation.reports`), both in the ``*_rules.py`` module of its
family; each family lists its rules in ``RULES``, and :data:`FAMILIES` lists the families once.
The list the families imply is derived here (:data:`RULES`); the order of the checks of one
instance group is declared here once (:data:`GROUP_CHECKS`). Adding a rule is its
declaration, its check and its findings (``RULE.finding(...)``) in its family, plus its test
case; the rule table in
docs/validation.md is generated from this registry (``python -m
hyperpod_constructs.validation --write``), and a test fails when it is stale. Ids are stable:
users acknowledge warnings by id (``hyperpod:<rule id>``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

from .._core import arguments
from .._core.rule import Check, Rule, Scope
from ..enums import NodeProvisioningMode
from . import (
    blueprint_rules,
    cluster_rules,
    count_rules,
    flexible_rules,
    gate_rules,
    health_check_rules,
    layout_rules,
    lifecycle_rules,
    name_rules,
    network_rules,
    node_rules,
    partition_rules,
    provisioning_rules,
    storage_rules,
    update_rules,
)

__all__ = [
    "FAMILIES",
    "GROUP_CHECKS",
    "RULES",
    "Rule",
    "Scope",
    "mode_table",
    "rule",
    "rule_table",
]

FAMILIES: tuple[ModuleType, ...] = (
    arguments,
    name_rules,
    count_rules,
    partition_rules,
    node_rules,
    flexible_rules,
    health_check_rules,
    storage_rules,
    lifecycle_rules,
    update_rules,
    network_rules,
    cluster_rules,
    layout_rules,
    provisioning_rules,
    gate_rules,
    blueprint_rules,
)
"""Every rule family, in documentation order (arguments, one group, the network, the cluster,
the cluster's groups together, the gate, the blueprints)."""


def _collect(families: tuple[ModuleType, ...]) -> dict[str, Rule]:
    found: dict[str, Rule] = {}
    for family in families:
        for entry in family.RULES:
            if entry.id in found:
                raise ValueError(f"rule {entry.id} is declared twice ({family.__name__})")
            found[entry.id] = entry
    return found


RULES: dict[str, Rule] = _collect(FAMILIES)
"""Every rule of the library, by id, in documentation order."""


GROUP_CHECKS: tuple[Check[...], ...] = (
    # the errors of one group
    count_rules.counts,
    count_rules.sizing,
    partition_rules.partition_name,
    node_rules.threads_per_core,
    health_check_rules.health_checks,
    storage_rules.storage_configs,
    node_rules.identifiers,
    update_rules.scheduled_update,
    network_rules.override_network,
    # what real configurations taught: settings HyperPod accepts that do not do what the
    # user meant
    health_check_rules.missing_health_checks,
    count_rules.controller_count,
    health_check_rules.connectivity,
    health_check_rules.cpu_health_checks,
    partition_rules.dev_partition,
    node_rules.unknown_instance_type,
    flexible_rules.flexible_types,
    flexible_rules.auto_patch,
)
"""The checks of one instance group, declared once, in the order ``validate_group`` runs and
reports them: the errors of one group before what real configurations taught. A check of a
group rule that is not listed here never runs (a test fails)."""

TABLE_BEGIN = "<!-- rule-table:begin (generated from validation/registry.py) -->"
TABLE_END = "<!-- rule-table:end -->"
MODE_TABLE_BEGIN = "<!-- mode-table:begin (generated from validation/registry.py) -->"
MODE_TABLE_END = "<!-- mode-table:end -->"


def rule(rule_id: str) -> Rule:
    """The registered rule ``rule_id``.

    :raises KeyError: no such rule (a typo in a check is caught by the tests).
    """
    return RULES[rule_id]


MODES = (NodeProvisioningMode.STANDARD, NodeProvisioningMode.CONTINUOUS)
"""The table's severity columns, in order."""


def severity_cell(entry: Rule, mode: NodeProvisioningMode) -> str:
    """How the table shows ``entry``'s severity in ``mode``: ``error``, ``warning``, or ``-``
    where the rule does not apply."""
    severity = entry.severity_in(mode)
    return "-" if severity is None else str(severity)


def rule_anchor(rule_id: str) -> str:
    """The anchor of a rule's row in docs/validation.md: ``validation.md#hp-min-above-count``."""
    return rule_id.lower()


def rule_table() -> str:
    """The Markdown table of every rule, as docs/validation.md shows it: its severity with
    ``NodeProvisioningMode.STANDARD`` and with ``CONTINUOUS`` (the default); each id is its own
    link target (``rule_anchor``), never wrapped (the site's CSS class ``rule-id``)."""
    lines = [
        "| Rule | Standard | Continuous | Scope | Field "
        "| Allowed (error) / recommended (warning) | Source |",
        "|---|---|---|---|---|---|---|",
    ]
    for entry in RULES.values():
        summary = entry.summary.replace("|", "\\|")
        source = entry.source.markdown().replace("|", "\\|") if entry.source else ""
        severities = " | ".join(severity_cell(entry, mode) for mode in MODES)
        anchor = rule_anchor(entry.id)
        lines.append(
            f'| <a id="{anchor}" class="rule-id" href="#{anchor}"><code>{entry.id}</code></a> '
            f"| {severities} | {entry.scope} | {entry.field} | {summary} | {source} |"
        )
    return "\n".join(lines)


def mode_table() -> str:
    """The Markdown table of the rules whose severity depends on the provisioning mode: what
    changes when a cluster switches modes."""
    lines = ["| Rule | Standard | Continuous | Allowed |", "|---|---|---|---|"]
    for entry in RULES.values():
        cells = [severity_cell(entry, mode) for mode in MODES]
        if len(set(cells)) > 1:
            summary = entry.summary.replace("|", "\\|")
            lines.append(f"| `{entry.id}` | {' | '.join(cells)} | {summary} |")
    return "\n".join(lines)


def _between(markdown: str, begin: str, end: str, table: str) -> str:
    head, found_begin, rest = markdown.partition(begin)
    _, found_end, tail = rest.partition(end)
    if not found_begin or not found_end:
        raise ValueError(f"the table markers {begin!r} / {end!r} are missing")
    return f"{head}{begin}\n{table}\n{end}{tail}"


def with_rule_table(markdown: str) -> str:
    """``markdown`` with the text between the table markers replaced by :func:`rule_table`
    and :func:`mode_table`.

    :raises ValueError: the markers are missing.
    """
    markdown = _between(markdown, MODE_TABLE_BEGIN, MODE_TABLE_END, mode_table())
    return _between(markdown, TABLE_BEGIN, TABLE_END, rule_table())


def main(argv: list[str]) -> int:
    """Exit 1 when docs/validation.md's rule table is stale; with ``--write``, regenerate it.
    Run from the repository root."""
    path = Path("docs") / "validation.md"
    text = path.read_text(encoding="utf-8")
    fresh = with_rule_table(text)
    if "--write" in argv:
        path.write_text(fresh, encoding="utf-8")
        return 0
    if fresh != text:
        sys.stderr.write(
            f"{path}: the rule table is stale; run python -m hyperpod_constructs.validation "
            "--write\n"
        )
        return 1
    return 0

"""The verdicts as plain text (one block per cluster, the numbers under each group) or as one
JSON object (``schema_version`` changes only when a field is removed or changes meaning)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..._core.sanitize import printable
from .verdict import Check, GroupVerdict, Verdict, worst

JSON_SCHEMA_VERSION = 1
"""Version of the JSON document printed by ``preflight --json``."""
EXIT_MET = 0
EXIT_NOT_MET = 3
"""A gated group's minimum cannot be met, or could not be checked."""
_WORDS: dict[Verdict, str] = {"met": "met", "short": "CANNOT BE MET", "unknown": "UNKNOWN"}


@dataclass(frozen=True)
class Report:
    """What ``preflight`` found, in one region."""

    region: str
    verdicts: tuple[GroupVerdict, ...]
    notes: tuple[str, ...] = ()

    @property
    def verdict(self) -> Verdict:
        return worst(v.verdict for v in self.verdicts)

    @property
    def exit_code(self) -> int:
        return EXIT_MET if self.verdict == "met" else EXIT_NOT_MET


def _check_line(check: Check) -> list[str]:
    lines = [f"    {check.verdict:<7} {printable(check.subject)}: {printable(check.detail)}"]
    if check.fix:
        lines.append(f"            fix: {printable(check.fix)}")
    return lines


def _group_title(verdict: GroupVerdict) -> str:
    group = verdict.group
    types = ", ".join(group.instance_types) or "?"
    plan = " on a training plan" if group.training_plan else ""
    short = f" ({verdict.short_by} short)" if verdict.short_by else ""
    return (
        f"  group {printable(group.name)} ({printable(types)}{plan}), minimum "
        f"{printable(str(group.minimum))}: {_WORDS[verdict.verdict]}{short}"
    )


def render_text(report: Report) -> str:
    """The report as text, ending with the one-line conclusion."""
    lines: list[str] = []
    seen: list[str] = []
    for verdict in report.verdicts:
        label = verdict.cluster.label
        if label not in seen:
            seen.append(label)
            lines.append(f"{printable(label)}, region {report.region}")
        lines.append(_group_title(verdict))
        for check in verdict.checks:
            lines += _check_line(check)
    lines += [f"note: {printable(note)}" for note in report.notes]
    if not report.verdicts:
        lines.append("no gated instance group (MinInstanceCount > 0): nothing to check")
        return "\n".join(lines) + "\n"
    counts = {v: sum(1 for g in report.verdicts if g.verdict == v) for v in _WORDS}
    conclusion = {
        "met": "every gated group's minimum can be met",
        "short": "a gated group's minimum cannot be met: the deploy would wait 3 hours and fail",
        "unknown": "a gated group's minimum could not be checked (an answer was not read)",
    }[report.verdict]
    lines.append(
        f"{conclusion} ({counts['met']} met, {counts['short']} cannot be met, "
        f"{counts['unknown']} unknown)"
    )
    return "\n".join(lines) + "\n"


def _check_json(check: Check) -> dict[str, Any]:
    return {
        "kind": check.kind,
        "subject": check.subject,
        "quota_code": check.code,
        "verdict": check.verdict,
        "limit": check.limit,
        "others": check.others,
        "needed": check.needed,
        "short_by": check.short_by,
        "detail": check.detail,
        "fix": check.fix,
    }


def to_json(report: Report) -> dict[str, Any]:
    """The JSON document (schema version :data:`JSON_SCHEMA_VERSION`) as Python objects."""
    return {
        "schema_version": JSON_SCHEMA_VERSION,
        "region": report.region,
        "verdict": report.verdict,
        "exit_code": report.exit_code,
        "groups": [_group_json(v) for v in report.verdicts],
        "notes": list(report.notes),
    }


def _group_json(verdict: GroupVerdict) -> dict[str, Any]:
    cluster, group = verdict.cluster, verdict.group
    return {
        "stack": cluster.display_name,
        "stack_name": cluster.stack_name,
        "cluster": cluster.name,
        "cluster_logical_id": cluster.logical_id,
        "group": group.name,
        "instance_types": list(group.instance_types),
        "minimum": group.minimum,
        "training_plan_arn": group.training_plan,
        "verdict": verdict.verdict,
        "short_by": verdict.short_by,
        "checks": [_check_json(c) for c in verdict.checks],
    }


def render_json(report: Report) -> str:
    return json.dumps(to_json(report), indent=2) + "\n"

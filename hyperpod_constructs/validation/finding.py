"""What a validation rule reports, and the error raised for it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning"]

_LONG = 64
"""Strings longer than this are shortened in messages (their length is what matters)."""


def _shown(value: object) -> str:
    if isinstance(value, str) and len(value) > _LONG:
        return f"{value[: _LONG // 2]!r}... ({len(value)} characters)"
    return repr(value)


@dataclass(frozen=True)
class Finding:
    """One broken rule: where, which field, what was given, what is allowed, how to fix it."""

    rule: str
    """Stable rule id, e.g. ``HP-MIN-ABOVE-COUNT``; listed in docs/validation.md."""
    field: str
    """The library's property name, with the CloudFormation name in parentheses."""
    value: object
    allowed: str
    """What is allowed (an error) or recommended (a warning)."""
    fix: str
    group: str | None = None
    severity: Severity = "error"

    def message(self) -> str:
        """One line: ``instance group 'gpu': field = value is not allowed; allowed: ...``.

        Warnings read ``field = value: recommended: ...`` instead.
        """
        where = f"instance group {_shown(self.group)}: " if self.group is not None else ""
        if self.severity == "warning":
            verdict = f": recommended: {self.allowed}"
        else:
            verdict = f" is not allowed; allowed: {self.allowed}"
        value = _shown(self.value)
        return f"{where}{self.field} = {value}{verdict}. Fix: {self.fix} [{self.rule}]"


class HyperPodValidationError(ValueError):
    """Invalid HyperPod cluster props. Raised before any template is written.

    ``findings`` holds every problem found, ``path`` the construct path they belong to.
    """

    def __init__(self, path: str, findings: Sequence[Finding]) -> None:
        self.path = path
        self.findings = tuple(findings)
        lines = [f"[{path}] {finding.message()}" for finding in self.findings]
        super().__init__("\n".join(lines))

"""The findings each cluster's node validation reported, kept in Python so that
:func:`~hyperpod_constructs.report_validation_errors` prints them from the findings
themselves instead of parsing the error text jsii hands back."""

from __future__ import annotations

from collections.abc import Sequence

from .finding import Finding

_REPORTED: dict[str, tuple[Finding, ...]] = {}


def record_findings(path: str, findings: Sequence[Finding]) -> None:
    """Remember what the construct at ``path`` reported in its latest validation."""
    if findings:
        _REPORTED[path] = tuple(findings)
    else:
        _REPORTED.pop(path, None)


def reported() -> dict[str, tuple[Finding, ...]]:
    """Every construct path with findings in its latest validation, in reporting order."""
    return dict(_REPORTED)


def reported_lines() -> list[str]:
    """``[path] message`` for every recorded finding, grouped by construct path."""
    return [f"[{path}] {f.message()}" for path, found in _REPORTED.items() for f in found]


def forget() -> None:
    """Drop every record (after a report was printed)."""
    _REPORTED.clear()

"""What each cluster's node validation reported, kept in Python so that the report of a
failing synth (:mod:`hyperpod_constructs.reporting`) is printed from the findings themselves,
with the warnings no one else prints then, instead of parsed from the error text jsii hands
back."""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .._core.finding import Finding

if TYPE_CHECKING:
    from constructs import IConstruct

WARNING_TYPE, ERROR_TYPE = "aws:cdk:warning", "aws:cdk:error"
"""The metadata types of CDK's warning and error annotations."""
WARNING_PREFIX = "warning: "
"""How a warning is marked among the lines of a failing node validation (aws-cdk-lib lists
them all as errors)."""
_ACK_TAG = re.compile(r"\s*\[ack: [^\]]*\]$")
"""The acknowledgment id aws-cdk-lib appends to a warning's text."""


def annotation_texts(constructs: Sequence[IConstruct]) -> tuple[list[str], list[str]]:
    """The error and warning annotations of ``constructs`` (not their children) as they
    stand: an acknowledged warning is gone. The warnings without their acknowledgment id."""
    entries = [entry for construct in constructs for entry in construct.node.metadata]
    texts = [(entry.type, entry.data) for entry in entries if isinstance(entry.data, str)]
    errors = [text for kind, text in texts if kind == ERROR_TYPE]
    warnings = [_ACK_TAG.sub("", text) for kind, text in texts if kind == WARNING_TYPE]
    return errors, warnings


@dataclass(frozen=True)
class Reported:
    """One cluster's latest validation: its errors (which fail the synth), its warnings, and
    the constructs whose annotations (a policy's, the gate's) belong to its report."""

    path: str
    errors: tuple[Finding, ...]
    warnings: tuple[Finding, ...]
    annotated: tuple[IConstruct, ...]

    def error_lines(self) -> list[str]:
        """``[path] message`` for each error finding."""
        return [self._line(finding.message()) for finding in self.errors]

    def report_lines(self) -> tuple[list[str], list[str]]:
        """Every error and every warning not acknowledged, as the report prints them: the
        findings', then the other annotations' (read now: a policy adds its own after the
        cluster's validation ran)."""
        try:
            other_errors, warned = annotation_texts(self.annotated)
        except Exception:  # the construct tree is gone: the findings alone
            other_errors, warned = [], [finding.message() for finding in self.warnings]
        mine = [finding.message() for finding in self.warnings]
        warnings = [text for text in mine if text in warned]
        warnings += [text for text in warned if text not in mine]
        errors = [*self.error_lines(), *map(self._line, other_errors)]
        return errors, list(map(self._line, warnings))

    def _line(self, message: str) -> str:
        return f"[{self.path}] {message}"


LOADED = time.time()
"""When the library was loaded: before any synth of an app that has a cluster, so a template
file written later was written by this process (not left by an earlier run)."""

_REPORTED: dict[int, tuple[object, dict[str, Reported]]] = {}
"""By app (the ``id`` of its root, kept alive with it), then by construct path."""


def record_findings(
    construct: IConstruct,
    errors: Sequence[Finding],
    warnings: Sequence[Finding],
    *,
    annotated: Sequence[IConstruct] = (),
    root: IConstruct | None = None,
    path: str | None = None,
) -> None:
    """Remember what ``construct`` reported in its latest validation; the annotations of
    ``construct`` and ``annotated`` belong to its report too. ``root`` and ``path``:
    ``construct``'s, when the caller knows them (each read is a jsii call). Default: read."""
    root = construct.node.root if root is None else root
    path = construct.node.path if path is None else path
    by_path = _REPORTED.setdefault(id(root), (root, {}))[1]
    by_path[path] = Reported(path, tuple(errors), tuple(warnings), (construct, *annotated))


def reported_in(text: str) -> list[Reported]:
    """The records of the app whose failure ``text`` is: every app with an error line in
    ``text`` (or, when none has, the one app that recorded anything), in reporting order."""
    apps = [by_path for _, by_path in _REPORTED.values()]
    failing = [
        by_path
        for by_path in apps
        if any(line in text for record in by_path.values() for line in record.error_lines())
    ]
    if not failing and len(apps) == 1:
        failing = apps
    return [record for by_path in failing for record in by_path.values()]


def forget() -> None:
    """Drop every record (after a report was printed)."""
    _REPORTED.clear()

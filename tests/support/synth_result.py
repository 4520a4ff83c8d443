"""Synthesizing an app and reading what it reported: whether it failed, the error and
warning annotations on its construct tree, and the validation error's text.

An organisation policy's errors are its node validation's result, so a failing synth writes
no template and aws-cdk-lib's ``validation-report.json`` is not written either: what a synth
reports is read from the annotations (the ones aws-cdk-lib prints, acknowledged warnings
gone)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from aws_cdk import App

from hyperpod_constructs._report.records import annotation_texts

Reported = list[tuple[str, str, str]]
"""(severity, construct path, message) of the error and warning annotations."""


@dataclass(frozen=True)
class Synth:
    """What one ``app.synth()`` reported."""

    succeeded: bool
    found: Reported
    error: str
    """The text of the validation error a failing synth raised ("" when it succeeded)."""

    def errors(self) -> list[str]:
        """The messages of the error annotations, in construct order."""
        return [message for severity, _, message in self.found if severity == "error"]


def synth(app: App, outdir: Path) -> Synth:
    """Synthesize ``app`` (whose output folder is ``outdir``); a failing synth must be a
    validation failure and must have written no template."""
    try:
        app.synth()
        succeeded, error = True, ""
    except RuntimeError as raised:
        succeeded, error = False, str(raised)
        assert "Validation failed with the following errors:" in error, error
        assert list(outdir.rglob("*.template.json")) == [], "a failing synth wrote a template"
    found: Reported = []
    for construct in app.node.find_all():
        errors, warnings = annotation_texts([construct])
        found += [("error", construct.node.path, text) for text in errors]
        found += [("warning", construct.node.path, text) for text in warnings]
    return Synth(succeeded, found, error)

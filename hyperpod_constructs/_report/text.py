"""The short report of a validation failure: what :mod:`hyperpod_constructs.reporting` prints.

Only errors exactly as the library or aws-cdk-lib raised them are recognised: an error whose
text a user changed (wrapped in their own message, say) is theirs and never reformatted."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, TextIO, runtime_checkable

from .._core.finding import Finding, HyperPodValidationError, merge_findings
from ..sizing import SizingError
from .records import LOADED, WARNING_PREFIX, Reported, forget, reported_in

_CONSTRUCT_HEADER = "Validation failed with the following errors:"
_CONSTRUCT_FAILURE = re.compile(rf"^(?:\w+: )?{re.escape(_CONSTRUCT_HEADER)}")
"""aws-cdk-lib's error of failing node validations (jsii puts the error's name first)."""
_WARNING_LINE = re.compile(rf"^(?P<path>\[[^\]]*\] ){re.escape(WARNING_PREFIX)}")
_PLUGIN_FAILURE = re.compile(
    r"^ValidationFailed: (?P<report>.*?)\s*A copy of this report can be found in:?\s*"
    r"(?P<path>\S+?)\.?\s*$",
    re.DOTALL,
)
_PLUGIN_SHORT_BODY = "Validation failed."
_JS_STACK_LINE = re.compile(r"^\s*at \S.*")
_ROOT_PATH = re.compile(r"^\[\] (?=\[[^\]]+\] )")
"""aws-cdk-lib's path of the App (``[]``) before a line that names its construct itself (a
policy's check of a Stage synthesized before it): the line's own path is the one to show."""

Kind = Literal["hyperpod", "construct", "plugin"]


@dataclass(frozen=True)
class ValidationFailure:
    """A recognised validation failure, reduced to what the user must read."""

    kind: Kind
    """``hyperpod`` (raised while building), ``construct`` (node validations at synth) or
    ``plugin`` (a policy validation plugin such as cdk-nag, at synth)."""
    messages: tuple[str, ...]
    """One line per error, each once, in the order reported (empty for ``plugin``)."""
    report_path: str | None = None
    """For ``plugin``: the copy of the plugin report aws-cdk-lib wrote."""
    report: str | None = None
    """For ``plugin``: the report's text when aws-cdk-lib put it in the error instead of
    printing it (its "inmemory" app mode, e.g. under pytest)."""
    hyperpod: bool = False
    """Whether every error is a HyperPod finding."""
    warnings: tuple[str, ...] = ()
    """For ``construct``: one line per warning the failing synth would not show otherwise
    (HyperPod's, not acknowledged), after the errors."""
    progress: StageProgress | None = None
    """For ``construct`` in an app with Stages: which Stage failed, which templates were
    written before it, which clusters were not checked."""

    def lines(self) -> list[str]:
        """The report as printed: a header line with the counts, then one indented line per
        error and per warning (for a plugin failure, one line pointing at the report
        aws-cdk-lib printed, or the report)."""
        if self.kind == "plugin":
            if self.report:
                return [
                    "Policy validation failed:",
                    *self.report.splitlines(),
                    f"A copy of this report is in {self.report_path}.",
                ]
            return [
                f"Policy validation failed: see the report above; a copy is in {self.report_path}."
            ]
        counts = [_count(len(self.messages), "error")]
        if self.warnings:
            counts.append(_count(len(self.warnings), "warning"))
        hyperpod = (self.kind == "hyperpod" or self.hyperpod) and self.messages
        what = "HyperPod validation failed" if hyperpod else "Validation failed"
        problems = [f"  {line}" for line in (*self.messages, *self.warnings)]
        progress = self.progress
        if progress is None:
            return [f"{what} ({', '.join(counts)}); no template was written:", *problems]
        failed = ", ".join(map(StageProgress.describe, progress.failed)) or "a Stage"
        written = (
            "Templates already written (aws-cdk-lib synthesizes each Stage on its own and "
            f"stops at the first that fails): {', '.join(progress.written)}"
            if progress.written
            else "No template was written."
        )
        unchecked = [
            "Not checked yet (fix the errors above and synthesize again): "
            + ", ".join(map(StageProgress.describe, progress.unchecked))
        ]
        also = [
            "Also wrong in those Stages (the library's own rules; their aspects and "
            "policies run when they are synthesized):",
            *(f"  {line}" for line in progress.also),
        ]
        return [
            f"{what} ({', '.join(counts)}) in {failed}; its templates were not written:",
            *problems,
            written,
            *(unchecked if progress.unchecked else []),
            *(also if progress.also else []),
        ]


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _unique(lines: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(line for line in lines if line))


def _construct_messages(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The errors and the warnings (marked :data:`WARNING_PREFIX` by a cluster) listed after
    aws-cdk-lib's header, up to any JavaScript stack."""
    body = text.split(_CONSTRUCT_HEADER, 1)[1]
    errors: list[str] = []
    warnings: list[str] = []
    for line in body.splitlines():
        if _JS_STACK_LINE.match(line):
            break
        warning = _WARNING_LINE.match(line.strip())
        if warning is None:
            errors.append(_ROOT_PATH.sub("", line.strip()))
        else:
            warnings.append(warning.group("path") + line.strip()[warning.end() :])
    return _unique(errors), _unique(warnings)


def _construct_failure(text: str) -> ValidationFailure:
    """HyperPod's findings as the clusters recorded them, then any other construct's
    messages from aws-cdk-lib's text (each once), then HyperPod's warnings."""
    # Only the app that failed: other apps of the process may have recorded findings.
    records = reported_in(text)
    reports = [record.report_lines() for record in records]
    ours = [line for errors, _ in reports for line in errors]
    known = set(ours)
    listed, listed_warnings = _construct_messages(text)
    others = [line for line in listed if line not in known]
    # A line another extends (the same error with what is known of its Stage) is that line.
    every = _unique([*ours, *others])
    messages = tuple(
        line for line in every if not any(o.startswith(f"{line} (") for o in every if o != line)
    )
    recorded = [line for _, warnings in reports for line in warnings]
    warnings = _unique([*recorded, *listed_warnings])
    return ValidationFailure(
        "construct",
        messages,
        hyperpod=bool(ours) and not others,
        warnings=warnings,
        progress=stage_progress(records),
    )


def _relayed(error: BaseException) -> BaseException | None:
    """The library's error that jsii relayed as ``error``: raised in Python inside a jsii
    callback (an aspect's ``visit``), it comes back as a ``RuntimeError`` with its text."""
    seen: set[int] = set()
    cause = error.__context__ or error.__cause__
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        # jsii relays the text as it is; a user's own error around it has other text.
        if isinstance(cause, HyperPodValidationError | SizingError) and str(cause) == str(error):
            return cause
        cause = cause.__context__ or cause.__cause__
    return None


def classify(error: BaseException) -> ValidationFailure | None:
    """What kind of validation failure ``error`` is; ``None`` for any other error."""
    if isinstance(error, HyperPodValidationError | SizingError):
        return ValidationFailure("hyperpod", _unique(str(error).splitlines()))
    if not isinstance(error, RuntimeError):
        return None
    relayed = _relayed(error)
    if relayed is not None:
        return classify(relayed)
    text = str(error)
    if _CONSTRUCT_FAILURE.match(text):
        return _construct_failure(text)
    plugin = _PLUGIN_FAILURE.match(text)
    if plugin is not None:
        report = plugin.group("report").strip()
        return ValidationFailure(
            "plugin",
            (),
            report_path=plugin.group("path"),
            report=None if report in ("", _PLUGIN_SHORT_BODY) else report,
        )
    return None


def validation_messages(error: BaseException) -> list[str] | None:
    """The problems in a HyperPod or node validation failure, one line each; ``None`` for
    other errors (including policy plugin failures, whose report aws-cdk-lib prints)."""
    failure = classify(error)
    if failure is None or failure.kind == "plugin":
        return None
    return list(failure.messages)


def print_report(error: BaseException, stream: TextIO | None = None) -> bool:
    """Print the short report of ``error`` to ``stream`` (default: standard error) when it is
    a validation failure (see :func:`classify`); return whether it was one."""
    failure = classify(error)
    if failure is None:
        return False
    forget()
    out = stream if stream is not None else sys.stderr
    out.write("\n".join(failure.lines()) + "\n")
    out.flush()
    return True


@dataclass(frozen=True)
class StageProgress:
    """How far aws-cdk-lib got when a Stage failed: it synthesizes each Stage on its own
    (nested Stages first, in the order they were added, the App last) and stops at the first
    whose validation fails, so the templates of the Stages before it are already written."""

    failed: tuple[str, ...]
    """The Stages whose clusters reported errors (``""`` for the App itself)."""
    written: tuple[str, ...]
    """The template files this process wrote, relative to the app's output folder."""
    unchecked: tuple[str, ...]
    """The Stages holding a cluster whose validation never ran (``""``: the App's own)."""
    also: tuple[str, ...] = ()
    """The errors the library's own rules find in those clusters now (their Stage's aspects,
    a policy's or ``Tags.of``, have not run: they are checked when the Stage is)."""

    @staticmethod
    def describe(stage: str) -> str:
        return "the App's own stacks" if stage == "" else f"Stage {stage}"


@runtime_checkable
class Checked(Protocol):
    """A construct whose node validation reports the library's findings (the cluster): what
    the report reads of a cluster the validation has not reached. Declared here, so that the
    report never imports the cluster it reports on."""

    def _all_findings(self) -> list[Finding]: ...


def stage_progress(records: Sequence[Reported]) -> StageProgress | None:
    """The Stages of the app that ``records`` belong to: which failed, which templates were
    written, which clusters were not checked. ``None`` when no template was written and
    every cluster was checked (the short report's "no template was written" holds)."""
    from aws_cdk import Stage

    if not records:
        return None
    try:
        root = records[0].annotated[0].node.root
        outdir = str(getattr(root, "outdir", ""))
        reported = {record.path for record in records}
        stages = [
            Stage.of(record.annotated[0])  # the Stages whose clusters reported errors
            for record in records
            if record.report_lines()[0]
        ]
        clusters = [
            construct for construct in root.node.find_all() if isinstance(construct, Checked)
        ]
        waiting = [c for c in clusters if c.node.path not in reported]
        unchecked = {Stage.of(c).node.path for c in waiting}  # type: ignore[union-attr]
        also = [
            f"[{c.node.path}] {finding.message()}"
            for c in waiting
            for finding in merge_findings(c._all_findings())
            if finding.is_error
        ]
    except Exception:  # the construct tree is gone: the usual report
        return None
    written = _fresh_templates(outdir) if outdir else []
    if not written and not unchecked:  # the short report says it all
        return None
    # A Stage whose templates were written was synthesized before (CDK Pipelines' add_stage):
    # its errors came from a later check, at the synth of the App.
    done = {os.path.dirname(os.path.join(outdir, path)) for path in written}
    failed = {
        stage.node.path  # type: ignore[union-attr]
        for stage in stages
        if os.path.normpath(str(stage.outdir)) not in done  # type: ignore[union-attr]
    } or {""}
    return StageProgress(
        tuple(sorted(failed)), tuple(written), tuple(sorted(unchecked)), tuple(also)
    )


def _fresh_templates(outdir: str) -> list[str]:
    found: list[str] = []
    for folder, _, files in os.walk(outdir):
        for name in files:
            path = os.path.join(folder, name)
            if name.endswith(".template.json") and os.path.getmtime(path) >= LOADED:
                found.append(os.path.relpath(path, outdir))
    return sorted(found)

"""Turning validation failures into a short, clean report for ``cdk synth``.

Wrap an app's construction and ``app.synth()`` in :func:`report_validation_errors`::

    with report_validation_errors():
        app = App()
        MyStack(app, "MyStack")
        app.synth()

Every HyperPod cluster collects the findings of all its stages (its props, each group, the
gate's options, the rules across groups) and reports them in its node validation, so one
synth lists every problem. Three kinds of failure are reported without a Python traceback or
a jsii (JavaScript) stack, then the process exits with status 1:

1. :class:`~hyperpod_constructs.HyperPodValidationError` (also
   :class:`~hyperpod_constructs.validation.HyperPodArgumentError`) or
   :class:`~hyperpod_constructs.sizing.SizingError`, raised while the app is built where the
   library cannot go on (a wrong ``scope``, a blueprint's layout, a sizing helper): one line
   per problem; no template is written.
2. Node validations failing in ``app.synth()`` (every HyperPod cluster's findings, or any
   other construct's ``node.add_validation``): one line per problem, each once, grouped by
   construct path; no template is written. HyperPod's lines come from the findings the
   clusters recorded, not from the text of the error jsii raises.
3. Policy validation plugins failing in ``app.synth()`` (cdk-nag's ``Validations`` plugins)
   when the app runs on its own (``python app.py``): aws-cdk-lib has already printed the
   plugin report, so one line points at it and at the copy it wrote
   (``validation-report.json``). In aws-cdk-lib's "inmemory" app mode (e.g. under pytest)
   the report is part of the error and is printed once. Under ``cdk synth`` aws-cdk-lib does
   not raise for plugin failures at all: the CLI prints the report and exits with status 1.

Any other error propagates unchanged. Without this block, a plain ``python app.py`` still
writes no template when a cluster has errors (the node validation fails the synth).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal, TextIO

from .sizing import SizingError
from .validation.finding import HyperPodValidationError
from .validation.report import forget, reported_lines

__all__ = ["ValidationFailure", "classify", "report_validation_errors", "validation_messages"]

EXIT_STATUS = 1
"""The status the process exits with after a reported validation failure."""

_CONSTRUCT_HEADER = "Validation failed with the following errors:"
_PLUGIN_FAILURE = re.compile(
    r"^(?:ValidationFailed: )?(?P<report>.*?)\s*A copy of this report can be found in:?\s*"
    r"(?P<path>\S+?)\.?\s*$",
    re.DOTALL,
)
_PLUGIN_SHORT_BODY = "Validation failed."
_JS_STACK_LINE = re.compile(r"^\s*at \S.*")

Kind = Literal["hyperpod", "construct", "plugin"]


@dataclass(frozen=True)
class ValidationFailure:
    """A recognised validation failure, reduced to what the user must read."""

    kind: Kind
    """``hyperpod`` (raised while building), ``construct`` (node validations at synth) or
    ``plugin`` (a policy validation plugin such as cdk-nag, at synth)."""
    messages: tuple[str, ...]
    """One line per problem, each once, in the order reported (empty for ``plugin``)."""
    report_path: str | None = None
    """For ``plugin``: the copy of the plugin report aws-cdk-lib wrote."""
    report: str | None = None
    """For ``plugin``: the report's text when aws-cdk-lib put it in the error instead of
    printing it (its "inmemory" app mode, e.g. under pytest)."""
    hyperpod: bool = False
    """Whether every message is a HyperPod finding."""

    def lines(self) -> list[str]:
        """The report as printed: a header line, then one indented line per problem (for a
        plugin failure, one line pointing at the report aws-cdk-lib printed, or the report)."""
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
        count = len(self.messages)
        noun = "problem" if count == 1 else "problems"
        hyperpod = (self.kind == "hyperpod" or self.hyperpod) and self.messages
        what = "HyperPod validation failed" if hyperpod else "Validation failed"
        header = f"{what} ({count} {noun}); no template was written:"
        return [header, *(f"  {message}" for message in self.messages)]


def _unique(lines: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(line for line in lines if line))


def _construct_messages(text: str) -> tuple[str, ...]:
    """The problems listed after aws-cdk-lib's header, up to any JavaScript stack."""
    body = text.split(_CONSTRUCT_HEADER, 1)[1]
    messages: list[str] = []
    for line in body.splitlines():
        if _JS_STACK_LINE.match(line):
            break
        messages.append(line.strip())
    return _unique(messages)


def _construct_failure(text: str) -> ValidationFailure:
    """HyperPod's findings as the clusters recorded them, then any other construct's
    messages from aws-cdk-lib's text (each once)."""
    # Only what this failure contains: other apps of the process may have recorded findings.
    ours = [line for line in reported_lines() if line in text]
    known = set(ours)
    others = [line for line in _construct_messages(text) if line not in known]
    messages = _unique([*ours, *others])
    return ValidationFailure("construct", messages, hyperpod=bool(ours) and not others)


def classify(error: BaseException) -> ValidationFailure | None:
    """What kind of validation failure ``error`` is; ``None`` for any other error."""
    if isinstance(error, HyperPodValidationError | SizingError):
        return ValidationFailure("hyperpod", _unique(str(error).splitlines()))
    if not isinstance(error, RuntimeError):
        return None
    text = str(error)
    if _CONSTRUCT_HEADER in text:
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


@contextmanager
def report_validation_errors(stream: TextIO | None = None) -> Iterator[None]:
    """Run an app's construction and ``app.synth()`` inside this block: a validation failure
    prints a short report (one line per problem, no Python or jsii stack trace) to ``stream``
    (default: standard error) and exits with status 1. Other errors propagate unchanged.

    Also usable as a decorator of the app's ``main()``.

    :param stream: where the report goes. Default: ``sys.stderr``.
    :raises SystemExit: with status 1 after a validation failure.
    """
    try:
        yield
    except (HyperPodValidationError, SizingError, RuntimeError) as error:
        failure = classify(error)
        if failure is None:
            raise
        forget()
        out = stream if stream is not None else sys.stderr
        out.write("\n".join(failure.lines()) + "\n")
        out.flush()
        raise SystemExit(EXIT_STATUS) from None

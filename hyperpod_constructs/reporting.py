"""Turning validation failures into a short, clean report.

A plain app needs nothing: importing the library installs a :data:`sys.excepthook` (see
:func:`install_excepthook`), so ``python app.py`` and ``cdk synth`` of an app whose synth fails
validation print the report below instead of a Python traceback and exit with status 1. Any
other error keeps its traceback. :func:`report_validation_errors` does the same around a
block, to a stream of your choice::

    with report_validation_errors():
        app = App()
        MyStack(app, "MyStack")
        app.synth()

Every HyperPod cluster collects the findings of all its stages (its props, each group, the
gate's options, the rules across groups) and reports them in its node validation, so one
synth lists every problem: errors first, then the warnings (a failing synth writes no
template, so aws-cdk-lib and the ``cdk`` CLI print none of them), one line per mistake (two
rules broken by one value share a line), a group's position shown where two groups share a
name. Three kinds of failure are reported without a Python traceback or a jsii (JavaScript)
stack:

1. :class:`~hyperpod_constructs.HyperPodValidationError` (also
   :class:`~hyperpod_constructs.validation.HyperPodArgumentError`) or
   :class:`~hyperpod_constructs.sizing.SizingError`, raised while the app is built where the
   library cannot go on (a wrong ``scope``, a blueprint's layout, a sizing helper), also when
   jsii relays one raised inside a callback (an aspect): one line per problem.
2. Node validations failing in ``app.synth()`` (every HyperPod cluster's findings, or any
   other construct's ``node.add_validation``): one line per problem, each once, grouped by
   construct path, then HyperPod's warnings and the clusters' other annotations. HyperPod's
   lines come from the findings the clusters recorded, not from the text of the error jsii
   raises.
3. Policy validation plugins failing in ``app.synth()`` (cdk-nag's ``Validations`` plugins)
   when the app runs on its own (``python app.py``): aws-cdk-lib has already printed the
   plugin report, so one line points at it and at the copy it wrote
   (``validation-report.json``). In aws-cdk-lib's "inmemory" app mode (e.g. under pytest)
   the report is part of the error and is printed once. Under ``cdk synth`` aws-cdk-lib does
   not raise for plugin failures at all: the CLI prints the report and exits with status 1.

No template is written in any of them.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal, TextIO

from ._excepthook import install_excepthook
from .sizing import SizingError
from .validation.finding import HyperPodValidationError
from .validation.report import forget, reported_in

__all__ = [
    "ValidationFailure",
    "classify",
    "install_excepthook",
    "print_report",
    "report_validation_errors",
    "validation_messages",
]

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
        header = f"{what} ({', '.join(counts)}); no template was written:"
        return [header, *(f"  {line}" for line in (*self.messages, *self.warnings))]


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


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
    messages from aws-cdk-lib's text (each once), then HyperPod's warnings."""
    # Only the app that failed: other apps of the process may have recorded findings.
    reports = [record.report_lines() for record in reported_in(text)]
    ours = [line for errors, _ in reports for line in errors]
    known = set(ours)
    others = [line for line in _construct_messages(text) if line not in known]
    messages = _unique([*ours, *others])
    warnings = _unique([line for _, warnings in reports for line in warnings])
    return ValidationFailure(
        "construct", messages, hyperpod=bool(ours) and not others, warnings=warnings
    )


def _relayed(error: BaseException) -> BaseException | None:
    """The library's error that jsii relayed as ``error``: raised in Python inside a jsii
    callback (an aspect's ``visit``), it comes back as a ``RuntimeError`` with its text."""
    seen: set[int] = set()
    cause = error.__context__ or error.__cause__
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, HyperPodValidationError | SizingError) and str(cause) in str(error):
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


@contextmanager
def report_validation_errors(stream: TextIO | None = None) -> Iterator[None]:
    """Run an app's construction and ``app.synth()`` inside this block: a validation failure
    prints a short report (one line per problem, no Python or jsii stack trace) to ``stream``
    (default: standard error) and exits with status 1. Other errors propagate unchanged.

    Not needed for a plain app (importing the library installs the same report as
    :data:`sys.excepthook`); use it to choose the stream, or where an excepthook never runs.
    Also usable as a decorator of the app's ``main()``.

    :param stream: where the report goes. Default: ``sys.stderr``.
    :raises SystemExit: with status 1 after a validation failure.
    """
    try:
        yield
    except (HyperPodValidationError, SizingError, RuntimeError) as error:
        if not print_report(error, stream):
            raise
        raise SystemExit(EXIT_STATUS) from None

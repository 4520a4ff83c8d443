"""Turning validation failures into a short, clean report, when you ask for it.

Importing the library changes nothing outside it: a synth that fails validation raises
aws-cdk-lib's error (a ``RuntimeError`` through jsii) whose message is the library's report,
every finding once, and your app decides what to do with it, as with any other aws-cdk-lib
error. For a run without a Python traceback, decorate the function that builds and
synthesizes the app (the one way for every shape of app: stacks, Stages, CDK Pipelines)::

    @report_validation_errors()
    def main() -> None:
        app = App()
        ...  # stacks, Stages, pipeline.add_stage(...)
        app.synth()

The app's construction belongs inside it, not only ``app.synth()``: CDK Pipelines'
``CodePipeline.add_stage`` (and a wave's) synthesizes the Stage at once and raises its
validation errors there. ``with report_validation_errors():`` around the same lines is the
same.

The block prints the report below to standard error (or a stream of your choice) and exits
with status 1. An error whose text your code changed (your own message around it), or any
other error, propagates unchanged.

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

No template is written in any of them, with one exception aws-cdk-lib imposes: it
synthesizes each ``Stage`` on its own (its aspects, validations and templates) and stops at
the first that fails, so the Stages before it have written theirs. The report then names the
Stage that failed, the templates already written, the Stages not checked yet, and the errors
the library's own rules find in those now (docs/guardrails.md).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from ._core.finding import HyperPodValidationError
from ._report.text import ValidationFailure, classify, print_report, validation_messages
from .sizing import SizingError

__all__ = [
    "ValidationFailure",
    "classify",
    "print_report",
    "report_validation_errors",
    "validation_messages",
]

EXIT_STATUS = 1
"""The status the process exits with after a reported validation failure."""


@contextmanager
def report_validation_errors(stream: TextIO | None = None) -> Iterator[None]:
    """Run an app's construction and ``app.synth()`` inside this block (or decorate the
    ``main()`` that does both: CDK Pipelines' ``add_stage`` raises at construction): a
    validation failure prints a short report (one line per problem, no Python or jsii stack
    trace) to ``stream`` (default: standard error) and exits with status 1. Other errors
    propagate unchanged.

    Opt-in: without it, the error propagates as aws-cdk-lib raises it (its message is the
    same report). Also usable as a decorator of the app's ``main()``.

    :param stream: where the report goes. Default: ``sys.stderr``.
    :raises SystemExit: with status 1 after a validation failure.
    """
    try:
        yield
    except (HyperPodValidationError, SizingError, RuntimeError) as error:
        if not print_report(error, stream):
            raise
        raise SystemExit(EXIT_STATUS) from None

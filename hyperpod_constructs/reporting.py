"""Turning validation failures into a short, clean report for ``cdk synth``."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from .validation.finding import HyperPodValidationError

_CDK_VALIDATION_HEADER = "Validation failed with the following errors:"
_JS_STACK_LINE = re.compile(r"^\s+at .+")


def validation_messages(error: BaseException) -> list[str] | None:
    """The messages in a HyperPod or CDK validation failure; ``None`` for other errors."""
    if isinstance(error, HyperPodValidationError):
        return str(error).splitlines()
    text = str(error)
    if _CDK_VALIDATION_HEADER not in text:
        return None
    body = text.split(_CDK_VALIDATION_HEADER, 1)[1]
    messages: list[str] = []
    for line in body.splitlines():
        if not line.strip() or _JS_STACK_LINE.match(line):
            if messages and _JS_STACK_LINE.match(line):
                break
            continue
        messages.append(line.strip())
    return list(dict.fromkeys(messages))


@contextmanager
def report_validation_errors(stream: object = None) -> Iterator[None]:
    """Run an app's construction and ``app.synth()`` inside this block: a validation failure
    prints one line per problem (no Python or jsii stack trace) and exits with status 1,
    before any template is written. Other errors propagate unchanged.

    >>> with report_validation_errors():
    ...     app = App(); build(app); app.synth()  # doctest: +SKIP
    """
    try:
        yield
    except Exception as error:  # noqa: BLE001 - re-raised unless it is a validation failure
        messages = validation_messages(error)
        if messages is None:
            raise
        out = stream or sys.stderr
        print(f"HyperPod validation failed ({len(messages)} problem(s)); no template was written:",
              file=out)  # type: ignore[call-overload]
        for message in messages:
            print(f"  {message}", file=out)  # type: ignore[call-overload]
        raise SystemExit(1) from None

"""The report of a failing synth for a plain app: a :data:`sys.excepthook`.

Installed when the package is imported, so that an app that ends with a plain
``app.synth()`` (run as ``python app.py`` or by ``cdk synth``) prints the short report of
:mod:`hyperpod_constructs.reporting` instead of a Python traceback when validation fails, and
exits with status 1 as Python does after any uncaught exception. Every other exception goes
to the hook that was there before (Python's own prints the usual traceback).

Standard library only: importing the package must not load aws-cdk-lib (and Node.js).
"""

from __future__ import annotations

import sys
from types import TracebackType

TRACEBACK_VARIABLE = "HYPERPOD_CONSTRUCTS_TRACEBACK"
"""Set to ``1`` to get the usual traceback for validation failures too (for debugging)."""

_previous: list[object] = []
"""The hook that was installed before ours (called for every other exception)."""


def _hook(kind: type[BaseException], error: BaseException, trace: TracebackType | None) -> None:
    if _reported(error):
        return
    previous = _previous[0] if _previous else sys.__excepthook__
    previous(kind, error, trace)  # type: ignore[operator]


def _reported(error: BaseException) -> bool:
    """Whether ``error`` is a validation failure whose report was printed."""
    import os

    if not isinstance(error, Exception) or os.environ.get(TRACEBACK_VARIABLE) == "1":
        return False
    # Neither the library's errors nor aws-cdk-lib loaded: it cannot be a validation failure.
    if not {"aws_cdk", "hyperpod_constructs._core.finding"} & sys.modules.keys():
        return False
    try:
        from ._report_text import print_report

        return print_report(error)
    except Exception:  # the original error must never be hidden by ours
        return False


def install_excepthook() -> None:
    """Make :data:`sys.excepthook` print the short report for validation failures (once per
    process; a hook installed before is kept for every other exception)."""
    if sys.excepthook is _hook:
        return
    _previous[:] = [sys.excepthook]
    sys.excepthook = _hook

"""The one way the command-line tools write their output, and the one handling of an output
that cannot be written.

- :func:`write` writes text to a stream in what its encoding can hold (a character it cannot,
  e.g. a non-ASCII folder name on an ``ascii`` or ``latin-1`` stdout, as a ``\\u...`` escape:
  the whole output still arrives) and flushes it, so a failure shows where it happens.
- Writing stdout that was closed (``BrokenPipeError``, e.g. ``| head``), that is full (``ENOSPC``,
  ``/dev/full``) or that fails otherwise raises :class:`OutputError`; ``main()`` turns it into
  one line on stderr and :data:`EXIT_OUTPUT` (:func:`output_failed`), in every command.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import TextIO

from ..._core.sanitize import printable

__all__ = ["EXIT_OUTPUT", "OutputError", "encodable", "finish", "output_failed", "write"]

EXIT_OUTPUT = 2
"""The exit code when the output cannot be written (every command's error code)."""


class OutputError(Exception):
    """The output could not be written; ``str()`` is one printable line."""

    def __init__(self, error: OSError) -> None:
        reason = error.strerror or type(error).__name__
        super().__init__(printable(f"cannot write the output: {reason}"))


def encodable(stream: TextIO, text: str) -> str:
    """``text`` as the stream's encoding can write it (other characters as ``\\u...``
    escapes)."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    try:
        return text.encode(encoding, errors="backslashreplace").decode(encoding)
    except LookupError:
        return text.encode("ascii", errors="backslashreplace").decode("ascii")


def write(stream: TextIO, text: str) -> None:
    """Write ``text`` (see :func:`encodable`) and flush; raises :class:`OutputError`."""
    try:
        stream.write(encodable(stream, text))
        stream.flush()
    except OSError as error:
        raise OutputError(error) from None


def finish(stream: TextIO) -> None:
    """Flush what is still buffered (e.g. argparse's help), so that a failure is reported here
    and not by the interpreter at exit; raises :class:`OutputError`."""
    try:
        stream.flush()
    except OSError as error:
        raise OutputError(error) from None


def output_failed(error: OutputError | OSError) -> int:
    """Report an output that failed: one ``error:`` line on stderr (when stderr can take it),
    stdout pointed at the null device so that nothing is written there again (not even the
    interpreter's last flush); return :data:`EXIT_OUTPUT`."""
    if not isinstance(error, OutputError):
        error = OutputError(error)
    with contextlib.suppress(OSError, ValueError, AttributeError):  # not a file: a capture
        stdout = sys.stdout.fileno()
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stdout)
        os.close(devnull)
    with contextlib.suppress(OSError):
        print(f"error: {error}", file=sys.stderr, flush=True)
    return EXIT_OUTPUT

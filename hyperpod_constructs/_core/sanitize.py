"""One sanitizer for text that came from outside (an AWS answer, a file, a file name) before
it reaches a terminal, a log line or an error message.

:func:`printable` escapes every character that is not printable as Python escapes it in a
``repr``: C0 and C1 controls (``\\x1b``, ``\\x9b``, newlines, tabs), bidirectional controls
(``\\u202e``, ``\\u2066`` ...), line and paragraph separators, lone surrogates and other
unassigned or format characters. An escape sequence (ESC/CSI/OSC) loses its introducer and so
shows as inert text: ``\\x1b]0;title\\x07`` is printed as those characters, it never sets a
title or clears a screen. Printable text, quotes and backslashes are kept as they are.
"""

from __future__ import annotations

import re

__all__ = ["FieldError", "printable"]

_UNSAFE = re.compile(r"[^\x20-\x7e]")
"""Anything but printable ASCII: the only characters that need a closer look."""


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return char if char.isprintable() else repr(char)[1:-1]


def printable(text: object) -> str:
    """``str(text)`` with every non-printable character escaped (``\\n``, ``\\x1b``,
    ``\\u202e``, ``\\ud800``): safe to write to a terminal on one line, in any encoding that
    can write the printable characters kept. Idempotent on its own output."""
    value = text if isinstance(text, str) else str(text)
    return _UNSAFE.sub(_escape, value)


class FieldError(ValueError):
    """A problem with one named thing (a field, an input): ``str()`` is ``<where>: <problem>``
    on one printable line (see :func:`printable`). The base of the command-line tools' errors."""

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where}: {problem}")
        self.where = where
        """The named thing (a field's path, an input)."""
        self.problem = problem
        """What is wrong with it, in words."""

    def __str__(self) -> str:
        return printable(super().__str__())

"""The one rule every command's verdict follows on what it could not read: exit 0 ("ready",
"nothing disruptive", "report printed") needs every answer and every input read.

A command that could not read something either stops (exit 2, one ``error:`` line) or, when it
reads again later (``watch``), withholds its "ok" until a round reads everything.
:func:`withheld` says when and why; the commands call it instead of deciding it themselves.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["EXIT_OK", "withheld"]

EXIT_OK = 0
"""The exit code of an "ok" verdict, the same in every command."""


def withheld(exit_code: int | None, unreadable: Sequence[str]) -> str | None:
    """Why the verdict ``exit_code`` cannot stand, given the answers or inputs that could not
    be read (``unreadable``, one line each); ``None`` when it stands: it is not an "ok", or
    everything was read. A failure verdict always stands (it never fails open)."""
    if exit_code != EXIT_OK or not unreadable:
        return None
    count = len(unreadable)
    what = "1 answer" if count == 1 else f"{count} answers"
    return f"{what} could not be read ({unreadable[0]}): not judged ok until every answer is"

"""A :class:`~.model.Refresh` for people: a ``rich`` renderable for a terminal (redrawn in place
by ``rich.live.Live``), or one plain line per refresh when stdout is not a terminal.

Pure: building a renderable prints nothing; ``rich`` writes it (and its escape codes, only to a
terminal) in :mod:`.cli`.
"""

from __future__ import annotations

from datetime import timedelta

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from .model import EventView, GroupView, Refresh

BAR_WIDTH = 24
FULL = "█"
EMPTY = "░"
_EVENT_STYLE = {"Error": "red", "Warn": "yellow"}
_VERDICT_STYLE = {"ready": "bold green", "failed": "bold red", "error": "bold red"}


def bar(current: int, target: int, width: int = BAR_WIDTH) -> str:
    """``current`` of ``target`` as ``width`` cells of ``█`` (done) and ``░`` (to go); a full bar
    when ``target`` is 0 or ``current`` exceeds it."""
    if target <= 0:
        return FULL * width
    # Rounded half up, in integers: a half cell of progress shows (Python's round() rounds
    # half to even, so 128 of 256 on one cell showed nothing).
    done = (2 * width * min(current, target) + target) // (2 * target)
    return FULL * done + EMPTY * (width - done)


def clock(span: timedelta | None) -> str:
    """``5400 s`` -> ``"1:30:00"``; negative -> ``"passed"``; None -> ``"-"``."""
    if span is None:
        return "-"
    seconds = int(span.total_seconds())
    if seconds < 0:
        return "passed"
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}"


def counts(group: GroupView) -> str:
    """``"12 / 16 / 16"``: current / minimum / target (``?`` for a count whose stack
    parameter is not known yet)."""
    minimum = "?" if group.min_count is None else group.min_count
    target = "?" if group.target_count is None else group.target_count
    return f"{group.current} / {minimum} / {target}"


def _group_style(group: GroupView) -> str:
    if group.ready:
        return "green"
    if group.rolled_back or group.status in ("Failed", "Deleting"):
        return "red"
    return "yellow"


def _event_line(where: str, event: EventView) -> Text:
    when = event.time.strftime("%H:%M:%S") if event.time is not None else "--:--:--"
    line = Text(f"  {where}  {when}  ", style="dim")
    line.append(f"{event.level:<5} ", style=_EVENT_STYLE.get(event.level, "dim"))
    line.append(event.description)
    line.no_wrap = True
    line.overflow = "ellipsis"
    return line


def header(refresh: Refresh) -> str:
    """The title line: cluster, stack and elapsed time."""
    cluster = refresh.cluster + (f" ({refresh.cluster_status})" if refresh.cluster_status else "")
    stack = refresh.stack_name + (f" ({refresh.stack_status})" if refresh.stack_status else "")
    return f"HyperPod cluster {cluster} · stack {stack} · watching {clock(refresh.elapsed)}"


def gate_text(refresh: Refresh) -> str:
    """``gate: waiting (wait condition X)``, with the reason once it failed."""
    gate = refresh.gate
    where = f" (wait condition {gate.wait_condition_id})" if gate.wait_condition_id else ""
    text = f"gate: {gate.state}{where}"
    if gate.state == "failed" and gate.reason:
        text += f": {gate.reason}"
    return text


def render(refresh: Refresh) -> RenderableType:
    """The whole view of one refresh."""
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("GROUP", "STATUS", "PROGRESS (current of target)"):
        table.add_column(column, no_wrap=True)
    table.add_column("CURRENT / MIN / TARGET", justify="right", no_wrap=True)
    table.add_column("3-H WINDOW LEFT", justify="right", no_wrap=True)
    for group in refresh.groups:
        style = _group_style(group)
        table.add_row(  # Text, never str: rich would read "[...]" in a name as markup
            Text(group.name),
            Text(group.status, style=style),
            Text(bar(group.current, group.target_count or 0), style=style),
            Text(counts(group)),
            Text(clock(group.window_left)),
        )
    parts: list[RenderableType] = [Text(header(refresh), style="bold"), table]
    parts += [Text(f"{g.name} types up: {types_text(g)}") for g in refresh.groups if g.types_up]
    events = [_event_line(g.name, e) for g in refresh.groups for e in g.events]
    events += [_event_line("cluster", e) for e in refresh.cluster_events]
    if events:
        parts += [Text("newest events:", style="bold"), *events]
    parts.append(Text(gate_text(refresh)))
    parts += [Text(f"note: {note}", style="yellow") for note in refresh.notes]
    parts.append(Text(refresh.reason, style=_VERDICT_STYLE.get(refresh.verdict, "")))
    return Group(*parts)


def types_text(group: GroupView) -> str:
    """A flexible group's instances per type, e.g. ``ml.p5.48xlarge 1, ml.p5en.48xlarge 3``."""
    return ", ".join(f"{name} {count}" for name, count in group.types_up)


def status_line(refresh: Refresh) -> str:
    """One plain line per refresh, for logs (stdout not a terminal, no ``--json``)."""
    stamp = refresh.time.strftime("%H:%M:%S")
    groups = ", ".join(
        f"{g.name} {g.status} {counts(g)}"
        + (f" ({types_text(g)})" if g.types_up else "")
        + (f" window {clock(g.window_left)}" if g.window_left is not None else "")
        for g in refresh.groups
    )
    notes = "".join(f"; note: {n}" for n in refresh.notes)
    return (
        f"{stamp} {refresh.cluster} {refresh.cluster_status or '-'}: {groups}; "
        f"gate {refresh.gate.state}; {refresh.verdict}{notes}"
    )

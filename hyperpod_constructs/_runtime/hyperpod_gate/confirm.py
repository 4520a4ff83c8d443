"""The Running confirmation's progress across checks (pure).

A group of 6,758 nodes is 68 ``ListClusterNodes`` pages and a cluster may gate 100 groups:
more pages than one check's time budget holds. Each check therefore returns how far it got
(:func:`encode`, the ``"confirm"`` key of its result, which the state machine keeps in the
execution's state at ``$.check``) and the next check goes on from there (:func:`decode`).

Only counts and one ``NextToken`` per group travel, never node lists: at most
:data:`MAX_PROGRESS_BYTES` of the 256 KiB Step Functions allows a state. A group is either

- *confirmed* (no token): its minimum was Running in the pages read; it stays confirmed
  while DescribeCluster keeps counting every gated group's minimum (a check where it does not
  returns no progress, and the tally restarts from every group's first page), or
- *in progress* (a token): the counts of the pages read so far and where to go on.

A group whose last page was read with fewer than its minimum Running is not kept: its next
confirmation starts at its first page. The next check never takes the progress from its own
payload (which anyone allowed to invoke the function could write): it reads the state the
execution entered its current Task with from the execution's history (:func:`from_history`),
which only Step Functions writes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

PROGRESS_KEY = "confirm"
"""The key of the check result (and of ``$.check`` in the state) that holds the progress."""
PROGRESS_VERSION = 1
MAX_TOKEN_CHARS = 8192
"""The longest ``NextToken`` ListClusterNodes returns (its model's pattern: ``.*``, max 8192)."""
MAX_PROGRESS_BYTES = 64 * 1024
"""What the progress may take in the state, at most (Step Functions allows 256 KiB): 100
groups' counts take about 10 KiB, plus one token of at most 8 KiB."""
CONFIRM_MIN_SECONDS = 60
"""A check returns CONFIRMING (the state machine checks again at once, without the poll
interval) only when it spent at least this long: the history bound counts such an
iteration's events over this many seconds (``definition.history_events``)."""
HISTORY_LOOKBACK = 25
"""History events a check reads, newest first, to find the state its Task was entered
with: the Task's own events come first (3 a retry, 3 attempts) then its ``TaskStateEntered``."""


@dataclass(frozen=True)
class GroupPages:
    """How far one gated group's confirmation got."""

    counts: Mapping[str, int]
    """Status -> nodes of the group, in the pages read so far."""
    pages: int
    """Pages read for the group so far (all checks)."""
    token: str | None = None
    """Where the next page starts; ``None`` once the group is confirmed."""

    @property
    def confirmed(self) -> bool:
        """Whether the group's minimum was Running (no page left to read)."""
        return self.token is None


Progress = Mapping[str, GroupPages]


def encode(progress: Progress) -> dict[str, Any]:
    """The JSON document a check returns (pure)."""
    groups: dict[str, Any] = {}
    for name, group in progress.items():
        entry: dict[str, Any] = {"counts": dict(group.counts), "pages": group.pages}
        if group.token is not None:
            entry["token"] = group.token
        groups[name] = entry
    return {"v": PROGRESS_VERSION, "groups": groups}


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def decode(document: Any, groups: Iterable[str]) -> dict[str, GroupPages]:
    """The progress of the gated ``groups`` from a previous check's document (pure). Anything
    malformed, of another version or of a group not gated is dropped (that group starts at its
    first page): progress can only save pages, never stand in for them."""
    if not isinstance(document, Mapping) or document.get("v") != PROGRESS_VERSION:
        return {}
    found = document.get("groups")
    if not isinstance(found, Mapping):
        return {}
    progress: dict[str, GroupPages] = {}
    for name in groups:
        entry = found.get(name)
        if not isinstance(entry, Mapping):
            continue
        raw = entry.get("counts")
        pages = _count(entry.get("pages"))
        token = entry.get("token")
        if not isinstance(raw, Mapping) or pages is None:
            continue
        counts = {str(k): _count(v) for k, v in raw.items()}
        if any(v is None for v in counts.values()):
            continue
        if token is not None and not (isinstance(token, str) and 0 < len(token) <= MAX_TOKEN_CHARS):
            continue
        progress[name] = GroupPages(
            {k: v for k, v in counts.items() if v is not None}, pages, token
        )
    return progress


def fits(progress: Progress) -> bool:
    """Whether the encoded progress stays within :data:`MAX_PROGRESS_BYTES`."""
    return len(json.dumps(encode(progress), separators=(",", ":"))) <= MAX_PROGRESS_BYTES


def from_history(events: Iterable[Any]) -> Any:
    """The progress document in the state the execution entered its latest Task state with,
    from ``GetExecutionHistory`` events (any order: the newest ``TaskStateEntered`` by id),
    or ``None``."""
    latest: tuple[int, Any] | None = None
    for event in events:
        if not isinstance(event, Mapping) or event.get("type") != "TaskStateEntered":
            continue
        number = event.get("id")
        if not isinstance(number, int) or (latest is not None and number <= latest[0]):
            continue
        details = event.get("stateEnteredEventDetails")
        latest = (number, details.get("input") if isinstance(details, Mapping) else None)
    if latest is None or not isinstance(latest[1], str):
        return None
    try:
        state = json.loads(latest[1])
    except ValueError:
        return None
    check = state.get("check") if isinstance(state, Mapping) else None
    return check.get(PROGRESS_KEY) if isinstance(check, Mapping) else None

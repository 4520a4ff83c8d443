"""A :class:`~.model.Refresh` as one JSON object (``watch --json`` prints one per line).

The fields are described in ``docs/watch.md``; ``schema_version`` changes only when a field is
removed or changes meaning.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta

from .model import EventView, GroupView, Refresh

JSON_SCHEMA_VERSION = 1


def _time(moment: datetime | None) -> str | None:
    return None if moment is None else moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _seconds(span: timedelta | None) -> int | None:
    return None if span is None else int(span.total_seconds())


def _event(event: EventView) -> dict[str, object]:
    return {"time": _time(event.time), "level": event.level, "description": event.description}


def _group(group: GroupView) -> dict[str, object]:
    return {
        "name": group.name,
        "status": group.status,
        "current_count": group.current,
        "min_count": group.min_count,
        "target_count": group.target_count,
        "reported_min_count": group.reported_min,
        "reported_target_count": group.reported_target,
        "ready": group.ready,
        "rolled_back": group.rolled_back,
        "window_left_seconds": _seconds(group.window_left),
        "events": [_event(e) for e in group.events],
        "instance_types_up": [
            {"instance_type": name, "current_count": count} for name, count in group.types_up
        ],
    }


def to_json(refresh: Refresh) -> dict[str, object]:
    """The JSON object of one refresh, as Python objects."""
    return {
        "schema_version": JSON_SCHEMA_VERSION,
        "time": _time(refresh.time),
        "elapsed_seconds": _seconds(refresh.elapsed),
        "stack": refresh.stack_name,
        "stack_status": refresh.stack_status,
        "cluster": refresh.cluster,
        "cluster_status": refresh.cluster_status,
        "failure_message": refresh.failure_message,
        "groups": [_group(g) for g in refresh.groups],
        "cluster_events": [_event(e) for e in refresh.cluster_events],
        "gate": {
            "state": refresh.gate.state,
            "reason": refresh.gate.reason,
            "wait_condition": refresh.gate.wait_condition_id,
        },
        "verdict": refresh.verdict,
        "reason": refresh.reason,
        "exit_code": refresh.exit_code,
        "notes": list(refresh.notes),
    }


def json_line(refresh: Refresh) -> str:
    """:func:`to_json` on one line, ending with a newline."""
    return json.dumps(to_json(refresh), separators=(",", ":")) + "\n"

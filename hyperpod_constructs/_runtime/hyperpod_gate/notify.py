"""The gate's SNS notifications, made for machines (pure).

Every message the gate publishes has a JSON body (:data:`MESSAGE_SCHEMA`, version
:data:`SCHEMA_VERSION`) and message attributes to filter on (:func:`attributes`): a pipeline
subscribes with a filter policy such as ``{"decision": ["READY"]}`` and reads the body,
never English. The schema is stable: a field is only ever added (optional), and a change
that removes or retypes a field gets a new ``schemaVersion`` (and attribute).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, NamedTuple

from .decision import GroupProgress

SCHEMA_VERSION = "2"
"""Version 2 added ``operation``, ``waitedFor`` and ``leftOut`` (required)."""
MESSAGE_TYPE = "HyperPodMinCountGate"
"""The body's ``type`` (and the ``type`` attribute)."""
PUBLISHED_STATUSES = ("READY", "FAILED", "REFUSED")
"""What a message reports: the gate opened (READY), failed (FAILED), or decided but the wait
condition refused its signal for good (REFUSED; ``decision`` says what was decided)."""

_COUNT = {"type": "integer", "minimum": 0}
MESSAGE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://hyperpod-constructs.dev/schemas/min-count-gate-message/1",
    "title": "HyperPod MinCount gate notification",
    "type": "object",
    "required": [
        "schemaVersion",
        "type",
        "status",
        "decision",
        "clusterName",
        "stackId",
        "stackName",
        "reason",
        "time",
        "groups",
        "operation",
        "waitedFor",
        "leftOut",
    ],
    "properties": {
        "schemaVersion": {"const": SCHEMA_VERSION},
        "type": {"const": MESSAGE_TYPE},
        "status": {"enum": list(PUBLISHED_STATUSES)},
        "decision": {"enum": ["READY", "FAILED"]},
        "clusterName": {"type": "string", "minLength": 1},
        "stackId": {"type": "string", "minLength": 1},
        "stackName": {"type": "string", "minLength": 1},
        "reason": {"type": "string"},
        "time": {"type": "string", "format": "date-time"},
        "operation": {"enum": ["create", "update", None]},
        "waitedFor": {"type": "array", "items": {"type": "string", "minLength": 1}},
        "leftOut": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name", "reason"],
                "properties": {
                    "name": {"type": "string", "minLength": 1},
                    "reason": {"type": "string"},
                },
            },
        },
        "groups": {
            "type": "array",
            "items": {
                "type": "object",
                "required": [
                    "name",
                    "status",
                    "currentCount",
                    "minCount",
                    "targetCount",
                    "runningCount",
                ],
                "properties": {
                    "name": {"type": "string", "minLength": 1},
                    "status": {"type": "string"},
                    "currentCount": _COUNT,
                    "minCount": _COUNT,
                    "targetCount": _COUNT,
                    "runningCount": {"anyOf": [_COUNT, {"type": "null"}]},
                },
                "additionalProperties": True,
            },
        },
    },
    "additionalProperties": True,
}
"""JSON Schema (2020-12) of a message body. ``groups`` lists every gated group as the deciding
check saw it: ``currentCount`` as DescribeCluster reports it, ``minCount``/``targetCount`` as
requested, ``runningCount`` the nodes ListClusterNodes confirmed Running (``null`` when the
check did not list them, e.g. a FAILED before the counts were reached, or an opening the fast
path signalled, where ``groups`` is empty: that check read no counts). ``operation`` is the
deployment the wait ends (``create`` or ``update``; ``null`` for a loop armed by an earlier
version); ``waitedFor`` the groups it waited for, ``leftOut`` the template's other gated
groups with why (e.g. ``minimum unchanged: 16``): a subscriber resubmits work only when
``waitedFor`` is not empty."""


class ScopeEntry(NamedTuple):
    """One group of the template in one deployment's wait."""

    group: str
    waited: bool
    why: str


def parse_scope(raw: object) -> tuple[ScopeEntry, ...]:
    """The execution input's ``scope`` list (pure); anything malformed is left out."""
    entries = []
    for item in raw if isinstance(raw, list) else ():
        if isinstance(item, dict) and isinstance(item.get("groupName"), str):
            entries.append(
                ScopeEntry(item["groupName"], item.get("waited") is True, str(item.get("why", "")))
            )
    return tuple(entries)


def stack_name(stack_id: str) -> str:
    """``Name`` of ``arn:aws:cloudformation:region:account:stack/Name/uuid`` (else the id)."""
    parts = stack_id.split("/")
    return parts[1] if len(parts) >= 3 and parts[1] else stack_id


def body(
    *,
    status: str,
    decision: str,
    cluster_name: str,
    stack_id: str,
    reason: str,
    groups: Sequence[GroupProgress],
    time: datetime,
    operation: str | None = None,
    scope: Sequence[ScopeEntry] = (),
) -> dict[str, Any]:
    """The JSON body of one message (see :data:`MESSAGE_SCHEMA`); ``operation`` and ``scope``
    default to unknown (``null``) and none."""
    waited = [e.group for e in scope if e.waited]
    if not scope:  # a loop armed without a scope waits for the groups it reports
        waited = [group.name for group in groups]
    return {
        "operation": operation,
        "waitedFor": waited,
        "leftOut": [{"name": e.group, "reason": e.why} for e in scope if not e.waited],
        "schemaVersion": SCHEMA_VERSION,
        "type": MESSAGE_TYPE,
        "status": status,
        "decision": decision,
        "clusterName": cluster_name,
        "stackId": stack_id,
        "stackName": stack_name(stack_id),
        "reason": reason,
        "time": time.isoformat().replace("+00:00", "Z"),
        "groups": [
            {
                "name": group.name,
                "status": group.status,
                "currentCount": group.current_count,
                "minCount": group.min_count,
                "targetCount": group.target_count,
                "runningCount": group.nodes.running if group.nodes is not None else None,
            }
            for group in groups
        ],
    }


def attributes(document: dict[str, Any]) -> dict[str, dict[str, str]]:
    """SNS ``MessageAttributes`` of a message body, for subscription filter policies:
    ``decision``, ``status``, ``cluster``, ``stack``, ``type``, ``schemaVersion``."""
    values = {
        "decision": document["decision"],
        "status": document["status"],
        "cluster": document["clusterName"],
        "stack": document["stackName"],
        "type": document["type"],
        "schemaVersion": document["schemaVersion"],
    }
    return {name: {"DataType": "String", "StringValue": str(v)} for name, v in values.items()}

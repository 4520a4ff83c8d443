"""Clusters in nested stacks (pure): the parameter values a parent passes its nested stacks
(which nested stacks a parent declares, and where their templates are, is read by the tools'
one reader of a cloud assembly, ``hyperpod_constructs.tools._assembly.nested``).

The parent passes values through the nested stack resource's ``Parameters`` property,
evaluated as the rest of the parent (its parameters, every reference followed): a literal is
the nested parameter's value; an expression written the same on both sides (and not changed by
the deployment, e.g. a ``Ref`` of a parent resource that stays) is the same value; any other
expression is a value plan cannot know offline, so a plan depending on it cannot tell.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..summary.model import render_value
from .references import MARKER
from .resolve import canonical


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _passed(template: Mapping[str, Any], logical_id: str) -> Mapping[str, Any]:
    resource = _mapping(_mapping(template.get("Resources")).get(logical_id))
    return _mapping(_mapping(resource.get("Properties")).get("Parameters"))


def _literal(value: Any) -> str | None:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str | int | float):
        return str(value)
    return None


def _marked(value: Any) -> bool:
    return MARKER in canonical(value)


@dataclass(frozen=True)
class Passed:
    """The parameter values a parent passes one nested stack, old and new."""

    old: dict[str, str] = field(default_factory=dict)
    """Literal values the baseline parent passes."""
    new: dict[str, str] = field(default_factory=dict)
    """Literal values the new parent passes."""
    same: dict[str, str] = field(default_factory=dict)
    """Parameter -> the expression (rendered) both parents pass, the same value though not
    known offline."""
    undecided: tuple[str, ...] = ()
    """Why plan cannot tell a passed value of the new parent (each one is disruptive)."""


def passed_parameters(old: Mapping[str, Any], new: Mapping[str, Any], logical_id: str) -> Passed:
    """What the parent passes the nested stack ``logical_id``.

    :param old: the baseline parent, evaluated (:func:`~.resolve.evaluate`).
    :param new: the new parent, evaluated and its references followed
        (:func:`~.references.follow`).
    """
    before, after = _passed(old, logical_id), _passed(new, logical_id)
    result = Passed()
    undecided: list[str] = []
    for key in sorted(set(before) | set(after)):
        old_value, new_value = before.get(key), after.get(key)
        if (literal := _literal(old_value)) is not None:
            result.old[key] = literal
        if (literal := _literal(new_value)) is not None:
            result.new[key] = literal
        elif key not in after:
            continue
        elif canonical(old_value) == canonical(new_value) and not _marked(new_value):
            result.same[key] = f"{{{render_value(new_value)}}}"
        else:
            undecided.append(
                f"cannot tell the value the parent passes nested stack {logical_id} as "
                f"parameter {key}: {render_value(new_value)} is known only when CloudFormation "
                "deploys it (counted as disruptive)"
            )
    return Passed(result.old, result.new, result.same, tuple(undecided))

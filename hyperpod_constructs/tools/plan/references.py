"""Every reference followed (pure): which values of the new template change when it deploys
though they are written as in the baseline.

A ``Ref`` or ``Fn::GetAtt`` written the same on both sides is the same value only if what it
refers to stays: a resource that CloudFormation replaces (a create-only property changes, from
that type's resource schema; its type changes) gets a new physical id and new attributes; a
resource updated in place keeps its id, its ARN and its other identifiers, but plan cannot tell
its other attributes; a custom resource's attributes (and a nested stack's outputs) come from
code plan does not run, so any change of its properties changes them for all plan knows; a
template parameter of an SSM type is read from Parameter Store anew on every deployment, and a
dynamic reference (``{{resolve:...}}``) too. Each such reference in the new template is
replaced by a marker (:data:`MARKER`) that differs from anything in the baseline, and the
marking is repeated until no more resource changes (a replaced role changes the instance
profile that refers to it, and so on). The cluster's own comparison then sees the change and
classifies it by its row.

``Fn::ImportValue`` written the same on both sides stays the same: CloudFormation refuses to
change an export another stack imports.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .._assembly.types import CLUSTER_TYPE
from ..summary.model import render_value
from .resolve import canonical
from .schemas import TypeSchema, type_schema

MARKER = "Fn::NewOnDeploy"
"""The key of a value that changes when the new template deploys (one string: what it was
and why it changes)."""
_SSM_TYPE = "AWS::SSM::Parameter::Value<"
_DYNAMIC = "{{resolve:"
_CUSTOM = ("Custom::", "AWS::CloudFormation::CustomResource")
_OUTPUTS_FROM_CODE = ("AWS::CloudFormation::Stack",)
_STABLE_SUFFIXES = ("Arn", "Id")
"""Attributes of a resource updated in place that keep their value (its ARN, its id)."""
_MAX_ROUNDS = 64


class _Moving:
    """Why references to a resource change: ``whole`` (its id and attributes) or only its
    attributes other than its identifiers."""

    def __init__(self, reason: str, *, whole: bool, identifiers: tuple[str, ...] = ()) -> None:
        self.reason = reason
        self.whole = whole
        self.identifiers = identifiers

    def moves(self, attribute: str | None) -> bool:
        """A ``Ref`` (``attribute`` None) or ``Fn::GetAtt`` of this attribute changes."""
        if self.whole:
            return True
        if attribute is None:
            return False
        return attribute not in self.identifiers and not attribute.endswith(_STABLE_SUFFIXES)


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _at(value: Any, parts: list[str]) -> list[Any]:
    """Every value at a schema pointer's parts (``*``: each item of a list)."""
    if not parts:
        return [value]
    head, rest = parts[0], parts[1:]
    if head == "*":
        return [v for item in value for v in _at(item, rest)] if isinstance(value, list) else []
    if isinstance(value, Mapping) and head in value:
        return _at(value[head], rest)
    return []


def _replacing(old: Mapping[str, Any], new: Mapping[str, Any], schema: TypeSchema) -> str | None:
    for pointer in schema.create_only:
        parts = pointer.removeprefix("/properties/").split("/")
        if canonical(_at(old, parts)) != canonical(_at(new, parts)):
            return pointer.removeprefix("/properties/").replace("/", ".")
    return None


def _why(
    logical_id: str,
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    schema_of: Callable[[str], TypeSchema | None],
) -> _Moving | None:
    """Why references to a resource in both templates change (None: they do not)."""
    kind = new.get("Type")
    if old.get("Type") != kind:
        return _Moving(f"{logical_id} is replaced (its type changes)", whole=True)
    before, after = _mapping(old.get("Properties")), _mapping(new.get("Properties"))
    if canonical(before) == canonical(after):
        return None
    if not isinstance(kind, str) or kind.startswith(_CUSTOM) or kind in _OUTPUTS_FROM_CODE:
        return _Moving(
            f"{logical_id} ({kind}) changes, and its values come from code plan does not run",
            whole=True,
        )
    schema = schema_of(kind)
    if schema is None:
        return _Moving(
            f"{logical_id} ({kind}) changes, and plan cannot tell whether CloudFormation "
            "replaces it (no resource schema for its type: is cfn-lint installed?)",
            whole=True,
        )
    replacing = _replacing(before, after, schema)
    if replacing is not None:
        return _Moving(
            f"{logical_id} ({kind}) is replaced: its {replacing} changes (create-only)",
            whole=True,
        )
    return _Moving(
        f"{logical_id} ({kind}) is updated in place: its id and ARN stay, plan cannot tell "
        "its other attributes",
        whole=False,
        identifiers=schema.identifiers,
    )


def _target(value: Mapping[str, Any]) -> tuple[str, str | None] | None:
    """``(logical id, attribute)`` of a ``Ref`` (attribute None) or ``Fn::GetAtt``."""
    if len(value) != 1:
        return None
    ((key, argument),) = value.items()
    if key == "Ref" and isinstance(argument, str):
        return argument, None
    if key == "Fn::GetAtt" and isinstance(argument, list) and len(argument) == 2:
        resource, attribute = argument
        if isinstance(resource, str):
            return resource, attribute if isinstance(attribute, str) else ""
    return None


def _marked(value: Any, moving: Mapping[str, _Moving], depth: int = 0) -> Any:
    if depth > 64:
        return value
    if isinstance(value, str):
        if _DYNAMIC in value:
            return {MARKER: f"{value}: a dynamic reference, resolved when CloudFormation deploys"}
        return value
    if isinstance(value, list):
        return [_marked(item, moving, depth + 1) for item in value]
    if not isinstance(value, Mapping):
        return value
    if MARKER in value:
        return value
    target = _target(value)
    if target is not None:
        why = moving.get(target[0])
        if why is not None and why.moves(target[1]):
            return {MARKER: f"{render_value(value)}: {why.reason}"}
        return value
    return {str(k): _marked(v, moving, depth + 1) for k, v in value.items()}


def _parameters(template: Mapping[str, Any]) -> dict[str, _Moving]:
    moving: dict[str, _Moving] = {}
    for name, declaration in _mapping(template.get("Parameters")).items():
        kind = _mapping(declaration).get("Type")
        if isinstance(kind, str) and kind.startswith(_SSM_TYPE):
            moving[str(name)] = _Moving(
                f"parameter {name} is an SSM parameter, read anew on every deployment",
                whole=True,
            )
    return moving


def follow(
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    *,
    schema_of: Callable[[str], TypeSchema | None] = type_schema,
) -> dict[str, Any]:
    """``new`` (evaluated, :func:`~.resolve.evaluate`) with every reference whose value changes
    on deployment marked (a new object), compared with ``old`` (evaluated).

    :param old: the baseline, evaluated.
    :param new: the new template, evaluated.
    :param schema_of: a resource type's schema (default: cfn-lint's, when installed).
    """
    old_resources = _mapping(old.get("Resources"))
    resources = dict(_mapping(new.get("Resources")))
    parameters = _parameters(new)
    moving = dict(parameters)
    for _ in range(_MAX_ROUNDS):
        marked = {k: _marked(v, moving) for k, v in resources.items()}
        found = dict(parameters)
        for logical_id, resource in marked.items():
            before = old_resources.get(logical_id)
            if (
                isinstance(resource, Mapping)
                and isinstance(before, Mapping)
                and resource.get("Type") != CLUSTER_TYPE
                and (why := _why(logical_id, before, resource, schema_of)) is not None
            ):
                found[logical_id] = why
        if _state(found) == _state(moving):
            return {**new, "Resources": marked}
        moving = found
    return {**new, "Resources": {k: _marked(v, moving) for k, v in resources.items()}}


def _state(moving: Mapping[str, _Moving]) -> dict[str, bool]:
    return {k: v.whole for k, v in moving.items()}

"""Clusters in nested stacks (pure): which nested stacks a parent template declares, where
their templates are in the cloud assembly, and the parameter values the parent passes them.

CDK writes a ``NestedStack`` as an ``AWS::CloudFormation::Stack`` resource of the parent whose
template is an asset of the parent: named by the resource's ``aws:asset:path`` metadata (the
cdk CLI writes it), else by the asset manifest's file whose S3 object key ends the resource's
``TemplateURL``. The parent passes values through the resource's ``Parameters`` property,
evaluated as the rest of the parent (its parameters, every reference followed): a literal is
the nested parameter's value; an expression written the same on both sides (and not changed by
the deployment, e.g. a ``Ref`` of a parent resource that stays) is the same value; any other
expression is a value plan cannot know offline, so a plan depending on it cannot tell.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..summary.model import CLUSTER_TYPE, render_value
from .model import NESTED_STACK_TYPE
from .references import MARKER
from .resolve import canonical

ASSET_PATH = "aws:asset:path"


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def nested_stacks(template: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """Logical id -> resource of each nested stack (``AWS::CloudFormation::Stack``)."""
    return {
        str(logical_id): resource
        for logical_id, resource in _mapping(template.get("Resources")).items()
        if isinstance(resource, Mapping) and resource.get("Type") == NESTED_STACK_TYPE
    }


def has_cluster(template: Mapping[str, Any]) -> bool:
    """``template`` declares a HyperPod cluster."""
    resources = _mapping(template.get("Resources")).values()
    return any(_mapping(resource).get("Type") == CLUSTER_TYPE for resource in resources)


def _object_key(url: Any) -> str | None:
    """The last path segment of a ``TemplateURL`` (a string, or CDK's ``Fn::Join``)."""
    if isinstance(url, str):
        return url.rsplit("/", 1)[-1] or None
    parts = _mapping(url).get("Fn::Join")
    if isinstance(parts, list) and len(parts) == 2 and isinstance(parts[1], list):
        last = parts[1][-1] if parts[1] else None
        if isinstance(last, str):
            return last.rsplit("/", 1)[-1] or None
    return None


def template_file(resource: Mapping[str, Any], assets: Iterable[Mapping[str, Any]]) -> str | None:
    """The nested stack's template file, relative to the parent's folder (None: not found).

    :param resource: the parent's ``AWS::CloudFormation::Stack`` resource.
    :param assets: the asset manifests (``*.assets.json``) beside the parent's template.
    """
    path = _mapping(resource.get("Metadata")).get(ASSET_PATH)
    if isinstance(path, str):
        return path
    key = _object_key(_mapping(resource.get("Properties")).get("TemplateURL"))
    if key is None:
        return None
    for manifest in assets:
        for asset in _mapping(manifest.get("files")).values():
            destinations = _mapping(_mapping(asset).get("destinations")).values()
            source = _mapping(_mapping(asset).get("source")).get("path")
            if isinstance(source, str) and any(
                _mapping(d).get("objectKey") == key for d in destinations
            ):
                return source
    return None


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

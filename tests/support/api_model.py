"""The SageMaker API model (botocore's ``sagemaker/2017-07-24/service-2.json``) as an oracle
for what the library renders: one generic walk of a rendered ``AWS::SageMaker::Cluster``'s
properties against the ``CreateCluster`` input shapes, checking every enum, pattern, length,
range and required member the model declares, and every member it does not know.

Nothing here is typed in by hand per field: when AWS changes a shape (a new enum value, a
tighter range), the model shipped with the next botocore changes what this reports.

CloudFormation and the API name a few things differently; those are the only hand-written
facts (:data:`CFN_ONLY`). A value CloudFormation resolves at deploy time (``{"Ref": ...}``,
``{"Fn::...": ...}``) is skipped: it has no value to check yet.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

import botocore.session
import regex
from botocore.model import ListShape, Shape, StructureShape

OPERATION = "CreateCluster"

CFN_ONLY: Mapping[str, str] = {}
"""Properties of the CloudFormation resource that ``CreateCluster`` does not take, with why
(none today: the library renders API names only)."""


@cache
def create_cluster_input() -> StructureShape:
    """The ``CreateCluster`` request shape of the installed botocore."""
    model = botocore.session.get_session().get_service_model("sagemaker")
    shape = model.operation_model(OPERATION).input_shape
    assert isinstance(shape, StructureShape)
    return shape


@cache
def _pattern(text: str) -> regex.Pattern[str]:
    # The model's patterns are Java regular expressions matched against the whole value;
    # the ``regex`` module reads their ``\p{L}`` classes, ``re`` does not.
    return regex.compile(text)


def _is_token(value: object) -> bool:
    return (
        isinstance(value, Mapping)
        and len(value) == 1
        and ("Ref" in value or next(iter(value)).startswith("Fn::"))
    )


def violations(properties: Mapping[str, Any]) -> list[str]:
    """Every way ``properties`` (a rendered cluster's ``Properties``) breaks the API model."""
    return list(_walk(properties, create_cluster_input(), OPERATION, top=True))


def _walk(value: Any, shape: Shape, path: str, *, top: bool = False) -> Iterator[str]:
    if _is_token(value):
        return
    kind = shape.type_name
    if isinstance(shape, StructureShape):
        if not isinstance(value, Mapping):
            yield f"{path}: {value!r} is not an object ({shape.name})"
            return
        for member in shape.required_members:
            if member not in value:
                yield f"{path}.{member}: required by {shape.name}"
        for key, item in value.items():
            if key not in shape.members:
                if not (top and key in CFN_ONLY):
                    yield f"{path}.{key}: not a member of {shape.name} in the API model"
                continue
            yield from _walk(item, shape.members[key], f"{path}.{key}")
        return
    if isinstance(shape, ListShape):
        if not isinstance(value, list):
            yield f"{path}: {value!r} is not a list ({shape.name})"
            return
        yield from _bounds(len(value), shape, path, "items")
        for index, item in enumerate(value):
            yield from _walk(item, shape.member, f"{path}[{index}]")
        return
    if kind == "string":
        if not isinstance(value, str):
            yield f"{path}: {value!r} is not a string ({shape.name})"
            return
        if shape.enum and value not in shape.enum:
            yield f"{path}: {value!r} is not one of {shape.name} {shape.enum}"
        yield from _bounds(len(value), shape, path, "characters")
        pattern = shape.metadata.get("pattern")
        if pattern is not None and not _pattern(pattern).fullmatch(value):
            yield f"{path}: {value!r} does not match {shape.name}'s pattern {pattern!r}"
        return
    if kind in ("integer", "long"):
        if not isinstance(value, int) or isinstance(value, bool):
            yield f"{path}: {value!r} is not an integer ({shape.name})"
            return
        yield from _bounds(value, shape, path, "")
        return
    if kind == "boolean" and not isinstance(value, bool):
        yield f"{path}: {value!r} is not a boolean ({shape.name})"


def _bounds(number: int, shape: Shape, path: str, unit: str) -> Iterator[str]:
    low, high = shape.metadata.get("min"), shape.metadata.get("max")
    if (low is not None and number < low) or (high is not None and number > high):
        what = f"{number} {unit}".strip()
        yield f"{path}: {what}, outside {shape.name}'s {low}..{high}"

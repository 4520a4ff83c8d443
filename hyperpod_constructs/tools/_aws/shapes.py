"""Every field of a request or an answer checked against AWS's model before it is used.

:func:`check` walks a parsed value along one of the shapes of :mod:`.model` (generated
from botocore: CreateCluster's request; DescribeCluster, ListClusterEvents, GetTemplate,
DescribeStacks, DescribeStackEvents and DescribeStackResource answers; ``preflight``'s
ListClusters, DescribeTrainingPlan and Service Quotas' ListServiceQuotas and
ListAWSDefaultServiceQuotas answers) and raises
:class:`ShapeError` naming the first field whose type does not match, as
``InstanceGroups[0].InstanceCount: expected an integer, got the string '4'``.

- Both kinds: types (an object, a list, a string, an integer, a boolean, a timestamp), and
  the members AWS marks required. ``null`` is refused as botocore refuses it. Members the model
  does not know are left to the caller (``convert`` reports them with a reason).
- Requests (``answer=False``): also enum values, integer ranges and string and list lengths,
  as AWS would refuse them. The instance-type enums are left open (AWS adds types every month;
  the library checks them). Timestamps are JSON strings or numbers.
- Answers (``answer=True``, botocore's parsed responses): types and required members only
  (AWS adds enum values and limits without notice); timestamps are ``datetime``.

Standard library only (botocore is not a dependency of the library).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ..._core.sanitize import FieldError, printable
from .model import ROOTS, SHAPES

__all__ = ["ROOTS", "ShapeError", "check"]

OPEN_ENUMS = frozenset({"sagemaker.ClusterInstanceType"})
"""Enums whose values are not checked: AWS extends them faster than any copy of the model."""
_MAX_SHOWN = 40


class ShapeError(FieldError):
    """A field whose value does not fit AWS's model; ``str()`` is ``<field>: <problem>``, one
    printable line."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(field or "(top level)", problem)
        self.field = field


def describe(value: object) -> str:
    """``the string 'x'``, ``the number 4``, ``a list``, ``an object``, ``true``, ``null``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return f"the number {str(value)[:_MAX_SHOWN]}"
    if isinstance(value, str):
        shown = value if len(value) <= _MAX_SHOWN else value[:_MAX_SHOWN] + "..."
        return f"the string {shown!r}"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list | tuple):
        return "a list"
    return f"a {type(value).__name__}"


_NOUNS = {
    "structure": "an object",
    "union": "an object",
    "map": "an object",
    "list": "a list",
    "string": "a string",
    "integer": "an integer",
    "long": "an integer",
    "float": "a number",
    "double": "a number",
    "boolean": "true or false",
    "timestamp": "a timestamp",
    "blob": "a string",
}


def _fits(value: object, kind: str, *, answer: bool) -> bool:
    if kind in ("structure", "union", "map"):
        return isinstance(value, Mapping)
    if kind == "list":
        return isinstance(value, list)
    if kind in ("string", "blob"):
        return isinstance(value, str) or (kind == "blob" and isinstance(value, bytes))
    if kind in ("integer", "long"):
        return isinstance(value, int) and not isinstance(value, bool)
    if kind in ("float", "double"):
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "timestamp":
        if answer:
            return isinstance(value, datetime)
        return isinstance(value, str | int | float) and not isinstance(value, bool)
    return True  # a kind these shapes do not use: nothing to check


def _join(path: str, member: str) -> str:
    return f"{path}.{member}" if path else member


def _enum(value: str, name: str, allowed: list[str], path: str) -> None:
    if value in allowed:
        return
    close = difflib.get_close_matches(value, allowed, n=1, cutoff=0.8)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    shown = ", ".join(allowed) if len(allowed) <= 12 else f"{len(allowed)} values"
    raise ShapeError(
        path,
        f"{describe(value)} is not a value AWS accepts ({name.split('.')[-1]}: {shown}){hint}",
    )


def _limits(value: object, shape: Mapping[str, Any], path: str) -> None:
    low, high = shape.get("min"), shape.get("max")
    if isinstance(value, int):
        measure, unit = value, ""
    elif isinstance(value, str | list | Mapping):
        measure = len(value)
        unit = " characters" if isinstance(value, str) else " items"
    else:
        return
    if (low is not None and measure < low) or (high is not None and measure > high):
        what = "is" if isinstance(value, int) else "has"
        span = f"{low if low is not None else ''}..{high if high is not None else ''}"
        size = value if isinstance(value, int) else f"{measure}{unit}"
        raise ShapeError(path, f"{what} {size}; allowed: {span}{unit}")


def _walk(value: object, name: str, path: str, *, answer: bool) -> None:
    shape = SHAPES[name]
    kind = shape["type"]
    if not _fits(value, kind, answer=answer):
        raise ShapeError(path, f"expected {_NOUNS.get(kind, kind)}, got {describe(value)}")
    if not answer:
        if "enum" in shape and name not in OPEN_ENUMS:
            assert isinstance(value, str)
            _enum(value, name, shape["enum"], path)
        _limits(value, shape, path)
    if kind in ("structure", "union"):
        assert isinstance(value, Mapping)
        members: Mapping[str, str] = shape["members"]
        for member in shape.get("required", ()):
            if member not in value:
                raise ShapeError(_join(path, member), "missing; AWS requires it")
        present = [m for m in members if m in value]
        if kind == "union" and not answer and len(present) != 1:
            raise ShapeError(
                path, f"expected exactly one of {', '.join(members)}, got {len(present)}"
            )
        for member in present:
            _walk(value[member], members[member], _join(path, member), answer=answer)
    elif kind == "list":
        assert isinstance(value, list)
        for index, item in enumerate(value):
            _walk(item, shape["member"], f"{path}[{index}]", answer=answer)
    elif kind == "map":
        assert isinstance(value, Mapping)
        for key, item in value.items():
            where = f"{path}[{printable(key)!r}]" if isinstance(key, str) else path
            _walk(key, shape["key"], where, answer=answer)
            _walk(item, shape["value"], where, answer=answer)


def check(value: object, root: str, *, answer: bool = False) -> None:
    """Check ``value`` against the shape ``ROOTS[root]`` (``"CreateCluster"``,
    ``"DescribeCluster"``, ...); see the module docstring for what is checked.

    :raises ShapeError: the first field that does not fit, by its path.
    """
    _walk(value, ROOTS[root], "", answer=answer)

"""A template with its parameters resolved as CloudFormation would deploy it (pure).

``{"Ref": "GpuCount"}`` becomes the parameter's value: the deployed stack's (``DescribeStacks``)
or, offline, the template's ``Default``. Other intrinsic functions stay as they are, so two
templates compare equal where they hold the same expression. CloudFormation passes parameter
values as strings; :func:`canonical` compares ``"16"`` and ``16`` as the same value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

_INTEGER = re.compile(r"-?[0-9]{1,18}")
_MAX_DEPTH = 64


def parameter_values(
    template: Mapping[str, Any], given: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Each parameter the template declares -> its value: ``given`` (e.g. the deployed
    stack's), else its ``Default``; a parameter with neither is left out (its ``Ref`` stays)."""
    declared = template.get("Parameters")
    values: dict[str, str] = {}
    if not isinstance(declared, Mapping):
        return values
    for name, declaration in declared.items():
        if not isinstance(name, str):
            continue
        if given is not None and name in given:
            values[name] = given[name]
        elif isinstance(declaration, Mapping) and "Default" in declaration:
            default = declaration["Default"]
            if isinstance(default, str | int | float) and not isinstance(default, bool):
                values[name] = str(default)
    return values


def resolve(value: Any, parameters: Mapping[str, str], depth: int = 0) -> Any:
    """``value`` with every ``{"Ref": name}`` of a parameter in ``parameters`` replaced by its
    value (a new object; ``value`` is not changed)."""
    if depth > _MAX_DEPTH:
        return value
    if isinstance(value, list):
        return [resolve(item, parameters, depth + 1) for item in value]
    if not isinstance(value, Mapping):
        return value
    if len(value) == 1:
        ((key, argument),) = value.items()
        if key == "Ref" and isinstance(argument, str) and argument in parameters:
            return parameters[argument]
    return {key: resolve(item, parameters, depth + 1) for key, item in value.items()}


def _normalized(value: Any) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    if isinstance(value, str):
        text = value.strip()
        return int(text) if _INTEGER.fullmatch(text) else value
    if isinstance(value, Mapping):
        return {str(key): _normalized(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_normalized(item) for item in value]
    return repr(value)


def canonical(value: Any) -> str:
    """A text that is equal for two values CloudFormation would deploy the same: numbers and
    numeric strings alike, object keys in any order."""
    return json.dumps(_normalized(value), sort_keys=True, default=repr)


def as_count(value: Any) -> int | None:
    """A whole number from a resolved value (``16``, ``"16"``), else None (an expression)."""
    normalized = _normalized(value)
    return normalized if isinstance(normalized, int) and not isinstance(normalized, bool) else None

"""Fast checks for CDK tokens that avoid a jsii round trip for plain Python values."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any, TypeVar, cast
from weakref import WeakKeyDictionary

from aws_cdk import Aws, Duration, Token

_TOKEN_MARKERS = ("${Token[", "#{Token[", "Token[")

T = TypeVar("T")


def is_unresolved(value: object) -> bool:
    """Whether ``value`` is (or contains) a CDK token that only resolves at deploy time.

    Python ``int``/``bool`` values are never tokens (CDK encodes number tokens as floats), and
    a string is only asked of jsii when it carries a token marker, so validating 100 groups
    costs no jsii calls at all for concrete props.
    """
    if value is None or isinstance(value, bool | int):
        return False
    if isinstance(value, str):
        return any(marker in value for marker in _TOKEN_MARKERS) and Token.is_unresolved(value)
    if isinstance(value, list | tuple):
        return any(is_unresolved(item) for item in value)
    if isinstance(value, dict):
        return any(is_unresolved(k) or is_unresolved(v) for k, v in value.items())
    if not _jsii_can_carry(value):
        return False  # bytes, sets, arbitrary objects: never tokens, and jsii cannot take them
    if isinstance(value, float):
        # NaN and infinity are never tokens, and jsii cannot carry them (the JSON it sends
        # would break the jsii process for the rest of the app).
        return math.isfinite(value) and bool(Token.is_unresolved(value))
    return bool(Token.is_unresolved(value))


@functools.cache
def pseudo(name: str) -> str:
    """``Aws.<name>`` (``"PARTITION"``, ``"REGION"``, ...): a pseudo parameter's token, read
    from jsii once per process. aws-cdk-lib makes each one once (a static field), so every read
    returns the same token; the cache saves a jsii round trip per later read."""
    return cast(str, getattr(Aws, name))


def _jsii_can_carry(value: object) -> bool:
    """Whether ``value`` can be passed to jsii (a float, or a jsii object)."""
    kind = type(value)
    return (
        isinstance(value, float)
        or hasattr(value, "__jsii_ref__")
        or hasattr(kind, "__jsii_type__")
        or hasattr(kind, "__jsii_ifaces__")
    )


def count_or_token(value: object) -> int | str:
    """A count as the readiness gate renders it: an ``int`` as is, ``None`` as 0, a token
    (e.g. ``CfnParameter.value_as_number``, which CDK encodes as a float) as its string
    token, which CloudFormation resolves to the deployed value."""
    if value is None:
        return 0
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if is_unresolved(value):
        return Token.as_string(value)
    raise TypeError(f"a count must be an int or a token, got {type(value).__name__}")


_READ: WeakKeyDictionary[Any, dict[str, Any]] = WeakKeyDictionary()
"""By immutable jsii value, what :func:`read_once` read of it."""


def read_once(value: Any, name: str, read: Callable[[], T]) -> T:
    """``read()``, a jsii call that reads ``name`` of ``value``, made once per object:
    ``read_once(duration, "seconds", duration.to_seconds)``. Only for aws-cdk-lib's immutable
    values (``Duration``, ``Size``), whose answers never change; a call that raises is not
    kept. The gate's default durations are the same objects in every options object, so
    checking them costs a cluster no round trip."""
    known = _READ.setdefault(value, {})
    if name not in known:
        known[name] = read()
    return cast(T, known[name])


def duration_seconds(duration: Duration) -> float:
    """``duration.to_seconds()``, read from jsii once per ``Duration`` (:func:`read_once`)."""
    return read_once(duration, "seconds", duration.to_seconds)

"""Argument checks at the public entry points (rule ``HP-ARG-TYPE``): a wrong type becomes a
finding naming the parameter, the value's type and what is expected, instead of a crash deep
inside the library or the jsii runtime.

Pure: a value in, findings out. Tokens pass wherever the documented type allows one (a number
token is a ``float``; a string token is a ``str``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable

from .._cdk.tokens import is_unresolved
from .finding import Finding, HyperPodArgumentError
from .rule import E, Rule, Scope, Source

ARG_TYPE = Rule(
    "HP-ARG-TYPE",
    E,
    Scope.ARGUMENT,
    "any argument",
    "the documented type: e.g. `HyperPodInstanceType.of(...)`, not a `str`; an `int`, not a "
    "`float`/`bool`/NaN; a list, not `None`; a `bool`, not a string",
    checked_by="every public entry point (check, check_items, argument_finding)",
    source=Source.library("the types of the library's own Python parameters"),
)

RULES = (ARG_TYPE,)
"""This family's rules."""

Check = Callable[[object], bool]


class _Unresolved:
    """Shown for a token value in messages (its encoded form means nothing to a reader)."""

    def __repr__(self) -> str:
        return "<token>"


TOKEN = _Unresolved()


def type_name(value: object) -> str:
    """``int``, ``str``, ``float nan``, ...: how a message names what was given."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"float {value!r}"
    return type(value).__name__


def argument_finding(
    parameter: str, value: object, expected: str, *, fix: str = "", group: str | None = None
) -> Finding:
    """An ``HP-ARG-TYPE`` finding: ``parameter`` got ``value`` of the wrong type.

    :param parameter: the parameter's name, as the user wrote it.
    :param value: what it got.
    :param expected: what it takes, in words (``"a HyperPodInstanceType"``).
    :param fix: how to fix it. Default: ``pass <expected>``.
    :param group: the instance group it belongs to. Default: none.
    """
    return ARG_TYPE.finding(
        field=parameter,
        value=value,
        allowed=f"{expected} (got {type_name(value)})",
        fix=fix or f"pass {expected}",
        group=group,
    )


def is_int(value: object) -> bool:
    """A whole number: ``int`` but not ``bool``."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: object) -> bool:
    """An ``int`` or a finite ``float`` (number tokens are finite floats), not a ``bool``."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def is_text_token(value: object) -> bool:
    """A string token (``CfnParameter.value_as_string``, ``Fn.import_value``, ...)."""
    return isinstance(value, str) and is_unresolved(value)


def is_number_token(value: object) -> bool:
    """A number token (``CfnParameter.value_as_number``, ``Token.as_number``): CDK encodes
    it as a float."""
    return isinstance(value, float) and is_unresolved(value)


def is_bool(value: object) -> bool:
    return isinstance(value, bool)


def is_str(value: object) -> bool:
    return isinstance(value, str)


def is_sequence(value: object) -> bool:
    """A list or tuple (not a string, not ``None``, not a set whose order is random)."""
    return isinstance(value, list | tuple)


def instance_of(*types: type) -> Check:
    return lambda value: isinstance(value, types)


def check(
    parameter: str,
    value: object,
    ok: Check,
    expected: str,
    *,
    optional: bool = False,
    fix: str = "",
    group: str | None = None,
) -> list[Finding]:
    """``[]`` when ``ok(value)`` (or ``value is None`` and ``optional``), else one finding."""
    if value is None and optional:
        return []
    if ok(value):
        return []
    return [argument_finding(parameter, value, expected, fix=fix, group=group)]


def check_items(
    parameter: str,
    value: object,
    ok: Check,
    expected: str,
    *,
    fix: str = "",
    group: str | None = None,
) -> list[Finding]:
    """A list or tuple whose every item passes ``ok``."""
    if not is_sequence(value):
        return [argument_finding(parameter, value, f"a list of {expected}", fix=fix, group=group)]
    assert isinstance(value, list | tuple)
    bad = [item for item in value if not ok(item)]
    if not bad:
        return []
    return [
        argument_finding(
            f"{parameter}[{value.index(bad[0])}]", bad[0], expected, fix=fix, group=group
        )
    ]


def raise_if_any(path: str, findings: Iterable[Finding]) -> None:
    """Raise :class:`HyperPodArgumentError` for ``findings`` (when the library cannot go on)."""
    found = list(findings)
    if found:
        raise HyperPodArgumentError(path, found)


def pattern_findings(
    value: str | None,
    pattern: re.Pattern[str],
    *,
    rule: Rule,
    field: str | None = None,
    allowed: str,
    fix: str,
    group: str,
    max_length: int | None = None,
    required: bool = False,
) -> list[Finding]:
    """``[]`` when ``value`` (a string token, or ``None`` unless ``required``) passes: a
    ``str`` of at most ``max_length`` characters that ``pattern`` fully matches; else one
    ``rule`` finding (naming ``field``; default: the rule's :attr:`Rule.finding_field`)."""
    if value is None and not required:
        return []
    if is_text_token(value):
        return []
    if (
        isinstance(value, str)
        and pattern.fullmatch(value)
        and (max_length is None or len(value) <= max_length)
    ):
        return []
    return [rule.finding(field=field, value=value, allowed=allowed, fix=fix, group=group)]

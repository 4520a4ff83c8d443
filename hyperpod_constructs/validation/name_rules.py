"""Names: of the cluster and of its instance groups (partition names use :func:`check_name`
too). Pure: a name in, findings out."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .._cdk.tokens import is_unresolved
from .._core import limits
from .._core.arguments import (
    TOKEN,
    check,
    instance_of,
    is_int,
    is_str,
    is_text_token,
    raise_if_any,
)
from .._core.finding import Finding
from .._core.rule import E, Rule, Scope, Source, reports
from .group_arguments import label

if TYPE_CHECKING:
    from ..instance_group import InstanceGroup

NAME_GROUP = Rule(
    "HP-NAME-GROUP",
    E,
    Scope.GROUP,
    "`name` / `InstanceGroupName`",
    "1..63 characters, `[a-zA-Z0-9](-*[a-zA-Z0-9])*` (full match)",
    source=Source.api(
        "ClusterInstanceGroupSpecification.InstanceGroupName",
        "1..63 characters, pattern [a-zA-Z0-9](-*[a-zA-Z0-9])*",
    ),
)

NAME_CLUSTER = Rule(
    "HP-NAME-CLUSTER",
    E,
    Scope.CLUSTER,
    "`cluster_name` / `ClusterName`",
    "1..63 characters, `[a-zA-Z0-9](-*[a-zA-Z0-9])*` (full match)",
    source=Source.api(
        "CreateClusterRequest.ClusterName", "1..63 characters, pattern [a-zA-Z0-9](-*[a-zA-Z0-9])*"
    ),
)

RULES = (
    NAME_GROUP,
    NAME_CLUSTER,
)
"""This family's rules, in documentation order."""


def _name_allowed(max_length: int) -> str:
    return (
        f"1..{max_length} characters: letters and digits, with single or repeated hyphens "
        "between them (pattern [a-zA-Z0-9](-*[a-zA-Z0-9])*)"
    )


def _finding(
    rule: Rule | str,
    *,
    field: str | None,
    value: object,
    allowed: str,
    fix: str,
    group: str | None,
) -> Finding:
    if isinstance(rule, Rule):
        return rule.finding(field=field, value=value, allowed=allowed, fix=fix, group=group)
    # A caller's own rule id: a finding built directly has the documented default (error).
    return Finding(rule=rule, field=field or "", value=value, allowed=allowed, fix=fix, group=group)


def check_name(
    value: str,
    *,
    rule: Rule | str,
    field: str | None = None,
    group: str | None,
    max_length: int = limits.MAX_NAME_LENGTH,
) -> list[Finding]:
    """A cluster, group or partition name against HyperPod's pattern and length (a string
    token passes; a number token is not a name).

    :param value: the name.
    :param rule: the rule its findings are of (``NAME_CLUSTER``, ``NAME_GROUP``, ...), which
        gives them its id and severity; a rule id of your own (a ``str``) is reported as an
        error.
    :param field: the field its findings name. Default: the rule's
        (:attr:`Rule.finding_field`).
    :param group: the instance group it belongs to, or ``None``.
    :param max_length: the longest name allowed. Default: 63.
    :raises HyperPodArgumentError: ``rule``, ``field``, ``group`` or ``max_length`` of another
        type (the name itself is what is checked: any value gives findings).
    """
    raise_if_any(
        "check_name",
        [
            *check("rule", rule, instance_of(Rule, str), "a Rule or a rule id (str)"),
            *check("field", field, is_str, "a str", optional=True),
            *check("group", group, is_str, "a str", optional=True),
            *check("max_length", max_length, is_int, "an int"),
        ],
    )
    if is_text_token(value):
        return []
    if is_unresolved(value):
        return [
            _finding(
                rule,
                field=field,
                value=TOKEN,
                allowed=f"{_name_allowed(max_length)}; a string token, not a number token",
                fix="pass a string parameter (value_as_string) or Token.as_string(...)",
                group=group,
            )
        ]
    if isinstance(value, str) and len(value) <= max_length and limits.NAME_PATTERN.fullmatch(value):
        return []
    suggestion = re.sub(r"[^a-zA-Z0-9]+", "-", str(value)).strip("-")[:max_length].strip("-")
    if not suggestion:
        fix = "use a name such as 'gpu'"
    elif suggestion == value or len(suggestion) > limits.MAX_NAME_LENGTH:
        fix = f"shorten it to at most {max_length} characters"
    else:
        fix = f"use e.g. {suggestion!r}"
    return [
        _finding(
            rule, field=field, value=value, allowed=_name_allowed(max_length), fix=fix, group=group
        )
    ]


@reports(NAME_GROUP)
def group_name(group: InstanceGroup) -> list[Finding]:
    """``name`` (``InstanceGroupName``) against HyperPod's pattern and length."""
    return check_name(group.name, rule=NAME_GROUP, group=label(group))


@reports(NAME_CLUSTER)
def cluster_name(name: str) -> list[Finding]:
    """``cluster_name`` (``ClusterName``) against HyperPod's pattern and length."""
    return check_name(name, rule=NAME_CLUSTER, group=None)

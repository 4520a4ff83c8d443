"""Instance counts of a group: ``instance_count``, ``min_instance_count`` and the sizing from
``min_accelerators``. Pure: a group in, findings out; a number token is skipped."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .._cdk.tokens import is_unresolved
from .._core import limits
from .._core.arguments import (
    TOKEN,
    is_int,
    is_text_token,
    type_name,
)
from .._core.finding import Finding
from .._core.rule import E, Rule, Scope, Source, reports
from .._core.sources import SLURM_SCALING
from ..enums import NodeType
from ..instance_group import SIZING

if TYPE_CHECKING:
    from ..instance_group import InstanceGroup

COUNT_INT = Rule(
    "HP-COUNT-INT",
    E,
    Scope.GROUP,
    "`instance_count`, `min_instance_count`",
    "a Python `int` (not `float`, not `bool`)",
    source=Source.library(
        "a Python int for an API integer (ClusterInstanceCount): a float or bool would be "
        "rendered as given"
    ),
)

COUNT_RANGE = Rule(
    "HP-COUNT-RANGE",
    E,
    Scope.GROUP,
    "`instance_count` / `InstanceCount`",
    "0..6758",
    source=Source.api("ClusterInstanceGroupSpecification.InstanceCount", "an integer, 0..6758"),
)

CONTROLLER_COUNT = Rule(
    "HP-CONTROLLER-COUNT",
    E,
    Scope.GROUP,
    "`instance_count` of a controller group",
    "at least 1 (the cluster cannot run without its Slurm controller)",
    source=Source(
        SLURM_SCALING,
        "the cluster becomes InService only after at least one controller node is provisioned",
    ),
)

MIN_RANGE = Rule(
    "HP-MIN-RANGE",
    E,
    Scope.GROUP,
    "`min_instance_count` / `MinInstanceCount`",
    "0..6758",
    source=Source.api("ClusterInstanceGroupSpecification.MinInstanceCount", "an integer, 0..6758"),
)

MIN_ABOVE_COUNT = Rule(
    "HP-MIN-ABOVE-COUNT",
    E,
    Scope.GROUP,
    "`min_instance_count` / `MinInstanceCount`",
    "0..`instance_count`",
    source=Source.api(
        "ClusterInstanceGroupSpecification.MinInstanceCount",
        "the minimum number of the group's instances required for it to become InService (of "
        "InstanceCount)",
    ),
)

RULES = (
    COUNT_INT,
    COUNT_RANGE,
    CONTROLLER_COUNT,
    MIN_RANGE,
    MIN_ABOVE_COUNT,
    SIZING,
)
"""This family's rules, in documentation order (``SIZING`` is declared in
:mod:`~hyperpod_constructs.instance_group`, whose factories build its findings)."""


def _int_hint(value: object) -> int:
    """The int a user probably meant (4 for 4.0, 1 for True), else 16."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float) and math.isfinite(value):
        return round(value)
    return 16


def _not_int(value: object, field: str, upper: object, group: str) -> Finding:
    """A count that is not a whole number: its type named, and the int it probably meant."""
    return COUNT_INT.finding(
        field=field,
        value=value,
        allowed=f"a whole number (int) in 0..{upper} (got {type_name(value)})",
        fix=f"pass an int, e.g. {_int_hint(value)}",
        group=group,
    )


def _text_token_count(value: object, field: str, group: str) -> list[Finding]:
    """A count given as a string token: CloudFormation would pass the parameter's text where
    HyperPod takes an integer."""
    if not is_text_token(value):
        return []
    return [
        COUNT_INT.finding(
            field=field,
            value=TOKEN,
            allowed="a whole number (int) or a number token, not a string token",
            fix="use CfnParameter(type='Number').value_as_number or Token.as_number(...)",
            group=group,
        )
    ]


@reports(COUNT_INT, COUNT_RANGE, MIN_RANGE, MIN_ABOVE_COUNT)
def counts(group: InstanceGroup) -> list[Finding]:
    """``instance_count`` and ``min_instance_count``: whole numbers in range, the minimum at
    most the count."""
    found: list[Finding] = []
    name, top = group.name, limits.MAX_INSTANCE_COUNT
    count, minimum = group.instance_count, group.min_instance_count
    count_field, min_field = (
        "instance_count (InstanceCount)",
        "min_instance_count (MinInstanceCount)",
    )
    found += _text_token_count(count, count_field, name)
    count_known = not is_unresolved(count)
    if count_known and not is_int(count):
        found.append(_not_int(count, count_field, top, name))
        count_known = False
    elif count_known and not 0 <= count <= top:
        found.append(
            COUNT_RANGE.finding(
                field=count_field,
                value=count,
                allowed=f"0..{top}",
                fix=f"set instance_count between 0 and {top}",
                group=name,
            )
        )
        count_known = False
    found += _text_token_count(minimum, min_field, name)
    if minimum is None or is_unresolved(minimum):
        return found
    upper = f"instance_count ({count})" if count_known else "instance_count"
    if not is_int(minimum):
        found.append(_not_int(minimum, min_field, upper, name))
    elif not 0 <= minimum <= top:
        found.append(
            MIN_RANGE.finding(
                field=min_field,
                value=minimum,
                allowed=f"0..{top} and at most {upper}",
                fix="set min_instance_count between 0 and instance_count",
                group=name,
            )
        )
    elif count_known and minimum > count:
        found.append(
            MIN_ABOVE_COUNT.finding(
                field=min_field,
                value=minimum,
                allowed=f"0..{upper}",
                fix=f"lower min_instance_count to at most {count}, or raise instance_count "
                f"to at least {minimum}",
                group=name,
            )
        )
    return found


@reports(SIZING)
def sizing(group: InstanceGroup) -> list[Finding]:
    """Problems the factory met while sizing the group from ``min_accelerators``."""
    return list(group.problems)


@reports(CONTROLLER_COUNT)
def controller_count(group: InstanceGroup) -> list[Finding]:
    """The controller group has at least one instance."""
    if group.node_type is not NodeType.CONTROLLER or group.instance_count != 0:
        return []
    return [
        CONTROLLER_COUNT.finding(
            field="instance_count (InstanceCount)",
            value=0,
            allowed="at least 1 on the controller group (Slurm cannot run without it)",
            fix="use instance_count=1 (the default)",
            group=group.name,
        )
    ]

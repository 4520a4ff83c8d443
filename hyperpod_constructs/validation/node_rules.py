"""What each node of a group runs: threads per core, instance type, AMI, training plan. Pure: a
group in, findings out."""

from __future__ import annotations

import difflib
import re
from typing import TYPE_CHECKING

from .._cdk.tokens import is_unresolved
from .._core import limits
from .._core.arguments import (
    is_int,
    is_number_token,
    is_text_token,
    pattern_findings,
)
from .._core.finding import Finding
from .._core.rule import E, Rule, Scope, Source, W, reports
from ..instance_type import known_names

if TYPE_CHECKING:
    from ..instance_group import InstanceGroup

THREADS = Rule(
    "HP-THREADS",
    E,
    Scope.GROUP,
    "`threads_per_core` / `ThreadsPerCore`",
    "1 or 2",
    source=Source.api("ClusterInstanceGroupSpecification.ThreadsPerCore", "1 or 2"),
)

IMAGE_ID = Rule(
    "HP-IMAGE-ID",
    E,
    Scope.GROUP,
    "`image_id` / `ImageId`",
    "`ami-` and 8 or 17 lowercase hex digits, or `default`",
    source=Source.api(
        "ClusterInstanceGroupSpecification.ImageId",
        "pattern ami-[0-9a-fA-F]{8,17}|default; AMI ids have 8 or 17 lowercase hex digits "
        "(cfn-lint's AWS::EC2::Image.Id format)",
    ),
)

TRAINING_PLAN = Rule(
    "HP-TRAINING-PLAN",
    E,
    Scope.GROUP,
    "`training_plan_arn` / `TrainingPlanArn`",
    "`arn:aws[a-z-]*:sagemaker:<region>:<12 digits>:training-plan/...`, 50..2048 characters",
    source=Source.api(
        "ClusterInstanceGroupSpecification.TrainingPlanArn",
        "50..2048 characters, pattern "
        "arn:aws[a-z-]*:sagemaker:[a-z0-9-]*:[0-9]{12}:training-plan/.*; any group may use one",
    ),
)

INSTANCE_TYPE = Rule(
    "HP-INSTANCE-TYPE",
    E,
    Scope.GROUP,
    "`instance_type` / `InstanceType`",
    "`ml.<family>.<size>` (also types newer than the library)",
    source=Source.api(
        "ClusterInstanceGroupSpecification.InstanceType", "an enum of ml.<family>.<size> names"
    ),
)

WARN_INSTANCE_TYPE = Rule(
    "HP-WARN-INSTANCE-TYPE",
    W,
    Scope.GROUP,
    "`instance_type` / `InstanceType`",
    'a type in the library\'s catalogue (an unknown type gets a "did you mean")',
    source=Source.api(
        "ClusterInstanceType",
        "the enum the catalogue is compared with (tests/test_instance_types.py)",
    ),
)

RULES = (
    THREADS,
    IMAGE_ID,
    TRAINING_PLAN,
    INSTANCE_TYPE,
    WARN_INSTANCE_TYPE,
)
"""This family's rules, in documentation order."""


@reports(THREADS)
def threads_per_core(group: InstanceGroup) -> list[Finding]:
    """``threads_per_core`` is 1 or 2."""
    value = group.threads_per_core
    if value is None or is_number_token(value):
        return []
    if is_int(value) and limits.MIN_THREADS_PER_CORE <= value <= limits.MAX_THREADS_PER_CORE:
        return []
    return [
        THREADS.finding(
            value=value,
            allowed="1 (hyperthreading off) or 2 (on)",
            fix="set threads_per_core to 1 or 2",
            group=group.name,
        )
    ]


_TRAINING_PLAN_PARTS = (
    ("the prefix", re.compile(r"arn"), "'arn'"),
    ("the partition", re.compile(r"aws[a-z-]*"), "'aws' (or 'aws-cn', 'aws-us-gov', ...)"),
    ("the service", re.compile(r"sagemaker"), "'sagemaker'"),
    ("the region", re.compile(r"[a-z0-9-]*"), "a region such as 'us-east-1'"),
    ("the account", re.compile(r"[0-9]{12}"), "12 digits"),
    ("the resource", re.compile(r"training-plan/.*"), "'training-plan/<name>'"),
)
"""The parts of a training plan ARN, in order, with their pattern and what they must be."""


def _training_plan_arn_problem(plan: object, shortest: int, longest: int) -> str:
    """Which part of a refused training plan ARN is wrong (the first), in words."""
    if not isinstance(plan, str):
        return f"a training plan ARN is a str, not a {type(plan).__name__}"
    parts = plan.split(":", len(_TRAINING_PLAN_PARTS) - 1)
    if len(parts) < len(_TRAINING_PLAN_PARTS):
        return (
            f"it has {len(parts)} of the 6 ':'-separated parts "
            "(arn:partition:sagemaker:region:account:training-plan/name)"
        )
    for (name, pattern, must_be), part in zip(_TRAINING_PLAN_PARTS, parts, strict=True):
        if not pattern.fullmatch(part):
            return f"{name} {part!r} is wrong: it must be {must_be}"
    return f"it has {len(plan)} characters; allowed: {shortest}..{longest}"


@reports(IMAGE_ID, TRAINING_PLAN, INSTANCE_TYPE)
def identifiers(group: InstanceGroup) -> list[Finding]:
    """The AMI id, the training plan ARN and the instance type's shape."""
    found = pattern_findings(
        group.image_id,
        limits.IMAGE_ID,
        rule=IMAGE_ID,
        allowed="'ami-' and 8 or 17 lowercase hex digits, or 'default'",
        fix="pass an AMI id such as ami-0123456789abcdef0",
        group=group.name,
    )
    plan = group.training_plan_arn
    if plan is not None and not is_text_token(plan):
        lo, hi = limits.MIN_TRAINING_PLAN_ARN_LENGTH, limits.MAX_TRAINING_PLAN_ARN_LENGTH
        if not (
            isinstance(plan, str)
            and lo <= len(plan) <= hi
            and limits.TRAINING_PLAN_ARN.fullmatch(plan)
        ):
            found.append(
                TRAINING_PLAN.finding(
                    value=plan,
                    allowed="arn:<partition>:sagemaker:<region>:<account>:training-plan/<name> "
                    f"({lo}..{hi} characters)",
                    fix=f"{_training_plan_arn_problem(plan, lo, hi)}; pass the ARN shown by "
                    "`aws sagemaker list-training-plans`",
                    group=group.name,
                )
            )
    itype = group.instance_type.name
    if not is_unresolved(itype) and not limits.INSTANCE_TYPE.fullmatch(itype):
        found.append(
            INSTANCE_TYPE.finding(
                value=itype,
                allowed="ml.<family>.<size>, e.g. ml.p5.48xlarge",
                fix="use a HyperPodInstanceType constant or .of('ml.<family>.<size>')",
                group=group.name,
            )
        )
    return found


@reports(WARN_INSTANCE_TYPE)
def unknown_instance_type(group: InstanceGroup) -> list[Finding]:
    """An instance type close to a known one is probably a typo (a warning with a "did you
    mean"); a type far from every known one is taken as newer than the library."""
    name = group.instance_type.name
    if is_unresolved(name) or not limits.INSTANCE_TYPE.fullmatch(name):
        return []
    known = known_names()
    if name in known:
        return []
    close = difflib.get_close_matches(name, known, n=2, cutoff=0.9)
    if not close:
        return []  # a newer type than the library knows: accepted without a word
    return [
        WARN_INSTANCE_TYPE.finding(
            value=name,
            allowed=f"a known type; did you mean {' or '.join(close)}?",
            fix=f"use HyperPodInstanceType.of({close[0]!r}); acknowledge the warning if "
            f"{name} is a type newer than the library",
            group=group.name,
        )
    ]

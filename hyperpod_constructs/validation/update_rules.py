"""Scheduled AMI updates of a group (``ScheduledUpdateConfig``). Pure: a group in, findings out."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_cdk import Duration

from .._cdk.tokens import is_unresolved
from .._core import limits
from .._core.arguments import (
    TOKEN,
    is_int,
    is_number_token,
    is_text_token,
)
from .._core.finding import Finding
from .._core.rule import E, Rule, Scope, Source, reports

if TYPE_CHECKING:
    from ..instance_group import InstanceGroup

SCHEDULED_UPDATE = Rule(
    "HP-SCHEDULED-UPDATE",
    E,
    Scope.GROUP,
    "`scheduled_update` / `ScheduledUpdateConfig`",
    "a 6-field `cron(...)` expression (at most 256 characters); batch sizes >= 1, "
    "`maximum_batch_size` whenever `rollback_maximum_batch_size`; `wait_interval` 0..3600 whole "
    "seconds; at most 10 rollback alarms, named with 1..255 characters, not only whitespace",
    source=Source.api(
        "ScheduledUpdateConfig",
        "ScheduleExpression 1..256 (the schema's cron pattern), batch Value >= 1, "
        "RollbackMaximumBatchSize beside a required MaximumBatchSize, WaitIntervalInSeconds "
        "0..3600, 1..10 alarms of 1..255 characters",
    ),
)

RULES = (SCHEDULED_UPDATE,)
"""This family's rules, in documentation order."""


def _wait_seconds(interval: Duration) -> float:
    """A wait interval in seconds, fractions included (``to_seconds`` refuses them)."""
    return float(interval.to_milliseconds()) / 1000


def _alarm_name_ok(name: str) -> bool:
    """``AlarmName``: 1..255 characters, not only whitespace (a string token passes)."""
    if is_text_token(name):
        return True
    return len(name) <= limits.MAX_ALARM_NAME_LENGTH and bool(name.strip())


@reports(SCHEDULED_UPDATE)
def scheduled_update(group: InstanceGroup) -> list[Finding]:
    """``ScheduledUpdateConfig`` against the API model and the resource schema (cron pattern,
    ranges, alarm names). Its fields have the right types (``group_arguments``)."""
    update = group.scheduled_update
    if update is None:
        return []
    found: list[Finding] = []
    name, prefix = group.name, "scheduled_update"

    def add(field: str, value: object, allowed: str, fix: str) -> None:
        found.append(
            SCHEDULED_UPDATE.finding(
                field=f"{prefix}.{field}",
                value=value,
                allowed=allowed,
                fix=fix,
                group=name,
            )
        )

    expression = update.schedule_expression
    if not is_text_token(expression) and not (
        isinstance(expression, str)
        and len(expression) <= limits.MAX_SCHEDULE_EXPRESSION_LENGTH
        and limits.SCHEDULE_EXPRESSION.search(expression)
    ):
        add(
            "schedule_expression (ScheduleExpression)",
            TOKEN if is_unresolved(expression) else expression,
            "cron(minute hour day-of-month month day-of-week year), e.g. cron(0 3 ? * SUN *)",
            "write a 6-field cron(...) expression",
        )
    for field, size in (
        ("maximum_batch_size (MaximumBatchSize)", update.maximum_batch_size),
        (
            "rollback_maximum_batch_size (RollbackMaximumBatchSize)",
            update.rollback_maximum_batch_size,
        ),
    ):
        if (
            size is not None
            and not is_number_token(size.value)
            and not (is_int(size.value) and size.value >= 1)
        ):
            add(
                field,
                TOKEN if is_unresolved(size.value) else size.value,
                "a whole number of at least 1",
                "use e.g. BatchSize.instances(1)",
            )
    if update.rollback_maximum_batch_size is not None and update.maximum_batch_size is None:
        add(
            "maximum_batch_size (RollingUpdatePolicy.MaximumBatchSize)",
            None,
            "set whenever rollback_maximum_batch_size is",
            "pass maximum_batch_size as well",
        )
    interval = update.wait_interval
    if interval is not None and not interval.is_unresolved():
        seconds = _wait_seconds(interval)
        if not (seconds.is_integer() and 0 <= seconds <= limits.MAX_UPDATE_WAIT_SECONDS):
            add(
                "wait_interval (WaitIntervalInSeconds)",
                seconds,
                f"0..{limits.MAX_UPDATE_WAIT_SECONDS} whole seconds",
                "use e.g. Duration.minutes(5)",
            )
    if len(update.rollback_alarms) > limits.MAX_ROLLBACK_ALARMS:
        add(
            "rollback_alarms (AutoRollbackConfiguration)",
            len(update.rollback_alarms),
            f"at most {limits.MAX_ROLLBACK_ALARMS} alarm names",
            "keep the alarms that matter most",
        )
    for alarm in update.rollback_alarms:
        if not _alarm_name_ok(alarm):
            add(
                "rollback_alarms[] (AlarmName)",
                alarm,
                f"1..{limits.MAX_ALARM_NAME_LENGTH} characters, not only whitespace",
                "pass the alarm's name, e.g. alarm.alarm_name",
            )
    return found

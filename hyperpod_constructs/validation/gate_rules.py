"""Rules for the readiness gate: its options (``MinCountGateOptions``) and the counts of the
groups it waits for. Pure: options or a group in, findings out; the cluster runs them when the
gate is enabled and builds no gate when one fails."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from aws_cdk import Duration

from .._cdk.tokens import duration_seconds, is_unresolved, read_once
from .._core.arguments import TOKEN, check, instance_of, is_bool
from .._core.finding import Finding
from .._core.limits import MIN_COUNT_WINDOW_HOURS
from .._core.rule import E, Rule, Scope, Source, W, reports
from .._core.sources import PUT_METRIC_DATA, SLURM_SCALING, STEP_FUNCTIONS_QUOTAS, WAIT_CONDITION
from .._runtime.hyperpod_gate.decision import DEFAULT_METRICS_NAMESPACE
from ..gate.definition import HISTORY_QUOTA, history_events, max_timeout_for_history
from ..gate.options import (
    DEFAULT_POLL_MINUTES,
    DEFAULT_TIMEOUT_MINUTES,
    MAX_POLL_MINUTES,
    MIN_POLL_SECONDS,
    MinCountGateOptions,
    max_gate_timeout_seconds,
)

if TYPE_CHECKING:
    from ..instance_group import InstanceGroup

MAX_NAMESPACE_LENGTH = 255
NAMESPACE = re.compile(r"[^:][\x20-\x7e]*")
"""CloudWatch ``PutMetricData`` Namespace: 1..255 ASCII characters without control characters
(full match), not starting with ``:`` (the API's pattern ``[^:].*``)."""


GATE_TIMEOUT = Rule(
    "HP-GATE-TIMEOUT",
    E,
    Scope.GATE,
    "`readiness_gate.timeout`",
    "more than 0, at most 12 h - `poll_interval` - 30 min (the loop's backstop and the wait "
    "condition's 12 h follow the deadline)",
    source=Source(WAIT_CONDITION, "Timeout: at most 43200 seconds (12 hours)"),
)

GATE_HISTORY = Rule(
    "HP-GATE-HISTORY",
    E,
    Scope.GATE,
    "`readiness_gate.timeout` / `poll_interval`",
    "few enough polls that the loop's history stays below Step Functions' 25,000 events "
    "(e.g. 11 h needs a poll interval of at least 35 s)",
    source=Source(STEP_FUNCTIONS_QUOTAS, "Standard workflows: at most 25,000 history events"),
)

GATE_POLL = Rule(
    "HP-GATE-POLL",
    E,
    Scope.GATE,
    "`readiness_gate.poll_interval`",
    "10 s .. 15 min, and shorter than the timeout",
    source=Source.library("the poll interval of the library's own readiness gate"),
)

GATE_NAMESPACE = Rule(
    "HP-GATE-NAMESPACE",
    E,
    Scope.GATE,
    "`readiness_gate.metrics_namespace`",
    "1..255 printable ASCII characters, not starting with `:` or `AWS/`",
    source=Source(
        PUT_METRIC_DATA,
        "Namespace: 1..255 ASCII characters without control characters, pattern [^:].*; AWS/ "
        "namespaces belong to AWS services",
    ),
)


GATE_TOKEN_DURATION = Rule(
    "HP-GATE-TOKEN-DURATION",
    E,
    Scope.GATE,
    "`readiness_gate.timeout` / `poll_interval`",
    "a concrete `Duration`",
    source=Source.library("the durations are built into the library's own state machine"),
)

WARN_GATE_TOKEN_COUNT = Rule(
    "HP-WARN-GATE-TOKEN-COUNT",
    W,
    Scope.GATE,
    "`instance_count`, `min_instance_count` of a gated group",
    "numbers, if an update that only changes a parameter's value must wait again (the gate "
    "waits for a token's deployed value, but does not re-arm when only it changes)",
    source=Source(WAIT_CONDITION, "a wait condition is create-only: an update does not wait again"),
)

WARN_GATE_TIMEOUT = Rule(
    "HP-WARN-GATE-TIMEOUT",
    W,
    Scope.GATE,
    "`readiness_gate.timeout`",
    "at least 3 h (HyperPod's MinCount window)",
    source=Source(SLURM_SCALING, "a group whose minimum is not met within 3 hours rolls back"),
)

WARN_GATE_SUBSCRIPTION = Rule(
    "HP-WARN-GATE-SUBSCRIPTION",
    W,
    Scope.GATE,
    "a subscription to the gate's notification topic",
    "no dependency on `cluster.ready` (or the cluster): it would be created after the READY "
    "message was sent",
    checked_by="hyperpod_constructs._gate.subscriptions (SubscriptionAfterReady)",
    source=Source(
        WAIT_CONDITION, "a resource that depends on a wait condition is created after it completes"
    ),
)

RULES = (
    GATE_TIMEOUT,
    GATE_HISTORY,
    GATE_POLL,
    GATE_NAMESPACE,
    GATE_TOKEN_DURATION,
    WARN_GATE_TOKEN_COUNT,
    WARN_GATE_TIMEOUT,
    WARN_GATE_SUBSCRIPTION,
)
"""This family's rules, in documentation order."""


def _booleans(options: MinCountGateOptions, parameter: str) -> list[Finding]:
    found: list[Finding] = []
    for name in ("enabled", "create_notification_topic", "dashboard"):
        found += check(
            f"{parameter}.{name}",
            getattr(options, name),
            is_bool,
            "True or False (a bool)",
            fix=f"pass {name}=True or {name}=False",
        )
    return found


@reports(GATE_NAMESPACE)
def _namespace(value: object, parameter: str) -> list[Finding]:
    """The metrics namespace CloudWatch accepts (not the reserved ``AWS/`` ones)."""
    field = f"{parameter}.metrics_namespace"
    found = check(field, value, lambda v: isinstance(v, str), "a str")
    if found:
        return found
    assert isinstance(value, str)
    if (
        1 <= len(value) <= MAX_NAMESPACE_LENGTH
        and NAMESPACE.fullmatch(value)
        and not value.startswith("AWS/")
    ):
        return []
    return [
        GATE_NAMESPACE.finding(
            field=field,
            value=value,
            allowed=f"1..{MAX_NAMESPACE_LENGTH} printable ASCII characters, not starting with "
            "':' or 'AWS/' (AWS services' namespaces)",
            fix=f"use e.g. {DEFAULT_METRICS_NAMESPACE!r} (the default)",
        )
    ]


@reports(GATE_TIMEOUT, GATE_POLL, GATE_TOKEN_DURATION, GATE_HISTORY)
def _durations(options: MinCountGateOptions, parameter: str) -> list[Finding]:
    """Concrete durations: a timeout up to 12 h, a poll interval of 10 s .. 15 min below it."""
    found: list[Finding] = []
    for name in ("timeout", "poll_interval"):
        found += check(
            f"{parameter}.{name}",
            getattr(options, name),
            instance_of(Duration),
            "a Duration, e.g. Duration.minutes(5)",
        )
    if found:
        return found
    unresolved = [
        name
        for name, value in (("timeout", options.timeout), ("poll_interval", options.poll_interval))
        if read_once(value, "unresolved", value.is_unresolved)
    ]
    if unresolved:
        return [
            GATE_TOKEN_DURATION.finding(
                field=f"{parameter}.{unresolved[0]}",
                value="a token",
                allowed="a concrete Duration (it is built into the state machine and the arm "
                "resource)",
                fix="use Duration.minutes(n) with a number, not a parameter",
            )
        ]
    timeout, poll = (duration_seconds(options.timeout), duration_seconds(options.poll_interval))
    poll_range = MIN_POLL_SECONDS <= poll <= MAX_POLL_MINUTES * 60
    poll_ok = poll_range and poll < timeout
    longest = max_gate_timeout_seconds(int(poll) if poll_ok else MIN_POLL_SECONDS)
    if not 0 < timeout <= longest:
        found.append(
            GATE_TIMEOUT.finding(
                field=f"{parameter}.timeout",
                value=options.timeout.to_human_string(),
                allowed=f"more than 0 and at most {_human(longest)} with poll_interval "
                f"{options.poll_interval.to_human_string()}: 12 hours (a wait condition's "
                "limit) minus the poll interval and the loop's 30-minute backstop margin",
                fix=f"use at most Duration.seconds({longest})",
            )
        )
    elif poll_ok and history_events(int(timeout), int(poll)) > HISTORY_QUOTA:
        found.append(
            GATE_HISTORY.finding(
                field=f"{parameter}.poll_interval",
                value=options.poll_interval.to_human_string(),
                allowed=f"a poll interval with which {options.timeout.to_human_string()} of "
                f"polling writes at most {HISTORY_QUOTA} Step Functions history events "
                f"(this one: about {history_events(int(timeout), int(poll))}); the execution "
                "would fail at the quota without a signal",
                fix=f"use a poll interval of at least {_min_poll(int(timeout))} s, or a timeout "
                f"of at most {_human(max_timeout_for_history(int(poll)))}",
            )
        )
    if not poll_range or poll >= timeout:
        found.append(
            GATE_POLL.finding(
                field=f"{parameter}.poll_interval",
                value=options.poll_interval.to_human_string(),
                allowed=f"{MIN_POLL_SECONDS} seconds .. {MAX_POLL_MINUTES} minutes, and shorter "
                "than the timeout",
                fix=f"use Duration.minutes({DEFAULT_POLL_MINUTES}) (the default)",
            )
        )
    return found


@reports(WARN_GATE_TIMEOUT)
def gate_timeout_advice(timeout: Duration) -> list[Finding]:
    """Advice on a gate's valid, concrete ``timeout`` (``readiness_gate.timeout``) shorter than
    HyperPod's MinCount window (:class:`~hyperpod_constructs.MinCountGate` reports it on
    itself)."""
    if duration_seconds(timeout) >= MIN_COUNT_WINDOW_HOURS * 3600:
        return []
    return [
        WARN_GATE_TIMEOUT.finding(
            field="readiness_gate.timeout",
            value=timeout.to_human_string(),
            allowed=f"at least {MIN_COUNT_WINDOW_HOURS} hours, HyperPod's MinCount window: with a "
            "shorter gate the deployment may fail while HyperPod would still meet the minimum",
            fix=f"use at least Duration.hours({MIN_COUNT_WINDOW_HOURS}) "
            f"(the default is {_human(DEFAULT_TIMEOUT_MINUTES * 60)})",
        )
    ]


def _human(seconds: int) -> str:
    hours, rest = divmod(max(seconds, 0), 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{hours} h" if hours else "", f"{minutes} min" if minutes else ""]
    parts.append(f"{secs} s" if secs or not (hours or minutes) else "")
    return " ".join(p for p in parts if p)


def _min_poll(timeout_seconds: int) -> int:
    """The shortest poll interval whose history fits ``timeout_seconds``."""
    poll = MIN_POLL_SECONDS
    while history_events(timeout_seconds, poll) > HISTORY_QUOTA:
        poll += 1
    return poll


def gate_option_findings(options: object, *, parameter: str = "min_count_gate") -> list[Finding]:
    """Problems with the gate's options (pure; no construct needed): types, durations, the
    metrics namespace.

    :param options: a :class:`~hyperpod_constructs.MinCountGateOptions` (anything else is a
        finding).
    :param parameter: the parameter the options were given as, which messages name
        (``readiness_gate`` on the cluster). Default: ``min_count_gate`` (the options of a
        :class:`~hyperpod_constructs.MinCountGate` itself).
    """
    if not isinstance(options, MinCountGateOptions):
        return check(
            parameter,
            options,
            instance_of(MinCountGateOptions),
            "MinCountGateOptions(...) or None",
        )
    return [
        *_booleans(options, parameter),
        *_durations(options, parameter),
        *_namespace(options.metrics_namespace, parameter),
        *check(
            f"{parameter}.notification_topic",
            options.notification_topic,
            lambda value: hasattr(value, "topic_arn") and hasattr(value, "grant_publish"),
            "an sns.ITopic, e.g. sns.Topic(...) or sns.Topic.from_topic_arn(...)",
            optional=True,
        ),
        *_guardrail_options(options, parameter),
    ]


def _guardrail_options(options: MinCountGateOptions, parameter: str) -> list[Finding]:
    """The types of the options an organisation's guardrails ask for (docs/guardrails.md)."""
    from aws_cdk import aws_ec2 as ec2
    from aws_cdk import aws_logs as logs

    groups = options.security_groups
    return [
        *check(
            f"{parameter}.log_retention",
            options.log_retention,
            instance_of(logs.RetentionDays),
            "a logs.RetentionDays, e.g. RetentionDays.ONE_YEAR",
            optional=True,
        ),
        *check(
            f"{parameter}.encryption_key",
            options.encryption_key,
            lambda value: hasattr(value, "key_arn") and hasattr(value, "grant_encrypt_decrypt"),
            "a kms.IKey",
            optional=True,
        ),
        *check(
            f"{parameter}.vpc",
            options.vpc,
            lambda v: hasattr(v, "vpc_id"),
            "an ec2.IVpc",
            optional=True,
        ),
        *check(
            f"{parameter}.vpc_subnets",
            options.vpc_subnets,
            instance_of(ec2.SubnetSelection),
            "an ec2.SubnetSelection",
            optional=True,
        ),
        *check(
            f"{parameter}.security_groups",
            groups,
            lambda v: (
                isinstance(v, list | tuple)
                and bool(v)
                and all(hasattr(g, "security_group_id") for g in v)
            ),
            "a non-empty list of ec2.ISecurityGroup",
            optional=True,
        ),
        *(
            check(
                f"{parameter}.vpc",
                None,
                lambda v: False,
                "an ec2.IVpc when vpc_subnets or security_groups is given",
                fix="pass vpc= too",
            )
            if options.vpc is None and (options.vpc_subnets is not None or groups is not None)
            else []
        ),
    ]


@reports(WARN_GATE_TOKEN_COUNT)
def gate_findings(group: InstanceGroup) -> list[Finding]:
    """Counts of a gated group given as tokens (e.g. a ``CfnParameter``): the readiness gate
    waits for the values CloudFormation resolves at deploy time, but its wait condition is
    create-only and named after the counts as the template writes them, so an update that
    changes only a parameter's value does not arm a new wait. Only for clusters whose gate is
    enabled.

    :param group: a gated instance group.
    """
    if not group.has_minimum:
        return []
    tokens = [
        field
        for field, value in (
            ("min_instance_count (MinInstanceCount)", group.min_instance_count),
            ("instance_count (InstanceCount)", group.instance_count),
        )
        if is_unresolved(value)
    ]
    if not tokens:
        return []
    return [
        WARN_GATE_TOKEN_COUNT.finding(
            field=" and ".join(tokens),
            value=TOKEN,
            allowed="a number, if an update that changes only the parameter's value must "
            "wait again: the gate waits for the deployed value when the stack is created and "
            "when another gated count changes, but its wait condition is create-only",
            fix="nothing, if the value is chosen only when the stack is created (acknowledge "
            "this warning); otherwise pass a number",
            group=group.name,
        )
    ]

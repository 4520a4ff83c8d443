"""Rules for the readiness gate's options (``MinCountGateOptions``). Pure: options in,
findings out; the cluster runs them when the gate is enabled and builds no gate when one
fails."""

from __future__ import annotations

import re

from aws_cdk import Duration

from ..gate.options import MAX_GATE_TIMEOUT, MAX_POLL, MIN_POLL, MinCountGateOptions
from .arguments import check, instance_of, is_bool
from .finding import Finding

MAX_NAMESPACE_LENGTH = 255
NAMESPACE = re.compile(r"[A-Za-z0-9.\-_/#: ]+")
"""CloudWatch ``PutMetricData`` Namespace: 1..255 characters of these (full match), not
starting with ``:`` and not in the reserved ``AWS/`` namespaces."""


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


def _namespace(value: object, parameter: str) -> list[Finding]:
    field = f"{parameter}.metrics_namespace"
    found = check(field, value, lambda v: isinstance(v, str), "a str")
    if found:
        return found
    assert isinstance(value, str)
    if (
        1 <= len(value) <= MAX_NAMESPACE_LENGTH
        and NAMESPACE.fullmatch(value)
        and value.strip()
        and not value.startswith(":")
        and not value.upper().startswith("AWS/")
    ):
        return []
    return [
        Finding(
            rule="HP-GATE-NAMESPACE",
            field=field,
            value=value,
            allowed=f"1..{MAX_NAMESPACE_LENGTH} characters of letters, digits and . - _ / # : "
            "space, not only spaces, not starting with ':' or 'AWS/' (reserved for AWS)",
            fix="use e.g. 'HyperPod/MinCountGate' (the default)",
        )
    ]


def _durations(options: MinCountGateOptions, parameter: str) -> list[Finding]:
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
        if value.is_unresolved()
    ]
    if unresolved:
        return [
            Finding(
                rule="HP-GATE-TOKEN-DURATION",
                field=f"{parameter}.{unresolved[0]}",
                value="a token",
                allowed="a concrete Duration (it is built into the state machine and the arm "
                "resource)",
                fix="use Duration.minutes(n) with a number, not a parameter",
            )
        ]
    timeout, poll = options.timeout.to_seconds(), options.poll_interval.to_seconds()
    if not 0 < timeout <= MAX_GATE_TIMEOUT.to_seconds():
        found.append(
            Finding(
                rule="HP-GATE-TIMEOUT",
                field=f"{parameter}.timeout",
                value=options.timeout.to_human_string(),
                allowed="more than 0 and at most 12 hours (a wait condition's limit)",
                fix="use Duration.hours(n) with n <= 12",
            )
        )
    if not MIN_POLL.to_seconds() <= poll <= MAX_POLL.to_seconds() or poll >= timeout:
        found.append(
            Finding(
                rule="HP-GATE-POLL",
                field=f"{parameter}.poll_interval",
                value=options.poll_interval.to_human_string(),
                allowed="10 seconds .. 15 minutes, and shorter than the timeout",
                fix="use Duration.minutes(1) (the default)",
            )
        )
    return found


def gate_option_findings(options: object, *, parameter: str = "min_count_gate") -> list[Finding]:
    """Problems with the gate's options (pure; no construct needed): types, durations, the
    metrics namespace.

    :param parameter: the cluster parameter the options were given as, which messages name
        (``readiness_gate``, or its deprecated spelling ``min_count_gate``). Default:
        ``min_count_gate``.
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
    ]

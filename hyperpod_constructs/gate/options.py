"""Settings of the MinCount readiness gate."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from aws_cdk import Duration

from .._core.limits import MAX_GATE_TIMEOUT_HOURS, MIN_COUNT_WINDOW_HOURS
from .._runtime.hyperpod_gate.decision import DEFAULT_METRICS_NAMESPACE

if TYPE_CHECKING:  # annotations only: a gate without a topic does not load the module
    from aws_cdk import aws_ec2 as ec2
    from aws_cdk import aws_kms as kms
    from aws_cdk import aws_logs as logs
    from aws_cdk import aws_sns as sns

HYPERPOD_MIN_COUNT_WINDOW = Duration.hours(MIN_COUNT_WINDOW_HOURS)
"""HyperPod rolls a group back if its minimum is not met within this window (fixed)."""
MIN_POLL_SECONDS, MAX_POLL_MINUTES = 10, 15
MIN_POLL, MAX_POLL = Duration.seconds(MIN_POLL_SECONDS), Duration.minutes(MAX_POLL_MINUTES)
"""The allowed range of ``poll_interval``. The plain numbers above are what the checks
compare with (a ``Duration``'s ``to_seconds()`` is a round trip to the jsii process)."""
LOOP_BACKSTOP_MARGIN_SECONDS = 30 * 60
"""The poll loop's own Step Functions timeout exceeds the gate deadline by one poll interval
plus this much (30 min, above the worst case of one iteration whose invocations all time out),
so the check that reports "deadline reached" always runs before the backstop; and the
backstop ends before the wait condition's 12 h. The longest timeout is therefore
12 h - poll_interval - 30 min."""


def max_gate_timeout_seconds(poll_interval_seconds: int) -> int:
    """The longest gate timeout at this poll interval (pure): the loop's backstop
    (timeout + poll interval + :data:`LOOP_BACKSTOP_MARGIN_SECONDS`) must end within the
    wait condition's 12 h."""
    longest = MAX_GATE_TIMEOUT_HOURS * 60 * 60
    return longest - poll_interval_seconds - LOOP_BACKSTOP_MARGIN_SECONDS


DEFAULT_TIMEOUT_MINUTES = 210
"""``MinCountGateOptions.timeout``'s default, in minutes (its one statement in code)."""
DEFAULT_POLL_MINUTES = 1
"""``MinCountGateOptions.poll_interval``'s default, in minutes (its one statement in code)."""


@functools.cache
def _minutes(minutes: int) -> Duration:
    """``Duration.minutes(minutes)``, made once per process: the defaults of every options
    object are the same (immutable) ``Duration``, one jsii round trip fewer each."""
    return Duration.minutes(minutes)


@dataclass(frozen=True, kw_only=True)
class MinCountGateOptions:
    """How the readiness gate waits. All fields are optional.

    Changing ``timeout`` or ``poll_interval`` updates the gate in place without waiting again;
    changing a gated group's ``min_instance_count`` or ``instance_count`` arms a new wait.

    Example:

    ```python
    options = MinCountGateOptions(timeout=Duration.hours(4), poll_interval=Duration.minutes(2))
    # HyperPodSlurmCluster(..., readiness_gate=options)
    ```
    """

    enabled: bool = True
    """Create the gate when a group has ``min_instance_count > 0``. Default: True."""
    timeout: Duration = field(default_factory=lambda: _minutes(DEFAULT_TIMEOUT_MINUTES))
    """How long to wait before failing the deployment. Default: 3 h 30 min. HyperPod's 3-hour
    window starts when the group is created, before the gate is armed, so 3 h is enough in
    principle; the 30 minutes are slack for HyperPod's rollback to show and for polling. At most
    12 h minus ``poll_interval`` minus 30 min (11 h 29 min with the default poll interval: the
    loop's backstop and the wait condition's 12 h come after it), and short enough that the
    loop's history fits Step Functions' 25,000 events (HP-GATE-HISTORY); below 3 h the synth
    warns, since HyperPod may still meet the minimum later. A longer timeout is a synth error,
    never silently shortened."""
    poll_interval: Duration = field(default_factory=lambda: _minutes(DEFAULT_POLL_MINUTES))
    """Time between two DescribeCluster calls. Default: 1 min (allowed 10 s .. 15 min)."""
    notification_topic: sns.ITopic | None = None
    """SNS topic that gets one message when the gate opens and one when it fails.
    Default: none, unless ``create_notification_topic``."""
    create_notification_topic: bool = False
    """Create an encrypted topic for the messages (see ``MinCountGate.topic``). Default: no."""
    dashboard: bool = False
    """Create a CloudWatch dashboard of the gated groups' counts. Default: False (opt-in: a
    dashboard costs money every month the stack exists; the metrics are written anyway, see
    ``HyperPodSlurmCluster.metric_current_count``)."""
    metrics_namespace: str = DEFAULT_METRICS_NAMESPACE
    """CloudWatch namespace of the progress metrics. Default: ``HyperPod/MinCountGate``."""
    log_retention: logs.RetentionDays | None = None
    """How long the gate's log groups (its two functions' and its poll loop's) keep events.
    Default: one month. Control Tower's CT.CLOUDWATCH.PR.2 asks for at least a year
    (``RetentionDays.ONE_YEAR``) or ``RetentionDays.INFINITE`` (docs/guardrails.md)."""
    encryption_key: kms.IKey | None = None
    """A customer managed KMS key for the gate's log groups and for the topic it creates
    (``create_notification_topic``). Default: none (CloudWatch Logs' own encryption; the topic
    with alias/aws/sns). The gate lets its functions use the key for the topic; the key's
    policy must let CloudWatch Logs use it (the gate adds that statement to a ``kms.Key`` of
    the app; an imported key needs it already). Control Tower: CT.CLOUDWATCH.PR.3."""
    vpc: ec2.IVpc | None = None
    """Run the gate's two functions in this VPC. Default: outside any VPC. They call the
    SageMaker, CloudFormation, Step Functions, SNS and CloudWatch APIs, so the subnets need a
    route to them (a NAT gateway or interface VPC endpoints). Control Tower: CT.LAMBDA.PR.3."""
    vpc_subnets: ec2.SubnetSelection | None = None
    """The subnets of ``vpc`` for the functions. Default: the VPC's private subnets."""
    security_groups: Sequence[ec2.ISecurityGroup] | None = None
    """The functions' security groups (with ``vpc``). Default: one the gate creates, with
    outbound traffic only."""

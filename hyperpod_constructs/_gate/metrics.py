"""The gate's progress metrics as ``cloudwatch.Metric`` objects (the CDK ``metric*()`` way).

The check function writes them (CloudWatch Embedded Metric Format, see
``_runtime/hyperpod_gate/poll.py``) once per check and gated group, in the namespace of
``MinCountGateOptions.metrics_namespace``, with the dimensions ``ClusterName`` and
``InstanceGroup``.

The options of every ``metric*()`` method are keyword arguments, as in aws-cdk-lib's Python
methods (``metric_current_count("gpu", period=Duration.minutes(5))``): :class:`MetricOptions`
is their one declaration.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, TypedDict

import jsii
from constructs import IValidation

if TYPE_CHECKING:
    from typing import Unpack

    from aws_cdk import Duration
    from aws_cdk import aws_cloudwatch as cloudwatch

METRIC_NAMES = ("CurrentCount", "MinimumCount", "TargetCount", "RunningCount")
"""What each check writes for each gated group (``RunningCount``: the nodes the gate confirmed
running)."""


class MetricOptions(TypedDict, total=False):
    """The keyword options of the ``metric*()`` methods (aws-cdk-lib's
    ``cloudwatch.MetricOptions``, as keywords).

    :param period: the period over which the statistic is applied. Default: 1 minute.
    :param statistic: e.g. ``"Average"``, ``"p99"``. Default: ``"Maximum"``.
    :param label: the label on graphs. Default: the metric name.
    :param color: the color on graphs, e.g. ``"#1f77b4"``. Default: automatic.
    :param unit: the unit to ask CloudWatch for. Default: all units.
    :param dimensions_map: dimensions added to ``ClusterName`` and ``InstanceGroup``.
    :param account: the account of the metric. Default: the stack's.
    :param region: the region of the metric. Default: the stack's.
    :param stack_account: the account of the stack the metric is used in. Default: the
        stack's.
    :param stack_region: the region of the stack the metric is used in. Default: the stack's.
    """

    period: Duration
    statistic: str
    label: str
    color: str
    unit: cloudwatch.Unit
    dimensions_map: Mapping[str, str]
    account: str
    region: str
    stack_account: str
    stack_region: str


def gate_metric(
    name: str,
    *,
    namespace: str,
    cluster_name: str,
    group_name: str,
    **options: Unpack[MetricOptions],
) -> cloudwatch.Metric:
    """One of :data:`METRIC_NAMES` for one group; ``options`` override the defaults
    (statistic Maximum, period 1 minute)."""
    from aws_cdk import Duration
    from aws_cdk import aws_cloudwatch as cloudwatch  # only when a metric is asked for

    if name not in METRIC_NAMES:
        raise ValueError(f"unknown gate metric {name!r}; expected one of {METRIC_NAMES}")
    return cloudwatch.Metric(
        namespace=namespace,
        metric_name=name,
        dimensions_map={
            **options.get("dimensions_map", {}),
            "ClusterName": cluster_name,
            "InstanceGroup": group_name,
        },
        statistic=options.get("statistic", "Maximum"),
        period=options.get("period", Duration.minutes(1)),
        label=options.get("label"),
        color=options.get("color"),
        unit=options.get("unit"),
        region=options.get("region"),
        account=options.get("account"),
        stack_account=options.get("stack_account"),
        stack_region=options.get("stack_region"),
    )


def unwatched_metric_errors(
    asked: Mapping[str, str], *, gated: Collection[str], groups: Collection[str] | None
) -> list[str]:
    """One error per group in ``asked`` (group name -> the ``metric*`` method that asked)
    that is not in ``gated``: the gate publishes no metric for it, so an alarm on it would
    never leave INSUFFICIENT_DATA. ``groups``: the cluster's groups (``None`` where only the
    gated ones are known)."""
    allowed = ", ".join(repr(name) for name in sorted(gated)) or "none: no group is gated"
    errors = []
    for group, method in asked.items():
        if group in gated:
            continue
        if groups is None:
            why = f"the readiness gate does not wait for instance group {group!r}"
        elif group in groups:
            why = f"instance group {group!r} is not gated (no min_instance_count above 0)"
        else:
            why = f"there is no instance group {group!r}"
        errors.append(
            f"{method}({group!r}): {why}, so the readiness gate publishes no metric for it; "
            f"allowed: a gated group ({allowed}). Fix: ask for a gated group's metric, or "
            f"give {group!r} a min_instance_count"
        )
    return errors


@jsii.implements(IValidation)
class WatchedMetrics:
    """The node validation that refuses, at synth, a metric asked for of a group the gate
    does not wait for (groups are added until then)."""

    def __init__(self, gated: Callable[[], Collection[str]]) -> None:
        self._gated = gated
        self.asked: dict[str, str] = {}
        """Group name -> the ``metric*`` method that first asked for its metric."""

    def ask(self, method: str, group_name: str) -> None:
        """Remember that ``method`` asked for a metric of ``group_name``."""
        self.asked.setdefault(group_name, method)

    def validate(self) -> list[str]:
        return unwatched_metric_errors(self.asked, gated=self._gated(), groups=None)


class GateMetrics:
    """The gate's ``metric*()`` methods, declared once for :class:`HyperPodSlurmCluster` and
    :class:`MinCountGate` (which provide ``_gate_metric``). A metric of a group the gate does
    not wait for fails the synth."""

    def _gate_metric(
        self, method: str, name: str, group_name: str, options: MetricOptions
    ) -> cloudwatch.Metric:
        raise NotImplementedError

    def metric(
        self, metric_name: str, group_name: str, **options: Unpack[MetricOptions]
    ) -> cloudwatch.Metric:
        """One of the readiness gate's metrics of a gated group, by name: ``CurrentCount``,
        ``MinimumCount``, ``TargetCount`` or ``RunningCount`` (see the ``metric_*`` methods).
        A group the gate does not wait for (not gated, or not in the cluster) fails the synth.

        :param metric_name: the metric's name.
        :param group_name: a gated instance group's name.
        :param options: ``period`` (default 1 minute), ``statistic`` (default ``Maximum``),
            ``label``, ``color``, ``unit``, ... as in aws-cdk-lib's ``metric()`` methods.
        """
        return self._gate_metric("metric", metric_name, group_name, options)

    def metric_current_count(
        self, group_name: str, **options: Unpack[MetricOptions]
    ) -> cloudwatch.Metric:
        """Instances in service in a gated group, as each check saw them (Maximum, 1 min).

        :param group_name: a gated instance group's name.
        :param options: ``period``, ``statistic``, ``label``, ... (see :meth:`metric`).
        """
        return self._gate_metric("metric_current_count", "CurrentCount", group_name, options)

    def metric_min_count(
        self, group_name: str, **options: Unpack[MetricOptions]
    ) -> cloudwatch.Metric:
        """The minimum the gate waits for in a gated group (Maximum, 1 min).

        :param group_name: a gated instance group's name.
        :param options: ``period``, ``statistic``, ``label``, ... (see :meth:`metric`).
        """
        return self._gate_metric("metric_min_count", "MinimumCount", group_name, options)

    def metric_target_count(
        self, group_name: str, **options: Unpack[MetricOptions]
    ) -> cloudwatch.Metric:
        """The target count the gate asked for in a gated group (Maximum, 1 min).

        :param group_name: a gated instance group's name.
        :param options: ``period``, ``statistic``, ``label``, ... (see :meth:`metric`).
        """
        return self._gate_metric("metric_target_count", "TargetCount", group_name, options)

    def metric_running_count(
        self, group_name: str, **options: Unpack[MetricOptions]
    ) -> cloudwatch.Metric:
        """The nodes of a gated group each check confirmed running (Maximum, 1 min).

        :param group_name: a gated instance group's name.
        :param options: ``period``, ``statistic``, ``label``, ... (see :meth:`metric`).
        """
        return self._gate_metric("metric_running_count", "RunningCount", group_name, options)

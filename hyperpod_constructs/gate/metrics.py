"""The gate's progress metrics as ``cloudwatch.Metric`` objects (the CDK ``metric*()`` way).

The check function writes them (CloudWatch Embedded Metric Format, see
``runtime/hyperpod_gate/poll.py``) once per check and gated group, in the namespace of
``MinCountGateOptions.metrics_namespace``, with the dimensions ``ClusterName`` and
``InstanceGroup``.
"""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch

METRIC_NAMES = ("CurrentCount", "MinimumCount", "TargetCount")
"""What each check writes for each gated group."""


def gate_metric(
    name: str,
    *,
    namespace: str,
    cluster_name: str,
    group_name: str,
    props: cloudwatch.MetricOptions | None = None,
) -> cloudwatch.Metric:
    """One of :data:`METRIC_NAMES` for one group; ``props`` override the defaults
    (statistic Maximum, period 1 minute)."""
    if name not in METRIC_NAMES:
        raise ValueError(f"unknown gate metric {name!r}; expected one of {METRIC_NAMES}")
    options = props or cloudwatch.MetricOptions()
    return cloudwatch.Metric(
        namespace=namespace,
        metric_name=name,
        dimensions_map={"ClusterName": cluster_name, "InstanceGroup": group_name},
        statistic=options.statistic or "Maximum",
        period=options.period or Duration.minutes(1),
        label=options.label,
        color=options.color,
        unit=options.unit,
        region=options.region,
        account=options.account,
    )

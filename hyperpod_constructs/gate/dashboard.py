"""The CloudWatch dashboard body that shows capacity arriving in each gated group."""

from __future__ import annotations

import json
from collections.abc import Mapping

from .runtime.hyperpod_gate.decision import GroupRequirement

METRICS = ("CurrentCount", "MinimumCount", "TargetCount")


def dashboard_body(
    *, cluster_name: str, region: str, namespace: str, requirements: Mapping[str, GroupRequirement]
) -> str:
    """Dashboard JSON: one graph per gated group with its current, minimum and target counts."""
    widgets = []
    for index, (group, requirement) in enumerate(sorted(requirements.items())):
        widgets.append(
            {
                "type": "metric",
                "x": (index % 2) * 12,
                "y": (index // 2) * 6,
                "width": 12,
                "height": 6,
                "properties": {
                    "title": f"{group}: instances (minimum {requirement.min_count}, "
                    f"target {requirement.target_count})",
                    "region": region,
                    "view": "timeSeries",
                    "stat": "Maximum",
                    "period": 60,
                    "metrics": [
                        [namespace, metric, "ClusterName", cluster_name, "InstanceGroup", group]
                        for metric in METRICS
                    ],
                    "yAxis": {"left": {"min": 0}},
                },
            }
        )
    return json.dumps({"widgets": widgets}, separators=(",", ":"))

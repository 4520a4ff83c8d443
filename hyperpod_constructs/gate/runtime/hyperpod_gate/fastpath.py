"""The EventBridge fast path of the gate: a check run by a HyperPod event, not by the loop.

The rule's target input is constant (rendered at synth by :func:`fast_path_input`); the
event itself is not read, since events may be duplicated or arrive out of order: the check
re-reads the wait condition and DescribeCluster. It signals SUCCESS when every gated group
is ready and the wait condition is still in progress, and does nothing otherwise: never
FAILURE, never a notification (the loop sends those).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .contract import ArmProperties

FAST_PATH = "fastPath"
"""Key that marks the fast-path input."""
FAST_PATH_DETAIL_TYPES = (
    "SageMaker HyperPod Cluster State Change",
    "SageMaker HyperPod Cluster Event",
)
"""EventBridge detail-types (source ``aws.sagemaker``) that trigger a check."""


def fast_path_input(props: ArmProperties, *, stack_id: str) -> dict[str, Any]:
    """The rule target's constant input: the poll event without a deadline (pure)."""
    document: dict[str, Any] = {
        FAST_PATH: True,
        "clusterName": props.cluster_name,
        "requirements": [
            {"groupName": r.group_name, "minCount": r.min_count, "targetCount": r.target_count}
            for r in props.requirements
        ],
        "stackId": stack_id,
        "waitHandleLogicalId": props.wait_handle_logical_id,
        "waitConditionLogicalId": props.wait_condition_logical_id,
        "metricsNamespace": props.metrics_namespace,
    }
    return document


def is_fast_path(event: Mapping[str, Any]) -> bool:
    """Whether ``event`` is the fast path's input."""
    return event.get(FAST_PATH) is True

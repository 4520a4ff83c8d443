"""The EventBridge fast path of the gate: a check run by a HyperPod event, not by the loop.

The rule's target input is a constant, ``{"fastPath": true}`` (:func:`fast_path_input`): the
event is not read (events may be duplicated or arrive out of order), and neither is anything
else a caller could send. The check finds its gate from its own environment (the stack and the
arm resource, set by CloudFormation), reads the requirements from the running execution's
input, re-reads the wait condition and DescribeCluster, and signals SUCCESS when every gated
group is ready and the wait condition is still in progress. Otherwise it does nothing: never
FAILURE, never a notification (the loop sends the one READY message at its next step).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

FAST_PATH = "fastPath"
"""Key that marks the fast-path input."""
FAST_PATH_DETAIL_TYPES = (
    "SageMaker HyperPod Cluster State Change",
    "SageMaker HyperPod Cluster Event",
)
"""EventBridge detail-types (source ``aws.sagemaker``) that trigger a check."""


def fast_path_input() -> dict[str, Any]:
    """The rule target's constant input (pure)."""
    return {FAST_PATH: True}


def is_fast_path(event: Mapping[str, Any]) -> bool:
    """Whether ``event`` is the fast path's input."""
    return event.get(FAST_PATH) is True

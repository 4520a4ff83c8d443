"""The one contract for the gate custom resource's properties (pure, no CDK, no boto3).

The construct renders them with :meth:`ArmProperties.render`, CloudFormation delivers them to
the arm handler (every scalar as a string), which reads them back with
:func:`parse_properties`; the summary model and the tests use the same names through
:class:`Prop`. Changing a name here changes it everywhere.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from .decision import DEFAULT_METRICS_NAMESPACE


class Prop:
    """Property names of ``Custom::HyperPodMinCountGate``."""

    STATE_MACHINE_ARN: Final = "StateMachineArn"
    CLUSTER_NAME: Final = "ClusterName"
    REQUIREMENTS: Final = "Requirements"
    WAIT_CONDITION_LOGICAL_ID: Final = "WaitConditionLogicalId"
    TIMEOUT_SECONDS: Final = "TimeoutSeconds"
    POLL_INTERVAL_SECONDS: Final = "PollIntervalSeconds"
    TOPIC_ARN: Final = "TopicArn"
    METRICS_NAMESPACE: Final = "MetricsNamespace"
    GROUP_NAME: Final = "GroupName"
    MIN_COUNT: Final = "MinCount"
    TARGET_COUNT: Final = "TargetCount"


ARM_PROPERTY_KEYS = (
    Prop.STATE_MACHINE_ARN,
    Prop.CLUSTER_NAME,
    Prop.REQUIREMENTS,
    Prop.WAIT_CONDITION_LOGICAL_ID,
    Prop.TIMEOUT_SECONDS,
    Prop.POLL_INTERVAL_SECONDS,
    Prop.TOPIC_ARN,
    Prop.METRICS_NAMESPACE,
)
"""Every top-level property :meth:`ArmProperties.render` may write (TopicArn is optional)."""

RESOURCE_TYPE = "Custom::HyperPodMinCountGate"
"""CloudFormation type of the arm custom resource."""

ENV_STACK_ID = "HYPERPOD_GATE_STACK_ID"
"""Environment variable of both functions: the id of the stack they belong to. A check only
acts on an execution whose input names this stack."""
ENV_ARM_LOGICAL_ID = "HYPERPOD_GATE_ARM_LOGICAL_ID"
"""Environment variable of the check function: the arm resource's logical id, whose physical
id is the running execution (the fast path reads the gate's requirements from its input)."""

_EXECUTION_ARN = re.compile(r"^arn:aws[a-z-]*:states:[a-z0-9-]+:\d{12}:execution:[^:]+:[^:]+$")


def is_execution_arn(value: object) -> bool:
    """Whether ``value`` names a Step Functions execution (e.g. a PhysicalResourceId)."""
    return isinstance(value, str) and bool(_EXECUTION_ARN.match(value))


@dataclass(frozen=True)
class Requirement:
    """One gated group: its name, requested minimum and target.

    In the construct the counts may be CDK tokens (a ``CfnParameter``): they are rendered as
    strings and resolved by CloudFormation, so the handler always sees numbers.
    """

    group_name: str
    min_count: int | str
    target_count: int | str


@dataclass(frozen=True)
class ArmProperties:
    """What the arm custom resource receives (values may be CDK tokens in the construct)."""

    state_machine_arn: str
    cluster_name: str
    requirements: tuple[Requirement, ...]
    wait_condition_logical_id: str
    timeout_seconds: int
    poll_interval_seconds: int
    topic_arn: str | None = None
    metrics_namespace: str = DEFAULT_METRICS_NAMESPACE

    def render(self) -> dict[str, Any]:
        """The ``Properties`` of the custom resource, every scalar a string (as
        CloudFormation delivers them); ``TopicArn`` only when there is a topic."""
        rendered: dict[str, Any] = {
            Prop.STATE_MACHINE_ARN: self.state_machine_arn,
            Prop.CLUSTER_NAME: self.cluster_name,
            Prop.REQUIREMENTS: [
                {
                    Prop.GROUP_NAME: r.group_name,
                    Prop.MIN_COUNT: str(r.min_count),
                    Prop.TARGET_COUNT: str(r.target_count),
                }
                for r in self.requirements
            ],
            Prop.WAIT_CONDITION_LOGICAL_ID: self.wait_condition_logical_id,
            Prop.TIMEOUT_SECONDS: str(self.timeout_seconds),
            Prop.POLL_INTERVAL_SECONDS: str(self.poll_interval_seconds),
            Prop.METRICS_NAMESPACE: self.metrics_namespace,
        }
        if self.topic_arn is not None:
            rendered[Prop.TOPIC_ARN] = self.topic_arn
        return rendered


def _text(props: Mapping[str, Any], key: str) -> str:
    value = props.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"property {key} is required")
    return value.strip()


def _number(props: Mapping[str, Any], key: str, *, minimum: int) -> int:
    value = props.get(key)
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise ValueError(f"property {key} must be an integer")
    try:
        number = int(str(value).strip())
    except ValueError:
        raise ValueError(f"property {key} must be an integer, got {str(value)[:40]!r}") from None
    if number < minimum:
        raise ValueError(f"property {key} must be >= {minimum}, got {number}")
    return number


def _optional(props: Mapping[str, Any], key: str) -> str | None:
    value = props.get(key)
    return value.strip() if isinstance(value, str) and value.strip() else None


def parse_properties(props: Mapping[str, Any]) -> ArmProperties:
    """Validate ResourceProperties as CloudFormation delivers them; raise ``ValueError``."""
    raw = props.get(Prop.REQUIREMENTS)
    if not isinstance(raw, list) or not raw:
        raise ValueError(f"property {Prop.REQUIREMENTS} must be a non-empty list")
    requirements: list[Requirement] = []
    for item in raw:
        if not isinstance(item, Mapping):
            raise ValueError(f"each entry of {Prop.REQUIREMENTS} must be an object")
        name = _text(item, Prop.GROUP_NAME)
        if any(r.group_name == name for r in requirements):
            raise ValueError(f"group {name} appears twice in {Prop.REQUIREMENTS}")
        minimum = _number(item, Prop.MIN_COUNT, minimum=0)
        target = _number(item, Prop.TARGET_COUNT, minimum=0)
        if minimum > target:
            raise ValueError(f"group {name}: MinCount {minimum} > TargetCount {target}")
        requirements.append(Requirement(name, minimum, target))
    return ArmProperties(
        state_machine_arn=_text(props, Prop.STATE_MACHINE_ARN),
        cluster_name=_text(props, Prop.CLUSTER_NAME),
        requirements=tuple(requirements),
        wait_condition_logical_id=_text(props, Prop.WAIT_CONDITION_LOGICAL_ID),
        timeout_seconds=_number(props, Prop.TIMEOUT_SECONDS, minimum=1),
        poll_interval_seconds=_number(props, Prop.POLL_INTERVAL_SECONDS, minimum=1),
        topic_arn=_optional(props, Prop.TOPIC_ARN),
        metrics_namespace=_optional(props, Prop.METRICS_NAMESPACE) or DEFAULT_METRICS_NAMESPACE,
    )


def starts_new_wait(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Whether an update of the arm resource from properties ``old`` to ``new`` starts a new
    wait (pure; the arm handler decides with it, and ``plan`` states it before a deployment).

    The construct derives the wait condition's logical id from the gated minimums and targets,
    so the same wait condition (for the same cluster) means the same gated values: it
    (create-only) already holds the result. Any other change (timeout, poll interval, topic)
    takes effect at the next wait.
    """
    return bool(
        old.get(Prop.WAIT_CONDITION_LOGICAL_ID) != new.get(Prop.WAIT_CONDITION_LOGICAL_ID)
        or old.get(Prop.CLUSTER_NAME) != new.get(Prop.CLUSTER_NAME)
    )

"""The one contract for the gate custom resource's properties (pure, no CDK, no boto3).

The construct renders them with :meth:`ArmProperties.render`, CloudFormation delivers them to
the arm handler (every scalar as a string), which reads them back with
:func:`parse_properties`; the summary model and the tests use the same names through
:class:`Prop`. Changing a name here changes it everywhere.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from .decision import DEFAULT_METRICS_NAMESPACE


class Prop:
    """Property names of ``Custom::HyperPodMinCountGate``."""

    STATE_MACHINE_ARN: Final = "StateMachineArn"
    CLUSTER_NAME: Final = "ClusterName"
    REQUIREMENTS: Final = "Requirements"
    WAIT_HANDLE_LOGICAL_ID: Final = "WaitHandleLogicalId"
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
    Prop.WAIT_HANDLE_LOGICAL_ID,
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
"""Environment variable of both functions: the arm resource's logical id. Its physical id is
the running execution (the fast path reads the gate's requirements from its input); the arm
function acts only on requests for this resource, in the state CloudFormation reports for it."""

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
    """The instance group's name (``InstanceGroupName``), exactly as the cluster has it."""
    min_count: int | str
    """The group's requested ``MinInstanceCount``: the gate waits until this many of its
    nodes are Running."""
    target_count: int | str
    """The group's requested ``InstanceCount``: a rollback shows as a target that no longer
    equals it."""


@dataclass(frozen=True)
class ArmProperties:
    """What the arm custom resource receives (values may be CDK tokens in the construct)."""

    state_machine_arn: str
    cluster_name: str
    requirements: tuple[Requirement, ...]
    wait_handle_logical_id: str
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
            Prop.REQUIREMENTS: render_requirements(self.requirements),
            Prop.WAIT_HANDLE_LOGICAL_ID: self.wait_handle_logical_id,
            Prop.WAIT_CONDITION_LOGICAL_ID: self.wait_condition_logical_id,
            Prop.TIMEOUT_SECONDS: str(self.timeout_seconds),
            Prop.POLL_INTERVAL_SECONDS: str(self.poll_interval_seconds),
            Prop.METRICS_NAMESPACE: self.metrics_namespace,
        }
        if self.topic_arn is not None:
            rendered[Prop.TOPIC_ARN] = self.topic_arn
        return rendered


def render_requirements(requirements: Sequence[Requirement]) -> list[dict[str, str]]:
    """The ``Requirements`` property: each requirement's name and counts as strings, in the
    order given."""
    return [
        {
            Prop.GROUP_NAME: r.group_name,
            Prop.MIN_COUNT: str(r.min_count),
            Prop.TARGET_COUNT: str(r.target_count),
        }
        for r in requirements
    ]


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
    requirements = _requirements(props)
    return ArmProperties(
        state_machine_arn=_text(props, Prop.STATE_MACHINE_ARN),
        cluster_name=_text(props, Prop.CLUSTER_NAME),
        requirements=requirements,
        wait_handle_logical_id=_text(props, Prop.WAIT_HANDLE_LOGICAL_ID),
        wait_condition_logical_id=_text(props, Prop.WAIT_CONDITION_LOGICAL_ID),
        timeout_seconds=_number(props, Prop.TIMEOUT_SECONDS, minimum=1),
        poll_interval_seconds=_number(props, Prop.POLL_INTERVAL_SECONDS, minimum=1),
        topic_arn=_optional(props, Prop.TOPIC_ARN),
        metrics_namespace=_optional(props, Prop.METRICS_NAMESPACE) or DEFAULT_METRICS_NAMESPACE,
    )


def _requirements(props: Mapping[str, Any]) -> tuple[Requirement, ...]:
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
    return tuple(requirements)


def starts_new_wait(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Whether an update of the arm resource from properties ``old`` to ``new`` starts a new
    wait (pure; the arm handler decides with it, and ``plan`` states it before a deployment).

    The construct derives the wait handle's logical id from the gated minimums and targets, so
    the same handle (for the same cluster) means the same gated values: its wait condition
    (create-only) already holds the result. Any other change (timeout, poll interval, topic)
    takes effect at the next wait.
    """
    return bool(
        old.get(Prop.WAIT_HANDLE_LOGICAL_ID) != new.get(Prop.WAIT_HANDLE_LOGICAL_ID)
        or old.get(Prop.CLUSTER_NAME) != new.get(Prop.CLUSTER_NAME)
    )


# -- what the deployment itself declares ----------------------------------------------------

METADATA_KEY: Final = "HyperPodMinCountGate"
"""The key of the wait handle's ``Metadata`` under which the construct declares what the wait
waits for: the gate (``Gate``, the arm resource's logical id) and the properties
:data:`DECLARED_KEYS`. CloudFormation resolves it (parameters, references) and returns it
with ``DescribeStackResource``; only a deployment of the stack can change it, so the arm
function reads it from there, never from its invocation's payload. Every declared value also
determines the handle's logical id (the fingerprint), so a handle's Metadata never changes
(CloudFormation does not update a wait condition handle)."""
META_GATE: Final = "Gate"
META_PROPERTIES: Final = "Properties"
DECLARED_KEYS = (
    Prop.CLUSTER_NAME,
    Prop.REQUIREMENTS,
    Prop.WAIT_HANDLE_LOGICAL_ID,
    Prop.WAIT_CONDITION_LOGICAL_ID,
)
"""The arm properties a wait handle's Metadata declares."""
OPTION_KEYS = (
    Prop.TIMEOUT_SECONDS,
    Prop.POLL_INTERVAL_SECONDS,
    Prop.TOPIC_ARN,
    Prop.METRICS_NAMESPACE,
)
"""The arm properties that may change without a new wait: the arm function's environment
(:data:`ENV_WAIT_OPTIONS`, JSON) declares them, as deployed."""
ENV_WAIT_OPTIONS = "HYPERPOD_GATE_WAIT_OPTIONS"
"""Environment variable of the arm function: :data:`OPTION_KEYS` as deployed (JSON)."""


@dataclass(frozen=True)
class DeployedWait:
    """One wait as the template declared it (a wait handle's Metadata, resolved)."""

    gate: str
    """The arm resource's logical id: which gate of the stack declared it."""
    declared: Mapping[str, Any]
    """The properties :data:`DECLARED_KEYS`, as CloudFormation renders them."""
    requirements: tuple[Requirement, ...]
    """The declared requirements, parsed."""


def parse_metadata(metadata: object) -> DeployedWait:
    """The wait a handle's ``Metadata`` (the JSON text ``DescribeStackResource`` returns, or
    its parsed form) declares; raise ``ValueError`` when it declares none (pure)."""
    document: object = metadata
    if isinstance(metadata, str):
        try:
            document = json.loads(metadata)
        except ValueError:
            raise ValueError("the handle's Metadata is not JSON") from None
    if not isinstance(document, Mapping) or not isinstance(document.get(METADATA_KEY), Mapping):
        raise ValueError(f"the handle's Metadata has no {METADATA_KEY}")
    entry = document[METADATA_KEY]
    declared = entry.get(META_PROPERTIES)
    if not isinstance(declared, Mapping):
        raise ValueError(f"the handle's Metadata has no {METADATA_KEY}.{META_PROPERTIES}")
    _text(declared, Prop.CLUSTER_NAME)
    return DeployedWait(
        gate=_text(entry, META_GATE),
        declared={k: declared[k] for k in DECLARED_KEYS if k in declared},
        requirements=_requirements(declared),
    )


def declare(properties: Mapping[str, Any]) -> dict[str, Any]:
    """The part of rendered arm ``properties`` a wait handle's Metadata declares (pure)."""
    return {k: properties[k] for k in DECLARED_KEYS if k in properties}


def options_of(properties: Mapping[str, Any]) -> dict[str, Any]:
    """The part of rendered arm ``properties`` the arm function's environment declares."""
    return {k: properties[k] for k in OPTION_KEYS if k in properties}


IGNORED_PROPERTY_KEYS = frozenset({"ServiceToken", "ServiceTimeout"})
"""Keys CloudFormation adds to a custom resource's properties (not the gate's own)."""


def property_differences(sent: Mapping[str, Any], declared: Mapping[str, Any]) -> list[str]:
    """The gate properties in which an invocation's ``ResourceProperties`` differ from what the
    template declared (pure; ``ServiceToken``/``ServiceTimeout`` aside), e.g.
    ``["TimeoutSeconds (sent '1', deployed '12600')"]``."""
    keys = sorted((set(sent) | set(declared)) - IGNORED_PROPERTY_KEYS)

    def shown(value: object) -> str:
        return "absent" if value is None else repr(value)[:80]

    return [
        f"{key} (sent {shown(sent.get(key))}, deployed {shown(declared.get(key))})"
        for key in keys
        if _as_text(sent.get(key)) != _as_text(declared.get(key))
    ]


def _as_text(value: object) -> object:
    """``value`` with every scalar as the string CloudFormation would send for it."""
    if isinstance(value, Mapping):
        return {str(k): _as_text(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_text(v) for v in value]
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if value is None or isinstance(value, str) else str(value)


# -- what an update waits for (HyperPod gates new groups and raised minimums only) ----------


@dataclass(frozen=True)
class UpdateScope:
    """What one deployment of the gate waits for, and why (see :func:`update_scope`)."""

    waits_for: tuple[Requirement, ...]
    """The requirements this deployment gates, in the template's order."""
    reasons: tuple[tuple[str, str], ...]
    """``(group, why)`` for every group of the template, gated or not."""

    def text(self) -> str:
        """E.g. ``waits for gpu2 (new group); not for gpu (minimum unchanged: 16)``."""
        waited = {r.group_name for r in self.waits_for}
        yes = [f"{g} ({why})" for g, why in self.reasons if g in waited]
        no = [f"{g} ({why})" for g, why in self.reasons if g not in waited]
        text = "waits for " + (", ".join(yes) if yes else "no group")
        return text + ("; not for " + ", ".join(no) if no else "")


def update_scope(
    old: Sequence[Requirement] | None,
    new: Sequence[Requirement],
    *,
    same_cluster: bool = True,
) -> UpdateScope:
    """Which gated groups a deployment waits for (pure): exactly those HyperPod itself holds
    back in it.

    ``MinInstanceCount`` "only affects the initial transition to InService" (API reference,
    ``ClusterInstanceGroupSpecification``), and HyperPod's 3-hour timer restarts when a group's
    ``MinCount`` changes. So a creation (``old`` is ``None``), or a cluster that is not the
    same one (``same_cluster=False``: replaced, e.g. by a new name), waits for every gated
    group; an update waits for the groups it adds and the groups whose minimum it raises, and
    not for a group whose minimum stays or drops (HyperPod does not hold it back), nor for a
    group it removes. Counts are resolved numbers here (the handler's view).
    """
    if old is None or not same_cluster:
        why = "creation" if old is None else "cluster replaced"
        return UpdateScope(tuple(new), tuple((r.group_name, why) for r in new))
    before = {r.group_name: r for r in old}
    waits: list[Requirement] = []
    reasons: list[tuple[str, str]] = []
    for requirement in new:
        previous = before.get(requirement.group_name)
        if previous is None:
            waits.append(requirement)
            reasons.append((requirement.group_name, "new group"))
            continue
        old_min, new_min = int(previous.min_count), int(requirement.min_count)
        if new_min > old_min:
            waits.append(requirement)
            reasons.append((requirement.group_name, f"minimum raised {old_min} -> {new_min}"))
        elif new_min < old_min:
            reasons.append((requirement.group_name, f"minimum lowered {old_min} -> {new_min}"))
        else:
            reasons.append((requirement.group_name, f"minimum unchanged: {new_min}"))
    return UpdateScope(tuple(waits), tuple(reasons))

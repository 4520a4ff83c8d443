"""Pure functions: one CloudFormation template (parsed JSON) -> summaries of its HyperPod clusters.

Nothing here reads files or prints. Values that a template may hold as intrinsic functions
(``Ref``, ``Fn::GetAtt``, ``Fn::Join``, ...) are rendered readably by :func:`render_value`
(``{"Ref": "GpuCount"}`` -> ``"<Ref GpuCount>"``); no value of any JSON shape makes these
functions raise, except a document that is not a template at all (:class:`TemplateError`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypeAlias

from ..._runtime.hyperpod_gate.contract import RESOURCE_TYPE, Prop
from .._assembly.types import CLUSTER_TYPE, WAIT_CONDITION_TYPE

GATE_TYPE = RESOURCE_TYPE
"""The custom resource that arms the MinCount readiness gate."""

Count: TypeAlias = int | str
"""A whole number from the template, or (when the template holds an intrinsic function or any
other non-numeric value) its readable rendering, e.g. ``"<Ref GpuCount>"``."""

_MAX_DEPTH = 8
_DIGITS = re.compile(r"[0-9]{1,18}")


class TemplateError(ValueError):
    """The document is not a CloudFormation template (its top level is not an object, or its
    ``Resources`` section is not an object)."""


@dataclass(frozen=True)
class GateRequirement:
    """One group the readiness gate waits for."""

    group: str
    """Instance group name."""
    min_count: Count | None
    """The minimum the gate waits for (``MinCount`` of the gate resource)."""
    target_count: Count | None
    """The group's target (``TargetCount``); a rollback shows as a different target."""


@dataclass(frozen=True)
class GateSummary:
    """The settings of one ``Custom::HyperPodMinCountGate`` resource."""

    logical_id: str
    """The resource's logical id in the template."""
    requirements: tuple[GateRequirement, ...]
    """What the gate waits for, one entry per gated group."""
    timeout_seconds: Count | None
    """How long the gate waits before failing the deployment."""
    poll_interval_seconds: Count | None
    """Time between two DescribeCluster calls."""
    notifications: bool
    """True when the gate publishes to an SNS topic (``TopicArn`` is set)."""
    topic: str | None
    """The topic, rendered (usually ``"<Ref ...>"``); None without notifications."""
    metrics_namespace: str | None
    """The CloudWatch namespace of the gate's metrics; None when not set."""
    wait_condition_timeout_seconds: Count | None
    """``Timeout`` of the wait condition signalled by the gate, when it is in the template."""


@dataclass(frozen=True)
class GroupSummary:
    """One instance group of a cluster."""

    name: str
    """``InstanceGroupName``."""
    node_type: str | None
    """Slurm node type: Controller, Login or Compute (None when SlurmConfig has none)."""
    instance_type: str | None
    """``InstanceType``; for a flexible group, the first (preferred) of its types."""
    instance_count: Count | None
    """``InstanceCount`` as written in the template (a number or a rendered token)."""
    min_instance_count: Count | None
    """``MinInstanceCount`` as written in the template; None when it is not set."""
    partitions: tuple[str, ...]
    """``SlurmConfig.PartitionNames``."""
    gate: GateRequirement | None
    """What the cluster's gate waits for in this group; None when the group is not gated."""
    instance_types: tuple[str, ...] = ()
    """Every type the group may launch, in priority order: ``InstanceRequirements.
    InstanceTypes`` of a flexible group, else the one ``InstanceType``."""
    auto_patch: str | None = None
    """``AutoPatchConfig.PatchingStrategy``; None when the group is not patched automatically."""


@dataclass(frozen=True)
class ClusterSummary:
    """One ``AWS::SageMaker::Cluster`` resource and the gate that watches it."""

    stack: str
    """Display name of the stack (``Stage/Stack`` inside a stage)."""
    template_file: str
    """Path of the template, relative to the cloud assembly folder."""
    logical_id: str
    """The resource's logical id in the template."""
    cluster_name: str | None
    """``ClusterName``, rendered; None when CloudFormation generates the name."""
    node_provisioning_mode: str | None
    """``NodeProvisioningMode``, rendered; None when it is not set."""
    node_recovery: str | None
    """``NodeRecovery``, rendered; None when it is not set."""
    instance_groups: tuple[GroupSummary, ...]
    """The cluster's instance groups, in template order."""
    gate: GateSummary | None
    """The readiness gate, or None when the cluster has no gate."""


def render_value(value: object) -> str:
    """Render a template value readably: strings as they are, intrinsic functions as
    ``<Ref X>``, ``<GetAtt Res.Attr>``, ``Fn::Join`` as the joined text with its parts rendered
    (``s3://<Ref Bucket>/lifecycle/``), ``Fn::Sub`` as its pattern, other ``Fn::Name`` as
    ``<Name args>``. Never raises.

    :param value: any template value.
    """
    return _render(value, 0)


def _render(value: object, depth: int) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | str):
        return str(value)
    if depth >= _MAX_DEPTH:
        return "<...>"
    if isinstance(value, Mapping):
        if len(value) == 1:
            ((key, arg),) = value.items()
            if isinstance(key, str) and (key == "Ref" or key.startswith("Fn::")):
                return _render_intrinsic(key, arg, depth + 1)
        items = ", ".join(
            f"{_render(k, depth + 1)}: {_render(v, depth + 1)}" for k, v in value.items()
        )
        return "{" + items + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_render(item, depth + 1) for item in value) + "]"
    return f"<{type(value).__name__}>"


def _render_intrinsic(key: str, arg: object, depth: int) -> str:
    name = key.removeprefix("Fn::")
    if key == "Ref":
        return f"<Ref {_render(arg, depth)}>"
    if key == "Fn::GetAtt":
        if isinstance(arg, list) and arg:
            return "<GetAtt " + ".".join(_render(part, depth) for part in arg) + ">"
        return f"<GetAtt {_render(arg, depth)}>"
    if key == "Fn::Join" and isinstance(arg, list) and len(arg) == 2:
        separator, parts = arg
        if isinstance(separator, str) and isinstance(parts, list):
            return separator.join(_render(part, depth) for part in parts)
    if key == "Fn::Sub":
        pattern = arg[0] if isinstance(arg, list) and arg else arg
        if isinstance(pattern, str):
            return pattern
    if isinstance(arg, list):
        return f"<{name} " + " ".join(_render(item, depth) for item in arg) + ">"
    return f"<{name} {_render(arg, depth)}>"


def _text(value: object) -> str | None:
    return None if value is None else render_value(value)


def _count(value: object) -> Count | None:
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and _DIGITS.fullmatch(value.strip()):
        return int(value.strip())
    return render_value(value)


def _mapping(value: object) -> Mapping[str, object]:
    return value if isinstance(value, Mapping) else {}


def _items(value: object) -> Sequence[object]:
    return value if isinstance(value, list) else ()


def _depends_on(resource: Mapping[str, object]) -> list[object]:
    depends = resource.get("DependsOn")
    return [depends] if isinstance(depends, str) else list(_items(depends))


def _resources_of_type(
    resources: Mapping[str, object], resource_type: str
) -> list[tuple[str, Mapping[str, object]]]:
    return [
        (str(logical_id), resource)
        for logical_id, resource in resources.items()
        if isinstance(resource, Mapping) and resource.get("Type") == resource_type
    ]


def _gate_score(
    cluster_id: str, cluster_props: Mapping[str, object], gate: Mapping[str, object]
) -> int:
    """How surely ``gate`` watches this cluster: 3 same ClusterName, 2 a Ref/GetAtt of the
    cluster, 1 a DependsOn on it (weakest: a construct dependency spreads to every child)."""
    name = _mapping(gate.get("Properties")).get("ClusterName")
    if name is not None and name == cluster_props.get("ClusterName"):
        return 3
    if name == {"Ref": cluster_id}:
        return 2
    if isinstance(name, Mapping):
        get_att = name.get("Fn::GetAtt")
        if isinstance(get_att, list) and get_att and get_att[0] == cluster_id:
            return 2
    return 1 if cluster_id in _depends_on(gate) else 0


_ISO_DURATION = re.compile(r"PT(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?")


def _signal_timeout(value: object) -> Count | None:
    """A creation policy's ``ResourceSignal.Timeout`` (ISO 8601, e.g. ``PT12H``) in seconds."""
    match = _ISO_DURATION.fullmatch(value) if isinstance(value, str) else None
    if match is None or value == "PT":
        return _count(value)
    hours, minutes, seconds = (int(part or 0) for part in match.groups())
    return hours * 3600 + minutes * 60 + seconds


def _wait_timeouts(resources: Mapping[str, object]) -> dict[str, Count | None]:
    """Wait condition logical id -> its timeout: the ``CreationPolicy``'s, else (a template of
    a gate from before the creation policy) the ``Timeout`` property."""
    timeouts: dict[str, Count | None] = {}
    for logical_id, condition in _resources_of_type(resources, WAIT_CONDITION_TYPE):
        signal = _mapping(_mapping(condition.get("CreationPolicy")).get("ResourceSignal"))
        if "Timeout" in signal:
            timeouts[logical_id] = _signal_timeout(signal.get("Timeout"))
        else:
            timeouts[logical_id] = _count(_mapping(condition.get("Properties")).get("Timeout"))
    return timeouts


def _gate_summary(
    logical_id: str, gate: Mapping[str, object], wait_timeouts: Mapping[str, Count | None]
) -> GateSummary:
    props = _mapping(gate.get("Properties"))
    requirements = tuple(
        GateRequirement(
            group=_text(req.get(Prop.GROUP_NAME)) or "",
            min_count=_count(req.get(Prop.MIN_COUNT)),
            target_count=_count(req.get(Prop.TARGET_COUNT)),
        )
        for req in _items(props.get(Prop.REQUIREMENTS))
        if isinstance(req, Mapping)
    )
    topic = props.get(Prop.TOPIC_ARN)
    condition = props.get(Prop.WAIT_CONDITION_LOGICAL_ID)
    return GateSummary(
        logical_id=logical_id,
        requirements=requirements,
        timeout_seconds=_count(props.get(Prop.TIMEOUT_SECONDS)),
        poll_interval_seconds=_count(props.get(Prop.POLL_INTERVAL_SECONDS)),
        notifications=topic not in (None, ""),
        topic=None if topic in (None, "") else render_value(topic),
        metrics_namespace=_text(props.get(Prop.METRICS_NAMESPACE)),
        wait_condition_timeout_seconds=(
            wait_timeouts.get(condition) if isinstance(condition, str) else None
        ),
    )


def _group_summary(group: Mapping[str, object], gate: GateSummary | None) -> GroupSummary:
    slurm = _mapping(group.get("SlurmConfig"))
    partitions = slurm.get("PartitionNames")
    name = _text(group.get("InstanceGroupName")) or ""
    requirement = None
    if gate is not None:
        requirement = next((r for r in gate.requirements if r.group == name), None)
    flexible = _mapping(group.get("InstanceRequirements")).get("InstanceTypes")
    types = (
        tuple(render_value(t) for t in flexible)
        if isinstance(flexible, list)
        else tuple(t for t in (_text(group.get("InstanceType")),) if t is not None)
    )
    return GroupSummary(
        name=name,
        node_type=_text(slurm.get("NodeType")),
        instance_type=types[0] if types else None,
        instance_types=types,
        auto_patch=_text(_mapping(group.get("AutoPatchConfig")).get("PatchingStrategy")),
        instance_count=_count(group.get("InstanceCount")),
        min_instance_count=_count(group.get("MinInstanceCount")),
        partitions=(
            tuple(render_value(p) for p in partitions)
            if isinstance(partitions, list)
            else (() if partitions is None else (render_value(partitions),))
        ),
        gate=requirement,
    )


def summarize_template(template: object, *, stack: str, template_file: str) -> list[ClusterSummary]:
    """Summarize every ``AWS::SageMaker::Cluster`` of ``template`` (in template order), each with
    the ``Custom::HyperPodMinCountGate`` that watches it, if any.

    A gate is matched to the cluster with the same ``ClusterName``, else to the cluster its
    ``ClusterName`` references, else to a cluster it depends on. Raises :class:`TemplateError`
    only when ``template`` is not a template at all.

    :param template: a parsed CloudFormation template.
    :param stack: the stack's display name, copied into each summary.
    :param template_file: the template's path, copied into each summary.
    """
    if not isinstance(template, Mapping):
        raise TemplateError(
            f"not a CloudFormation template: the top level is a "
            f"{_json_kind(template)}, not an object"
        )
    resources = template.get("Resources", {})
    if not isinstance(resources, Mapping):
        raise TemplateError(
            f"not a CloudFormation template: Resources is a {_json_kind(resources)}, not an object"
        )

    clusters = _resources_of_type(resources, CLUSTER_TYPE)
    wait_timeouts = _wait_timeouts(resources)
    gate_of: dict[str, GateSummary] = {}
    for gate_id, gate in _resources_of_type(resources, GATE_TYPE):
        scores = [
            (_gate_score(cid, _mapping(c.get("Properties")), gate), index)
            for index, (cid, c) in enumerate(clusters)
        ]
        best = max(scores, key=lambda s: (s[0], -s[1]), default=(0, -1))
        if best[0] > 0:
            gate_of.setdefault(clusters[best[1]][0], _gate_summary(gate_id, gate, wait_timeouts))

    summaries = []
    for cluster_id, cluster in clusters:
        props = _mapping(cluster.get("Properties"))
        gate_summary = gate_of.get(cluster_id)
        summaries.append(
            ClusterSummary(
                stack=stack,
                template_file=template_file,
                logical_id=cluster_id,
                cluster_name=_text(props.get("ClusterName")),
                node_provisioning_mode=_text(props.get("NodeProvisioningMode")),
                node_recovery=_text(props.get("NodeRecovery")),
                instance_groups=tuple(
                    _group_summary(group, gate_summary)
                    for group in _items(props.get("InstanceGroups"))
                    if isinstance(group, Mapping)
                ),
                gate=gate_summary,
            )
        )
    return summaries


def _json_kind(value: object) -> str:
    if isinstance(value, list):
        return "list"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return type(value).__name__

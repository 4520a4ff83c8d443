"""Pure functions: two templates of one stack (the baseline, i.e. what runs, and the new one)
-> what the update does to each HyperPod cluster and instance group (:class:`StackPlan`).

Every property change is classified by the one table in :mod:`.semantics`. Counts come from
the templates with their parameters resolved (:mod:`.resolve`); where the live counts of the
running cluster are known (``DescribeCluster``), the nodes a change terminates are counted from
them instead of from the baseline's targets. The readiness gate's own rule
(:func:`~hyperpod_constructs._runtime.hyperpod_gate.contract.starts_new_wait`) says whether
the update waits. Nothing here reads files, calls AWS or prints.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

from ..._core.expect import require
from ..._core.layout import layout_of
from ..._core.limits import MIN_COUNT_WINDOW_HOURS
from ..._runtime.hyperpod_gate.contract import Prop, Requirement, starts_new_wait, update_scope
from .._assembly.types import CLUSTER_TYPE, NESTED_STACK_TYPE
from .._aws.model import SHAPES
from ..summary.model import (
    ClusterSummary,
    GateSummary,
    TemplateError,
    render_value,
    summarize_template,
)
from .references import MARKER, follow
from .refusals import refusals
from .resolve import as_count, canonical, evaluate, unresolved
from .schemas import TypeSchema, type_schema
from .semantics import (
    CLUSTER,
    GROUP,
    RESTRICTED,
    UNORDERED,
    Effect,
    PropertyRule,
    rule_for,
    rules_below,
)

EXIT_OK = 0
EXIT_ERROR = 2
EXIT_DISRUPTIVE = 3
"""Something terminates nodes, replaces or removes a cluster, or is refused."""
_IGNORED_RESOURCES = frozenset({"CDKMetadata"})
"""Logical ids every CDK stack has: they do not make two templates the same stack's."""
_RETAIN = frozenset({"Retain", "RetainExceptOnCreate"})
_FLAGGED = (Effect.REFUSED, Effect.UNKNOWN)
"""Cluster-level effects that make the plan disruptive by themselves."""
_MAX_VALUE = 160
_MISSING: Any = object()
CANNOT_TELL = "cannot tell: an expression only CloudFormation evaluates, when it deploys"
"""What a value plan cannot evaluate offline is marked with (counted as disruptive where it
could hide a terminated node, a replacement or a refusal)."""
WINDOW_HOURS = MIN_COUNT_WINDOW_HOURS
"""HyperPod's MinCount window (the same limit ``watch`` counts down)."""


class BaselineError(ValueError):
    """The baseline cannot be compared with the new template; ``code`` names the problem
    (``not-a-template``, ``no-cluster``, ``other-stack``) and ``str()`` is one line.

    :param code: the problem's name, shown in brackets after the message.
    :param message: what is wrong with the baseline, in words.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{message} [{code}]")
        self.code = code


class ClusterChange(Enum):
    """What happens to a cluster resource."""

    UNCHANGED = "unchanged"
    UPDATED = "updated"
    """Updated in place (see its groups)."""
    ADDED = "added"
    REMOVED = "removed"
    REPLACED = "replaced"
    REFUSED = "refused"
    UNKNOWN = "cannot-tell"
    """An expression plan cannot evaluate offline decides what happens (its ``Condition``,
    its ``InstanceGroups``): counted as disruptive."""


class GroupChange(Enum):
    """The headline of what happens to an instance group (its items give the details)."""

    UNCHANGED = "unchanged"
    CHANGED = "changed"
    """Changed without adding or terminating nodes (see its items)."""
    ADDED = "added"
    REMOVED = "removed"
    SCALE_OUT = "scale-out"
    SCALE_IN = "scale-in"
    REFUSED = "refused"
    REPLACED = "replaced"
    """Its cluster is replaced: every node terminated, the new cluster provisions it anew."""
    UNKNOWN = "cannot-tell"
    """A change no row of the table proves safe (see its items): counted as disruptive."""


@dataclass(frozen=True)
class Change:
    """One property whose value changes, classified by the ``semantics`` table."""

    path: str
    """Readable path of the property, e.g. ``InstanceType`` or ``LifeCycleConfig.SourceS3Uri``."""
    rule: PropertyRule
    """What changing this property does (its row of the semantics table)."""
    old: str | None
    """The baseline's value, rendered (None: not set)."""
    new: str | None
    """The new template's value, rendered (None: not set)."""
    uncertain: bool = False
    """A side is an expression plan cannot evaluate offline ("cannot tell"). Default: no."""
    reason: str | None = None
    """Why plan cannot tell the value (a reference to a replaced resource, an SSM parameter...),
    when ``uncertain``. Default: none (the marker that starts it is ``CANNOT_TELL``)."""

    @property
    def effect(self) -> Effect:
        """What changing this property does (the effect of its :attr:`rule`)."""
        return self.rule.effect

    def describe(self) -> str:
        """``InstanceType ml.p5.48xlarge -> ml.p5en.48xlarge: <what HyperPod does>``."""
        text = f"{self.path} {_shown(self.old)} -> {_shown(self.new)}: {self.rule.what}"
        return text + (f" ({self.reason or CANNOT_TELL})" if self.uncertain else "")


@dataclass(frozen=True)
class GroupPlan:
    """What the update does to one instance group."""

    name: str
    """The group's ``InstanceGroupName``."""
    change: GroupChange
    """The headline of what happens to it."""
    node_type: str | None
    """Its Slurm node type (``Controller``, ``Login``, ``Compute``), when set."""
    old_count: int | str | None
    """``InstanceCount`` in the baseline (None: the group is new)."""
    new_count: int | str | None
    """``InstanceCount`` in the new template (None: the group is removed)."""
    old_min: int | str | None
    """``MinInstanceCount`` in the baseline (None: not set or the group is new)."""
    new_min: int | str | None
    """``MinInstanceCount`` in the new template (None: not set or the group is removed)."""
    live_count: int | None
    """``CurrentCount`` of the running group (DescribeCluster), when read."""
    nodes_terminated: int | None
    """Nodes the update terminates (0: none; None: cannot tell, e.g. a count that is an
    expression)."""
    changes: tuple[Change, ...]
    """Every property of the group whose value changes."""
    notes: tuple[str, ...]
    """What happens, in HyperPod's words, one sentence each."""
    renamed_to: str | None = None
    """The group's new name when the update looks like a rename (a removal plus an
    addition). Default: none."""
    renamed_from: str | None = None
    """The group's old name when it looks renamed. Default: none."""
    gated: bool = False
    """The readiness gate waits for this group in the new template."""

    @property
    def disruptive(self) -> bool:
        """It terminates nodes (or may), HyperPod refuses it, or a change of it is one plan
        cannot tell is safe."""
        return (
            self.change is GroupChange.REFUSED
            or self.nodes_terminated != 0
            or any(c.effect is Effect.UNKNOWN for c in self.changes)
        )


@dataclass(frozen=True)
class GateWait:
    """One group the gate waits for after the update."""

    group: str
    """The group's name."""
    min_count: int | str | None
    """The minimum the gate waits for (an expression stays a string)."""
    target_count: int | str | None
    """The group's ``InstanceCount`` after the update."""
    live_count: int | None
    """Its ``CurrentCount`` now, when the running cluster was read."""


@dataclass(frozen=True)
class GatePlan:
    """Whether the update waits for the readiness gate, by the gate's own rule."""

    before: bool
    """The baseline has a readiness gate."""
    after: bool
    """The new template has a readiness gate."""
    waits: bool
    """The update starts a new wait (the gate's own re-arm rule)."""
    reason: str
    """Why it waits or not, in words."""
    waits_for: tuple[GateWait, ...] = ()
    """The groups a new wait waits for. Default: none."""
    timeout_seconds: int | str | None = None
    """How long the new wait may last. Default: none (no wait)."""


@dataclass(frozen=True)
class ClusterPlan:
    """What the update does to one ``AWS::SageMaker::Cluster``."""

    logical_id: str
    """The cluster resource's logical id."""
    cluster_name: str | None
    """Its ``ClusterName`` when it is a plain string."""
    change: ClusterChange
    """What happens to the cluster resource."""
    replaced_by: tuple[Change, ...]
    """The create-only properties that replace it (empty: not replaced)."""
    retained: bool
    """The old cluster is kept running outside the stack (``UpdateReplacePolicy`` or
    ``DeletionPolicy`` Retain) when it is replaced or removed."""
    nodes_terminated: int | None
    """Nodes the update terminates (None: cannot tell)."""
    changes: tuple[Change, ...]
    """Cluster-level property changes that do not replace it."""
    groups: tuple[GroupPlan, ...]
    """The plan of each instance group, baseline and new."""
    gate: GatePlan
    """Whether the update waits for the readiness gate."""
    notes: tuple[str, ...] = ()
    """What happens to the cluster, in HyperPod's words. Default: none."""
    refusals: tuple[str, ...] = ()
    """What ``UpdateCluster`` (``CreateCluster`` for a new cluster) refuses in the new
    template, by the rules the constructs check with. Default: none."""

    @property
    def replaced(self) -> bool:
        """CloudFormation replaces the cluster (a new cluster, the old one deleted or kept)."""
        return self.change is ClusterChange.REPLACED

    @property
    def disruptive(self) -> bool:
        """The cluster is replaced or removed, plan cannot tell what happens to it, HyperPod
        refuses the update or one of its changes, or a group's update is disruptive."""
        return (
            self.change
            in (
                ClusterChange.REPLACED,
                ClusterChange.REMOVED,
                ClusterChange.REFUSED,
                ClusterChange.UNKNOWN,
            )
            or bool(self.refusals)
            or any(c.effect in _FLAGGED for c in self.changes)
            or any(g.disruptive for g in self.groups)
        )


@dataclass(frozen=True)
class StackPlan:
    """The plan of one stack update."""

    stack: str
    """The stack's name."""
    baseline: str
    """Where the baseline came from (a file, or the deployed stack)."""
    parameters: str
    """How parameters were resolved (``defaults``, or ``as deployed``)."""
    live_counts: bool
    """Whether node counts come from the running clusters."""
    clusters: tuple[ClusterPlan, ...]
    """The plan of each HyperPod cluster of the stack."""
    notes: tuple[str, ...] = ()
    """What the plan could not read (e.g. a deployed cluster HyperPod does not know)."""
    undecided: tuple[str, ...] = ()
    """Why plan cannot tell what the update does to the stack as a whole (e.g. an
    ``Fn::ForEach`` loop): each one is disruptive. Default: none."""

    @property
    def exit_code(self) -> int:
        """3 when something terminates nodes, replaces or removes a cluster or is refused, or
        plan cannot tell."""
        disruptive = self.undecided or any(c.disruptive for c in self.clusters)
        return EXIT_DISRUPTIVE if disruptive else EXIT_OK

    def headlines(self) -> list[str]:
        """One line per disruptive item, the most severe first (what the text prints first)."""
        lines: list[str] = list(self.undecided)
        for cluster in self.clusters:
            label = cluster.cluster_name or cluster.logical_id
            lines += [f"{label}: {refusal}" for refusal in cluster.refusals]
            lines += [f"{label}: {note}" for note in cluster.notes if cluster.disruptive][:1]
            lines += [
                f"{label}: {change.describe()}"
                for change in cluster.changes
                if change.effect in _FLAGGED
            ]
            if cluster.change in (ClusterChange.REPLACED, ClusterChange.REMOVED):
                continue
            for group in cluster.groups:
                if group.disruptive:
                    lines.append(f"{label} / {group.name}: {group.notes[0]}")
        return lines


# -- reading the templates ------------------------------------------------------------------------


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _resources(template: Mapping[str, Any]) -> Mapping[str, Any]:
    return _mapping(template.get("Resources"))


def _clusters(template: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {
        str(logical_id): resource
        for logical_id, resource in _resources(template).items()
        if isinstance(resource, Mapping) and resource.get("Type") == CLUSTER_TYPE
    }


def loops(template: object) -> list[str]:
    """The ``Fn::ForEach::<name>`` loops among a template's resources."""
    resources = _resources(template) if isinstance(template, Mapping) else {}
    return [str(k) for k in resources if str(k).startswith("Fn::ForEach::")]


def check_baseline(
    old: object, new: object, *, same_stack: bool = False, stack_path: str | None = None
) -> None:
    """Refuse a baseline that cannot be compared with ``new`` (pure): not a template, a
    template without a HyperPod cluster, or (unless ``same_stack``: the deployed stack of that
    name) the template of another stack, on positive evidence only: CDK's ``aws:cdk:path``
    metadata of its resources lies under another stack's path than ``stack_path``. Resources
    missing from ``new`` are never such evidence: a cluster removed from the stack, or moved
    into a nested stack, is planned (and exits 3), not refused as input.

    :param old: the baseline, parsed from its JSON.
    :param new: the new template it is compared with.
    :param same_stack: the baseline is the deployed stack of the same name, so the
        other-stack check is skipped. Default: false.
    :param stack_path: the new stack's path in its app (``Prod/Training``): a baseline whose
        resources carry CDK's ``aws:cdk:path`` metadata, none of them under this path, is
        another stack's. Default: not checked.
    :raises BaselineError: with its ``code``.
    """
    if loops(old) or loops(new):
        return  # planned as "cannot tell" (exit 3), whatever else it holds
    for document, what in ((old, "the baseline"), (new, "the new template")):
        try:
            summarize_template(document, stack="", template_file="")
        except TemplateError as error:
            raise BaselineError("not-a-template", f"{what} is {error}") from None
    assert isinstance(old, Mapping) and isinstance(new, Mapping)
    if "Resources" not in old:
        raise BaselineError(
            "not-a-template",
            f"the baseline is not a CloudFormation template: it has no Resources section "
            f"(its keys: {', '.join(sorted(map(str, old))[:6]) or 'none'})",
        )
    if not _clusters(old):
        raise BaselineError(
            "no-cluster",
            "the baseline has no AWS::SageMaker::Cluster: nothing runs that the update could "
            "change (is it this stack's template? A first deployment creates every cluster)",
        )
    if same_stack:
        return
    paths = [
        path
        for resource in _resources(old).values()
        if isinstance(path := _mapping(_mapping(resource).get("Metadata")).get("aws:cdk:path"), str)
    ]
    if stack_path is not None and paths and not any(p.startswith(stack_path + "/") for p in paths):
        raise BaselineError(
            "other-stack",
            f"the baseline is another stack's template: its resources are under "
            f"{paths[0].rsplit('/', 2)[0]}/... (aws:cdk:path), not {stack_path}/; pass the "
            "template this stack was deployed from, or name its stack with --stack",
        )


def shares_cluster(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """A cluster of ``old`` is in ``new`` under the same logical id and the same name (names
    compared as deployed: a name through ``Fn::Sub`` of a parameter is its value)."""
    old_clusters, new_clusters = _clusters(evaluate(old)), _clusters(evaluate(new))
    return any(
        logical_id in new_clusters and _name(resource) == _name(new_clusters[logical_id])
        for logical_id, resource in old_clusters.items()
    )


def _label(resource: Mapping[str, Any], logical_id: str) -> str:
    name = _name(resource)
    return logical_id if name is None else f"{name} ({logical_id})"


def overlap(old: Mapping[str, Any], new: Mapping[str, Any]) -> int:
    """How many resource logical ids two templates share (CDK's metadata aside): the stack of
    an assembly that a baseline belongs to shares the most."""
    return len((set(_resources(old)) & set(_resources(new))) - _IGNORED_RESOURCES)


# -- comparing values -----------------------------------------------------------------------------


def _rendered(value: Any) -> str | None:
    if value is _MISSING:
        return None
    text = render_value(value)
    return text if len(text) <= _MAX_VALUE else text[: _MAX_VALUE - 3] + "..."


def _shown(value: str | None) -> str:
    return "(not set)" if value is None else value


def _comparable(value: Any, pointer: str) -> Any:
    """``value`` with every list the schema leaves unordered in one order (by the schema
    pointer of each level)."""
    if isinstance(value, Mapping) and not _intrinsic(value):
        return {str(k): _comparable(v, f"{pointer}/{k}") for k, v in value.items()}
    if isinstance(value, list):
        items = [_comparable(v, f"{pointer}/*") for v in value]
        return sorted(items, key=canonical) if pointer in UNORDERED else items
    return value


def _same(old: Any, new: Any, pointer: str) -> bool:
    """The two values deploy the same (by the schema: unordered lists in any order)."""
    return canonical(_comparable(old, pointer)) == canonical(_comparable(new, pointer))


def _object(value: Any) -> bool:
    return isinstance(value, Mapping) and not _intrinsic(value)


def _classified(pointer: str, old: Any, new: Any) -> PropertyRule:
    """The row of a changed value; where one side is an expression plan cannot evaluate and
    a more severe row lies inside (``Orchestrator`` hides ``Orchestrator/Eks``), that row:
    the plan fails closed."""
    rule = rule_for(pointer)
    if unresolved(old) or unresolved(new):
        below = rules_below(pointer)
        if below and below[0].effect in (Effect.REPLACES_CLUSTER, Effect.REFUSED):
            return below[0]
    return rule


def _diff(old: Any, new: Any, pointer: str, label: str) -> list[Change]:
    """The changed properties between two objects, as deep as the table has rows (an object
    added or removed whole is compared with an empty one where rows lie inside it:
    ``Orchestrator.Eks``, ``SlurmConfig.NodeType``), each classified by its nearest row."""
    changes: list[Change] = []
    old_map, new_map = _mapping(old), _mapping(new)
    for key in dict.fromkeys([*old_map, *new_map]):
        before, after = old_map.get(key, _MISSING), new_map.get(key, _MISSING)
        child, name = f"{pointer}/{key}", f"{label}.{key}" if label else str(key)
        if before is not _MISSING and after is not _MISSING and _same(before, after, child):
            continue
        if rule_for(child).effect is Effect.READ_ONLY:
            continue
        whole = before is _MISSING or after is _MISSING
        if (
            (_object(before) or before is _MISSING)
            and (_object(after) or after is _MISSING)
            and (not whole or rules_below(child))
        ):
            changes += _diff(
                {} if before is _MISSING else before,
                {} if after is _MISSING else after,
                child,
                name,
            )
        else:
            uncertain = unresolved(before) or unresolved(after)
            changes.append(
                Change(
                    name,
                    _classified(child, before, after),
                    _rendered(before),
                    _rendered(after),
                    uncertain=uncertain,
                    reason=_reason(after) if uncertain else None,
                )
            )
    return changes


def _reason(value: Any, depth: int = 0) -> str | None:
    """Why a value changes on deployment, from the first :data:`~.references.MARKER` in it."""
    if depth > 32:
        return None
    if isinstance(value, Mapping):
        if isinstance(marked := value.get(MARKER), str):
            return f"cannot tell: {marked.split(': ', 1)[-1]}"
        value = list(value.values())
    if isinstance(value, list):
        return next((r for v in value if (r := _reason(v, depth + 1)) is not None), None)
    return None


def _intrinsic(value: Mapping[str, Any]) -> bool:
    """``{"Ref": ...}`` or ``{"Fn::...": ...}``: a value, not an object to compare by key."""
    return len(value) == 1 and any(k == "Ref" or str(k).startswith("Fn::") for k in value)


UPLOAD_TYPE = "Custom::CDKBucketDeployment"
"""CDK's ``BucketDeployment``: the library uploads a scripts folder with it, to a fixed
``SourceS3Uri``, so an edited script changes the upload, not the cluster's properties."""


def _references(value: Any, depth: int = 0) -> set[str]:
    """Logical ids a value refers to (``Ref``, ``Fn::GetAtt``)."""
    if depth > 32:
        return set()
    if isinstance(value, list):
        return set().union(*(_references(v, depth + 1) for v in value)) if value else set()
    if not isinstance(value, Mapping):
        return set()
    found: set[str] = set()
    for key, argument in value.items():
        if key == "Ref" and isinstance(argument, str):
            found.add(argument)
        elif key == "Fn::GetAtt" and isinstance(argument, list) and argument:
            found.add(str(argument[0]))
        else:
            found |= _references(argument, depth + 1)
    return found


def changed_uploads(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Change]:
    """Bucket logical id -> the change of what CDK uploads into it (``SourceObjectKeys``), for
    every bucket deployment whose sources differ between the templates."""
    changes: dict[str, Change] = {}
    for logical_id, resource in _resources(new).items():
        if not isinstance(resource, Mapping) or resource.get("Type") != UPLOAD_TYPE:
            continue
        before = _mapping(_mapping(_resources(old).get(logical_id)).get("Properties"))
        after = _mapping(resource.get("Properties"))
        keys = ("SourceBucketNames", "SourceObjectKeys", "SourceMarkers")
        if all(canonical(before.get(k)) == canonical(after.get(k)) for k in keys):
            continue
        for bucket in _references(after.get("DestinationBucketName")):
            changes[bucket] = Change(
                f"LifeCycleConfig scripts uploaded by {logical_id}",
                rule_for(f"{GROUP}/LifeCycleConfig"),
                _rendered(before.get("SourceObjectKeys", _MISSING)),
                _rendered(after.get("SourceObjectKeys", _MISSING)),
            )
    return changes


# -- one instance group ---------------------------------------------------------------------------


def _group_list(cluster: Mapping[str, Any] | None, key: str = "InstanceGroups") -> Any:
    return _mapping(_mapping(cluster).get("Properties")).get(key, [])


def _groups(
    cluster: Mapping[str, Any], key: str = "InstanceGroups"
) -> dict[str, Mapping[str, Any]]:
    """The cluster's groups by name (:func:`check_groups` refused malformed ones; a group that
    is an expression is left to :func:`_groups_open`)."""
    groups: dict[str, Mapping[str, Any]] = {}
    listed = _group_list(cluster, key)
    for group in listed if isinstance(listed, list) else []:
        if _object(group):
            groups.setdefault(render_value(group.get("InstanceGroupName")), group)
    return groups


def _a_name(value: Any) -> bool:
    if isinstance(value, Mapping):
        return _intrinsic(value)
    return isinstance(value, str | int) and not isinstance(value, bool) and value != ""


def _restricted_plain(cluster: Mapping[str, Any]) -> bool:
    """The cluster's ``RestrictedInstanceGroups`` is a list of objects with distinct literal
    names and the members ``UpdateCluster`` requires (botocore's model): planned group by
    group (else compared as a whole, "cannot tell" where it differs)."""
    listed = _group_list(cluster, RESTRICTED_KEY)
    required = SHAPES["sagemaker.ClusterRestrictedInstanceGroupSpecification"]["required"]
    if not isinstance(listed, list) or not all(
        _object(g) and all(k in g for k in required) for g in listed
    ):
        return False
    names = [g.get("InstanceGroupName") for g in listed]
    return all(isinstance(n, str) and n for n in names) and len(set(names)) == len(names)


def _groups_open(cluster: Mapping[str, Any]) -> bool:
    """The cluster's groups are (or hold) an expression plan cannot evaluate offline."""
    listed = _group_list(cluster)
    return not isinstance(listed, list) or any(not _object(g) for g in listed)


def check_groups(template: Mapping[str, Any], what: str) -> None:
    """Refuse what ``UpdateCluster`` refuses in a template's evaluated ``InstanceGroups``: not a
    list of objects, a group without a name, two groups of one name (pure).

    :param template: the template, evaluated (:func:`~.resolve.evaluate`).
    :param what: ``the baseline`` or ``the new template``, for the message.
    :raises BaselineError: ``malformed-groups`` or ``duplicate-group``.
    """
    for logical_id, cluster in _clusters(template).items():
        listed = _group_list(cluster)
        where = f"{what}'s cluster {_label(cluster, logical_id)}"
        if isinstance(listed, Mapping) and _intrinsic(listed):
            continue
        if not isinstance(listed, list):
            raise BaselineError(
                "malformed-groups",
                f"{where}: InstanceGroups is {_rendered(listed)}, not a list of instance groups",
            )
        seen: set[str] = set()
        for index, group in enumerate(listed):
            if isinstance(group, Mapping) and _intrinsic(group):
                continue
            name = _mapping(group).get("InstanceGroupName")
            if not isinstance(group, Mapping) or not _a_name(name):
                raise BaselineError(
                    "malformed-groups",
                    f"{where}: InstanceGroups[{index}] is {_rendered(group)}, not an instance "
                    "group with an InstanceGroupName",
                )
            key = render_value(name)
            if key in seen:
                raise BaselineError(
                    "duplicate-group",
                    f"{where} has two instance groups named {key}: UpdateCluster refuses "
                    "duplicate InstanceGroupName values",
                )
            seen.add(key)


def _count(group: Mapping[str, Any] | None, key: str) -> int | str | None:
    if group is None or key not in group:
        return None
    value = group[key]
    number = as_count(value)
    return number if number is not None else render_value(value)


def _node_type(group: Mapping[str, Any]) -> str | None:
    node_type = _mapping(group.get("SlurmConfig")).get("NodeType")
    return None if node_type is None else render_value(node_type)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _window() -> str:
    return f"{WINDOW_HOURS} h"


def _added(name: str, group: Mapping[str, Any], gated: bool, gate_waits: bool) -> GroupPlan:
    count, minimum = _count(group, "InstanceCount"), _count(group, "MinInstanceCount")
    size = _plural(count, "node") if isinstance(count, int) else f"{count} nodes"
    notes = [f"group added: {size}" + (f", minimum {minimum}" if minimum else "")]
    if minimum:
        notes.append(
            f"HyperPod keeps the group out of Slurm until {minimum} nodes are up, and rolls it "
            f"back to 0 nodes if that takes more than {_window()}"
        )
    else:
        notes.append("its nodes join Slurm as they come up")
    if gated:
        notes.append(
            "the gate waits for its minimum before the deployment goes on"
            if gate_waits
            else "the gate lists it but does not wait again (see the gate)"
        )
    return GroupPlan(
        name=name,
        change=GroupChange.ADDED,
        node_type=_node_type(group),
        old_count=None,
        new_count=count,
        old_min=None,
        new_min=minimum,
        live_count=None,
        nodes_terminated=0,
        changes=(),
        notes=tuple(notes),
        gated=gated,
    )


def _terminated(group: Mapping[str, Any], live: int | None) -> tuple[int | None, str]:
    """Nodes a group has to lose: its live count, else its target (the most it has)."""
    if live is not None:
        return live, f"{_plural(live, 'node')} terminated (in service now)"
    target = as_count(group.get("InstanceCount"))
    if target is None:
        return None, f"its nodes terminated ({render_value(group.get('InstanceCount'))})"
    return target, f"up to {_plural(target, 'node')} terminated (its target)"


def _removed(name: str, group: Mapping[str, Any], live: int | None) -> GroupPlan:
    terminated, how = _terminated(group, live)
    node_type = _node_type(group)
    notes = [f"group removed: {how}"]
    change = GroupChange.REMOVED
    role = layout_of(node_type)
    if role is not None and role.min_groups > 0:
        change = GroupChange.REFUSED
        notes.append(
            f"a cluster has {role.groups()}: HyperPod cannot remove it, so the "
            "update fails and rolls back"
        )
    return GroupPlan(
        name=name,
        change=change,
        node_type=node_type,
        old_count=_count(group, "InstanceCount"),
        new_count=None,
        old_min=_count(group, "MinInstanceCount"),
        new_min=None,
        live_count=live,
        nodes_terminated=terminated,
        changes=(),
        notes=tuple(notes),
    )


def _scale_notes(
    old: Mapping[str, Any], new: Mapping[str, Any], live: int | None
) -> tuple[GroupChange | None, int | None, list[str]]:
    """(headline, nodes terminated, sentences) of a count and minimum change."""
    before, after = as_count(old.get("InstanceCount")), as_count(new.get("InstanceCount"))
    old_min, new_min = (
        as_count(old.get("MinInstanceCount", 0)),
        as_count(new.get("MinInstanceCount", 0)),
    )
    notes: list[str] = []
    headline: GroupChange | None = None
    terminated: int | None = 0
    if canonical(old.get("InstanceCount")) != canonical(new.get("InstanceCount")):
        if before is None or after is None:
            headline, terminated = GroupChange.SCALE_IN, None
            notes.append(
                f"instance count {render_value(old.get('InstanceCount'))} -> "
                f"{render_value(new.get('InstanceCount'))}: an expression, so the plan cannot "
                "tell whether nodes are terminated"
            )
        elif after > before:
            headline = GroupChange.SCALE_OUT
            notes.append(
                f"scale out {before} -> {after} nodes: HyperPod launches {after - before} more, "
                "the group stays in service"
            )
        else:
            headline = GroupChange.SCALE_IN
            current = before if live is None else live
            terminated = max(0, current - after)
            source = "in service now" if live is not None else "its target"
            notes.append(
                f"scale in {before} -> {after} nodes: {_plural(terminated, 'node')} terminated "
                f"(from {current}, {source}; HyperPod chooses which, jobs on them end)"
            )
    if canonical(old.get("MinInstanceCount", 0)) != canonical(new.get("MinInstanceCount", 0)):
        if old_min is None or new_min is None:
            headline, terminated = headline or GroupChange.UNKNOWN, None
            notes.insert(
                0,
                f"minimum {render_value(old.get('MinInstanceCount', 0))} -> "
                f"{render_value(new.get('MinInstanceCount', 0))}: not a number the plan can "
                "read, so it cannot tell whether HyperPod accepts it, holds the group or rolls "
                "it back (counted as disruptive)",
            )
        elif new_min > old_min:
            notes.append(
                f"minimum {old_min} -> {new_min}: HyperPod holds the group in Updating until "
                f"{new_min} nodes are in service, and rolls it back to its last values in "
                f"service if that takes more than {_window()}"
                + (f" ({live} in service now)" if live is not None else "")
            )
        else:
            notes.append(
                f"minimum {render_value(old.get('MinInstanceCount', 0))} -> "
                f"{render_value(new.get('MinInstanceCount', 0))}: HyperPod does not wait"
            )
    return headline, terminated, notes


def _effect_note(change: Change) -> str:
    verbs = {
        Effect.REFUSED: "refused in place, the update fails and rolls back",
        Effect.NEW_NODES: "applies to new nodes only",
        Effect.SOFTWARE_UPDATE: "rolling software update of the running nodes",
        Effect.IN_PLACE: "applied in place",
        Effect.UNKNOWN: "cannot tell, counted as disruptive",
    }
    return f"{verbs.get(change.effect, 'changed')}: {change.describe()}"


def _updated(
    name: str,
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    live: int | None,
    gated: bool,
    gate_waits: bool,
    uploads: Mapping[str, Change],
    pointer: str = GROUP,
) -> GroupPlan:
    changes = [
        change
        for change in _diff(old, new, pointer, "")
        if change.effect not in (Effect.IDENTITY, Effect.SCALE, Effect.MINIMUM)
    ]
    scripts = _mapping(new.get("LifeCycleConfig")).get("SourceS3Uri")
    if not any(c.path.startswith("LifeCycleConfig") for c in changes):
        # The same SourceS3Uri with new scripts behind it (an edited script of a folder).
        changes += [uploads[b] for b in sorted(_references(scripts)) if b in uploads][:1]
    headline, terminated, notes = _scale_notes(old, new, live)
    refused = [c for c in changes if c.effect is Effect.REFUSED]
    unknown = [c for c in changes if c.effect is Effect.UNKNOWN]
    notes = [_effect_note(c) for c in refused + unknown] + notes
    notes += [_effect_note(c) for c in changes if c.effect not in _FLAGGED]
    if refused:
        headline = GroupChange.REFUSED
    elif unknown and headline in (None, GroupChange.SCALE_OUT):
        headline = GroupChange.UNKNOWN
    elif headline is None:
        headline = GroupChange.CHANGED if changes or notes else GroupChange.UNCHANGED
    if gated and gate_waits:
        same_min = canonical(old.get("MinInstanceCount")) == canonical(new.get("MinInstanceCount"))
        notes.append(
            "the gate waits for its minimum again"
            + (
                " (unchanged: the wait ends at the first check if the group still has it)"
                if same_min
                else ""
            )
        )
    return GroupPlan(
        name=name,
        change=headline,
        node_type=_node_type(new),
        old_count=_count(old, "InstanceCount"),
        new_count=_count(new, "InstanceCount"),
        old_min=_count(old, "MinInstanceCount"),
        new_min=_count(new, "MinInstanceCount"),
        live_count=live,
        nodes_terminated=terminated,
        changes=tuple(changes),
        notes=tuple(notes) or ("no change",),
        gated=gated,
    )


def _planned_groups(
    groups: tuple[dict[str, Mapping[str, Any]], dict[str, Mapping[str, Any]]],
    live: Mapping[str, int],
    gated: set[str],
    gate_waits: bool,
    uploads: Mapping[str, Change],
    pointer: str,
) -> list[GroupPlan]:
    """The plan of each group of one list (``InstanceGroups``, ``RestrictedInstanceGroups``,
    under ``pointer`` in the schema): updated, removed, added, renames paired."""
    old_groups, new_groups = groups
    planned = [
        _updated(
            name,
            group,
            new_groups[name],
            live.get(name),
            name in gated,
            gate_waits,
            uploads,
            pointer,
        )
        if name in new_groups
        else _removed(name, group, live.get(name))
        for name, group in old_groups.items()
    ]
    planned += [
        _added(name, group, name in gated, gate_waits)
        for name, group in new_groups.items()
        if name not in old_groups
    ]
    return _pair_renames(planned)


def _pair_renames(groups: list[GroupPlan]) -> list[GroupPlan]:
    """A removed group and an added one of the same node type and instance count read as a
    rename (which is still a removal plus an addition)."""
    removed = [g for g in groups if g.change in (GroupChange.REMOVED, GroupChange.REFUSED)]
    added = [g for g in groups if g.change is GroupChange.ADDED]
    renamed: dict[str, str] = {}
    for gone in removed:
        if gone.old_count is None:
            continue
        match = next(
            (
                g
                for g in added
                if g.name not in renamed.values()
                and g.node_type == gone.node_type
                and g.new_count == gone.old_count
            ),
            None,
        )
        if match is not None:
            renamed[gone.name] = match.name
    result: list[GroupPlan] = []
    for group in groups:
        if group.name in renamed:
            to = renamed[group.name]
            group = _with_note(group, f"renamed to {to}: a rename is a removal plus an addition")
            group = GroupPlan(**{**group.__dict__, "renamed_to": to})
        elif group.name in renamed.values():
            source = next(k for k, v in renamed.items() if v == group.name)
            group = GroupPlan(**{**group.__dict__, "renamed_from": source})
            group = _with_note(group, f"renamed from {source}: provisioned from zero")
        result.append(group)
    return result


def _with_note(group: GroupPlan, note: str) -> GroupPlan:
    first, *rest = group.notes
    return GroupPlan(**{**group.__dict__, "notes": (f"{first} ({note})", *rest)})


# -- the gate -------------------------------------------------------------------------------------


def _gate_properties(template: Mapping[str, Any], gate: GateSummary | None) -> Mapping[str, Any]:
    if gate is None:
        return {}
    return _mapping(_mapping(_resources(template).get(gate.logical_id)).get("Properties"))


def _declared(gate: GateSummary) -> list[Requirement] | None:
    """The gate's requirements as its arm function reads them (numbers), or None: a count is
    an expression only CloudFormation resolves."""
    found = []
    for r in gate.requirements:
        if not isinstance(r.min_count, int) or not isinstance(r.target_count, int):
            return None
        found.append(Requirement(r.group, r.min_count, r.target_count))
    return found


def _scope(
    old_gate: GateSummary | None,
    new_gate: GateSummary,
    old_props: Mapping[str, Any],
    new_props: Mapping[str, Any],
) -> tuple[set[str], str]:
    """The groups a re-armed gate waits for and why, by the arm's own
    :func:`~hyperpod_constructs._runtime.hyperpod_gate.contract.update_scope` fed the two
    templates' declarations; every gated group where a count is an expression."""
    new = _declared(new_gate)
    old = None if old_gate is None else _declared(old_gate)
    if new is None or (old_gate is not None and old is None):
        groups = {r.group for r in new_gate.requirements}
        return groups, "a gated count is an expression, so it may wait for every gated group"
    same = canonical(old_props.get(Prop.CLUSTER_NAME)) == canonical(
        new_props.get(Prop.CLUSTER_NAME)
    )
    scope = update_scope(old, new, same_cluster=same)
    return {r.group_name for r in scope.waits_for}, scope.text()


def _gate_plan(
    old_template: Mapping[str, Any],
    new_template: Mapping[str, Any],
    old: ClusterSummary | None,
    new: ClusterSummary | None,
    live: Mapping[str, int],
) -> GatePlan:
    old_gate = old.gate if old is not None else None
    new_gate = new.gate if new is not None else None
    if new_gate is None:
        reason = "the gate is removed: nothing waits" if old_gate is not None else "no gate"
        return GatePlan(before=old_gate is not None, after=False, waits=False, reason=reason)
    if old_gate is not None and old_gate.logical_id != new_gate.logical_id:
        old_gate = None  # a new gate resource: its arm is created, as for a new stack
    old_props = _gate_properties(old_template, old_gate)
    new_props = _gate_properties(new_template, new_gate)
    if old_gate is None:
        rearms, reason = True, "the gate is new"
    else:
        rearms = starts_new_wait(old_props, new_props)
        if rearms:
            reason = "the gated counts changed, so the gate re-arms"
        elif canonical(old_props.get(Prop.REQUIREMENTS)) != canonical(
            new_props.get(Prop.REQUIREMENTS)
        ):
            reason = (
                "gated counts changed under the same wait condition (a parameter's value): the "
                "gate does not wait again (HP-WARN-GATE-TOKEN-COUNT)"
            )
        else:
            reason = "the gated counts are unchanged: the gate does not wait"
    if not rearms:
        return GatePlan(before=True, after=True, waits=False, reason=reason)
    groups, why = _scope(old_gate, new_gate, old_props, new_props)
    waits_for = tuple(
        GateWait(r.group, r.min_count, r.target_count, live.get(r.group))
        for r in new_gate.requirements
        if r.group in groups
    )
    reason += f" and {why}"
    if waits_for:
        reason += (
            ": the deployment waits until "
            + ", ".join(_wait_text(w) for w in waits_for)
            + f" (HyperPod's window: {_window()}; the gate gives up after "
            + f"{_duration(new_gate.timeout_seconds)})"
        )
    else:
        reason += ": the deployment does not wait"
    return GatePlan(
        before=old_gate is not None,
        after=True,
        waits=bool(waits_for),
        reason=reason,
        waits_for=waits_for,
        timeout_seconds=new_gate.timeout_seconds if waits_for else None,
    )


def _duration(seconds: int | str | None) -> str:
    if not isinstance(seconds, int):
        return str(seconds)
    hours, rest = divmod(seconds, 3600)
    return " ".join(p for p in (f"{hours} h" if hours else "", f"{rest // 60} min" if rest else ""))


def _wait_text(wait: GateWait) -> str:
    text = f"{wait.group} has {wait.min_count} of {wait.target_count} nodes in service"
    if wait.live_count is not None:
        met = isinstance(wait.min_count, int) and wait.live_count >= wait.min_count
        text += f" ({wait.live_count} now" + (": met at the first check)" if met else ")")
    return text


# -- one cluster ----------------------------------------------------------------------------------


def _policy_retains(resource: Mapping[str, Any], key: str) -> bool:
    return resource.get(key) in _RETAIN


def _all_terminated(
    old: Mapping[str, Any],
    new: Mapping[str, Any] | None,
    live: Mapping[str, int],
    *,
    retained: bool,
) -> tuple[list[GroupPlan], int | None]:
    """Every group of a cluster that is replaced (``new``: the new cluster) or removed; the
    total of the nodes it has (terminated unless the old cluster is ``retained``)."""
    plans = []
    total: int | None = 0
    new_groups = _groups(new) if new is not None else {}
    for name, group in _groups(old).items():
        count, how = _terminated(group, live.get(name))
        if retained:
            how = "kept running in the retained cluster"
        successor = new_groups.get(name)
        notes = [f"replaced with the cluster: {how}" if new is not None else how]
        if successor is not None:
            size, minimum = (
                _count(successor, "InstanceCount"),
                _count(successor, "MinInstanceCount"),
            )
            notes.append(
                "the new cluster provisions it from zero: "
                + (_plural(size, "node") if isinstance(size, int) else f"{size} nodes")
                + (f", minimum {minimum}" if minimum else "")
            )
        plans.append(
            GroupPlan(
                name=name,
                change=GroupChange.REPLACED,
                node_type=_node_type(group),
                old_count=_count(group, "InstanceCount"),
                new_count=_count(successor, "InstanceCount"),
                old_min=_count(group, "MinInstanceCount"),
                new_min=_count(successor, "MinInstanceCount"),
                live_count=live.get(name),
                nodes_terminated=0 if retained else count,
                changes=(),
                notes=tuple(notes),
            )
        )
        total = None if total is None or count is None else total + count
    return plans, total


def _name(resource: Mapping[str, Any]) -> str | None:
    name = _mapping(resource.get("Properties")).get("ClusterName")
    return None if name is None else render_value(name)


def _cluster_plan(
    logical_id: str,
    old_template: Mapping[str, Any],
    new_template: Mapping[str, Any],
    summaries: tuple[dict[str, ClusterSummary], dict[str, ClusterSummary]],
    live: Mapping[str, int],
    taken_names: set[str],
    uploads: Mapping[str, Change],
) -> ClusterPlan:
    old = _clusters(old_template).get(logical_id)
    new = _clusters(new_template).get(logical_id)
    old_summary, new_summary = summaries[0].get(logical_id), summaries[1].get(logical_id)
    gate = _gate_plan(old_template, new_template, old_summary, new_summary, live)
    if old is None:
        assert new is not None
        gated = {w.group for w in gate.waits_for}
        groups = [_added(n, g, n in gated, gate.waits) for n, g in _groups(new).items()]
        name = _name(new)
        change, notes = ClusterChange.ADDED, ["cluster added: every group provisions from zero"]
        if name is not None and name in taken_names:
            change = ClusterChange.REFUSED
            notes = [
                f"cluster added under the name {name}, which the removed cluster still holds: "
                "CloudFormation creates the new resource before deleting the old one, so the "
                "creation fails and the update rolls back (keep the construct id, or rename)"
            ]
        return ClusterPlan(
            logical_id, name, change, (), False, 0, (), tuple(groups), gate, tuple(notes)
        )
    if new is None:
        retained = _policy_retains(old, "DeletionPolicy")
        groups, total = _all_terminated(old, None, live, retained=retained)
        note = (
            f"cluster removed from the stack and retained: it is left running outside the stack "
            f"(DeletionPolicy Retain), its {_nodes(total)} billing until deleted by hand"
            if retained
            else f"cluster removed: every node terminated ({_nodes(total)})"
        )
        nested = _nested_stacks(old_template, new_template)
        if nested:
            note += (
                f"; the update adds the nested stack {', '.join(nested)}: a cluster moved into a "
                "nested stack is a new cluster there, provisioned from zero, not this one"
            )
        return ClusterPlan(
            logical_id,
            _name(old),
            ClusterChange.REMOVED,
            (),
            retained,
            0 if retained else total,
            (),
            tuple(groups),
            gate,
            (note,),
        )
    unknown = _undecided(old, new)
    if unknown is not None:
        return ClusterPlan(
            logical_id, _name(new), ClusterChange.UNKNOWN, (), False, None, (), (), gate, (unknown,)
        )
    old_props, new_props = _mapping(old.get("Properties")), _mapping(new.get("Properties"))
    lists = {"InstanceGroups": GROUP}
    if _restricted_plain(old) and _restricted_plain(new):
        lists[RESTRICTED_KEY] = RESTRICTED
    changes = _diff(
        {k: v for k, v in old_props.items() if k not in lists},
        {k: v for k, v in new_props.items() if k not in lists},
        CLUSTER,
        "",
    )
    replacing = tuple(c for c in changes if c.effect is Effect.REPLACES_CLUSTER)
    others = tuple(c for c in changes if c.effect is not Effect.REPLACES_CLUSTER)
    if replacing:
        return _replaced(logical_id, old, new, replacing, others, gate, live)
    gated = {w.group for w in gate.waits_for}
    groups = []
    for key, pointer in lists.items():
        groups += _planned_groups(
            (_groups(old, key), _groups(new, key)), live, gated, gate.waits, uploads, pointer
        )
    touched = others or any(g.change is not GroupChange.UNCHANGED for g in groups)
    return ClusterPlan(
        logical_id,
        _name(new),
        ClusterChange.UPDATED if touched else ClusterChange.UNCHANGED,
        (),
        False,
        _sum(g.nodes_terminated for g in groups),
        others,
        tuple(groups),
        gate,
    )


RESTRICTED_KEY = "RestrictedInstanceGroups"


def _nested_stacks(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """Logical ids of the nested stacks ``new`` adds."""
    return [
        str(logical_id)
        for logical_id, resource in _resources(new).items()
        if _mapping(resource).get("Type") == NESTED_STACK_TYPE and logical_id not in _resources(old)
    ]


def _undecided(old: Mapping[str, Any], new: Mapping[str, Any]) -> str | None:
    """Why plan cannot tell what happens to a cluster in both templates: its ``Condition`` or
    its ``InstanceGroups`` is an expression that differs between them (None: it can tell)."""
    if canonical(old.get("Condition")) != canonical(new.get("Condition")):
        before, after = old.get("Condition", _MISSING), new.get("Condition", _MISSING)
        return (
            f"cannot tell whether the cluster still exists after the update: its Condition "
            f"{_shown(_rendered(before))} -> {_shown(_rendered(after))} is an expression only "
            "CloudFormation evaluates, when it deploys (counted as disruptive)"
        )
    if (_groups_open(old) or _groups_open(new)) and not _same(
        _group_list(old), _group_list(new), f"{CLUSTER}/InstanceGroups"
    ):
        return (
            f"cannot tell which groups run after the update: InstanceGroups "
            f"{_rendered(_group_list(old))} -> {_rendered(_group_list(new))} holds an expression "
            "only CloudFormation evaluates, when it deploys (counted as disruptive)"
        )
    return None


def _replaced(
    logical_id: str,
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    replacing: tuple[Change, ...],
    others: tuple[Change, ...],
    gate: GatePlan,
    live: Mapping[str, int],
) -> ClusterPlan:
    forced = ", ".join(f"{c.path} {_shown(c.old)} -> {_shown(c.new)}" for c in replacing)
    named = _name(new)
    if named is not None and not any(c.path == "ClusterName" for c in replacing):
        note = (
            f"cluster replacement refused: {forced} is create-only, and CloudFormation cannot "
            f"replace a resource with a custom name ({named}): the update fails and rolls back "
            "(change ClusterName too, to replace the cluster)"
        )
        return ClusterPlan(
            logical_id, named, ClusterChange.REFUSED, replacing, False, 0, others, (), gate, (note,)
        )
    # The new template's policy applies to the replacement it asks for.
    retained = _policy_retains(new, "UpdateReplacePolicy")
    groups, total = _all_terminated(old, new, live, retained=retained)
    gated = {w.group for w in gate.waits_for}
    groups += [
        _added(n, g, n in gated, gate.waits)
        for n, g in _groups(new).items()
        if n not in _groups(old)
    ]
    if retained:
        note = (
            f"cluster replaced ({forced}): the old cluster is kept running (UpdateReplacePolicy "
            f"Retain): its {_nodes(total)} keep billing outside the stack until deleted by hand"
        )
    else:
        note = (
            f"cluster replaced ({forced}): a new cluster is created and every node of the old "
            f"one terminated ({_nodes(total)})"
        )
    notes = [note]
    if gate.waits and not retained:
        notes.append(
            "the new cluster is created and waited for while the old one still holds its "
            "capacity: CloudFormation deletes the old cluster only in the update's cleanup, "
            "after the gate's wait, so both run (and bill) meanwhile, and the new groups may "
            "not get the instances the old ones hold"
        )
    return ClusterPlan(
        logical_id,
        named,
        ClusterChange.REPLACED,
        replacing,
        retained,
        0 if retained else total,
        others,
        tuple(groups),
        gate,
        tuple(notes),
    )


def _nodes(total: int | None) -> str:
    return "an unknown number of nodes" if total is None else _plural(total, "node")


def _sum(counts: Iterable[int | None]) -> int | None:
    total = 0
    for count in counts:
        if count is None:
            return None
        total += count
    return total


# -- the stack ------------------------------------------------------------------------------------


def plan_stack(
    old_template: Mapping[str, Any],
    new_template: Mapping[str, Any],
    *,
    stack: str,
    baseline: str,
    old_parameters: Mapping[str, str] | None = None,
    new_parameters: Mapping[str, str] | None = None,
    live: Mapping[str, Mapping[str, int]] | None = None,
    notes: Sequence[str] = (),
    pseudo: Mapping[str, str] | None = None,
    parameters_from: str | None = None,
    schema_of: Callable[[str], TypeSchema | None] = type_schema,
) -> StackPlan:
    """The plan of updating ``old_template`` (what runs) to ``new_template``.

    :param old_template: the baseline: what runs now.
    :param new_template: the template ``cdk deploy`` would deploy.
    :param stack: the stack's name, shown in the plan.
    :param baseline: where the baseline came from (a file, or the deployed stack), shown.
    :param old_parameters: the deployed stack's parameter values (default: the baseline's
        parameter defaults).
    :param new_parameters: values the new template deploys with (default: its defaults; with
        a deployed stack, cdk deploy keeps the deployed values of existing parameters).
    :param live: cluster logical id -> group name -> ``CurrentCount``, when read from AWS.
    :param notes: what the caller could not read, shown with the plan.
    :param pseudo: pseudo parameter values both templates deploy with (``AWS::StackName``,
        ``AWS::Region``, ``AWS::AccountId`` where known); others stay expressions.
    :param parameters_from: how the parameter values were chosen, shown (default: ``as
        deployed`` with ``old_parameters``, else ``defaults``).
    :param schema_of: a resource type's schema, for which changes replace a resource the
        cluster refers to (default: cfn-lint's, when installed; None: cannot tell).
    """
    require("plan_stack", "old_template", old_template, Mapping)
    require("plan_stack", "new_template", new_template, Mapping)
    require("plan_stack", "stack", stack, str)
    require("plan_stack", "baseline", baseline, str)
    undecided = [
        f"cannot tell what the update does: {what} has the AWS::LanguageExtensions loop "
        f"{', '.join(found)}, which only CloudFormation expands, when it deploys"
        for template, what in ((old_template, "the baseline"), (new_template, "the new template"))
        if (found := loops(template))
    ]
    if undecided:
        return StackPlan(
            stack=stack,
            baseline=baseline,
            parameters=parameters_from or "defaults",
            live_counts=live is not None,
            clusters=(),
            notes=tuple(notes),
            undecided=tuple(undecided),
        )
    old = evaluate(old_template, old_parameters, pseudo)
    new = follow(old, evaluate(new_template, new_parameters, pseudo), schema_of=schema_of)
    check_groups(old, "the baseline")
    check_groups(new, "the new template")
    summaries = (_summaries(old, stack, "the baseline"), _summaries(new, stack, "the new template"))
    old_clusters, new_clusters = _clusters(old), _clusters(new)
    removed_names = {
        name
        for logical_id, resource in old_clusters.items()
        if logical_id not in new_clusters and (name := _name(resource)) is not None
    }
    order = list(dict.fromkeys([*old_clusters, *new_clusters]))
    uploads = changed_uploads(old, new)
    return StackPlan(
        stack=stack,
        baseline=baseline,
        parameters=parameters_from or ("as deployed" if old_parameters is not None else "defaults"),
        live_counts=live is not None,
        clusters=tuple(
            _with_refusals(
                _cluster_plan(
                    logical_id,
                    old,
                    new,
                    summaries,
                    (live or {}).get(logical_id, {}),
                    removed_names,
                    uploads,
                ),
                old,
                new,
            )
            for logical_id in order
        ),
        notes=tuple(notes),
    )


def _with_refusals(
    plan: ClusterPlan, old: Mapping[str, Any], new: Mapping[str, Any]
) -> ClusterPlan:
    """``plan`` with what UpdateCluster (or CreateCluster) refuses in the new cluster."""
    after = _clusters(new).get(plan.logical_id)
    if after is None or plan.change is ClusterChange.UNCHANGED:
        return plan
    in_place = plan.change in (ClusterChange.UPDATED, ClusterChange.UNKNOWN)
    found = refusals(_clusters(old).get(plan.logical_id) if in_place else None, after)
    if not found:
        return plan
    change = ClusterChange.REFUSED if plan.change is ClusterChange.UPDATED else plan.change
    return replace(plan, change=change, refusals=found)


def _summaries(template: Mapping[str, Any], stack: str, what: str) -> dict[str, ClusterSummary]:
    try:
        clusters = summarize_template(template, stack=stack, template_file="")
    except TemplateError as error:
        raise BaselineError("not-a-template", f"{what} is {error}") from None
    return {c.logical_id: c for c in clusters}


def cluster_names(
    template: Mapping[str, Any],
    parameters: Mapping[str, str] | None = None,
    pseudo: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Cluster logical id -> ``ClusterName`` where the template (parameters resolved) holds a
    plain name: the name ``DescribeCluster`` takes."""
    resolved = evaluate(template, parameters, pseudo)
    names: dict[str, str] = {}
    for logical_id, resource in _clusters(resolved).items():
        name = _mapping(resource.get("Properties")).get("ClusterName")
        if isinstance(name, str) and name:
            names[logical_id] = name
    return names


__all__: Sequence[str] = (
    "EXIT_DISRUPTIVE",
    "EXIT_ERROR",
    "EXIT_OK",
    "BaselineError",
    "Change",
    "ClusterChange",
    "ClusterPlan",
    "GatePlan",
    "GateWait",
    "GroupChange",
    "GroupPlan",
    "StackPlan",
    "check_baseline",
    "check_groups",
    "cluster_names",
    "overlap",
    "plan_stack",
    "shares_cluster",
)

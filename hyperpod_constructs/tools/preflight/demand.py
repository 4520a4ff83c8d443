"""What an app asks for: per gated cluster, each instance group's types, count, minimum and
training plan (pure, from a parsed template), and every gated cluster of a ``cdk.out`` folder.

A group's *need* is what the cluster must hold for the gate to open: a gated group's minimum,
and every other group's whole ``InstanceCount`` (HyperPod launches those too, from the same
quotas, and nothing gives the gated group the first share).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from .._assembly.files import find_templates
from .._assembly.stacks import each_stack, stack_identity
from ..watch.target import Count, WatchTarget, targets_from_template


@dataclass(frozen=True)
class GroupDemand:
    """One instance group of a gated cluster, as the template asks for it."""

    name: str
    instance_types: tuple[str, ...]
    """Every type the group may launch, in priority order (one unless the group is flexible);
    empty when the template holds an expression."""
    count: Count
    """``InstanceCount``: a number, or the expression (or parameter name) the template holds."""
    minimum: Count | None = None
    """What the gate waits for (its ``MinCount``); None: the group is not gated."""
    training_plan: str | None = None
    """``TrainingPlanArn`` (a plain ARN); None without a plan."""
    plan_expression: bool = False
    """True when ``TrainingPlanArn`` is an expression, not an ARN (the plan cannot be read)."""

    @property
    def gated(self) -> bool:
        return self.minimum is not None

    @property
    def need(self) -> int | None:
        """The instances the cluster needs of this group for the gate to open; None when the
        number is an expression not resolved."""
        value = self.minimum if self.gated else self.count
        return value if isinstance(value, int) else None


@dataclass(frozen=True)
class ClusterDemand:
    """One gated cluster of one stack."""

    stack_name: str
    display_name: str
    region: str | None
    logical_id: str
    name: str | None
    """``ClusterName`` when the template holds a plain string, else the deployed cluster's name
    when it was read; None for a cluster not deployed yet under a generated name."""
    groups: tuple[GroupDemand, ...]
    name_problem: str | None = None
    """Why the deployed cluster's name could not be read (its own use cannot be told apart)."""

    @property
    def label(self) -> str:
        return f"{self.name or self.logical_id} (stack {self.display_name})"

    @property
    def gated(self) -> tuple[GroupDemand, ...]:
        return tuple(g for g in self.groups if g.gated)


def _mapping(value: object) -> Mapping[str, object]:
    return value if isinstance(value, Mapping) else {}


def _count(value: object, parameters: Mapping[str, str]) -> Count:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    reference = _mapping(value).get("Ref")
    if isinstance(reference, str):
        given = parameters.get(reference, "").strip()
        return int(given) if given.isdigit() else reference
    return str(value)


def _types(group: Mapping[str, object]) -> tuple[str, ...]:
    flexible = _mapping(group.get("InstanceRequirements")).get("InstanceTypes")
    if isinstance(flexible, list):
        return tuple(t for t in flexible if isinstance(t, str))
    single = group.get("InstanceType")
    return (single,) if isinstance(single, str) else ()


def _groups(
    template: Mapping[str, object], target: WatchTarget, parameters: Mapping[str, str]
) -> tuple[GroupDemand, ...]:
    resource = _mapping(_mapping(template.get("Resources")).get(target.cluster_logical_id))
    minimums = {g.name: g.min_count for g in target.resolved(parameters).groups}
    groups: list[GroupDemand] = []
    listed = _mapping(resource.get("Properties")).get("InstanceGroups")
    for raw in listed if isinstance(listed, list) else ():
        group = _mapping(raw)
        name = group.get("InstanceGroupName")
        if not isinstance(name, str):
            continue
        plan = group.get("TrainingPlanArn")
        groups.append(
            GroupDemand(
                name=name,
                instance_types=_types(group),
                count=_count(group.get("InstanceCount"), parameters),
                minimum=minimums.get(name),
                training_plan=plan if isinstance(plan, str) and plan else None,
                plan_expression=plan is not None and not isinstance(plan, str),
            )
        )
    return tuple(groups)


def demands_from_template(
    template: object,
    *,
    stack_name: str,
    display_name: str,
    region: str | None = None,
    parameters: Mapping[str, str] | None = None,
) -> list[ClusterDemand]:
    """Every gated cluster of one parsed template, with what each group asks for; counts that
    name a stack parameter take its value from ``parameters`` where given.

    Raises :class:`~hyperpod_constructs.tools.summary.TemplateError` when ``template`` is not a
    template."""
    values = dict(parameters or {})
    targets = targets_from_template(
        template, stack_name=stack_name, display_name=display_name, region=region
    )
    assert isinstance(template, Mapping)  # targets_from_template raised otherwise
    return [
        ClusterDemand(
            stack_name=t.stack_name,
            display_name=t.display_name,
            region=t.region,
            logical_id=t.cluster_logical_id,
            name=t.cluster_name,
            groups=_groups(template, t, values),
        )
        for t in targets
    ]


def load_demands(directory: str | Path) -> list[ClusterDemand]:
    """Every gated cluster of the cloud assembly in ``directory`` (manifest order).

    Raises :class:`~hyperpod_constructs.tools.summary.AssemblyError` when the folder, a
    manifest or a template cannot be read."""
    return each_stack(
        directory, lambda stack: demands_from_template(stack.template, **stack.identity)
    )


def stack_names(directory: str | Path) -> set[str]:
    """The names of the assembly's stacks: CloudFormation's and ``cdk``'s path, each.

    Raises :class:`~hyperpod_constructs.tools.summary.AssemblyError`."""
    names: set[str] = set()
    for stack in find_templates(directory):
        names |= {stack.stack, stack_identity(stack, Path(directory))[0]}
    return names


def select(demands: Sequence[ClusterDemand], stack: str | None) -> list[ClusterDemand]:
    """The clusters of ``stack`` (its CloudFormation name or its ``Stage/Stack`` path); all
    with None."""
    if stack is None:
        return list(demands)
    return [d for d in demands if stack in (d.stack_name, d.display_name)]


def named(demand: ClusterDemand, name: str | None, problem: str | None = None) -> ClusterDemand:
    """``demand`` with the deployed cluster's name (or why it could not be read)."""
    return replace(demand, name=name, name_problem=problem)

"""What to watch: a gated cluster, its gated groups and minimums, and the gate's wait condition.

:func:`targets_from_template` is pure (one parsed template -> targets); :func:`load_targets`
reads a ``cdk.out`` folder with the tools' one reader of a cloud assembly; :func:`select_target`
picks the one target named by ``--stack`` / ``--cluster``. Standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ..._runtime.hyperpod_gate.contract import Prop
from .._assembly.stacks import each_stack
from .._assembly.types import WAIT_CONDITION_TYPE
from ..summary.model import ClusterSummary, summarize_template


class TargetError(Exception):
    """Nothing (or more than one thing) to watch; ``str()`` is a one-line message."""


Count = int | str
"""A count the template requests: a number, or the name of the stack parameter that gives it
(``{"Ref": "GpuCount"}``), whose value the deployed stack knows."""


@dataclass(frozen=True)
class GatedGroup:
    """One instance group the gate waits for, with the values the template requests."""

    name: str
    min_count: Count
    target_count: Count

    def resolved(self, parameters: Mapping[str, str]) -> GatedGroup:
        """The group with every count that names a parameter replaced by the parameter's
        integer value, where ``parameters`` has one (pure)."""
        return GatedGroup(
            self.name,
            _parameter_value(self.min_count, parameters),
            _parameter_value(self.target_count, parameters),
        )

    @property
    def parameters(self) -> tuple[str, ...]:
        """The stack parameters whose values the counts still need."""
        return tuple(c for c in (self.min_count, self.target_count) if isinstance(c, str))


def _parameter_value(count: Count, parameters: Mapping[str, str]) -> Count:
    if isinstance(count, int):
        return count
    value = parameters.get(count, "").strip()
    return int(value) if value.isdigit() else count


@dataclass(frozen=True)
class WatchTarget:
    """One gated cluster of one stack."""

    stack_name: str
    """The CloudFormation stack name (the manifest's ``stackName``, else the artifact id)."""
    display_name: str
    """``Stage/Stack`` as ``cdk`` shows it."""
    region: str | None
    """The stack's region when the app pins one (``env=``), else None."""
    cluster_logical_id: str
    cluster_name: str | None
    """``ClusterName`` when the template holds a plain string; None when CloudFormation generates
    the name or the template holds an expression (the physical id is read from the stack)."""
    groups: tuple[GatedGroup, ...]
    wait_condition_id: str | None
    """Logical id of the gate's ``AWS::CloudFormation::WaitCondition`` (None if not found)."""
    problem: str | None = None
    """Why this cluster cannot be watched (e.g. a minimum that is an unresolved expression)."""

    def resolved(self, parameters: Mapping[str, str]) -> WatchTarget:
        """The target with the counts that name stack parameters replaced by their values
        (the deployed stack's ``Parameters``), where known (pure)."""
        return replace(self, groups=tuple(g.resolved(parameters) for g in self.groups))

    @property
    def parameters(self) -> tuple[str, ...]:
        """The stack parameters whose values the gated counts still need."""
        return tuple(dict.fromkeys(p for g in self.groups for p in g.parameters))

    @property
    def label(self) -> str:
        """``cluster (stack)`` for messages."""
        return f"{self.cluster_name or self.cluster_logical_id} (stack {self.display_name})"


def _mapping(value: object) -> Mapping[str, object]:
    return value if isinstance(value, Mapping) else {}


def _resource_properties(template: Mapping[str, object], logical_id: str) -> Mapping[str, object]:
    return _mapping(_mapping(_mapping(template.get("Resources")).get(logical_id)).get("Properties"))


def wait_condition_of(template: Mapping[str, object], logical_id: object) -> str | None:
    """``logical_id`` if the template has such a wait condition (the arm resource's
    ``WaitConditionLogicalId``), else ``None``."""
    resource = _mapping(_mapping(template.get("Resources")).get(str(logical_id)))
    return str(logical_id) if resource.get("Type") == WAIT_CONDITION_TYPE else None


def _target(
    cluster: ClusterSummary,
    template: Mapping[str, object],
    *,
    stack_name: str,
    region: str | None,
) -> WatchTarget | None:
    gate = cluster.gate
    if gate is None or not gate.requirements:
        return None
    groups: list[GatedGroup] = []
    problems: list[str] = []
    declared = _mapping(template.get("Parameters"))
    for requirement in gate.requirements:
        raw_min, raw_target = _gate_counts(template, gate.logical_id, requirement.group)
        minimum, target = requirement.min_count, requirement.target_count
        if not isinstance(minimum, int):
            minimum = _parameter_name(raw_min, declared)
        if not isinstance(target, int):
            target = _parameter_name(raw_target, declared)
        if minimum is not None and target is not None:
            groups.append(GatedGroup(requirement.group, minimum, target))
        else:
            problems.append(
                f"group {requirement.group}: minimum {requirement.min_count} / target "
                f"{requirement.target_count} is neither a number nor a stack parameter in the "
                "template"
            )
    raw_name = _resource_properties(template, cluster.logical_id).get("ClusterName")
    condition = _resource_properties(template, gate.logical_id).get(Prop.WAIT_CONDITION_LOGICAL_ID)
    return WatchTarget(
        stack_name=stack_name,
        display_name=cluster.stack,
        region=region,
        cluster_logical_id=cluster.logical_id,
        cluster_name=raw_name if isinstance(raw_name, str) and raw_name else None,
        groups=tuple(groups),
        wait_condition_id=wait_condition_of(template, condition),
        problem="; ".join(problems) or None,
    )


def _gate_counts(template: Mapping[str, object], gate_id: str, group: str) -> tuple[object, object]:
    """(MinCount, TargetCount) of ``group`` as the gate's properties write them."""
    for item in _items(_resource_properties(template, gate_id).get(Prop.REQUIREMENTS)):
        item = _mapping(item)
        if item.get(Prop.GROUP_NAME) == group:
            return item.get(Prop.MIN_COUNT), item.get(Prop.TARGET_COUNT)
    return None, None


def _items(value: object) -> Sequence[object]:
    return value if isinstance(value, list) else ()


def _parameter_name(value: object, declared: Mapping[str, object]) -> str | None:
    """The name of a parameter the template declares, for ``{"Ref": name}``; else None.
    (Numbers are read by the summary model, which :func:`_target` starts from.)"""
    reference = _mapping(value).get("Ref")
    if isinstance(reference, str) and reference in declared and len(_mapping(value)) == 1:
        return reference
    return None


def targets_from_template(
    template: object,
    *,
    stack_name: str,
    display_name: str,
    region: str | None = None,
    template_file: str = "",
) -> list[WatchTarget]:
    """Every gated cluster of one parsed template (clusters without a gate are left out).

    Raises :class:`~hyperpod_constructs.tools.summary.TemplateError` when ``template`` is not a
    template."""
    clusters = summarize_template(template, stack=display_name, template_file=template_file)
    assert isinstance(template, Mapping)  # summarize_template raised otherwise
    found = (_target(c, template, stack_name=stack_name, region=region) for c in clusters)
    return [target for target in found if target is not None]


def load_targets(directory: str | Path) -> list[WatchTarget]:
    """Every gated cluster of the cloud assembly in ``directory`` (manifest order).

    Raises :class:`~hyperpod_constructs.tools.summary.AssemblyError` (one line naming the file) when
    the folder, a manifest or a template cannot be read."""
    return each_stack(
        directory,
        lambda stack: targets_from_template(
            stack.template, **stack.identity, template_file=stack.file.relative_path
        ),
    )


def _choices(targets: Sequence[WatchTarget]) -> str:
    return ", ".join(
        f"--stack {t.stack_name}" + (f" / --cluster {t.cluster_name}" if t.cluster_name else "")
        for t in targets
    )


def select_target(
    targets: Sequence[WatchTarget],
    *,
    stack: str | None,
    cluster: str | None,
    source: str,
) -> WatchTarget:
    """The one target that ``--stack`` and ``--cluster`` name (either may be None; with neither,
    the only gated cluster of ``source``). Raises :class:`TargetError`."""
    picked = [
        t
        for t in targets
        if (stack is None or stack in (t.stack_name, t.display_name))
        and (cluster is None or cluster == t.cluster_name)
    ]
    wanted = " and ".join(
        part
        for part in (
            f"stack {stack}" if stack is not None else "",
            f"cluster {cluster}" if cluster is not None else "",
        )
        if part
    )
    if not picked:
        if not targets:
            raise TargetError(f"no cluster with a MinCount gate in {source}: nothing to watch")
        raise TargetError(
            f"no gated cluster matches {wanted} in {source}; gated clusters: {_choices(targets)}"
        )
    if len(picked) > 1:
        raise TargetError(
            f"{len(picked)} gated clusters in {source}"
            + (f" match {wanted}" if wanted else "")
            + f"; choose one with {_choices(picked)}"
        )
    target = picked[0]
    if target.problem is not None:
        raise TargetError(f"cannot watch {target.label}: {target.problem}")
    return target

"""What to watch: a gated cluster, its gated groups and minimums, and the gate's wait condition.

:func:`targets_from_template` is pure (one parsed template -> targets); :func:`load_targets`
reads a ``cdk.out`` folder with the ``summary`` package's reader; :func:`select_target` picks the
one target named by ``--stack`` / ``--cluster``. Standard library only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..summary import AssemblyError, StackTemplate, find_templates, summarize_template
from ..summary.model import WAIT_CONDITION_TYPE, ClusterSummary


class TargetError(Exception):
    """Nothing (or more than one thing) to watch; ``str()`` is a one-line message."""


@dataclass(frozen=True)
class GatedGroup:
    """One instance group the gate waits for, with the values the template requests."""

    name: str
    min_count: int
    target_count: int


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

    @property
    def label(self) -> str:
        """``cluster (stack)`` for messages."""
        return f"{self.cluster_name or self.cluster_logical_id} (stack {self.display_name})"


def _mapping(value: object) -> Mapping[str, object]:
    return value if isinstance(value, Mapping) else {}


def _resource_properties(template: Mapping[str, object], logical_id: str) -> Mapping[str, object]:
    return _mapping(_mapping(_mapping(template.get("Resources")).get(logical_id)).get("Properties"))


def wait_condition_of(template: Mapping[str, object], handle_id: object) -> str | None:
    """Logical id of the wait condition whose ``Handle`` is ``{"Ref": handle_id}``."""
    for logical_id, resource in _mapping(template.get("Resources")).items():
        resource = _mapping(resource)
        if resource.get("Type") != WAIT_CONDITION_TYPE:
            continue
        handle = _mapping(_mapping(resource.get("Properties")).get("Handle"))
        if handle.get("Ref") == handle_id:
            return str(logical_id)
    return None


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
    for requirement in gate.requirements:
        minimum, target = requirement.min_count, requirement.target_count
        if isinstance(minimum, int) and isinstance(target, int):
            groups.append(GatedGroup(requirement.group, minimum, target))
        else:
            problems.append(
                f"group {requirement.group}: minimum {minimum} / target {target} is not a number "
                "in the template"
            )
    raw_name = _resource_properties(template, cluster.logical_id).get("ClusterName")
    handle = _resource_properties(template, gate.logical_id).get("WaitHandleLogicalId")
    return WatchTarget(
        stack_name=stack_name,
        display_name=cluster.stack,
        region=region,
        cluster_logical_id=cluster.logical_id,
        cluster_name=raw_name if isinstance(raw_name, str) and raw_name else None,
        groups=tuple(groups),
        wait_condition_id=wait_condition_of(template, handle),
        problem="; ".join(problems) or None,
    )


def targets_from_template(
    template: object,
    *,
    stack_name: str,
    display_name: str,
    region: str | None = None,
    template_file: str = "",
) -> list[WatchTarget]:
    """Every gated cluster of one parsed template (clusters without a gate are left out).

    Raises :class:`~hyperpod_constructs.summary.TemplateError` when ``template`` is not a
    template."""
    clusters = summarize_template(template, stack=display_name, template_file=template_file)
    assert isinstance(template, Mapping)  # summarize_template raised otherwise
    found = (_target(c, template, stack_name=stack_name, region=region) for c in clusters)
    return [target for target in found if target is not None]


def _region(environment: object) -> str | None:
    """``aws://123456789012/eu-west-1`` -> ``eu-west-1``; environment-agnostic -> None."""
    if not isinstance(environment, str) or not environment.startswith("aws://"):
        return None
    region = environment.rsplit("/", 1)[-1]
    return None if region in ("", "unknown-region") else region


def _stack_identity(stack: StackTemplate) -> tuple[str, str | None]:
    """(CloudFormation stack name, region) of a template, from the manifest that lists it."""
    manifest_path = stack.path.parent / "manifest.json"
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return stack.stack, None
    for artifact_id, artifact in _mapping(_mapping(manifest).get("artifacts")).items():
        artifact = _mapping(artifact)
        properties = _mapping(artifact.get("properties"))
        if properties.get("templateFile") == stack.path.name:
            name = properties.get("stackName")
            return (
                name if isinstance(name, str) and name else str(artifact_id),
                _region(artifact.get("environment")),
            )
    return stack.stack, None


def load_targets(directory: str | Path) -> list[WatchTarget]:
    """Every gated cluster of the cloud assembly in ``directory`` (manifest order).

    Raises :class:`~hyperpod_constructs.summary.AssemblyError` (one line naming the file) when
    the folder, a manifest or a template cannot be read."""
    targets: list[WatchTarget] = []
    for stack in find_templates(directory):
        try:
            template = json.loads(stack.path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise AssemblyError(f"cannot read template {stack.path}: {error}") from None
        stack_name, region = _stack_identity(stack)
        try:
            targets += targets_from_template(
                template,
                stack_name=stack_name,
                display_name=stack.stack,
                region=region,
                template_file=stack.relative_path,
            )
        except ValueError as error:  # TemplateError
            raise AssemblyError(f"cannot read template {stack.path}: {error}") from None
    return targets


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

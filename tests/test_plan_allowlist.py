"""``plan``'s table is an allow-list (issue 35): every property path of the
``AWS::SageMaker::Cluster`` resource schema, at any depth, read from cfn-lint's bundled schema
when the test runs (so a path the schema adds later is covered without anyone listing it), is
changed in a synthesized template, and the plan exits 3 unless the path's row (its own or its
nearest enclosing one) says the change is applied in place, to new nodes only or by a software
update."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

from hyperpod_constructs.tools.plan import plan_stack, rule_for
from hyperpod_constructs.tools.plan.semantics import SAFE, Effect
from tests.support.plan_pairs import PlanPairs, plan_pairs
from tests.test_plan_semantics import _properties, _resolved, schema

__all__ = ["plan_pairs"]

STRUCTURE = ("/properties/InstanceGroups", "/properties/InstanceGroups/*")
"""The group list itself: a string there is malformed input (exit 2), not a change."""


def _walk(node: dict[str, Any], pointer: str, depth: int = 0) -> Iterator[str]:
    yield pointer
    node = _resolved(node)
    if depth > 12:
        return
    if "items" in node:
        yield from _walk(node["items"], f"{pointer}/*", depth + 1)
    for name, child in _properties(node).items():
        yield from _walk(child, f"{pointer}/{name}", depth + 1)


def schema_paths() -> list[str]:
    """Every property path of the schema that a template sets (read-only ones aside)."""
    read_only = tuple(schema()["readOnlyProperties"])
    paths = {
        path
        for name, node in schema()["properties"].items()
        for path in _walk(node, f"/properties/{name}")
    }
    return sorted(
        p
        for p in paths
        if p not in STRUCTURE and not any(p == r or p.startswith(r + "/") for r in read_only)
    )


def _cluster(template: dict[str, Any]) -> dict[str, Any]:
    (resource,) = [
        r for r in template["Resources"].values() if r["Type"] == "AWS::SageMaker::Cluster"
    ]
    return resource["Properties"]  # type: ignore[no-any-return]


def with_value(template: dict[str, Any], pointer: str, value: Any) -> dict[str, Any]:
    """A copy of ``template`` whose cluster has ``value`` at ``pointer`` (``*`` of the groups:
    the ``gpu`` group; of another list: its one item), objects made on the way."""
    copied = copy.deepcopy(template)
    node: Any = _cluster(copied)
    parts = pointer.removeprefix("/properties/").split("/")
    for index, part in enumerate(parts[:-1]):
        following = parts[index + 1]
        if part == "*":
            continue
        if following == "*":
            if index == 0 and part == "InstanceGroups":
                node = next(g for g in node[part] if g["InstanceGroupName"] == "gpu")
                continue
            child: Any = {} if index + 2 < len(parts) else None
            if index + 2 < len(parts):
                node[part] = [child]
                node = child
            else:
                node[part] = [value]
                return copied
            continue
        existing = node.get(part)
        if not isinstance(existing, dict):
            node[part] = existing = {}
        node = existing
    node[parts[-1]] = value
    return copied


PATHS = schema_paths()


def test_the_walk_reaches_deep_paths_and_every_row() -> None:
    assert "/properties/RestrictedInstanceGroups/*/InstanceType" in PATHS
    assert "/properties/InstanceGroups/*/LifeCycleConfig/SourceS3Uri" in PATHS
    assert len(PATHS) > 100


@pytest.mark.deep(sample=40)
@pytest.mark.parametrize("pointer", PATHS)
@pytest.mark.parametrize("how", ["changed", "added"])
def test_a_change_at_any_schema_path_exits_3_unless_its_row_allows_it(
    plan_pairs: PlanPairs, pointer: str, how: str
) -> None:
    base = plan_pairs.templates["base"]
    old = with_value(base, pointer, "probe-a") if how == "changed" else base
    new = with_value(base, pointer, "probe-b")
    result = plan_stack(old, new, stack="Probe", baseline="probe")
    effect = rule_for(pointer).effect
    expected = 0 if effect in SAFE else 3
    assert result.exit_code == expected, (pointer, effect, result.headlines())
    if effect is Effect.UNKNOWN:
        shown = " ".join(result.headlines())
        name = next(part for part in reversed(pointer.split("/")) if part != "*")
        assert "cannot tell" in shown and (name in shown or "RestrictedInstanceGroups" in shown)

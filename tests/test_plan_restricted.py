"""``RestrictedInstanceGroups`` planned group by group, by the instance groups' rows where the
API says they behave alike (a group by its name, ``InstanceCount`` scales): scale-in, removal
and rename terminate nodes; a new instance type, which no AWS guide settles for a restricted
group, is "cannot tell"; a group without a member ``UpdateCluster`` requires is compared as a
whole ("cannot tell")."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from hyperpod_constructs.tools.plan.model import GroupChange, GroupPlan, StackPlan, plan_stack
from tests.support.plan_pairs import PlanPairs, plan_pairs

__all__ = ["plan_pairs"]

NOVA = {
    "InstanceGroupName": "nova",
    "InstanceCount": 4,
    "InstanceType": "ml.p5.48xlarge",
    "ExecutionRole": "arn:aws:iam::123456789012:role/nova",
}


def with_restricted(template: dict[str, Any], *groups: dict[str, Any]) -> dict[str, Any]:
    copied = copy.deepcopy(template)
    (cluster,) = [r for r in copied["Resources"].values() if r["Type"] == "AWS::SageMaker::Cluster"]
    if groups:
        cluster["Properties"]["RestrictedInstanceGroups"] = [dict(g) for g in groups]
    return copied


def planned(
    plan_pairs: PlanPairs, *groups: dict[str, Any]
) -> tuple[StackPlan, dict[str, GroupPlan]]:
    base = plan_pairs.templates["base"]
    result = plan_stack(
        with_restricted(base, NOVA), with_restricted(base, *groups), stack="S", baseline="b"
    )
    (cluster,) = result.clusters
    return result, {g.name: g for g in cluster.groups}


def test_unchanged_restricted_groups_exit_0(plan_pairs: PlanPairs) -> None:
    result, groups = planned(plan_pairs, NOVA)
    assert result.exit_code == 0 and groups["nova"].change is GroupChange.UNCHANGED


def test_a_scale_in_terminates_nodes(plan_pairs: PlanPairs) -> None:
    result, groups = planned(plan_pairs, {**NOVA, "InstanceCount": 2})
    assert result.exit_code == 3
    assert (groups["nova"].change, groups["nova"].nodes_terminated) == (GroupChange.SCALE_IN, 2)


def test_a_scale_out_adds_nodes_as_for_an_instance_group(plan_pairs: PlanPairs) -> None:
    result, groups = planned(plan_pairs, {**NOVA, "InstanceCount": 6})
    assert result.exit_code == 0 and groups["nova"].change is GroupChange.SCALE_OUT


@pytest.mark.parametrize("removed", ["left out", "list removed"])
def test_a_removed_group_terminates_its_nodes(plan_pairs: PlanPairs, removed: str) -> None:
    others = (dict(NOVA, InstanceGroupName="other"),) if removed == "left out" else ()
    result, groups = planned(plan_pairs, *others)
    assert result.exit_code == 3
    assert (groups["nova"].change, groups["nova"].nodes_terminated) == (GroupChange.REMOVED, 4)


def test_a_rename_is_a_removal_plus_an_addition(plan_pairs: PlanPairs) -> None:
    result, groups = planned(plan_pairs, {**NOVA, "InstanceGroupName": "nova-b"})
    assert result.exit_code == 3
    assert groups["nova"].nodes_terminated == 4 and "nova-b" in groups


def test_a_new_instance_type_is_cannot_tell_with_its_reason(plan_pairs: PlanPairs) -> None:
    result, groups = planned(plan_pairs, {**NOVA, "InstanceType": "ml.p5en.48xlarge"})
    assert result.exit_code == 3 and groups["nova"].change is GroupChange.UNKNOWN
    assert any("restricted group" in note for note in groups["nova"].notes)


def test_a_group_missing_a_required_member_is_compared_as_a_whole(plan_pairs: PlanPairs) -> None:
    partial = {k: v for k, v in NOVA.items() if k != "ExecutionRole"}
    result, groups = planned(plan_pairs, {**partial, "InstanceCount": 6})
    assert result.exit_code == 3 and "nova" not in groups
    assert any("RestrictedInstanceGroups" in line for line in result.headlines())

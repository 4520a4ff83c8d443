"""``plan`` safe by construction (issue 35), one test per class of wrong verdict the issue
lists: each pair is a synthesized template (tests/support/plan_pairs.py) and a mechanical edit
of it, the way a user's pull request changes an app."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from hyperpod_constructs.plan import BaselineError, ClusterChange, check_baseline, plan_stack
from tests.support.plan_pairs import PlanPairs, plan_pairs, with_cdk_paths

__all__ = ["plan_pairs"]

Template = dict[str, Any]


def cluster_id(template: Template) -> str:
    (found,) = [
        str(k) for k, r in template["Resources"].items() if r["Type"] == "AWS::SageMaker::Cluster"
    ]
    return found


def exit_code(old: Template, new: Template, **kwargs: Any) -> int:
    """plan's exit code for the pair (2: refused as input), as the command decides it."""
    try:
        check_baseline(old, new, stack_path=kwargs.pop("stack_path", None))
        return plan_stack(old, new, stack="Probe", baseline="probe", **kwargs).exit_code
    except BaselineError:
        return 2


# -- 1. a cluster that leaves the stack ---------------------------------------------------------


def test_a_removed_cluster_is_planned_exit_3_not_refused_as_another_stacks(
    plan_pairs: PlanPairs,
) -> None:
    base, gone = plan_pairs.templates["base"], plan_pairs.templates["no-cluster"]
    check_baseline(base, gone)  # missing resources are no evidence of another stack
    assert exit_code(base, gone) == 3
    (cluster,) = plan_stack(base, gone, stack="P", baseline="b").clusters
    assert cluster.change is ClusterChange.REMOVED and "every node terminated" in cluster.notes[0]


def test_a_retained_cluster_removed_from_the_stack_is_named_as_left_running(
    plan_pairs: PlanPairs,
) -> None:
    base, gone = plan_pairs.templates["retained"], plan_pairs.templates["no-cluster"]
    result = plan_stack(base, gone, stack="P", baseline="b")
    (cluster,) = result.clusters
    assert result.exit_code == 3 and cluster.retained
    assert "left running outside the stack" in cluster.notes[0]
    assert "left running outside the stack" in result.headlines()[0]


def test_a_cluster_moved_into_a_nested_stack_is_a_new_cluster_exit_3(
    plan_pairs: PlanPairs,
) -> None:
    base = plan_pairs.templates["base"]
    moved = copy.deepcopy(plan_pairs.templates["no-cluster"])
    moved["Resources"]["TrainingNestedStack"] = {
        "Type": "AWS::CloudFormation::Stack",
        "Properties": {"TemplateURL": "https://example.com/nested.template.json"},
    }
    result = plan_stack(base, moved, stack="P", baseline="b")
    assert result.exit_code == 3
    assert "nested stack TrainingNestedStack" in result.clusters[0].notes[0]


def test_another_stack_is_refused_only_on_the_evidence_of_its_cdk_path(
    plan_pairs: PlanPairs,
) -> None:
    base = with_cdk_paths(plan_pairs.templates["base"], "PlanBase")
    other = plan_pairs.templates["scale-in"]
    with pytest.raises(BaselineError) as raised:
        check_baseline(base, other, stack_path="Elsewhere")
    assert raised.value.code == "other-stack" and "PlanBase/" in str(raised.value)
    check_baseline(base, other, stack_path="PlanBase")

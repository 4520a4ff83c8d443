"""``plan`` on update pairs synthesized by the library (tests/support/plan_pairs.py): every kind
of change classified in HyperPod's terms, the gate's statement, parameters and live counts,
hostile baselines with named errors, and the exit codes of the real command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hyperpod_constructs.tools.plan import (
    BaselineError,
    ClusterChange,
    Effect,
    GroupChange,
    StackPlan,
    check_baseline,
    plan_stack,
    render_text,
    to_json,
)
from tests.support.gate_defaults import human, timeout_seconds
from tests.support.plan_pairs import PlanPairs, plan_pairs, stack_name, with_cdk_paths

__all__ = ["plan_pairs"]

ROOT = Path(__file__).resolve().parent.parent
CLUSTER = "plan-train"


def plan(pairs: PlanPairs, new: str, old: str = "base", **kwargs: Any) -> StackPlan:
    return plan_stack(pairs.templates[old], pairs.templates[new], stack=new, baseline=old, **kwargs)


def group(result: StackPlan, name: str) -> Any:
    (cluster,) = result.clusters
    (found,) = [g for g in cluster.groups if g.name == name]
    return found


def effects(result: StackPlan, name: str) -> dict[str, tuple[Effect, str | None, str | None]]:
    return {c.path: (c.effect, c.old, c.new) for c in group(result, name).changes}


# -- every kind of change ---------------------------------------------------------------------


def test_no_change_is_exit_0_and_says_so(plan_pairs: PlanPairs) -> None:
    result = plan(plan_pairs, "base")
    assert result.exit_code == 0
    (cluster,) = result.clusters
    assert cluster.change is ClusterChange.UNCHANGED
    assert all(
        g.change is GroupChange.UNCHANGED and g.nodes_terminated == 0 for g in cluster.groups
    )
    assert not cluster.gate.waits and "unchanged" in cluster.gate.reason
    assert "nothing refused" in render_text(result)


def test_scale_out_adds_nodes_and_the_gate_rearms_but_waits_for_no_group(
    plan_pairs: PlanPairs,
) -> None:
    result = plan(plan_pairs, "scale-out")
    gpu = group(result, "gpu")
    assert result.exit_code == 0
    assert gpu.change is GroupChange.SCALE_OUT
    assert (gpu.old_count, gpu.new_count, gpu.old_min, gpu.new_min) == (4, 8, 4, 4)
    assert gpu.nodes_terminated == 0
    assert "scale out 4 -> 8 nodes" in gpu.notes[0]
    gate = result.clusters[0].gate
    # The target is a gated value: the gate's fingerprint changes, so its arm runs again; but
    # by the arm's own update_scope, HyperPod holds back no group whose minimum stays (issue 35).
    assert not gate.waits and gate.waits_for == ()
    assert "re-arms and waits for no group; not for gpu (minimum unchanged: 4)" in gate.reason
    assert not any("the gate waits" in n for n in gpu.notes)


def test_raised_minimum_holds_the_group_for_hyperpods_window_and_the_gate_waits(
    plan_pairs: PlanPairs,
) -> None:
    result = plan(plan_pairs, "scale-out-gated")
    gpu = group(result, "gpu")
    assert result.exit_code == 0 and gpu.change is GroupChange.SCALE_OUT
    minimum = next(n for n in gpu.notes if n.startswith("minimum 4 -> 8"))
    assert "Updating until 8 nodes are in service" in minimum and "3 h" in minimum
    gate = result.clusters[0].gate
    assert gate.waits and "re-arms" in gate.reason and "gpu has 8 of 8" in gate.reason
    assert f"gives up after {human(timeout_seconds())}" in gate.reason
    assert gate.timeout_seconds == timeout_seconds()


def test_scale_in_terminates_nodes_first_in_the_text_and_exits_3(plan_pairs: PlanPairs) -> None:
    result = plan(plan_pairs, "scale-in")
    gpu = group(result, "gpu")
    assert result.exit_code == 3
    assert gpu.change is GroupChange.SCALE_IN and gpu.nodes_terminated == 2
    text = render_text(result)
    first = text.splitlines()[3]
    assert first.startswith("  ! plan-train / gpu: scale in 4 -> 2 nodes: 2 nodes terminated")
    assert text.rstrip().endswith("review before deploying (see the items marked !)")


def test_live_counts_count_the_nodes_that_run(plan_pairs: PlanPairs) -> None:
    (cluster_id,) = [c.logical_id for c in plan(plan_pairs, "base").clusters]
    result = plan(plan_pairs, "scale-in", live={cluster_id: {"gpu": 3}})
    gpu = group(result, "gpu")
    assert gpu.live_count == 3 and gpu.nodes_terminated == 1
    assert "from 3, in service now" in gpu.notes[0]
    assert result.live_counts


def test_group_added_with_a_minimum_is_waited_for(plan_pairs: PlanPairs) -> None:
    result = plan(plan_pairs, "group-added-gated")
    gpu2 = group(result, "gpu2")
    assert result.exit_code == 0
    assert gpu2.change is GroupChange.ADDED and gpu2.gated
    assert gpu2.notes[0] == "group added: 2 nodes, minimum 2"
    assert "rolls it back to 0 nodes" in gpu2.notes[1]
    assert "the gate waits for its minimum" in gpu2.notes[2]
    assert {w.group for w in result.clusters[0].gate.waits_for} == {"gpu2"}
    assert result.clusters[0].gate.waits


def test_group_added_without_a_minimum_does_not_make_the_gate_wait(plan_pairs: PlanPairs) -> None:
    result = plan(plan_pairs, "group-added-ungated")
    gpu2 = group(result, "gpu2")
    assert gpu2.change is GroupChange.ADDED and not gpu2.gated
    assert "join Slurm as they come up" in gpu2.notes[1]
    assert not result.clusters[0].gate.waits


def test_a_rename_is_a_removal_plus_an_addition(plan_pairs: PlanPairs) -> None:
    result = plan(plan_pairs, "renamed")
    old, new = group(result, "gpu"), group(result, "gpu-b")
    assert result.exit_code == 3
    assert (old.change, old.nodes_terminated, old.renamed_to) == (GroupChange.REMOVED, 4, "gpu-b")
    assert (new.change, new.renamed_from) == (GroupChange.ADDED, "gpu")
    assert "a rename is a removal plus an addition" in old.notes[0]
    assert result.headlines() == [
        "plan-train / gpu: group removed: up to 4 nodes terminated (its target) (renamed to "
        "gpu-b: a rename is a removal plus an addition)"
    ]
    document = to_json(result)
    groups = {g["name"]: g for g in document["clusters"][0]["groups"]}
    assert groups["gpu"]["change"] == "removed" and groups["gpu"]["nodes_terminated"] == 4


def test_a_removed_group_terminates_its_nodes(plan_pairs: PlanPairs) -> None:
    result = plan(plan_pairs, "base", old="group-added-ungated")
    gpu2 = group(result, "gpu2")
    assert (gpu2.change, gpu2.nodes_terminated, gpu2.renamed_to) == (GroupChange.REMOVED, 2, None)
    assert result.exit_code == 3


def test_a_create_only_property_replaces_the_cluster_and_terminates_every_node(
    plan_pairs: PlanPairs,
) -> None:
    result = plan(plan_pairs, "cluster-renamed")
    (cluster,) = result.clusters
    assert result.exit_code == 3
    assert cluster.change is ClusterChange.REPLACED and cluster.replaced
    assert [(c.path, c.old, c.new) for c in cluster.replaced_by] == [
        ("ClusterName", "plan-train", "plan-train-b")
    ]
    assert cluster.replaced_by[0].rule.source == "schema createOnlyProperties"
    assert cluster.nodes_terminated == 6 and not cluster.retained
    assert "every node of the old one terminated (6 nodes)" in cluster.notes[0]
    assert {g.name: g.change for g in cluster.groups} == dict.fromkeys(
        ("controller", "login", "gpu"), GroupChange.REPLACED
    )
    assert cluster.gate.waits, "a new cluster name re-arms the gate"
    assert to_json(result)["clusters"][0]["replaced"] is True


def test_a_replacement_with_the_retain_policy_keeps_the_old_cluster_billing(
    plan_pairs: PlanPairs,
) -> None:
    result = plan(plan_pairs, "cluster-renamed-retained")
    (cluster,) = result.clusters
    assert cluster.replaced and cluster.retained and cluster.nodes_terminated == 0
    assert "UpdateReplacePolicy Retain" in cluster.notes[0] and "keep billing" in cluster.notes[0]
    assert all(g.nodes_terminated == 0 for g in cluster.groups)
    assert result.exit_code == 3, "a replacement is always reported"
    # The policy alone changes nothing that runs.
    assert plan(plan_pairs, "retained").exit_code == 0


def test_a_create_only_change_under_a_custom_name_is_refused(plan_pairs: PlanPairs) -> None:
    result = plan(plan_pairs, "subnet-moved")
    (cluster,) = result.clusters
    assert cluster.change is ClusterChange.REFUSED and not cluster.replaced
    assert [c.path for c in cluster.replaced_by] == ["VpcConfig.Subnets"]
    assert "cannot replace a resource with a custom name" in cluster.notes[0]
    assert result.exit_code == 3 and cluster.nodes_terminated == 0
    renamed_too = plan(plan_pairs, "subnet-moved-renamed")
    assert renamed_too.clusters[0].replaced
    assert {c.path for c in renamed_too.clusters[0].replaced_by} == {
        "ClusterName",
        "VpcConfig.Subnets",
    }


@pytest.mark.parametrize(
    ("variant", "path", "old", "new"),
    [
        ("instance-type", "InstanceType", "ml.p5.48xlarge", "ml.p5en.48xlarge"),
        ("threads", "ThreadsPerCore", "1", "2"),
        ("own-role", "ExecutionRole", "<GetAtt ClusterExecutionRole", "<GetAtt GpuRole"),
    ],
)
def test_changes_hyperpod_refuses_in_place_fail_the_update(
    plan_pairs: PlanPairs, variant: str, path: str, old: str, new: str
) -> None:
    result = plan(plan_pairs, variant)
    gpu = group(result, "gpu")
    assert result.exit_code == 3
    assert gpu.change is GroupChange.REFUSED and gpu.nodes_terminated == 0
    effect, before, after = effects(result, "gpu")[path]
    assert effect is Effect.REFUSED
    assert before is not None and after is not None
    assert before.startswith(old) and after.startswith(new)
    assert "the update fails and rolls back" in result.headlines()[0]
    assert "update-guide" in gpu.changes[0].rule.source


def test_lifecycle_scripts_apply_to_new_nodes_only(plan_pairs: PlanPairs) -> None:
    result = plan(plan_pairs, "lifecycle")
    assert result.exit_code == 0
    for name in ("controller", "login", "gpu"):
        found = effects(result, name)
        assert found == {
            "LifeCycleConfig.SourceS3Uri": (
                Effect.NEW_NODES,
                "s3://sagemaker-plan-tests/lifecycle/v1/",
                "s3://sagemaker-plan-tests/lifecycle/v2/",
            )
        }
        assert group(result, name).change is GroupChange.CHANGED
    assert "applies to new nodes only" in group(result, "gpu").notes[0]


def test_an_image_is_a_rolling_software_update(plan_pairs: PlanPairs) -> None:
    result = plan(plan_pairs, "image")
    assert result.exit_code == 0
    assert effects(result, "gpu") == {
        "ImageId": (Effect.SOFTWARE_UPDATE, None, "ami-0123456789abcdef0")
    }
    assert "ScheduledUpdateConfig" in group(result, "gpu").notes[0]


def test_a_cluster_setting_applied_in_place(plan_pairs: PlanPairs) -> None:
    result = plan(plan_pairs, "node-recovery")
    (cluster,) = result.clusters
    assert result.exit_code == 0 and cluster.change is ClusterChange.UPDATED
    assert [(c.path, c.effect, c.old, c.new) for c in cluster.changes] == [
        ("NodeRecovery", Effect.IN_PLACE, "Automatic", "None")
    ]


def test_a_property_without_a_row_is_cannot_tell_and_exits_3(plan_pairs: PlanPairs) -> None:
    # The table is an allow-list (issue 35): no row says UpdateCluster applies a new
    # TrainingPlanArn to an existing group in place, so the plan cannot call it safe.
    result = plan(plan_pairs, "training-plan")
    ((path, (effect, old, new)),) = effects(result, "gpu").items()
    assert (path, effect, old) == ("TrainingPlanArn", Effect.UNKNOWN, None)
    assert new is not None and new.endswith("training-plan/plan-tests")
    gpu = group(result, "gpu")
    assert gpu.change is GroupChange.UNKNOWN and gpu.notes[0].startswith("cannot tell")
    assert "no row of plan's table" in gpu.notes[0]
    assert result.exit_code == 3
    assert any("TrainingPlanArn" in line for line in result.headlines())


def test_a_removed_minimum_removes_the_gate(plan_pairs: PlanPairs) -> None:
    result = plan(plan_pairs, "ungated")
    gate = result.clusters[0].gate
    assert (gate.before, gate.after, gate.waits) == (True, False, False)
    assert group(result, "gpu").notes[0] == "minimum 4 -> 0: HyperPod does not wait"


def test_the_controller_group_cannot_be_removed_or_renamed(plan_pairs: PlanPairs) -> None:
    result = plan(plan_pairs, "controller-renamed")
    controller = group(result, "controller")
    assert controller.change is GroupChange.REFUSED and controller.renamed_to == "head"
    assert "exactly one Controller group" in controller.notes[1]
    assert result.exit_code == 3


def test_a_new_construct_id_under_the_same_name_is_refused(plan_pairs: PlanPairs) -> None:
    result = plan(plan_pairs, "construct-moved")
    changes = {c.logical_id: c.change for c in result.clusters}
    assert sorted(changes.values(), key=str) == [ClusterChange.REFUSED, ClusterChange.REMOVED]
    refused = next(c for c in result.clusters if c.change is ClusterChange.REFUSED)
    assert "which the removed cluster still holds" in refused.notes[0]
    assert result.exit_code == 3


def test_a_cluster_removed_from_the_stack_terminates_every_node(plan_pairs: PlanPairs) -> None:
    result = plan(plan_pairs, "no-cluster")
    (cluster,) = result.clusters
    assert cluster.change is ClusterChange.REMOVED and cluster.nodes_terminated == 6
    assert result.exit_code == 3


def test_parameters_resolve_as_deployed_or_from_their_defaults(plan_pairs: PlanPairs) -> None:
    # Offline, GpuCount is its default (4): the same counts as the literal baseline.
    offline = plan(plan_pairs, "parameter")
    assert group(offline, "gpu").change is GroupChange.UNCHANGED
    # The gate names the parameter, not its value: moving from a number to a parameter re-arms,
    # but the minimum (4) stays, so the re-armed gate waits for no group.
    gate = offline.clusters[0].gate
    assert not gate.waits and "re-arms" in gate.reason and "minimum unchanged: 4" in gate.reason
    # Deployed with GpuCount=8, updated to literal counts of 2: 6 nodes go.
    deployed = plan(
        plan_pairs,
        "scale-in",
        old="parameter",
        old_parameters={"GpuCount": "8"},
        new_parameters={"GpuCount": "8"},
    )
    gpu = group(deployed, "gpu")
    assert (gpu.old_count, gpu.new_count, gpu.nodes_terminated) == (8, 2, 6)
    assert deployed.parameters == "as deployed"
    # Only the parameter's value changes (8 deployed, the template's default 4 now): the gate's
    # wait condition stays, so it does not wait again (HP-WARN-GATE-TOKEN-COUNT).
    same = plan(plan_pairs, "parameter", old="parameter", old_parameters={"GpuCount": "8"})
    assert group(same, "gpu").change is GroupChange.SCALE_IN
    assert not same.clusters[0].gate.waits
    assert "HP-WARN-GATE-TOKEN-COUNT" in same.clusters[0].gate.reason


# -- hostile baselines ---------------------------------------------------------------------------


def test_a_document_that_is_not_a_template_is_refused_by_name(plan_pairs: PlanPairs) -> None:
    new = plan_pairs.templates["base"]
    for document in ([1, 2], "text", {"version": "48.0.0", "artifacts": {}}):
        with pytest.raises(BaselineError) as raised:
            check_baseline(document, new)
        assert raised.value.code == "not-a-template"
        assert str(raised.value).endswith("[not-a-template]")


def test_a_template_without_a_cluster_is_refused_by_name(plan_pairs: PlanPairs) -> None:
    with pytest.raises(BaselineError) as raised:
        check_baseline(plan_pairs.templates["no-cluster"], plan_pairs.templates["base"])
    assert raised.value.code == "no-cluster"
    assert "has no AWS::SageMaker::Cluster" in str(raised.value)


def test_another_stacks_template_is_refused_by_name(
    plan_pairs: PlanPairs, example_templates: dict[str, dict[str, Any]]
) -> None:
    with pytest.raises(BaselineError) as raised:
        check_baseline(
            with_cdk_paths(example_templates["FsdpTraining"], "FsdpTraining"),
            plan_pairs.templates["base"],
            stack_path="PlanBase",
        )
    assert raised.value.code == "other-stack"
    assert "FsdpTraining/" in str(raised.value)
    # Without evidence (no stack path to compare), it is planned: its cluster is removed.
    fsdp_removed = plan_stack(
        example_templates["FsdpTraining"],
        plan_pairs.templates["base"],
        stack="PlanBase",
        baseline="fsdp",
    )
    assert fsdp_removed.exit_code == 3
    # The same stack after a heavy edit is still itself.
    check_baseline(plan_pairs.templates["base"], plan_pairs.templates["cluster-renamed"])
    check_baseline(example_templates["FsdpTraining"], example_templates["FsdpTraining"])


# -- the command line ---------------------------------------------------------------------------


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hyperpod_constructs", "plan", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )


def test_exit_codes_of_the_command_line(plan_pairs: PlanPairs, tmp_path: Path) -> None:
    baseline = plan_pairs.template_file("base")
    app = ["--app", plan_pairs.outdir]
    unchanged = run("--baseline", baseline, *app, "--stack", stack_name("lifecycle"))
    assert unchanged.returncode == 0, unchanged.stderr
    assert unchanged.stdout.startswith("plan for stack PlanLifecycle: baseline ")
    assert unchanged.stderr == ""

    # Without --stack, the stack of the assembly that the baseline belongs to is planned.
    matched = run("--baseline", baseline, *app)
    assert matched.returncode == 0 and "plan for stack PlanBase:" in matched.stdout

    renamed = run("--baseline", baseline, *app, "--stack", stack_name("renamed"), "--json")
    assert renamed.returncode == 3 and renamed.stderr == ""
    document = json.loads(renamed.stdout)
    assert document["exit_code"] == 3 and document["schema_version"] == 1
    (cluster,) = document["clusters"]
    assert cluster["replaced"] is False and cluster["cluster_name"] == CLUSTER
    assert {g["name"]: (g["change"], g["nodes_terminated"]) for g in cluster["groups"]} == {
        "controller": ("unchanged", 0),
        "login": ("unchanged", 0),
        "gpu": ("removed", 4),
        "gpu-b": ("added", 0),
    }

    not_json = tmp_path / "old.template.json"
    not_json.write_text("Resources:\n  Cluster: [\n")
    for args, message in (
        (["--baseline", str(not_json), *app], "neither JSON nor a YAML template"),
        (["--baseline", str(tmp_path / "missing.json"), *app], "cannot open"),
        # A folder is a cloud assembly (here without one readable template).
        (["--baseline", str(tmp_path), *app], "cannot read template"),
        (["--baseline", f"{plan_pairs.outdir}/manifest.json", *app], "[not-a-template]"),
        (["--baseline", plan_pairs.template_file("no-cluster"), *app], "[no-cluster]"),
        (["--baseline", baseline, "--app", str(tmp_path / "nowhere")], "folder not found"),
        (["--baseline", baseline, *app, "--stack", "Nope"], "no stack Nope in"),
        ([*app], "give a baseline"),
    ):
        failed = run(*args)
        assert failed.returncode == 2, (args, failed.stdout)
        assert failed.stdout == ""
        assert failed.stderr.startswith("error: ") and message in failed.stderr, failed.stderr
        assert failed.stderr.count("\n") == 1 and "Traceback" not in failed.stderr


# -- the guard rail in the construct ------------------------------------------------------------


def test_the_removal_policy_is_written_only_when_given(plan_pairs: PlanPairs) -> None:
    def cluster_of(variant: str) -> dict[str, Any]:
        (resource,) = [
            r
            for r in plan_pairs.templates[variant]["Resources"].values()
            if r["Type"] == "AWS::SageMaker::Cluster"
        ]
        return resource

    assert "DeletionPolicy" not in cluster_of("base")
    assert "UpdateReplacePolicy" not in cluster_of("base")
    retained = cluster_of("retained")
    assert (retained["DeletionPolicy"], retained["UpdateReplacePolicy"]) == ("Retain", "Retain")


def test_a_snapshot_policy_is_a_finding_naming_the_parameter() -> None:
    from aws_cdk import RemovalPolicy, Stack

    from hyperpod_constructs import HyperPodInstanceType, HyperPodSlurmCluster, InstanceGroup
    from tests.conftest import new_app
    from tests.support.findings import errors_in

    stack = Stack(new_app(), "Snapshot")
    HyperPodSlurmCluster(
        stack,
        "Cluster",
        instance_groups=[
            InstanceGroup.controller("controller", instance_type=HyperPodInstanceType.ML_M5_XLARGE)
        ],
        removal_policy=RemovalPolicy.SNAPSHOT,
    )
    (finding,) = errors_in(stack)
    assert finding.field == "removal_policy" and "a cluster has no snapshot" in finding.allowed

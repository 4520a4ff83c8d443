"""``plan`` safe by construction (issue 35), one test per class of wrong verdict the issue
lists: each pair is a synthesized template (tests/support/plan_pairs.py) and a mechanical edit
of it, the way a user's pull request changes an app."""

from __future__ import annotations

import copy
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from hyperpod_constructs.__main__ import _parser
from hyperpod_constructs._runtime.hyperpod_gate import arm, contract
from hyperpod_constructs.tools._assembly.templates import parse_template
from hyperpod_constructs.tools.plan import (
    BaselineError,
    ClusterChange,
    check_baseline,
    plan_stack,
    render_text,
    to_json,
)
from hyperpod_constructs.tools.plan.cli import run_plan
from hyperpod_constructs.tools.plan.render import render_markdown
from hyperpod_constructs.tools.plan.resolve import evaluate
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


# -- 2. a value that changes through a reference -------------------------------------------------


def gpu(template: Template) -> dict[str, Any]:
    groups = template["Resources"][cluster_id(template)]["Properties"]["InstanceGroups"]
    (found,) = [g for g in groups if g["InstanceGroupName"] == "gpu"]
    return found  # type: ignore[no-any-return]


def gpu_role(template: Template) -> str:
    role: str = gpu(template)["ExecutionRole"]["Fn::GetAtt"][0]
    return role


def role_edit(template: Template, **properties: Any) -> Template:
    edited = copy.deepcopy(template)
    edited["Resources"][gpu_role(edited)]["Properties"].update(properties)
    return edited


def test_a_replaced_execution_role_changes_the_groups_role_refused_exit_3(
    plan_pairs: PlanPairs,
) -> None:
    own = plan_pairs.templates["own-role"]
    role = gpu_role(own)
    result = plan_stack(
        role_edit(own, RoleName="gpu-a"), role_edit(own, RoleName="gpu-b"), stack="P", baseline="b"
    )
    assert result.exit_code == 3
    (change,) = result.clusters[0].groups[2].changes
    assert change.path == "ExecutionRole" and change.uncertain
    assert change.reason is not None and f"{role} (AWS::IAM::Role) is replaced" in change.reason
    assert "RoleName changes (create-only)" in change.describe()


def test_a_role_updated_in_place_keeps_its_arn_exit_0(plan_pairs: PlanPairs) -> None:
    own = plan_pairs.templates["own-role"]
    new = role_edit(own, MaxSessionDuration=7200)
    assert plan_stack(own, new, stack="P", baseline="b").exit_code == 0
    # Without the resource schemas, plan cannot tell whether the role is replaced.
    result = plan_stack(own, new, stack="P", baseline="b", schema_of=lambda _: None)
    assert result.exit_code == 3


def with_security_group(template: Template, description: str) -> Template:
    edited = copy.deepcopy(template)
    edited["Resources"]["ClusterSg"] = {
        "Type": "AWS::EC2::SecurityGroup",
        "Properties": {"GroupDescription": description, "VpcId": "vpc-0a1b2c3d4e5f6"},
    }
    vpc = edited["Resources"][cluster_id(edited)]["Properties"]["VpcConfig"]
    vpc["SecurityGroupIds"] = [{"Fn::GetAtt": ["ClusterSg", "GroupId"]}]
    return edited


def test_a_replaced_security_group_changes_the_vpc_config_exit_3(plan_pairs: PlanPairs) -> None:
    base = plan_pairs.templates["base"]
    old, new = with_security_group(base, "cluster"), with_security_group(base, "the cluster")
    assert plan_stack(old, old, stack="P", baseline="b").exit_code == 0
    result = plan_stack(old, new, stack="P", baseline="b")
    (cluster,) = result.clusters
    assert result.exit_code == 3 and cluster.change is ClusterChange.REFUSED
    assert "ClusterSg (AWS::EC2::SecurityGroup) is replaced" in cluster.notes[0]


def with_custom_count(template: Template, size: int) -> Template:
    edited = copy.deepcopy(template)
    edited["Resources"]["Sizing"] = {
        "Type": "Custom::Sizing",
        "Properties": {
            "ServiceToken": "arn:aws:lambda:us-east-1:123456789012:function:s",
            "N": size,
        },
    }
    gpu(edited)["InstanceCount"] = {"Fn::GetAtt": ["Sizing", "Count"]}
    gpu(edited).pop("MinInstanceCount", None)
    return edited


def test_a_count_from_a_custom_resource_whose_input_changed_is_cannot_tell(
    plan_pairs: PlanPairs,
) -> None:
    base = plan_pairs.templates["ungated"]
    old = with_custom_count(base, 4)
    assert plan_stack(old, old, stack="P", baseline="b").exit_code == 0
    result = plan_stack(old, with_custom_count(base, 2), stack="P", baseline="b")
    assert result.exit_code == 3
    assert "code plan does not run" in " ".join(result.clusters[0].groups[2].notes)


def with_ssm_count(template: Template) -> Template:
    edited = copy.deepcopy(template)
    edited.setdefault("Parameters", {})["GpuCount"] = {
        "Type": "AWS::SSM::Parameter::Value<String>",
        "Default": "/training/gpu-count",
    }
    gpu(edited)["InstanceCount"] = {"Ref": "GpuCount"}
    gpu(edited).pop("MinInstanceCount", None)
    return edited


def test_a_count_from_an_ssm_parameter_is_read_anew_on_every_deployment(
    plan_pairs: PlanPairs,
) -> None:
    template = with_ssm_count(plan_pairs.templates["ungated"])
    result = plan_stack(template, template, stack="P", baseline="b")
    assert result.exit_code == 3
    assert "SSM parameter, read anew" in " ".join(result.clusters[0].groups[2].notes)


# -- 4. what UpdateCluster refuses ---------------------------------------------------------------


def cluster_props(template: Template) -> dict[str, Any]:
    properties: dict[str, Any] = template["Resources"][cluster_id(template)]["Properties"]
    return properties


def refused(old: Template, new: Template) -> tuple[int, str]:
    result = plan_stack(old, new, stack="P", baseline="b")
    return result.exit_code, " ".join(result.clusters[0].refusals)


def test_counts_and_groups_beyond_the_api_limits_are_refused(plan_pairs: PlanPairs) -> None:
    base = plan_pairs.templates["base"]
    big = copy.deepcopy(base)
    gpu(big)["InstanceCount"] = 7000
    code, why = refused(base, big)
    assert code == 3 and "[HP-COUNT-RANGE" in why and "6758" in why
    many = copy.deepcopy(base)
    groups = cluster_props(many)["InstanceGroups"]
    for index in range(101 - len(groups)):
        extra = copy.deepcopy(gpu(base))
        extra.update(InstanceGroupName=f"extra{index}", InstanceCount=0)
        extra.pop("MinInstanceCount")
        groups.append(extra)
    code, why = refused(base, many)
    assert code == 3 and "[HP-GROUPS-COUNT" in why and "101 groups" in why


def standard(template: Template) -> Template:
    """The cluster in the previous scaling model (no NodeProvisioningMode)."""
    edited = copy.deepcopy(template)
    cluster_props(edited).pop("NodeProvisioningMode")
    return edited


def test_a_minimum_without_continuous_provisioning_is_refused(plan_pairs: PlanPairs) -> None:
    old = standard(plan_pairs.templates["ungated"])
    new = copy.deepcopy(old)
    gpu(new)["MinInstanceCount"] = 2
    code, why = refused(old, new)
    assert code == 3 and "[HP-MIN-NEEDS-CONTINUOUS" in why


def test_a_slurm_config_strategy_in_continuous_mode_is_refused(plan_pairs: PlanPairs) -> None:
    old = plan_pairs.templates["base"]
    new = copy.deepcopy(old)
    orchestrator = cluster_props(new).setdefault("Orchestrator", {})
    orchestrator.setdefault("Slurm", {})["SlurmConfigStrategy"] = "Merge"
    code, why = refused(old, new)
    assert code == 3 and "[HP-STRATEGY-IN-CONTINUOUS" in why


def test_switching_a_running_cluster_to_continuous_provisioning_is_refused(
    plan_pairs: PlanPairs,
) -> None:
    new = plan_pairs.templates["ungated"]
    code, why = refused(standard(new), new)
    assert code == 3 and "cannot be migrated to continuous provisioning" in why


# -- 7. one source for the wait ------------------------------------------------------------------


def arm_of(template: Template) -> tuple[str, dict[str, Any]] | None:
    for logical_id, resource in template["Resources"].items():
        if resource["Type"] == contract.RESOURCE_TYPE:
            return str(logical_id), resource["Properties"]
    return None


def arms_scope(old: Template, new: Template, monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """The groups the gate's arm function waits for when the update deploys: its own
    ``scope_of`` (which calls ``update_scope``), reading the old wait handle's Metadata as
    CloudFormation returns it."""
    old, new = evaluate(old), evaluate(new)
    old_arm, new_arm = arm_of(old), arm_of(new)
    if new_arm is None:
        return set()
    arm_id, new_props = new_arm
    same_arm = old_arm is not None and old_arm[0] == arm_id
    if same_arm and not contract.starts_new_wait(old_arm[1], new_props):
        return set()  # the finished wait stays: the arm does not wait

    def handle(template: Template, props: dict[str, Any]) -> Any:
        return template["Resources"][props[contract.Prop.WAIT_HANDLE_LOGICAL_ID]]["Metadata"]

    if old_arm is not None:
        metadata = handle(old, old_arm[1])
        monkeypatch.setattr(
            arm,
            "_stack_resource",
            lambda *_: {"ResourceType": arm.HANDLE_TYPE, "Metadata": json.dumps(metadata)},
        )
    event = {
        "RequestType": "Update" if same_arm else "Create",
        "OldResourceProperties": old_arm[1] if same_arm and old_arm else {},
    }
    wait = contract.parse_metadata(handle(new, new_props))
    scope, _ = arm.scope_of(event, "stack", arm_id, wait)
    return {r.group_name for r in scope.waits_for}


def test_the_plans_wait_is_the_gates_own_update_scope(
    plan_pairs: PlanPairs, monkeypatch: pytest.MonkeyPatch
) -> None:
    pairs = [("base", v) for v in plan_pairs.templates] + [
        (v, "base") for v in plan_pairs.templates
    ]
    compared = 0
    for old_name, new_name in pairs:
        old, new = plan_pairs.templates[old_name], plan_pairs.templates[new_name]
        result = plan_stack(old, new, stack="P", baseline="b")
        planned = {w.group for c in result.clusters for w in c.gate.waits_for}
        assert planned == arms_scope(old, new, monkeypatch), (old_name, new_name)
        compared += bool(planned)
    assert compared >= 3  # some pairs wait, others not


# -- 6. shapes: YAML, Fn::ForEach ----------------------------------------------------------------


def test_a_yaml_baseline_with_short_forms_is_read_by_cfn_lints_loader(
    plan_pairs: PlanPairs, tmp_path: Path
) -> None:
    parsed = parse_template(
        "Resources:\n  R:\n    Type: AWS::IAM::Role\n    Properties:\n"
        "      RoleName: !Sub '${AWS::StackName}-x'\n      Path: !GetAtt X.Arn\n",
        "baseline",
    )
    assert parsed == {
        "Resources": {
            "R": {
                "Type": "AWS::IAM::Role",
                "Properties": {
                    "RoleName": {"Fn::Sub": "${AWS::StackName}-x"},
                    "Path": {"Fn::GetAtt": ["X", "Arn"]},
                },
            }
        }
    }
    baseline = tmp_path / "base.template.yaml"
    baseline.write_text(yaml.safe_dump(plan_pairs.templates["base"]), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    args = _parser().parse_args(
        ["plan", "--baseline", str(baseline), "--app", plan_pairs.outdir, "--stack", "PlanScaleIn"]
    )
    assert run_plan(args, stdout=out, stderr=err) == 3, err.getvalue()
    assert "scale in 4 -> 2" in out.getvalue()
    baseline.write_text("Resources: [", encoding="utf-8")
    assert run_plan(args, stdout=out, stderr=err) == 2
    assert "neither JSON nor a YAML template" in err.getvalue()


def test_a_for_each_loop_is_cannot_tell_exit_3_not_bad_input(plan_pairs: PlanPairs) -> None:
    base = plan_pairs.templates["base"]
    looped = copy.deepcopy(base)
    looped["Transform"] = "AWS::LanguageExtensions"
    looped["Resources"]["Fn::ForEach::Topics"] = [
        "Name",
        ["a", "b"],
        {"Topic${Name}": {"Type": "AWS::SNS::Topic"}},
    ]
    for old, new in ((base, looped), (looped, base)):
        assert exit_code(old, new) == 3
        result = plan_stack(old, new, stack="P", baseline="b")
        assert "Fn::ForEach::Topics" in result.headlines()[0]
        assert "cannot tell" in render_text(result)


# -- 8. the JSON document ------------------------------------------------------------------------


def test_the_json_document_has_a_schema_version_and_each_cannot_tell_its_reason(
    plan_pairs: PlanPairs,
) -> None:
    result = plan_stack(
        plan_pairs.templates["base"], plan_pairs.templates["training-plan"], stack="P", baseline="b"
    )
    document = to_json(result)
    assert document["schemaVersion"] == document["schema_version"] == 1
    (gpu,) = [g for g in document["clusters"][0]["groups"] if g["name"] == "gpu"]
    (change,) = gpu["changes"]
    assert change["cannot_tell"] and "no row of plan's table" in change["cannot_tell_reason"]
    assert gpu["change"] == "cannot-tell" and document["exit_code"] == 3


def test_a_renamed_cluster_waits_while_the_old_one_holds_its_capacity(
    plan_pairs: PlanPairs,
) -> None:
    result = plan_stack(
        plan_pairs.templates["base"],
        plan_pairs.templates["cluster-renamed"],
        stack="P",
        baseline="b",
    )
    (cluster,) = result.clusters
    assert cluster.change is ClusterChange.REPLACED and cluster.gate.waits
    assert any("while the old one still holds its capacity" in n for n in cluster.notes)


def test_importing_the_command_loads_neither_aws_cdk_nor_boto3_nor_cfn_lint() -> None:
    # The rule modules (which load aws_cdk) are imported only to word a refusal found.
    script = (
        "import sys, hyperpod_constructs.tools.plan.cli\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'aws_cdk', 'boto3', 'cfnlint'}))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, "[]\n", "")


# -- 9. markdown for a pull-request comment ------------------------------------------------------


def test_markdown_fences_what_it_prints_so_a_value_cannot_close_the_fence(
    plan_pairs: PlanPairs,
) -> None:
    base = plan_pairs.templates["base"]
    new = copy.deepcopy(base)
    hostile = "````</details> **@team** | x"
    cluster_props(new)["Tags"] = [{"Key": "note", "Value": hostile}]
    result = plan_stack(base, new, stack="Prod/*Training*", baseline="b")
    assert result.exit_code == 0
    markdown = render_markdown(result)
    head, fence_and_rest = markdown.split("\n\n", 2)[0], markdown.split("\n\n", 2)[2]
    assert head == "### HyperPod plan for stack Prod/\\*Training\\*"
    fence = fence_and_rest.split("text\n", 1)[0]
    assert fence == "`" * 5 and markdown.rstrip("\n").endswith(fence)
    inside = fence_and_rest[len(fence) + len("text\n") : -len(fence) - 1]
    assert inside == render_text(result) and hostile in inside
    assert "**exit 0**" in markdown


def test_format_markdown_on_the_command_line(plan_pairs: PlanPairs) -> None:
    out, err = io.StringIO(), io.StringIO()
    args = _parser().parse_args(
        [
            "plan",
            "--baseline",
            plan_pairs.template_file("base"),
            "--app",
            plan_pairs.outdir,
            "--stack",
            "PlanScaleIn",
            "--format",
            "markdown",
        ]
    )
    assert run_plan(args, stdout=out, stderr=err) == 3, err.getvalue()
    assert out.getvalue().startswith("### HyperPod plan for stack PlanScaleIn\n\n**exit 3**")

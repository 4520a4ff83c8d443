"""The fields AWS added that apply to Slurm clusters.

Flexible instance groups (``instance_types`` -> ``InstanceRequirements``) and automatic
patching (``auto_patch`` -> ``AutoPatchConfig``), checked from a synthesized template against
what nobody here wrote: botocore's SageMaker model (CreateCluster's shapes), cfn-lint's
resource schema for ``AWS::SageMaker::Cluster``, and cfn-lint itself. Then every place that
reads a group's one type, made right for several: validation per type, sizing, the policy,
the summary, the readiness gate's decision and ``watch``.
"""

from __future__ import annotations

from typing import Any

import botocore.session
import pytest
from aws_cdk import Stack
from botocore.validate import ParamValidator

from hyperpod_constructs import (
    AutoPatchStrategy,
    DeepHealthCheck,
    HyperPodInstanceType,
    HyperPodSlurmCluster,
    HyperPodValidationError,
    InstanceGroup,
)
from hyperpod_constructs.policy import AllowedInstanceTypes, HyperPodPolicy
from hyperpod_constructs.sizing import sizing_type
from hyperpod_constructs.tools.summary.model import summarize_template
from hyperpod_constructs.tools.summary.render import to_json
from hyperpod_constructs.validation.group_rules import validate_group
from tests.conftest import new_app
from tests.template_utils import CLUSTER_TYPE, describe_matches, only
from tests.test_lint import unaccepted

T = HyperPodInstanceType
FLEX = (T.ML_P5_48XLARGE, T.ML_P5E_48XLARGE, T.ML_P5EN_48XLARGE)
ROLE_ARN = "arn:aws:iam::111122223333:role/hyperpod-execution"


def _groups(**compute: Any) -> list[InstanceGroup]:
    compute.setdefault("instance_types", FLEX)
    compute.setdefault("instance_count", 8)
    compute.setdefault("min_instance_count", 4)
    compute.setdefault("deep_health_checks", tuple(DeepHealthCheck))
    return [
        InstanceGroup.controller(
            "controller", instance_type=T.ML_M5_XLARGE, auto_patch=AutoPatchStrategy.WHEN_ALL_IDLE
        ),
        InstanceGroup.compute(
            "gpu", partition="gpu", auto_patch=AutoPatchStrategy.WHEN_IDLE, **compute
        ),
    ]


def _synth(groups: list[InstanceGroup]) -> dict[str, Any]:
    app = new_app()
    stack = Stack(app, "Flexible")
    HyperPodSlurmCluster(stack, "Cluster", cluster_name="flexible", instance_groups=groups)
    return dict(app.synth().get_stack_by_name("Flexible").template)


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    return _synth(_groups())


def _rendered_groups(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    props = only(template, CLUSTER_TYPE)[1]["Properties"]
    return {g["InstanceGroupName"]: g for g in props["InstanceGroups"]}


@pytest.fixture(scope="module")
def sagemaker() -> Any:
    return botocore.session.get_session().get_service_model("sagemaker")


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    from cfnlint.schema.manager import PROVIDER_SCHEMA_MANAGER

    resource = PROVIDER_SCHEMA_MANAGER.get_resource_schema("us-east-1", CLUSTER_TYPE).schema
    return dict(resource["definitions"])


# -- rendering, judged by botocore and the schema ------------------------------------------------


def test_a_flexible_group_renders_instance_requirements_not_instance_type(
    template: dict[str, Any],
) -> None:
    gpu = _rendered_groups(template)["gpu"]
    assert "InstanceType" not in gpu  # the API: mutually exclusive
    assert gpu["InstanceRequirements"] == {"InstanceTypes": [t.name for t in FLEX]}
    assert gpu["AutoPatchConfig"] == {"PatchingStrategy": "WhenIdle"}
    controller = _rendered_groups(template)["controller"]
    assert controller["InstanceType"] == "ml.m5.xlarge"
    assert controller["AutoPatchConfig"] == {"PatchingStrategy": "WhenAllIdle"}


def test_rendered_groups_are_valid_create_cluster_input(
    template: dict[str, Any], sagemaker: Any
) -> None:
    """Each rendered group, with its role resolved, is a valid
    ``ClusterInstanceGroupSpecification`` for botocore (types, required members, ranges), and
    every enum value is one of the model's."""
    shape = sagemaker.shape_for("ClusterInstanceGroupSpecification")
    for group in _rendered_groups(template).values():
        request = {**group, "ExecutionRole": ROLE_ARN}
        report = ParamValidator().validate(request, shape)
        assert not report.has_errors(), report.generate_report()
    members = shape.members
    type_enum = set(members["InstanceRequirements"].members["InstanceTypes"].member.enum)
    strategy_enum = set(members["AutoPatchConfig"].members["PatchingStrategy"].enum)
    gpu = _rendered_groups(template)["gpu"]
    assert set(gpu["InstanceRequirements"]["InstanceTypes"]) <= type_enum
    for group in _rendered_groups(template).values():
        assert group["AutoPatchConfig"]["PatchingStrategy"] in strategy_enum


def test_rendered_values_match_the_cloudformation_schema(
    template: dict[str, Any], schema: dict[str, Any]
) -> None:
    requirements = schema["InstanceRequirements"]["properties"]["InstanceTypes"]
    gpu = _rendered_groups(template)["gpu"]
    types = gpu["InstanceRequirements"]["InstanceTypes"]
    assert requirements["minItems"] <= len(types) <= requirements["maxItems"]
    strategies = schema["AutoPatchConfig"]["properties"]["PatchingStrategy"]["enum"]
    assert {member.value for member in AutoPatchStrategy} == set(strategies)
    problems = unaccepted(template)
    assert not problems, describe_matches(problems)


def test_the_strategies_are_the_models_minus_the_eks_only_one(sagemaker: Any) -> None:
    model = sagemaker.shape_for("ClusterPatchingStrategy")
    assert set(model.enum) - {m.value for m in AutoPatchStrategy} == {"DrainFirst"}
    assert "Amazon EKS" in model.documentation or "EKS" in (
        sagemaker.shape_for("ClusterAutoPatchConfig").members["PatchingStrategy"].documentation
    )


def test_the_type_limit_is_the_models(sagemaker: Any) -> None:
    from hyperpod_constructs.validation.flexible_rules import MAX_TYPES

    types = sagemaker.shape_for("ClusterInstanceRequirements").members["InstanceTypes"]
    assert (types.metadata["min"], types.metadata["max"]) == (1, MAX_TYPES)


# -- validation -----------------------------------------------------------------------------


def _rules(group: InstanceGroup) -> dict[str, list[Any]]:
    found: dict[str, list[Any]] = {}
    for item in validate_group(group):
        found.setdefault(item.rule, []).append(item)
    return found


def test_instance_type_and_instance_types_exclude_each_other() -> None:
    with pytest.raises((HyperPodValidationError, RuntimeError)) as caught:
        _synth(_groups(instance_type=T.ML_P5_48XLARGE, instance_types=FLEX))
    message = str(caught.value)
    assert "[Flexible/Cluster] instance group 'gpu'" in message
    assert "instance_type or instance_types, not both" in message


def test_a_group_without_any_type_is_refused_naming_both_keywords() -> None:
    group = InstanceGroup.compute("gpu", partition="gpu", instance_count=2)
    fields = {item.field for item in validate_group(group)}
    assert "instance_type / instance_types (InstanceType / InstanceRequirements)" in fields


def test_more_than_twenty_types_is_an_error() -> None:
    types = [T.of(f"ml.c5.{size}") for size in ("large", "xlarge", "2xlarge", "4xlarge")] * 6
    group = InstanceGroup.compute(
        "cpu", instance_types=types[:21], partition="cpu", instance_count=1
    )
    assert "HP-FLEX-TYPES" in _rules(group)
    group = InstanceGroup.compute("cpu", instance_types=FLEX, partition="cpu", instance_count=1)
    assert "HP-FLEX-TYPES" not in _rules(group)


def test_each_fallback_type_gets_the_checks_of_instance_type() -> None:
    """A CPU fallback cannot run the connectivity check; a typo in the third type is caught
    as in instance_type; the first type's findings are not repeated for the others."""
    group = InstanceGroup.compute(
        "gpu",
        instance_types=[T.ML_P5_48XLARGE, T.ML_C5_4XLARGE, T.of("ml.p5.48xlarg")],
        partition="gpu",
        instance_count=2,
        deep_health_checks=tuple(DeepHealthCheck),
    )
    found = _rules(group)
    (connectivity,) = found["HP-DHC-CONNECTIVITY"]
    assert "with ml.c5.4xlarge (instance_types[1]" in connectivity.allowed
    (typo,) = found["HP-WARN-INSTANCE-TYPE"]
    assert typo.field.startswith("instance_types[2]") and typo.value == "ml.p5.48xlarg"
    single = InstanceGroup.compute(
        "gpu",
        instance_types=[T.ML_P5_48XLARGE, T.ML_P5E_48XLARGE],
        partition="gpu",
        instance_count=2,
        deep_health_checks=tuple(DeepHealthCheck),
    )
    assert "HP-DHC-CONNECTIVITY" not in _rules(single)


def test_mixed_accelerator_counts_and_repeats_are_warnings() -> None:
    group = InstanceGroup.compute(
        "gpu",
        instance_types=[T.ML_P5_48XLARGE, T.ML_G5_12XLARGE, T.ML_P5_48XLARGE],
        partition="gpu",
        instance_count=2,
        deep_health_checks=(DeepHealthCheck.INSTANCE_STRESS,),
    )
    found = _rules(group)
    (mixed,) = found["HP-WARN-FLEX-MIXED"]
    assert "ml.p5.48xlarge 8" in mixed.allowed and "ml.g5.12xlarge 4" in mixed.allowed
    assert "HP-WARN-FLEX-REPEAT" in found
    assert all(item.severity == "warning" for item in found["HP-WARN-FLEX-MIXED"])


def test_auto_patch_takes_the_enum_only() -> None:
    group = InstanceGroup.compute(
        "cpu",
        instance_type=T.ML_C5_4XLARGE,
        partition="cpu",
        instance_count=1,
        auto_patch="WhenIdle",  # type: ignore[arg-type]
    )
    (finding,) = [f for f in validate_group(group) if f.rule == "HP-ARG-TYPE"]
    assert finding.field == "auto_patch (AutoPatchConfig.PatchingStrategy)"


# -- sizing ---------------------------------------------------------------------------------


def test_min_accelerators_sizes_a_flexible_group_by_its_smallest_type() -> None:
    """64 GPUs: 8 x p5.48xlarge, but 16 x g5.12xlarge (4 each) if that is what comes up; the
    minimum must hold whichever types HyperPod launches."""
    group = InstanceGroup.compute(
        "gpu",
        instance_types=[T.ML_P5_48XLARGE, T.ML_G5_12XLARGE],
        partition="gpu",
        min_accelerators=64,
    )
    assert (group.min_instance_count, group.instance_count) == (16, 16)
    assert sizing_type([T.ML_P5_48XLARGE, T.ML_G5_12XLARGE]) is T.ML_G5_12XLARGE


def test_min_accelerators_refuses_a_type_whose_count_is_unknown() -> None:
    group = InstanceGroup.compute(
        "gpu",
        instance_types=[T.ML_P5_48XLARGE, T.ML_C5_4XLARGE],
        partition="gpu",
        min_accelerators=64,
    )
    (problem,) = [p for p in group.problems if p.rule == "HP-SIZING"]
    assert "ml.c5.4xlarge" in problem.allowed


# -- policy, summary, gate ------------------------------------------------------------------------


def test_the_policy_sees_every_type_of_a_flexible_group() -> None:
    from aws_cdk import Aspects

    app = new_app()
    stack = Stack(app, "Policy")
    HyperPodSlurmCluster(stack, "Cluster", instance_groups=_groups())
    allowed = [T.ML_M5_XLARGE, T.ML_P5_48XLARGE, T.ML_P5E_48XLARGE]
    Aspects.of(app).add(HyperPodPolicy(name="acme", allowed_instance_types=allowed))
    with pytest.raises(Exception) as caught:
        app.synth()
    assert "ml.p5en.48xlarge is not allowed" in str(caught.value)
    rule = AllowedInstanceTypes([*allowed, T.ML_P5EN_48XLARGE])
    assert "ml.p5en.48xlarge" in rule.allowed


def test_summary_lists_every_type_in_priority_order(template: dict[str, Any]) -> None:
    (cluster,) = summarize_template(template, stack="Flexible", template_file="t.json")
    groups = {g.name: g for g in cluster.instance_groups}
    assert groups["gpu"].instance_types == tuple(t.name for t in FLEX)
    assert groups["gpu"].instance_type == "ml.p5.48xlarge"
    assert groups["gpu"].auto_patch == "WhenIdle"
    assert groups["controller"].instance_types == ("ml.m5.xlarge",)


def test_summary_json_carries_the_new_fields(template: dict[str, Any]) -> None:
    from hyperpod_constructs.tools.summary.assembly import AssemblySummary

    (cluster,) = summarize_template(template, stack="Flexible", template_file="t.json")
    document = to_json(AssemblySummary(directory="cdk.out", stacks_read=1, clusters=(cluster,)))
    clusters: Any = document["clusters"]
    gpu = next(g for g in clusters[0]["instance_groups"] if g["name"] == "gpu")
    assert gpu["instance_types"] == [t.name for t in FLEX]
    assert gpu["auto_patch"] == "WhenIdle"


def test_summary_text_shows_the_priority_order(template: dict[str, Any]) -> None:
    from hyperpod_constructs.tools.summary.assembly import AssemblySummary
    from hyperpod_constructs.tools.summary.render import render_text

    (cluster,) = summarize_template(template, stack="Flexible", template_file="t.json")
    text = render_text(AssemblySummary(directory="cdk.out", stacks_read=1, clusters=(cluster,)))
    assert "ml.p5.48xlarge > ml.p5e.48xlarge > ml.p5en.48xlarge" in text


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        ({"PatchingStrategy": "DrainFirst"}, "AutoPatchConfig.PatchingStrategy"),
        (
            {"PatchingStrategy": "WhenIdle", "DeploymentConfig": {"WaitIntervalInSeconds": 60}},
            "AutoPatchConfig.DeploymentConfig",
        ),
        ({"PatchingStrategy": "WhenIdle", "IdleWaitWindowInSeconds": 3600}, "IdleWaitWindow"),
    ],
)
def test_convert_refuses_what_slurm_clusters_cannot_take(patch: dict[str, Any], field: str) -> None:
    import json

    from hyperpod_constructs.tools.convert import ConversionError, Options, convert_request
    from tests.conftest import ROOT

    path = ROOT / "tests" / "fixtures" / "convert" / "api-flexible-autopatch.json"
    request = json.loads(path.read_text())
    request["InstanceGroups"][1]["AutoPatchConfig"] = patch
    with pytest.raises(ConversionError) as caught:
        convert_request(request, None, Options())
    assert caught.value.field.startswith("InstanceGroups[1].") and field in caught.value.field


def test_convert_refuses_both_instance_type_and_requirements() -> None:
    import json

    from hyperpod_constructs.tools.convert import ConversionError, Options, convert_request
    from tests.conftest import ROOT

    path = ROOT / "tests" / "fixtures" / "convert" / "api-flexible-autopatch.json"
    request = json.loads(path.read_text())
    request["InstanceGroups"][1]["InstanceType"] = "ml.p5.48xlarge"
    with pytest.raises(ConversionError, match="exclude each other"):
        convert_request(request, None, Options())


def test_the_gate_counts_instances_of_any_type(template: dict[str, Any], sagemaker: Any) -> None:
    """DescribeCluster reports a flexible group's ``CurrentCount`` over all its types (and per
    type in ``InstanceTypeDetails``): the gate reads the group's count, so a mix of the
    fallback types meets the minimum. The response is checked against botocore's output
    shape first."""
    from hyperpod_constructs._runtime.hyperpod_gate.decision import (
        GroupRequirement,
        evaluate_gate,
    )

    gpu = _rendered_groups(template)["gpu"]
    details = [
        {"InstanceType": "ml.p5.48xlarge", "CurrentCount": 1},
        {"InstanceType": "ml.p5en.48xlarge", "CurrentCount": 3},
    ]
    response = {
        "ClusterArn": "arn:aws:sagemaker:us-east-1:111122223333:cluster/abcdefgh1234",
        "ClusterName": "flexible",
        "ClusterStatus": "InService",
        "InstanceGroups": [
            {
                "InstanceGroupName": "gpu",
                "Status": "InService",
                "CurrentCount": sum(d["CurrentCount"] for d in details),
                "TargetCount": gpu["InstanceCount"],
                "MinCount": gpu["MinInstanceCount"],
                "InstanceRequirements": {
                    "CurrentInstanceTypes": ["ml.p5.48xlarge", "ml.p5en.48xlarge"],
                    "DesiredInstanceTypes": gpu["InstanceRequirements"]["InstanceTypes"],
                },
                "InstanceTypeDetails": details,
            }
        ],
    }
    shape = sagemaker.operation_model("DescribeCluster").output_shape
    members = shape.members["InstanceGroups"].member.members
    assert {"InstanceRequirements", "InstanceTypeDetails", "CurrentCount"} <= set(members)
    requirement = GroupRequirement(gpu["MinInstanceCount"], gpu["InstanceCount"])
    decision = evaluate_gate(response, {"gpu": requirement})
    assert decision.status == "READY", decision


def _describe_flexible(gpu: dict[str, Any], details: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "ClusterName": "flexible",
        "ClusterStatus": "InService",
        "InstanceGroups": [
            {
                "InstanceGroupName": "gpu",
                "Status": "Creating",
                "CurrentCount": sum(d["CurrentCount"] for d in details),
                "TargetCount": gpu["InstanceCount"],
                "MinCount": gpu["MinInstanceCount"],
                "InstanceTypeDetails": details,
            }
        ],
    }


def test_watch_shows_which_types_came_up(template: dict[str, Any]) -> None:
    """``watch`` reads the gated group from the synthesized template and shows, from
    DescribeCluster's ``InstanceTypeDetails``, how many instances of each type are up."""
    from datetime import UTC, datetime

    from hyperpod_constructs.tools.watch.jsonl import to_json as watch_json
    from hyperpod_constructs.tools.watch.model import Observation, refresh
    from hyperpod_constructs.tools.watch.screen import status_line
    from hyperpod_constructs.tools.watch.target import targets_from_template

    (target,) = targets_from_template(template, stack_name="Flexible", display_name="Flexible")
    gpu = _rendered_groups(template)["gpu"]
    details = [
        {"InstanceType": "ml.p5.48xlarge", "CurrentCount": 1},
        {"InstanceType": "ml.p5en.48xlarge", "CurrentCount": 2},
    ]
    now = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    view = refresh(
        target, Observation(time=now, cluster=_describe_flexible(gpu, details)), started_at=now
    )
    (group,) = view.groups
    assert group.types_up == (("ml.p5.48xlarge", 1), ("ml.p5en.48xlarge", 2))
    assert "gpu Creating 3 / 4 / 8 (ml.p5.48xlarge 1, ml.p5en.48xlarge 2)" in status_line(view)
    groups: Any = watch_json(view)["groups"]
    assert groups[0]["instance_types_up"] == [
        {"instance_type": "ml.p5.48xlarge", "current_count": 1},
        {"instance_type": "ml.p5en.48xlarge", "current_count": 2},
    ]

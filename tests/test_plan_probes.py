"""Probe pairs for ``plan``: a synthesized baseline (tests/support/plan_pairs.py's
``base``) and a new template made from it by one mechanical edit, each with the exit code that
the resource schema (cfn-lint's copy) or AWS's guides fix for it; and a metamorphic property:
any value of a synthesized example written as an equivalent expression (a parameter default, a
mapping, a true condition, ``Fn::Sub``, ``Fn::Join``, ``Fn::Select``) never changes the
verdict, and a change hidden behind one is reported as the same change written plainly."""

from __future__ import annotations

import copy
import io
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from cfnlint.schema import PROVIDER_SCHEMA_MANAGER
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hyperpod_constructs.__main__ import _parser
from hyperpod_constructs.tools.plan import BaselineError, ClusterChange, StackPlan, plan_stack
from hyperpod_constructs.tools.plan.cli import run_plan
from hyperpod_constructs.tools.plan.model import check_baseline
from tests.support.plan_pairs import PlanPairs, plan_pairs

__all__ = ["plan_pairs"]

ROOT = Path(__file__).resolve().parent.parent
Template = dict[str, Any]
Edit = Callable[[Template], None]


@cache
def schema() -> dict[str, Any]:
    resource = PROVIDER_SCHEMA_MANAGER.get_resource_schema("us-east-1", "AWS::SageMaker::Cluster")
    return dict(resource.schema)


def cluster_id(template: Template) -> str:
    (found,) = [
        str(k) for k, r in template["Resources"].items() if r["Type"] == "AWS::SageMaker::Cluster"
    ]
    return found


def props(template: Template) -> dict[str, Any]:
    properties: dict[str, Any] = template["Resources"][cluster_id(template)]["Properties"]
    return properties


def group(template: Template, name: str) -> dict[str, Any]:
    (found,) = [g for g in props(template)["InstanceGroups"] if g["InstanceGroupName"] == name]
    return found  # type: ignore[no-any-return]


def verdict(old: Template, new: Template, **kwargs: Any) -> int:
    """plan's exit code for the pair (2: refused as input)."""
    try:
        check_baseline(old, new)
        return plan_stack(old, new, stack="Probe", baseline="probe", **kwargs).exit_code
    except BaselineError:
        return 2


def edited(template: Template, *edits: Edit) -> Template:
    copied = copy.deepcopy(template)
    for edit in edits:
        edit(copied)
    return copied


def parameter(name: str, default: Any, kind: str = "String") -> Edit:
    def edit(template: Template) -> None:
        template.setdefault("Parameters", {})[name] = {"Type": kind, "Default": default}

    return edit


def condition(name: str, expression: Any) -> Edit:
    def edit(template: Template) -> None:
        template.setdefault("Conditions", {})[name] = expression

    return edit


def mapping(name: str, top: str, key: str, value: Any) -> Edit:
    def edit(template: Template) -> None:
        template.setdefault("Mappings", {}).setdefault(name, {}).setdefault(top, {})[key] = value

    return edit


def cluster(key: str, value: Any) -> Edit:
    def edit(template: Template) -> None:
        props(template)[key] = value

    return edit


def of_group(name: str, key: str, value: Any) -> Edit:
    def edit(template: Template) -> None:
        if value is None:
            del group(template, name)[key]
        else:
            group(template, name)[key] = value

    return edit


def resource_condition(name: str) -> Edit:
    def edit(template: Template) -> None:
        template["Resources"][cluster_id(template)]["Condition"] = name

    return edit


def gpus_from_map(count: int) -> tuple[Edit, ...]:
    """The GPU group's count through ``Fn::FindInMap`` (as ``CfnMapping.find_in_map()``
    writes it), its minimum lowered with it."""
    return (
        mapping("Sizes", "gpu", "count", count),
        of_group("gpu", "InstanceCount", {"Fn::FindInMap": ["Sizes", "gpu", "count"]}),
        of_group("gpu", "MinInstanceCount", min(count, 4)),
    )


IS_BIG = {"Fn::Equals": [{"Ref": "Size"}, "big"]}
GET_ATT_ROLE = "ClusterExecutionRole766E14D2"

# -- create-only properties: every one the schema lists, added, changed and removed ----------

CREATE_ONLY_VALUES: dict[str, tuple[Any, Any]] = {
    "/properties/ClusterName": ("plan-train", "plan-train-b"),
    "/properties/VpcConfig": (
        {"SecurityGroupIds": ["sg-0a1b2c3d4e5f60001"], "Subnets": ["subnet-0a1b2c3d4e5f60001"]},
        {"SecurityGroupIds": ["sg-0a1b2c3d4e5f60001"], "Subnets": ["subnet-0a1b2c3d4e5f60002"]},
    ),
    "/properties/Orchestrator/Eks": (
        {"ClusterArn": "arn:aws:eks:us-east-1:123456789012:cluster/a"},
        {"ClusterArn": "arn:aws:eks:us-east-1:123456789012:cluster/b"},
    ),
}
"""A value and a changed value of each create-only property (the test below holds this table
to the schema's list)."""


def test_the_probe_table_covers_every_create_only_property_of_the_schema() -> None:
    assert set(CREATE_ONLY_VALUES) == set(schema()["createOnlyProperties"])


def set_at(pointer: str, value: Any) -> Edit:
    """Set (None: remove) the property at a schema pointer of the cluster, creating the objects
    on the way."""

    def edit(template: Template) -> None:
        *parents, last = pointer.removeprefix("/properties/").split("/")
        node = props(template)
        for part in parents:
            node = node.setdefault(part, {})
        if value is None:
            node.pop(last, None)
        else:
            node[last] = value

    return edit


@pytest.mark.parametrize("pointer", sorted(CREATE_ONLY_VALUES))
@pytest.mark.parametrize("how", ["changed", "added", "removed"])
def test_every_create_only_property_replaces_the_cluster(
    plan_pairs: PlanPairs, pointer: str, how: str
) -> None:
    before, after = CREATE_ONLY_VALUES[pointer]
    base = plan_pairs.templates["base"]
    if pointer == "/properties/ClusterName":
        # A cluster named by CloudFormation: the replacement itself is allowed.
        base = edited(base, set_at(pointer, None))
    old_value, new_value = {"changed": (before, after), "added": (None, after)}.get(
        how, (before, None)
    )
    old = edited(base, set_at(pointer, old_value))
    new = edited(base, set_at(pointer, new_value))
    if pointer.startswith("/properties/Orchestrator"):
        # Orchestrator added or removed whole (with Eks inside), not only its key.
        for template, value in ((old, old_value), (new, new_value)):
            if value is None:
                props(template).pop("Orchestrator", None)
    result = plan_stack(old, new, stack="Probe", baseline="probe")
    assert result.exit_code == 3, result
    (planned,) = result.clusters
    assert planned.change in (ClusterChange.REPLACED, ClusterChange.REFUSED)


# -- the probe table -------------------------------------------------------------------------

PROBES: dict[str, tuple[tuple[Edit, ...], tuple[Edit, ...], int]] = {
    # name: (edits of the baseline, edits of the new template, expected exit)
    "unchanged": ((), (), 0),
    # Strings are strings: "007" -> "7" is a new ClusterName (create-only).
    "cluster-name-007-to-7": (
        (cluster("ClusterName", "007"),),
        (cluster("ClusterName", "7"),),
        3,
    ),
    # Parameters: a changed default behind Fn::Sub hides a replacement.
    "sub-name-parameter-changed": (
        (parameter("Env", "plan"), cluster("ClusterName", {"Fn::Sub": "${Env}-train"})),
        (parameter("Env", "prod"), cluster("ClusterName", {"Fn::Sub": "${Env}-train"})),
        3,
    ),
    "sub-name-parameter-same": (
        (),
        (parameter("Env", "plan"), cluster("ClusterName", {"Fn::Sub": "${Env}-train"})),
        0,
    ),
    "sub-list-form-same": (
        (),
        (cluster("ClusterName", {"Fn::Sub": ["${A}-${B}", {"A": "plan", "B": "train"}]}),),
        0,
    ),
    # Mappings: CfnMapping.find_in_map() hides a 4 -> 2 scale-in.
    "find-in-map-scale-in": ((), gpus_from_map(2), 3),
    "find-in-map-both-sides-scale-in": (gpus_from_map(4), gpus_from_map(2), 3),
    "find-in-map-same": ((), gpus_from_map(4), 0),
    # Conditions: Fn::If with a flipped condition hides a scale-in.
    "if-flipped-scale-in": (
        (
            parameter("Size", "big"),
            condition("Big", IS_BIG),
            of_group("gpu", "InstanceCount", {"Fn::If": ["Big", 4, 2]}),
        ),
        (
            parameter("Size", "small"),
            condition("Big", IS_BIG),
            of_group("gpu", "InstanceCount", {"Fn::If": ["Big", 4, 2]}),
            of_group("gpu", "MinInstanceCount", 2),
        ),
        3,
    ),
    "and-or-not-true": (
        (),
        (
            parameter("Size", "big"),
            condition("Big", IS_BIG),
            condition(
                "Both",
                {
                    "Fn::And": [
                        {"Condition": "Big"},
                        {
                            "Fn::Or": [
                                {"Fn::Not": [{"Fn::Equals": ["a", "b"]}]},
                                {"Condition": "Big"},
                            ]
                        },
                    ]
                },
            ),
            of_group("gpu", "InstanceCount", {"Fn::If": ["Both", 4, 1]}),
        ),
        0,
    ),
    # A baseline whose InstanceGroups sits under Fn::If (true): the groups are the same.
    "groups-under-if-baseline": (
        (
            parameter("Size", "big"),
            condition("Big", IS_BIG),
            lambda t: props(t).update(
                InstanceGroups={"Fn::If": ["Big", props(t)["InstanceGroups"], []]}
            ),
        ),
        (),
        0,
    ),
    "groups-under-if-baseline-scale-in": (
        (
            parameter("Size", "big"),
            condition("Big", IS_BIG),
            lambda t: props(t).update(
                InstanceGroups={"Fn::If": ["Big", props(t)["InstanceGroups"], []]}
            ),
        ),
        (of_group("gpu", "InstanceCount", 2), of_group("gpu", "MinInstanceCount", 2)),
        3,
    ),
    # A group name through Fn::Sub hides a rename.
    "group-name-sub-rename": (
        (),
        (
            parameter("Prefix", "gpu"),
            of_group("gpu", "InstanceGroupName", {"Fn::Sub": "${Prefix}-b"}),
        ),
        3,
    ),
    "group-name-sub-both-sides-rename": (
        (
            parameter("Prefix", "g"),
            of_group("gpu", "InstanceGroupName", {"Fn::Sub": "${Prefix}pu"}),
        ),
        (
            parameter("Prefix", "t"),
            of_group("gpu", "InstanceGroupName", {"Fn::Sub": "${Prefix}pu"}),
        ),
        3,
    ),
    "group-name-join-same": (
        (),
        (of_group("gpu", "InstanceGroupName", {"Fn::Join": ["", ["g", "pu"]]}),),
        0,
    ),
    "group-name-select-same": (
        (),
        (of_group("gpu", "InstanceGroupName", {"Fn::Select": [1, ["cpu", "gpu"]]}),),
        0,
    ),
    "count-split-select-same": (
        (),
        (of_group("gpu", "InstanceCount", {"Fn::Select": [0, {"Fn::Split": [",", "4,8"]}]}),),
        0,
    ),
    # A resource Condition that goes false removes the cluster.
    "resource-condition-false": (
        (),
        (parameter("Size", "small"), condition("Big", IS_BIG), resource_condition("Big")),
        3,
    ),
    "resource-condition-true": (
        (),
        (parameter("Size", "big"), condition("Big", IS_BIG), resource_condition("Big")),
        0,
    ),
    # AWS::NoValue removes the property: a minimum dropped is harmless...
    "no-value-minimum": (
        (),
        (
            condition("Never", {"Fn::Equals": ["a", "b"]}),
            of_group("gpu", "MinInstanceCount", {"Fn::If": ["Never", 4, {"Ref": "AWS::NoValue"}]}),
        ),
        0,
    ),
    # ... the controller's SlurmConfig dropped changes its NodeType: refused.
    "no-value-slurm-config": (
        (),
        (
            condition("Never", {"Fn::Equals": ["a", "b"]}),
            of_group(
                "controller",
                "SlurmConfig",
                {"Fn::If": ["Never", {"NodeType": "Controller"}, {"Ref": "AWS::NoValue"}]},
            ),
        ),
        3,
    ),
    "slurm-config-removed-whole": ((), (of_group("controller", "SlurmConfig", None),), 3),
    # Fn::GetAtt in its string form is the same attribute.
    "get-att-string-form": (
        (),
        (of_group("gpu", "ExecutionRole", {"Fn::GetAtt": f"{GET_ATT_ROLE}.Arn"}),),
        0,
    ),
    "get-att-in-sub": (
        (),
        (of_group("gpu", "ExecutionRole", {"Fn::Sub": "${" + GET_ATT_ROLE + ".Arn}"}),),
        0,
    ),
    # The schema's insertionOrder: false lists: a new order is no change.
    "subnets-reordered": (
        (set_at("/properties/VpcConfig/Subnets", ["subnet-a", "subnet-b"]),),
        (set_at("/properties/VpcConfig/Subnets", ["subnet-b", "subnet-a"]),),
        0,
    ),
    "health-checks-reordered": (
        (),
        (of_group("gpu", "OnStartDeepHealthChecks", ["InstanceConnectivity", "InstanceStress"]),),
        0,
    ),
    "groups-reordered": ((), (lambda t: props(t)["InstanceGroups"].reverse(),), 0),
    # What plan cannot evaluate offline: cannot tell, counted as disruptive...
    "import-value-count": (
        (),
        (of_group("gpu", "InstanceCount", {"Fn::ImportValue": "gpu-count"}),),
        3,
    ),
    "import-value-name": ((), (cluster("ClusterName", {"Fn::ImportValue": "name"}),), 3),
    "unknown-condition-on-cluster": (
        (),
        (
            condition("Here", {"Fn::Equals": [{"Ref": "AWS::AccountId"}, "123456789012"]}),
            resource_condition("Here"),
        ),
        3,
    ),
    "unknown-condition-on-groups": (
        (),
        (
            condition("Here", {"Fn::Equals": [{"Ref": "AWS::AccountId"}, "123456789012"]}),
            lambda t: props(t).update(
                InstanceGroups={"Fn::If": ["Here", props(t)["InstanceGroups"], []]}
            ),
        ),
        3,
    ),
    "ssm-parameter-count": (
        (),
        (
            parameter("Count", "/gpu/count", "AWS::SSM::Parameter::Value<String>"),
            of_group("gpu", "InstanceCount", {"Ref": "Count"}),
        ),
        3,
    ),
    "orchestrator-hidden-in-if": (
        (),
        (
            condition("Here", {"Fn::Equals": [{"Ref": "AWS::Region"}, "us-east-1"]}),
            cluster(
                "Orchestrator",
                {"Fn::If": ["Here", {"Eks": {"ClusterArn": "arn"}}, {"Ref": "AWS::NoValue"}]},
            ),
        ),
        3,
    ),
    # ... but equal expressions on both sides are equal.
    "same-import-value-both": (
        (of_group("gpu", "InstanceCount", {"Fn::ImportValue": "gpu-count"}),),
        (of_group("gpu", "InstanceCount", {"Fn::ImportValue": "gpu-count"}),),
        0,
    ),
    # Refused as input (exit 2): what UpdateCluster refuses, and malformed groups.
    "duplicate-group-name": (
        (),
        (lambda t: props(t)["InstanceGroups"].append(copy.deepcopy(group(t, "gpu"))),),
        2,
    ),
    "malformed-baseline-groups": ((cluster("InstanceGroups", "gpu"),), (), 2),
    "malformed-new-group": ((), (lambda t: props(t)["InstanceGroups"].append("gpu2"),), 2),
}


@pytest.mark.parametrize("probe", sorted(PROBES))
def test_each_probe_has_the_exit_code_the_schema_and_guides_fix(
    plan_pairs: PlanPairs, probe: str
) -> None:
    old_edits, new_edits, expected = PROBES[probe]
    base = plan_pairs.templates["base"]
    assert verdict(edited(base, *old_edits), edited(base, *new_edits)) == expected


def test_cannot_tell_is_shown_with_the_expression(plan_pairs: PlanPairs) -> None:
    from hyperpod_constructs.tools.plan import render_text

    base = plan_pairs.templates["base"]
    new = edited(base, *PROBES["import-value-count"][1])
    text = render_text(plan_stack(base, new, stack="Probe", baseline="probe"))
    assert "<ImportValue gpu-count>" in text and "cannot tell" in text
    new = edited(base, *PROBES["unknown-condition-on-cluster"][1])
    result = plan_stack(base, new, stack="Probe", baseline="probe")
    assert result.clusters[0].change is ClusterChange.UNKNOWN
    assert "AWS::AccountId" in render_text(result) and "cannot tell" in result.headlines()[0]


def test_parameter_values_win_over_defaults(plan_pairs: PlanPairs) -> None:
    base = plan_pairs.templates["base"]
    new = edited(
        base,
        parameter("Count", "4", "Number"),
        of_group("gpu", "InstanceCount", {"Ref": "Count"}),
    )
    assert verdict(base, new) == 0
    assert verdict(base, new, new_parameters={"Count": "2"}) == 3
    assert verdict(base, new, new_parameters={"Count": "8"}) == 0


def test_pseudo_parameters_the_caller_knows_resolve(plan_pairs: PlanPairs) -> None:
    base = plan_pairs.templates["base"]
    new = edited(base, cluster("ClusterName", {"Fn::Sub": "${AWS::StackName}-train"}))
    assert verdict(base, new, pseudo={"AWS::StackName": "plan"}) == 0
    assert verdict(base, new, pseudo={"AWS::StackName": "other"}) == 3
    assert verdict(base, new) == 3  # unknown: cannot tell


# -- the command line: other stacks, Stage apps, any terminal encoding ------------------------


def run_cli(*argv: str) -> tuple[int, str, str]:
    args = _parser().parse_args(["plan", *argv])
    out, err = io.StringIO(), io.StringIO()
    return run_plan(args, stdout=out, stderr=err), out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def stage_apps(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two synths (main's and the branch's) of an app with two Stages of one stack each,
    with CDK's path metadata (as `cdk synth` writes it); the branch scales Prod's GPUs in."""
    from aws_cdk import Stack, Stage

    from tests.conftest import new_app
    from tests.support.plan_pairs import BASE, define

    folders = []
    for prod_gpus in (4, 2):
        outdir = tmp_path_factory.mktemp("stage-cdk.out")
        app = new_app(outdir=str(outdir))
        app.node.set_context("aws:cdk:enable-path-metadata", True)
        for stage, gpus in (("Prod", prod_gpus), ("Dev", 4)):
            from dataclasses import replace

            define(
                Stack(Stage(app, stage), "Training"),
                replace(BASE, gpu_count=gpus, gpu_min=gpus, cluster_name=f"{stage.lower()}-train"),
            )
        app.synth()
        folders.append(outdir)
    return folders[0], folders[1]


def template_of(folder: Path, stage: str) -> Path:
    (found,) = folder.glob(f"assembly-{stage}/*.template.json")
    return found


def test_stage_apps_are_named_by_path_and_a_baseline_may_be_an_assembly(
    stage_apps: tuple[Path, Path],
) -> None:
    main, branch = stage_apps
    app = ["--app", str(branch)]
    code, out, err = run_cli("--baseline", str(main), *app, "--stack", "Prod/Training")
    assert (code, err) == (3, ""), err
    assert "plan for stack Prod/Training" in out and "scale in 4 -> 2" in out
    code, out, err = run_cli("--baseline", str(main), *app, "--stack", "Dev/Training")
    assert (code, err) == (0, "")
    # The CloudFormation stack name works too, and so does a template file of the stage.
    code, _, err = run_cli(
        "--baseline", str(template_of(main, "Prod")), *app, "--stack", "Prod-Training"
    )
    assert (code, err) == (3, "")
    # Two stages share both assemblies: the stack must be named.
    code, _, err = run_cli("--baseline", str(main), *app)
    assert code == 2 and "choose one with --stack" in err


def test_another_stacks_template_is_refused_not_replaced(stage_apps: tuple[Path, Path]) -> None:
    main, branch = stage_apps
    dev = str(template_of(main, "Dev"))
    code, out, err = run_cli("--baseline", dev, "--app", str(branch), "--stack", "Prod/Training")
    assert code == 2 and out == ""
    assert "[other-stack]" in err and "Dev/" in err and "Prod/Training/" in err


def test_a_baseline_whose_cluster_is_another_stacks_is_refused_without_path_metadata(
    plan_pairs: PlanPairs,
) -> None:
    # PlanBase's template (cluster plan-train) planned as PlanClusterRenamed (plan-train-b):
    # PlanBase, in the same app, still has that cluster under that name.
    app = ["--app", plan_pairs.outdir]
    code, out, err = run_cli(
        "--baseline", plan_pairs.template_file("base"), *app, "--stack", "PlanClusterRenamed"
    )
    assert (code, out) == (2, "")
    assert "[other-stack]" in err and "the template of PlanBase" in err
    # A baseline whose cluster the named stack still has is planned.
    code, out, _ = run_cli(
        "--baseline", plan_pairs.template_file("base"), *app, "--stack", "PlanRenamed"
    )
    assert code == 3 and "group gpu: group removed" in out


def test_the_plan_prints_on_a_terminal_that_is_not_utf8(
    plan_pairs: PlanPairs, tmp_path: Path
) -> None:
    baseline = tmp_path / "main-\u00fcber-\u2192.template.json"
    baseline.write_text(json.dumps(plan_pairs.templates["base"]))
    for extra in ((), ("--stack", "PlanScaleIn")):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "hyperpod_constructs",
                "plan",
                "--baseline",
                str(baseline),
                "--app",
                plan_pairs.outdir,
                *extra,
            ],
            capture_output=True,
            cwd=ROOT,
            timeout=60,
            env={**__import__("os").environ, "PYTHONIOENCODING": "ascii"},
        )
        assert b"a bug in hyperpod_constructs" not in done.stderr, done.stderr
        assert done.returncode in (0, 3), done.stderr
        assert b"\\xfcber-\\u2192" in done.stdout


def test_parameter_on_the_command_line(plan_pairs: PlanPairs) -> None:
    baseline = ["--baseline", plan_pairs.template_file("base"), "--app", plan_pairs.outdir]
    # PlanParameter's GpuCount defaults to 4, as the baseline's literal counts.
    code, out, _ = run_cli(*baseline, "--stack", "PlanParameter")
    assert code == 0 and "parameters defaults," in out
    code, out, _ = run_cli(*baseline, "--stack", "PlanParameter", "--parameter", "GpuCount=2")
    assert code == 3 and "scale in 4 -> 2 nodes" in out
    assert "parameters defaults and --parameter" in out
    code, _, err = run_cli(*baseline, "--stack", "PlanParameter", "--parameter", "GpuCount")
    assert code == 2 and "expected KEY=VALUE" in err


FUNCTIONS = [
    "Ref",
    "Fn::GetAtt",
    "Fn::Sub",
    "Fn::Join",
    "Fn::Select",
    "Fn::Split",
    "Fn::FindInMap",
    "Fn::If",
    "Fn::Equals",
    "Fn::And",
    "Fn::Or",
    "Fn::Not",
    "Condition",
    "Fn::ImportValue",
]
scalars = st.one_of(
    st.sampled_from(["Big", "Sizes", "gpu", "count", "AWS::NoValue", "Role.Arn", "${Big}", "1"]),
    st.integers(-2, 3),
    st.booleans(),
    st.none(),
    st.text(max_size=4),
)
expressions = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(FUNCTIONS), inner, min_size=1, max_size=1),
        st.dictionaries(st.sampled_from(["InstanceCount", "InstanceGroupName", "A"]), inner),
    ),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(
    value=expressions,
    conditions=st.dictionaries(st.sampled_from(["Big", "Other"]), expressions, max_size=2),
    where=st.sampled_from(["ClusterName", "InstanceGroups", "group", "Condition"]),
)
def test_any_expression_is_planned_or_refused_by_name_never_a_crash(
    value: Any, conditions: dict[str, Any], where: str
) -> None:
    new: Template = {
        "Parameters": {"Size": {"Type": "String", "Default": "big"}},
        "Mappings": {"Sizes": {"gpu": {"count": 2}}},
        "Conditions": conditions,
        "Resources": {
            "Cluster": {
                "Type": "AWS::SageMaker::Cluster",
                "Properties": {
                    "ClusterName": "c",
                    "InstanceGroups": [{"InstanceGroupName": "gpu", "InstanceCount": 2}],
                },
            }
        },
    }
    old = copy.deepcopy(new)
    cluster_resource = new["Resources"]["Cluster"]
    if where == "Condition":
        cluster_resource["Condition"] = value
    elif where == "group":
        cluster_resource["Properties"]["InstanceGroups"][0]["InstanceCount"] = value
    else:
        cluster_resource["Properties"][where] = value
    for old_side, new_side in ((old, new), (new, old)):
        try:
            result = plan_stack(old_side, new_side, stack="Fuzz", baseline="fuzz")
        except BaselineError as error:
            assert error.code in ("malformed-groups", "duplicate-group", "not-a-template")
            continue
        assert result.exit_code in (0, 3)


# -- the metamorphic property ----------------------------------------------------------------

Path_ = tuple[Any, ...]


def leaves(value: Any, path: Path_ = ()) -> Iterator[Path_]:
    """Paths to every value of a cluster's properties: plain strings and numbers, and the
    objects and lists around them (none inside an intrinsic function)."""
    if isinstance(value, dict):
        if len(value) == 1 and next(iter(value)).startswith(("Fn::", "Ref")):
            return
        for key, item in value.items():
            yield from leaves(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from leaves(item, (*path, index))
    elif not isinstance(value, str | int) or isinstance(value, bool):
        return
    if path:
        yield path


def get(node: Any, path: Path_) -> Any:
    for part in path:
        node = node[part]
    return node


def put(node: Any, path: Path_, value: Any) -> None:
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value


def changed(value: Any) -> Any:
    if isinstance(value, int):
        return value // 2 if value > 1 else value + 1
    if isinstance(value, dict | list):
        return type(value)()  # emptied: a group without a name is refused (exit 2)
    return f"{value}-b"


def exit_code(old: Template, new: Template) -> tuple[int, Any]:
    try:
        result = plan_stack(old, new, stack="Probe", baseline="probe")
    except BaselineError as error:
        return 2, error.code
    return result.exit_code, summary(result)


def rewrite(template: Template, path: Path_, value: Any, kind: str) -> Template:
    """``template`` with the cluster property at ``path`` set to ``value`` written as an
    expression of ``kind`` that evaluates to it."""
    new = copy.deepcopy(template)
    text = str(value)
    expression: Any
    if kind == "parameter":
        new.setdefault("Parameters", {})["ProbeValue"] = {
            "Type": "Number" if isinstance(value, int) else "String",
            "Default": value,
        }
        expression = {"Ref": "ProbeValue"}
    elif kind == "mapping":
        new.setdefault("Mappings", {})["ProbeMap"] = {"probe": {"value": value}}
        expression = {"Fn::FindInMap": ["ProbeMap", "probe", "value"]}
    elif kind == "condition":
        new.setdefault("Parameters", {})["ProbeSwitch"] = {"Type": "String", "Default": "on"}
        new.setdefault("Conditions", {})["ProbeOn"] = {
            "Fn::Not": [{"Fn::Equals": [{"Ref": "ProbeSwitch"}, "off"]}]
        }
        expression = {"Fn::If": ["ProbeOn", value, changed(value)]}
    elif kind == "sub":
        half = len(text) // 2
        expression = {"Fn::Sub": [text[:half] + "${Rest}", {"Rest": text[half:]}]}
    elif kind == "join":
        half = len(text) // 2
        expression = {"Fn::Join": ["", [text[:half], text[half:]]]}
    else:
        expression = {"Fn::Select": [1, [changed(value), value]]}
    put(props(new), path, expression)
    return new


KINDS = ["parameter", "mapping", "condition", "sub", "join", "select"]


def summary(result: StackPlan) -> Any:
    return [
        (
            c.change,
            c.nodes_terminated,
            sorted((g.name, g.change, g.nodes_terminated) for g in c.groups),
        )
        for c in result.clusters
    ]


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_an_equivalent_expression_never_changes_the_verdict_nor_hides_a_change(
    example_templates: dict[str, Template], data: st.DataObject
) -> None:
    stack = data.draw(st.sampled_from(sorted(example_templates)), label="stack")
    template = example_templates[stack]
    paths = sorted(leaves(props(template)), key=repr)
    path = data.draw(st.sampled_from(paths), label="path")
    kind = data.draw(st.sampled_from(KINDS), label="kind")
    value = get(props(template), path)
    if isinstance(value, dict | list):
        kind = data.draw(st.sampled_from(["condition", "select"]), label="kind for an object")
    elif kind in ("sub", "join") and "${" in str(value):
        kind = "select"
    same = rewrite(template, path, value, kind)
    unchanged = plan_stack(template, same, stack=stack, baseline="probe")
    assert unchanged.exit_code == 0, (path, kind)
    assert all(c.change is ClusterChange.UNCHANGED for c in unchanged.clusters), (path, kind)
    # The same expression on the baseline's side: still nothing happens.
    assert plan_stack(same, template, stack=stack, baseline="probe").exit_code == 0
    # A change hidden behind the expression is the change written plainly.
    plain = copy.deepcopy(template)
    put(props(plain), path, changed(value))
    hidden = rewrite(template, path, changed(value), kind)
    assert exit_code(template, hidden) == exit_code(template, plain), (path, kind)

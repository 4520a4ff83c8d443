"""``plan`` of a cluster in a CDK ``NestedStack``, found through the parent's assembly: real
apps synthesized here (the cluster's GPU count is a parameter of the parent, passed to the
nested stack as CDK passes it), planned offline (the old assembly folder, or the parent's old
template file beside its nested template) and against the deployed parent and nested stack
(a CloudFormation fake and the HyperPod simulator served to real boto3 clients)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import CfnParameter, NestedStack, Stack

from hyperpod_constructs.__main__ import _parser
from hyperpod_constructs.tools.plan.cli import run_plan
from hyperpod_constructs.tools.plan.nested import passed_parameters
from hyperpod_constructs.tools.plan.references import follow
from hyperpod_constructs.tools.plan.resolve import evaluate
from tests.conftest import new_app
from tests.support.clock import VirtualClock
from tests.support.hyperpod_sim import HyperPodSimulator, constant
from tests.support.plan_pairs import BASE, define
from tests.support.sim_server import SimServer
from tests.support.stack_fake import FakeStack
from tests.support.watch_deployment import aws_environment
from tests.support.wire import REGION, WireFake
from tests.support.world import simulated_groups

NESTED = "AWS::CloudFormation::Stack"
LIVE_GPU = 3


def synthesize(outdir: Path, gpu_count: int) -> Path:
    """A parent ``Training`` whose ``GpuCount`` parameter (default ``gpu_count``) sizes the
    GPU group of a cluster in its nested stack ``Nested``."""
    app = new_app(outdir=str(outdir))
    parent = Stack(app, "Training")
    count = CfnParameter(parent, "GpuCount", type="Number", default=gpu_count)
    define(NestedStack(parent, "Nested"), BASE, count=count.value_as_number)
    app.synth()
    return outdir


@pytest.fixture(scope="module")
def apps(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``base`` (4 GPU nodes) and ``scale-in`` (2), each its own cloud assembly."""
    return {
        "base": synthesize(tmp_path_factory.mktemp("nested-base"), 4),
        "scale-in": synthesize(tmp_path_factory.mktemp("nested-scale-in"), 2),
    }


def plan(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_plan(_parser().parse_args(["plan", *argv]), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def templates(app: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The parent's template and its nested stack's (the one ``*.nested.template.json``)."""
    (nested,) = app.glob("*.nested.template.json")
    return json.loads((app / "Training.template.json").read_text()), json.loads(nested.read_text())


def gpu(document: Mapping[str, Any]) -> dict[str, Any]:
    (cluster,) = document["clusters"]
    return next(g for g in cluster["groups"] if g["name"] == "gpu")


def test_the_cluster_is_in_the_nested_template_only(apps: dict[str, Path]) -> None:
    parent, nested = templates(apps["base"])
    types = {r["Type"] for r in parent["Resources"].values()}
    assert NESTED in types and "AWS::SageMaker::Cluster" not in types
    assert "AWS::SageMaker::Cluster" in {r["Type"] for r in nested["Resources"].values()}


def test_an_unchanged_app_plans_the_nested_cluster_and_exits_0(apps: dict[str, Path]) -> None:
    app = str(apps["base"])
    code, out, err = plan("--app", app, "--baseline", app, "--stack", "Training", "--json")
    assert (code, err) == (0, "")
    document = json.loads(out)
    assert document["stack"] == "Training"
    assert (gpu(document)["change"], gpu(document)["instance_count"]) == (
        "unchanged",
        {"old": 4, "new": 4},
    )


@pytest.mark.parametrize("baseline", ["folder", "parent template file"])
def test_the_parents_parameter_reaches_the_nested_cluster(
    apps: dict[str, Path], baseline: str
) -> None:
    # The parent's GpuCount default 4 -> 2: the nested cluster's group scales in, as the
    # parent passes it (without the parent's value the count would be "cannot tell").
    old = apps["base"] if baseline == "folder" else apps["base"] / "Training.template.json"
    code, out, err = plan(
        "--app", str(apps["scale-in"]), "--baseline", str(old), "--stack", "Training", "--json"
    )
    assert (code, err) == (3, "")
    group = gpu(json.loads(out))
    assert (group["change"], group["nodes_terminated"]) == ("scale-in", 2)
    assert group["instance_count"] == {"old": 4, "new": 2}
    # The same value given for both sides is no change.
    code, out, err = plan(
        "--app",
        str(apps["scale-in"]),
        "--baseline",
        str(old),
        "--stack",
        "Training",
        "--parameter",
        "GpuCount=4",
    )
    assert (code, err) == (0, ""), out


def test_a_value_the_parent_passes_that_changes_on_deploy_is_cannot_tell() -> None:
    # A create-only property of the parent's bucket changes: it is replaced, so the Ref the
    # parent passes is a new name, known only when CloudFormation deploys it.
    def parent(bucket_name: str) -> dict[str, Any]:
        return {
            "Resources": {
                "Bucket": {"Type": "AWS::S3::Bucket", "Properties": {"BucketName": bucket_name}},
                "Nested": {
                    "Type": NESTED,
                    "Properties": {
                        "TemplateURL": "https://example.com/n.json",
                        "Parameters": {"Bucket": {"Ref": "Bucket"}, "Count": "4"},
                    },
                },
            }
        }

    old, same, replaced = (evaluate(parent(n)) for n in ("a-bucket", "a-bucket", "b-bucket"))
    kept = passed_parameters(old, follow(old, same), "Nested")
    assert (kept.old, kept.new, kept.undecided) == ({"Count": "4"}, {"Count": "4"}, ())
    assert list(kept.same) == ["Bucket"]
    moved = passed_parameters(old, follow(old, replaced), "Nested")
    assert moved.same == {} and len(moved.undecided) == 1
    assert "parameter Bucket" in moved.undecided[0]


# -- the deployed parent and its nested stack ---------------------------------------------------


def deployed(apps: dict[str, Path], app: str) -> Iterator[tuple[SimServer, str]]:
    """The base app deployed (parent and nested stack, the nested cluster in the simulator);
    yields the server and the assembly folder of ``app``."""
    parent_template, nested_template = templates(apps["base"])
    (nested_id,) = [k for k, r in parent_template["Resources"].items() if r["Type"] == NESTED]
    (cluster_id,) = [
        k for k, r in nested_template["Resources"].items() if r["Type"] == "AWS::SageMaker::Cluster"
    ]
    (passed,) = parent_template["Resources"][nested_id]["Properties"]["Parameters"]
    clock = VirtualClock()
    sim = HyperPodSimulator(
        clock,
        simulated_groups(nested_template, constant(LIVE_GPU), {passed: "4"}),
        name="plan-train",
    )
    clock.advance(2 * 3600)
    sim.advance()
    parent = FakeStack(clock, "Training", parent_template)
    child = FakeStack(clock, f"Training-{nested_id}-ABC", nested_template, {passed: "4"})
    child.create(cluster_id, physical_id=sim.arn)
    parent.create(nested_id, physical_id=child.stack_id)
    for stack in (parent, child):
        stack.status = "UPDATE_COMPLETE"

    def handler(operation: str, params: dict[str, Any]) -> dict[str, Any]:
        named = params.get("StackName")
        stack = child if named in (child.name, child.stack_id) else parent
        return stack.fake.handler(operation, params)

    fake = WireFake("cloudformation", handler)
    with SimServer({"sagemaker": sim.fake, "cloudformation": fake}, clock=clock.time) as server:
        yield server, str(apps[app])
    assert server.errors == []


@pytest.mark.parametrize(
    ("app", "given", "code"),
    [("base", [], 0), ("scale-in", [], 0), ("base", ["--parameter", "GpuCount=2"], 3)],
)
def test_the_deployed_nested_stack_is_the_baseline_with_live_counts(
    monkeypatch: pytest.MonkeyPatch, apps: dict[str, Path], app: str, given: list[str], code: int
) -> None:
    # cdk deploy keeps the parent's deployed GpuCount (4) over a new default; a value given
    # with --parameter reaches the nested cluster through the parent.
    for server, folder in deployed(apps, app):
        aws_environment(monkeypatch, server.url)
        argv = ["--app", folder, "--stack", "Training", "--region", REGION, "--json", *given]
        outcome = plan(*argv)
        operations = {operation for _, operation in server.requests}
    assert outcome[0] == code and outcome[2] == "", outcome
    group = gpu(json.loads(outcome[1]))
    assert group["live_count"] == LIVE_GPU
    if code == 3:
        # 2 of the 3 running nodes go: the target is 2.
        assert (group["change"], group["nodes_terminated"]) == ("scale-in", 1)
    assert "DescribeStackResource" in operations and "DescribeCluster" in operations

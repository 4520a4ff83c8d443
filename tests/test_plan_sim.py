"""``plan --stack`` against a deployed stack: the HyperPod simulator and a CloudFormation stack
fake served on 127.0.0.1 to real boto3 clients (as ``watch`` is tested). The baseline is the
deployed template (GetTemplate) with its parameter values (DescribeStacks), and the nodes a
change terminates are counted from DescribeCluster's live CurrentCount."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hyperpod_constructs.__main__ import _parser
from hyperpod_constructs.tools.plan.cli import run_plan
from tests.support.clock import VirtualClock
from tests.support.hyperpod_sim import HyperPodSimulator, constant
from tests.support.plan_pairs import PlanPairs, plan_pairs, stack_name
from tests.support.sim_server import SimServer
from tests.support.stack_fake import FakeStack
from tests.support.watch_deployment import aws_environment
from tests.support.wire import REGION
from tests.support.world import simulated_groups

__all__ = ["plan_pairs"]

ROOT = Path(__file__).resolve().parent.parent
LIVE_GPU = 3
"""Capacity allows 3 of the GPU group's 4 nodes: the live count differs from the target."""


@dataclass
class Deployed:
    """A stack deployed from one variant's template, served with its cluster."""

    pairs: PlanPairs
    stack: FakeStack
    sim: HyperPodSimulator
    server: SimServer

    def plan(self, monkeypatch: pytest.MonkeyPatch, *extra: str) -> tuple[int, str, str]:
        aws_environment(monkeypatch, self.server.url)
        args = _parser().parse_args(
            ["plan", "--app", self.pairs.outdir, "--stack", self.stack.name, *extra]
        )
        out, err = io.StringIO(), io.StringIO()
        code = run_plan(args, stdout=out, stderr=err)
        return code, out.getvalue(), err.getvalue()


def deploy(
    pairs: PlanPairs, variant: str, *, as_stack: str, parameters: Mapping[str, str] | None = None
) -> Iterator[Deployed]:
    template = pairs.templates[variant]
    clock = VirtualClock()
    sim = HyperPodSimulator(
        clock, simulated_groups(template, constant(LIVE_GPU), parameters), name="plan-train"
    )
    clock.advance(2 * 3600)  # inside the 3-hour window: the group has what capacity allows
    sim.advance()
    stack = FakeStack(clock, stack_name(as_stack), template, parameters)
    (cluster_id,) = [
        k for k, r in template["Resources"].items() if r["Type"] == "AWS::SageMaker::Cluster"
    ]
    stack.create(cluster_id, physical_id=sim.arn)
    stack.status = "UPDATE_COMPLETE"
    with SimServer(
        {"sagemaker": sim.fake, "cloudformation": stack.fake}, clock=clock.time
    ) as server:
        yield Deployed(pairs, stack, sim, server)
    assert server.errors == []


@pytest.fixture
def base_as_scale_in(plan_pairs: PlanPairs) -> Iterator[Deployed]:
    """``PlanScaleIn`` deployed from the base template; cdk.out holds its scale-in."""
    yield from deploy(plan_pairs, "base", as_stack="scale-in")


def test_the_deployed_stack_is_the_baseline_and_live_counts_count_the_nodes(
    monkeypatch: pytest.MonkeyPatch, base_as_scale_in: Deployed
) -> None:
    live = {
        g["InstanceGroupName"]: g["CurrentCount"]
        for g in base_as_scale_in.sim.describe()["InstanceGroups"]
    }
    assert live["gpu"] == LIVE_GPU, "the simulated group runs fewer nodes than its target"
    code, out, err = base_as_scale_in.plan(monkeypatch, "--region", REGION, "--json")
    assert (code, err) == (3, "")
    document = json.loads(out)
    assert document["baseline"] == "the deployed stack PlanScaleIn"
    assert document["live_counts"] is True and document["parameters"] == "as deployed"
    groups = {g["name"]: g for g in document["clusters"][0]["groups"]}
    gpu = groups["gpu"]
    assert (gpu["change"], gpu["live_count"], gpu["nodes_terminated"]) == ("scale-in", 3, 1)
    assert gpu["instance_count"] == {"old": 4, "new": 2}
    assert groups["controller"]["live_count"] == 1
    gate = document["clusters"][0]["gate"]
    # A lowered minimum: the re-armed gate waits for no group (the arm's update_scope).
    assert not gate["waits"] and gate["waits_for"] == []
    assert "minimum lowered 4 -> 2" in gate["reason"]
    operations = {operation for _, operation in base_as_scale_in.server.requests}
    assert operations == {"GetTemplate", "DescribeStacks", "DescribeCluster"}


def test_a_rename_terminates_the_nodes_that_run(
    monkeypatch: pytest.MonkeyPatch, plan_pairs: PlanPairs
) -> None:
    for deployed in deploy(plan_pairs, "base", as_stack="renamed"):
        code, out, err = deployed.plan(monkeypatch, "--region", REGION)
    assert code == 3 and err == ""
    assert "! plan-train / gpu: group removed: 3 nodes terminated (in service now)" in out
    assert "node counts from the running clusters" in out.splitlines()[0]


def test_parameters_keep_their_deployed_values(
    monkeypatch: pytest.MonkeyPatch, plan_pairs: PlanPairs
) -> None:
    # Deployed with GpuCount=8 (the template's default is 4): cdk deploy keeps 8, no change.
    for deployed in deploy(
        plan_pairs, "parameter", as_stack="parameter", parameters={"GpuCount": "8"}
    ):
        code, out, err = deployed.plan(monkeypatch, "--region", REGION, "--json")
    assert (code, err) == (0, "")
    (cluster,) = json.loads(out)["clusters"]
    gpu = next(g for g in cluster["groups"] if g["name"] == "gpu")
    assert gpu["change"] == "unchanged" and gpu["instance_count"] == {"old": 8, "new": 8}
    assert cluster["gate"]["waits"] is False


def test_a_cluster_hyperpod_does_not_know_falls_back_to_the_targets(
    monkeypatch: pytest.MonkeyPatch, base_as_scale_in: Deployed
) -> None:
    base_as_scale_in.sim.deleted = True
    code, out, _ = base_as_scale_in.plan(monkeypatch, "--region", REGION, "--json")
    document = json.loads(out)
    assert code == 3 and document["live_counts"] is True
    gpu = next(g for g in document["clusters"][0]["groups"] if g["name"] == "gpu")
    assert (gpu["live_count"], gpu["nodes_terminated"]) == (None, 2)
    assert document["notes"] == ["cluster plan-train not found: counts from its targets"]


def test_errors_reading_aws_exit_2_with_one_line(
    monkeypatch: pytest.MonkeyPatch, base_as_scale_in: Deployed, plan_pairs: PlanPairs
) -> None:
    # A stack that is in cdk.out but not deployed.
    aws_environment(monkeypatch, base_as_scale_in.server.url)
    out, err = io.StringIO(), io.StringIO()
    args = _parser().parse_args(
        ["plan", "--app", plan_pairs.outdir, "--stack", stack_name("renamed"), "--region", REGION]
    )
    assert run_plan(args, stdout=out, stderr=err) == 2
    assert err.getvalue().startswith("error: stack PlanRenamed is not deployed in us-east-1")
    # No credentials.
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    args = _parser().parse_args(
        ["plan", "--app", plan_pairs.outdir, "--stack", stack_name("scale-in"), "--region", REGION]
    )
    err = io.StringIO()
    assert run_plan(args, stdout=io.StringIO(), stderr=err) == 2
    assert err.getvalue().startswith("error: no AWS credentials found")
    # No region.
    aws_environment(monkeypatch, base_as_scale_in.server.url)
    args = _parser().parse_args(["plan", "--app", plan_pairs.outdir, "--stack", "PlanScaleIn"])
    err = io.StringIO()
    assert run_plan(args, stdout=io.StringIO(), stderr=err) == 2
    assert err.getvalue().startswith("error: no AWS region")
    assert base_as_scale_in.server.requests == [("cloudformation", "GetTemplate")]


def test_the_command_line_against_the_endpoint_and_an_unreachable_one(
    plan_pairs: PlanPairs, base_as_scale_in: Deployed
) -> None:
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("AWS_") or key == "AWS_EC2_METADATA_DISABLED"
    }
    environment |= {
        "AWS_ACCESS_KEY_ID": "AKIDPLANTESTPLANTEST",
        "AWS_SECRET_ACCESS_KEY": "plan-test-secret",
        "AWS_CONFIG_FILE": "/dev/null",
        "AWS_SHARED_CREDENTIALS_FILE": "/dev/null",
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_ENDPOINT_URL": base_as_scale_in.server.url,
    }
    command = [
        sys.executable,
        "-m",
        "hyperpod_constructs",
        "plan",
        "--app",
        plan_pairs.outdir,
        "--stack",
        "PlanScaleIn",
        "--region",
        REGION,
    ]

    def run(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            command, capture_output=True, text=True, env=env, cwd=ROOT, timeout=120
        )

    served = run(environment)
    assert served.returncode == 3 and served.stderr == ""
    assert "1 node terminated (from 3, in service now" in served.stdout
    closed = run(environment | {"AWS_ENDPOINT_URL": "http://127.0.0.1:9"})
    assert closed.returncode == 2 and closed.stdout == ""
    assert closed.stderr.startswith("error: cannot reach AWS for cloudformation:GetTemplate")
    assert closed.stderr.count("\n") == 1 and "Traceback" not in closed.stderr


@pytest.mark.parametrize("count", [-1, True, "3", 2.0])
def test_a_live_count_outside_the_apis_shape_is_refused_not_read_as_a_count(count: object) -> None:
    # DescribeCluster's CurrentCount is a count of nodes (0 or more; the simulator's server
    # cannot even send another, as it checks the botocore model): an answer outside that shape
    # is refused (exit 2), never clamped into "0 nodes terminated".
    from hyperpod_constructs.tools.plan.aws import DeployedReader, FatalError

    reader = DeployedReader.__new__(DeployedReader)
    answer = {"InstanceGroups": [{"InstanceGroupName": "gpu", "CurrentCount": count}]}
    reader.describe_cluster = lambda cluster: answer  # type: ignore[method-assign]
    with pytest.raises(FatalError, match=r"CurrentCount .* for group 'gpu': not a count"):
        reader.group_counts("plan-train")


class _Short(str):
    """A ``Ref`` or ``GetAtt`` written in CloudFormation's short form (``!Ref x``)."""

    tag = "!Ref"


class _ShortGetAtt(_Short):
    tag = "!GetAtt"


def _short_forms(value: object) -> object:
    """``value`` with every ``Ref`` and two-part ``Fn::GetAtt`` in the short form."""
    if isinstance(value, dict):
        if list(value) == ["Ref"] and isinstance(value["Ref"], str):
            return _Short(value["Ref"])
        attribute = value.get("Fn::GetAtt")
        if len(value) == 1 and isinstance(attribute, list) and len(attribute) == 2:
            return _ShortGetAtt(".".join(attribute))
        return {k: _short_forms(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_short_forms(v) for v in value]
    return value


def as_yaml(template: Mapping[str, object]) -> str:
    """``template`` as the YAML a stack deployed from YAML has, short forms included."""
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    for kind in (_Short, _ShortGetAtt):
        Dumper.add_representer(kind, lambda d, v: d.represent_scalar(v.tag, str(v)))
    return yaml.dump(_short_forms(template), Dumper=Dumper, sort_keys=False)


def serve_template_as(deployed: Deployed, text: str) -> None:
    """GetTemplate of ``deployed`` answers ``text`` as the body (the rest as deployed)."""
    served = deployed.stack.fake.handler

    def handler(operation: str, params: dict[str, Any]) -> dict[str, Any]:
        answer = served(operation, params)
        return {**answer, "TemplateBody": text} if operation == "GetTemplate" else answer

    deployed.stack.fake.handler = handler


def test_a_stack_deployed_from_yaml_is_read_as_its_json_would_be(
    monkeypatch: pytest.MonkeyPatch, plan_pairs: PlanPairs
) -> None:
    # GetTemplate returns the body as text for a stack deployed from YAML: the same template
    # in YAML (with !Ref and !GetAtt) gives the same plan as in JSON.
    text = as_yaml(plan_pairs.templates["base"])
    assert "!Ref " in text and "!GetAtt " in text
    plans = []
    for body in ("json", "yaml"):
        for deployed in deploy(plan_pairs, "base", as_stack="scale-in"):
            if body == "yaml":
                serve_template_as(deployed, text)
            code, out, err = deployed.plan(monkeypatch, "--region", REGION, "--json")
            assert (code, err) == (3, ""), err
            plans.append(json.loads(out))
    assert plans[0] == plans[1]
    groups = {g["name"]: g for g in plans[1]["clusters"][0]["groups"]}
    assert (groups["gpu"]["change"], groups["gpu"]["nodes_terminated"]) == ("scale-in", 1)

"""The CDK Pipelines recipe of docs/cli.md, run as written: its code block is executed, a real
``aws_cdk.pipelines.CodePipeline`` with two stages in two accounts is synthesized, and the
pipeline is read back: one CodeBuild action per stack runs before the stage's CloudFormation
actions, its commands are a ``preflight`` and a ``plan`` command line this package's parser
takes (the stack, its region and the role of the stage's account), and the step may assume
exactly that role."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

from aws_cdk import Environment, Stack, Stage, pipelines

from hyperpod_constructs.__main__ import _parser
from tests.conftest import new_app

DOC = Path(__file__).resolve().parent.parent / "docs" / "cli.md"
HEADING = "## In a CDK Pipelines pipeline: plan each stage before it deploys"
TOOLS = Environment(account="111111111111", region="us-east-1")
PREFIX = ["python", "-m", "hyperpod_constructs"]
STAGES = {"Dev": ("222222222222", "us-west-2"), "Prod": ("333333333333", "eu-west-1")}


def recipe() -> dict[str, Any]:
    """The recipe's code block, executed."""
    section = DOC.read_text(encoding="utf-8").split(HEADING, 1)[1]
    (code,) = re.findall(r"```python\n(.*?)```", section.split("\n## ", 1)[0], re.S)
    namespace: dict[str, Any] = {"__name__": "recipe"}
    exec(compile(code, str(DOC), "exec"), namespace)
    return namespace


def _pipeline(tmp: Path) -> dict[str, Any]:
    plan_steps = recipe()["plan_steps"]
    app = new_app(outdir=str(tmp / "cdk.out"))
    tools = Stack(app, "Delivery", env=TOOLS)
    source = pipelines.CodePipelineSource.connection(
        "my-org/training",
        "main",
        connection_arn="arn:aws:codeconnections:us-east-1:111111111111:connection/x",
    )
    synth = pipelines.ShellStep("Synth", input=source, commands=["npx cdk synth"])
    pipeline = pipelines.CodePipeline(tools, "Pipeline", synth=synth, cross_account_keys=True)
    for name, (account, region) in STAGES.items():
        stage = Stage(app, name, env=Environment(account=account, region=region))
        Stack(stage, "Training")
        Stack(stage, "Network")
        pipeline.add_stage(stage, pre=plan_steps(stage, synth))
    assembly = app.synth()
    return assembly.get_stack_by_name("Delivery").template  # type: ignore[no-any-return]


def test_the_recipe_plans_every_stack_of_every_stage_before_it_deploys(tmp_path: Path) -> None:
    template = _pipeline(tmp_path)
    resources = template["Resources"]
    (pipeline,) = [r for r in resources.values() if r["Type"] == "AWS::CodePipeline::Pipeline"]
    projects = {
        logical_id: json.loads(r["Properties"]["Source"]["BuildSpec"])
        for logical_id, r in resources.items()
        if r["Type"] == "AWS::CodeBuild::Project"
        and isinstance(r["Properties"]["Source"].get("BuildSpec"), str)
    }
    planned = set()
    for name, (account, region) in STAGES.items():
        (stage,) = [s for s in pipeline["Properties"]["Stages"] if s["Name"] == name]
        actions = stage["Actions"]
        deploys = [a for a in actions if a["ActionTypeId"]["Provider"] == "CloudFormation"]
        plans = [a for a in actions if a["ActionTypeId"]["Provider"] == "CodeBuild"]
        assert len(plans) == 2 and deploys
        assert max(a["RunOrder"] for a in plans) < min(a["RunOrder"] for a in deploys)
        for action in plans:
            spec = projects[action["Configuration"]["ProjectName"]["Ref"]]
            assert "on-failure" not in json.dumps(spec)  # a failing command fails the build
            commands = spec["phases"]["build"]["commands"]
            parsed = [_parser().parse_args(shlex.split(c)[3:]) for c in commands]
            assert [shlex.split(c)[:3] for c in commands] == [PREFIX, PREFIX]
            assert [a.command for a in parsed] == ["preflight", "plan"]
            stacks = set()
            for args in parsed:
                assert (args.app, args.region) == (".", region)
                assert args.role_arn == f"arn:aws:iam::{account}:role/hyperpod-plan"
                assert args.role_session_name == f"plan-{name}"
                stacks.add(args.stack)
            assert parsed[1].baseline is None  # the deployed stack is the baseline
            (stack,) = stacks
            planned.add(stack)
    assert planned == {f"{s}-{n}" for s in STAGES for n in ("Training", "Network")}
    assumed = {
        json.dumps(statement["Resource"])
        for r in resources.values()
        if r["Type"] == "AWS::IAM::Policy"
        for statement in r["Properties"]["PolicyDocument"]["Statement"]
        if statement["Action"] == "sts:AssumeRole"
    }
    for account, _ in STAGES.values():
        assert json.dumps(f"arn:aws:iam::{account}:role/hyperpod-plan") in assumed


def test_a_stage_without_an_account_is_refused_by_the_recipe(tmp_path: Path) -> None:
    plan_steps = recipe()["plan_steps"]
    app = new_app(outdir=str(tmp_path / "cdk.out"))
    stage = Stage(app, "Anywhere")
    Stack(stage, "Training")
    try:
        plan_steps(stage, None)
    except ValueError as error:
        assert "Anywhere/Training: give its stage env=" in str(error)
    else:
        raise AssertionError("a stack without an account was planned")

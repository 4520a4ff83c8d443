"""``watch`` before it talks to AWS: what it reads from ``cdk.out``, bad input, missing
credentials, region or dependencies (exit 2, one line, no traceback), and its import cost."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import Environment, Stage
from aws_cdk.cx_api import CloudAssembly

from examples.fsdp import FsdpTrainingStack
from hyperpod_constructs.__main__ import main
from hyperpod_constructs.tools.watch.target import TargetError, load_targets, select_target
from tests.conftest import new_app

ROOT = Path(__file__).resolve().parent.parent
STACK = ("--stack", "FsdpTraining")


@pytest.fixture(scope="module")
def cdk_out(example_assembly: CloudAssembly) -> str:
    return str(example_assembly.directory)


def gated_groups(template: dict[str, Any]) -> dict[str, tuple[int, int]]:
    """What the gate resource of a template waits for, read from the template directly."""
    (gate,) = [r for r in template["Resources"].values() if r["Type"].endswith("MinCountGate")]
    return {
        r["GroupName"]: (int(r["MinCount"]), int(r["TargetCount"]))
        for r in gate["Properties"]["Requirements"]
    }


def test_targets_of_the_example_app_match_the_templates(
    cdk_out: str, example_templates: dict[str, dict[str, Any]]
) -> None:
    targets = load_targets(cdk_out)
    gated = {
        name: template
        for name, template in example_templates.items()
        if any(r["Type"].endswith("MinCountGate") for r in template["Resources"].values())
    }
    assert sorted(t.stack_name for t in targets) == sorted(gated)
    for target in targets:
        template = gated[target.stack_name]
        groups = {g.name: (g.min_count, g.target_count) for g in target.groups}
        assert groups == gated_groups(template)
        condition = template["Resources"][target.wait_condition_id]
        assert condition["Type"] == "AWS::CloudFormation::WaitCondition"
        cluster = template["Resources"][target.cluster_logical_id]
        assert target.cluster_name == cluster["Properties"]["ClusterName"]
        assert target.region is None  # the examples are environment-agnostic


def test_a_stack_in_a_stage_is_watched_by_its_cloudformation_name(tmp_path: Path) -> None:
    app = new_app(outdir=str(tmp_path / "cdk.out"))
    stage = Stage(app, "Prod", env=Environment(account="123456789012", region="eu-west-1"))
    FsdpTrainingStack(stage, "Training")
    assembly = app.synth()
    (stack,) = assembly.nested_assemblies[0].nested_assembly.stacks

    (target,) = load_targets(assembly.directory)
    assert (target.stack_name, target.display_name) == (stack.stack_name, "Prod/Training")
    assert target.stack_name == "Prod-Training" and target.region == "eu-west-1"
    for name in ("Prod-Training", "Prod/Training"):
        assert select_target([target], stack=name, cluster=None, source="x") == target


def test_choosing_among_several_gated_clusters(cdk_out: str) -> None:
    targets = load_targets(cdk_out)
    with pytest.raises(TargetError, match=r"^4 gated clusters in x; choose one with --stack "):
        select_target(targets, stack=None, cluster=None, source="x")
    picked = select_target(targets, stack=None, cluster="hetero", source="x")
    assert picked.stack_name == "Heterogeneous"
    with pytest.raises(TargetError, match="no gated cluster matches stack MinimalDev in x"):
        select_target(targets, stack="MinimalDev", cluster=None, source="x")


def test_a_count_that_is_neither_a_number_nor_a_parameter_cannot_be_watched(
    tmp_path: Path,
) -> None:
    """An imported value as a gated count: the gate resolves it at deploy time, but watch
    cannot read it from the stack, and says so instead of guessing."""
    from aws_cdk import Fn, Stack, Token

    from hyperpod_constructs import (
        DeepHealthCheck,
        HyperPodInstanceType,
        HyperPodSlurmCluster,
        InstanceGroup,
    )

    app = new_app(outdir=str(tmp_path / "cdk.out"))
    stack = Stack(app, "Imported")
    HyperPodSlurmCluster(
        stack,
        "Cluster",
        cluster_name="imported",
        instance_groups=[
            InstanceGroup.controller("controller", instance_type=HyperPodInstanceType.ML_M5_XLARGE),
            InstanceGroup.compute(
                "gpu",
                instance_type=HyperPodInstanceType.ML_P5_48XLARGE,
                instance_count=Token.as_number(Fn.import_value("GpuCount")),
                min_instance_count=4,
                deep_health_checks=[DeepHealthCheck.INSTANCE_STRESS],
                partition="gpu",
            ),
        ],
    )
    assembly = app.synth()
    (target,) = load_targets(assembly.directory)
    assert target.groups == ()
    with pytest.raises(TargetError) as raised:
        select_target([target], stack=None, cluster=None, source="x")
    assert str(raised.value) == (
        "cannot watch imported (stack Imported): group gpu: minimum 4 / target "
        "<ImportValue GpuCount> is neither a number nor a stack parameter in the template"
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--cluster", "nope"], "error: no gated cluster matches cluster nope in {app}; gated "),
        ([], "error: 4 gated clusters in {app}; choose one with --stack FsdpTraining / "),
        (["--app", "missing-folder"], "error: folder not found: missing-folder"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    argv: list[str], message: str, cdk_out: str, capsys: pytest.CaptureFixture[str]
) -> None:
    app = ["--app", cdk_out] if "--app" not in argv else []
    code = main(["watch", *app, *argv])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    (line,) = err.splitlines()
    assert line.startswith(message.format(app=cdk_out))


def test_no_cdk_out_here_says_what_to_do(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["watch", "--cluster", "fsdp-train"]) == 2
    assert capsys.readouterr().err == (
        "error: folder not found: cdk.out; run watch where cdk synth wrote cdk.out, pass --app, "
        "or pass --stack to read the deployed template\n"
    )


@pytest.mark.parametrize("value", ["0", "3601", "fast"])
def test_interval_out_of_range_is_a_usage_error(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["watch", "--interval", value]) == 2
    err = capsys.readouterr().err
    assert "argument --interval:" in err and "Traceback" not in err
    if value != "fast":
        assert f"{value} is not allowed; allowed: 1..3600 seconds" in err


def test_missing_rich_or_boto3_is_one_line(
    cdk_out: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "rich", None)  # import rich -> ImportError
    assert main(["watch", "--app", cdk_out, "--stack", "FsdpTraining"]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line == (
        "error: watch needs boto3 and rich (rich is missing): "
        "pip install 'hyperpod-constructs[watch]'"
    )


def _clean_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """No credentials anywhere: no AWS_* variables, empty config files, no instance metadata."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(
        HOME=str(tmp_path),
        AWS_CONFIG_FILE="/dev/null",
        AWS_SHARED_CREDENTIALS_FILE="/dev/null",
        AWS_EC2_METADATA_DISABLED="true",
        PYTHONPATH=str(ROOT),
    )
    env.update(extra)
    return env


@pytest.mark.parametrize(
    ("extra_env", "message"),
    [
        (
            {"AWS_DEFAULT_REGION": "us-east-1"},
            "error: no AWS credentials found (environment, AWS config and credentials files, "
            "SSO, or an instance role); configure them as for the AWS CLI",
        ),
        (
            {"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "x"},
            "error: no AWS region: pass --region, set AWS_DEFAULT_REGION, or set a region in "
            "your AWS config",
        ),
    ],
)
def test_missing_credentials_or_region_exit_2_without_traceback(
    extra_env: dict[str, str], message: str, cdk_out: str, tmp_path: Path
) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "hyperpod_constructs", "watch", "--app", cdk_out, *STACK],
        capture_output=True,
        text=True,
        env=_clean_env(tmp_path, **extra_env),
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert (result.returncode, result.stdout, result.stderr) == (2, "", message + "\n")


def test_a_stack_not_in_cdk_out_is_named_with_the_stacks_there(tmp_path: Path) -> None:
    """A Stage app, ``watch --stack Nope`` without a region: the stack is not in cdk.out (and
    which are) comes first, not only the region the deployed-stack lookup would need."""
    app = new_app(outdir=str(tmp_path / "cdk.out"))
    FsdpTrainingStack(Stage(app, "Prod"), "Training")
    app.synth()
    result = subprocess.run(
        [sys.executable, "-m", "hyperpod_constructs", "watch", "--stack", "Nope"],
        capture_output=True,
        text=True,
        env=_clean_env(tmp_path, AWS_ACCESS_KEY_ID="AKIDEXAMPLE", AWS_SECRET_ACCESS_KEY="x"),
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert (result.returncode, result.stdout) == (2, "")
    (line,) = result.stderr.splitlines()
    assert line.startswith(
        "error: stack Nope is not in cdk.out (its stacks: Prod/Training), and the deployed "
        "stack could not be read: no AWS region"
    ), line


def _imported(argv: list[str], tmp_path: Path) -> set[str]:
    result = subprocess.run(
        [sys.executable, "-X", "importtime", *argv],
        capture_output=True,
        text=True,
        env=_clean_env(tmp_path),
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert [line for line in lines if not line.startswith("import time:")] == []
    return {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in lines}


@pytest.mark.parametrize(
    "argv",
    [
        ["-c", "import hyperpod_constructs.__main__, hyperpod_constructs.tools.watch.cli"],
        ["-m", "hyperpod_constructs", "watch", "--help"],
    ],
)
def test_watch_stays_import_light_until_it_runs(argv: list[str], tmp_path: Path) -> None:
    heavy = {"boto3", "botocore", "rich", "aws_cdk", "jsii", "constructs"}
    assert _imported(argv, tmp_path) & heavy == set()

"""The README's example is real: it synthesizes, and its error message is the one users get;
so is the report docs/guide.md shows."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App

from tests.conftest import ROOT
from tests.support.cdk_cli import run_app

README = (ROOT / "README.md").read_text()


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.DOTALL)


def _run_example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str) -> dict[str, Any]:
    (tmp_path / "lifecycle").mkdir()
    (tmp_path / "lifecycle" / "on_create.sh").write_text("#!/bin/bash\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CDK_OUTDIR", str(tmp_path / "out"))
    namespace: dict[str, Any] = {}
    exec(compile(source, "README.md", "exec"), namespace)
    app: App = namespace["app"]
    return app.synth().get_stack_by_name("Training").template  # type: ignore[no-any-return]


def test_the_readme_example_synthesizes_a_gated_cluster(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (example,) = _blocks("python")
    template = _run_example(tmp_path, monkeypatch, example)
    resources = template["Resources"]
    (cluster,) = [r for r in resources.values() if r["Type"] == "AWS::SageMaker::Cluster"]
    groups = {g["InstanceGroupName"]: g for g in cluster["Properties"]["InstanceGroups"]}
    assert list(groups) == ["controller", "login", "gpu", "cpu"]
    assert (groups["gpu"]["InstanceCount"], groups["gpu"]["MinInstanceCount"]) == (16, 16)
    (wait_id,) = [
        k for k, r in resources.items() if r["Type"] == "AWS::CloudFormation::WaitCondition"
    ]
    (marker,) = [r for r in resources.values() if r["Type"] == "AWS::SSM::Parameter"]
    assert marker["DependsOn"] == [wait_id]


MISTAKES = {
    "min_instance_count=16": "min_instance_count=17",
    'HyperPodInstanceType.of("ml.m5.xlarge")': 'HyperPodInstanceType.of("ml.m5.xlarg")',
}
"""The mistakes the README's words put into its example."""


def test_the_readme_error_message_is_what_a_plain_app_prints(tmp_path: Path) -> None:
    """The example with the README's two mistakes, run as the plain ``python app.py`` a user
    runs: stderr is exactly the block the README shows, with no traceback, status 1."""
    example, shown = _blocks("python")[0], _blocks("text")[0]
    for right, wrong in MISTAKES.items():
        assert f"`{wrong}`" in README  # the words say which mistakes the block shows
        assert example.count(right) == 1
        example = example.replace(right, wrong)
    (tmp_path / "lifecycle").mkdir()
    (tmp_path / "lifecycle" / "on_create.sh").write_text("#!/bin/bash\n")
    (tmp_path / "app.py").write_text(example)
    result = run_app(tmp_path, CDK_OUTDIR=str(tmp_path / "out"))
    assert result.returncode == 1, result.stderr
    assert result.stdout == ""
    assert result.stderr == shown
    assert not list((tmp_path / "out").glob("*.template.json"))


GUIDE_APP = """\
from aws_cdk import App, Stack

from hyperpod_constructs import (
    DeepHealthCheck,
    HyperPodInstanceType,
    HyperPodSlurmCluster,
    InstanceGroup,
    NodeProvisioningMode,
)

CHECKS = [DeepHealthCheck.INSTANCE_STRESS, DeepHealthCheck.INSTANCE_CONNECTIVITY]
app = App()
HyperPodSlurmCluster(
    Stack(app, "Training"),
    "Cluster",
    node_provisioning_mode=NodeProvisioningMode.STANDARD,
    instance_groups=[
        InstanceGroup.controller("controller", instance_type=HyperPodInstanceType.ML_M5_2XLARGE),
        InstanceGroup.compute(
            "p5", instance_type=HyperPodInstanceType.of("ml.p5.48xlarg"), instance_count=2,
            partition="gpu", deep_health_checks=CHECKS,
        ),
        InstanceGroup.compute(
            "p5", instance_type=HyperPodInstanceType.ML_P5_48XLARGE, instance_count=2,
            min_instance_count=3, partition="gpu", deep_health_checks=CHECKS,
        ),
    ],
)
app.synth()
"""
"""The cluster docs/guide.md describes in words before the report it shows."""


def test_the_guide_report_is_what_a_plain_app_prints(tmp_path: Path) -> None:
    guide = (ROOT / "docs" / "guide.md").read_text()
    errors = guide[guide.index("## Errors\n") :]
    (shown,) = re.findall(r"```text\n(.*?)```", errors, flags=re.DOTALL)[:1]
    for words in ("STANDARD mode", "two groups named `p5`", '`"ml.p5.48xlarg"`'):
        assert words in errors
    (tmp_path / "app.py").write_text(GUIDE_APP)
    result = run_app(tmp_path, CDK_OUTDIR=str(tmp_path / "out"))
    assert result.returncode == 1, result.stderr
    assert result.stderr == shown

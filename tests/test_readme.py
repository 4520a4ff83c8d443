"""The README's example is real: it synthesizes, and its error message is the one users get."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App

from hyperpod_constructs import report_validation_errors
from tests.conftest import ROOT

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


def test_the_readme_error_message_is_what_the_library_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    example, shown = _blocks("python")[0], _blocks("text")[0]
    broken = example.replace("min_instance_count=16", "min_instance_count=17")
    stderr = io.StringIO()
    with (
        pytest.raises(SystemExit) as exit_info,
        contextlib.redirect_stderr(stderr),
        report_validation_errors(),
    ):
        _run_example(tmp_path, monkeypatch, broken)
    assert exit_info.value.code == 1
    assert stderr.getvalue().strip() == shown.strip()
    assert not list((tmp_path / "out").glob("*.template.json"))

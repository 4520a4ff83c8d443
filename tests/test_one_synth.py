"""Six mistakes in six different stages are all reported by one synth.

The same app runs twice: in process (``app.synth()`` fails with every finding, no template is
written) and through the real ``cdk synth`` with ``report_validation_errors()`` (each message
printed once, no Python or jsii stack, no JavaScript file prefix, exit status 1).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cdk_cli import SYNTH, cdk_env

APP = '''\
"""An app with six mistakes, one per stage."""
import os

os.environ.setdefault("CDK_VALIDATION", "false")

from aws_cdk import App, Duration, Stack

from hyperpod_constructs import (
    HyperPodInstanceType,
    HyperPodSlurmCluster,
    InstanceGroup,
    MinCountGateOptions,
    report_validation_errors,
)

CPU = HyperPodInstanceType.ML_C5_4XLARGE


def build(outdir=None):
    app = App(outdir=outdir) if outdir else App()
    stack = Stack(app, "Six")
    HyperPodSlurmCluster(
        stack,
        "Cluster",
        cluster_name="my_cluster",  # 1. the cluster's name
        readiness_gate=MinCountGateOptions(poll_interval=Duration.seconds(5)),  # 2. gate
        instance_groups=[
            InstanceGroup.controller("controller", instance_type=CPU),
            InstanceGroup.compute(  # 3. one group
                "gpu", instance_type=CPU, instance_count=2, min_instance_count=3, partition="a"
            ),
            InstanceGroup.compute(  # 4. another group
                "cpu", instance_type=CPU, instance_count=1, threads_per_core=3, partition="b"
            ),
            InstanceGroup.compute(  # 5. a wrong type
                "str-type", instance_type="ml.c5.4xlarge", instance_count=1, partition="c"
            ),
            InstanceGroup.controller("controller2", instance_type=CPU),  # 6. cross-group
        ],
    )
    return app


if __name__ == "__main__":
    with report_validation_errors():
        build().synth()
'''

RULES = {
    "HP-NAME-CLUSTER": None,
    "HP-GATE-POLL": None,
    "HP-MIN-ABOVE-COUNT": "gpu",
    "HP-THREADS": "cpu",
    "HP-ARG-TYPE": "str-type",
    "HP-CONTROLLER-ONE": None,
}
PROBLEM = re.compile(r"\[(HP-[A-Z0-9-]+)\]$")


def _check_problems(lines: list[str]) -> None:
    problems = [line.strip() for line in lines if PROBLEM.search(line.strip())]
    found = {PROBLEM.search(line).group(1): line for line in problems}  # type: ignore[union-attr]
    assert sorted(found) == sorted(RULES), problems
    assert len(problems) == len(RULES), problems  # each once
    for rule, group in RULES.items():
        line = found[rule]
        assert line.startswith("[Six/Cluster] "), line
        if group is not None:
            assert line.startswith(f"[Six/Cluster] instance group {group!r}: "), line


@pytest.fixture(scope="module")
def app_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("six")
    (folder / "app.py").write_text(APP)
    (folder / "cdk.json").write_text(f'{{"app": "{sys.executable} app.py"}}\n')
    return folder / "app.py"


def test_one_synth_in_process_reports_all_six(app_file: Path, tmp_path: Path) -> None:
    namespace: dict[str, object] = {"__name__": "six"}
    exec(compile(app_file.read_text(), str(app_file), "exec"), namespace)
    app = namespace["build"](str(tmp_path))  # type: ignore[operator]
    with pytest.raises(RuntimeError, match="Validation failed") as failed:
        app.synth()
    _check_problems(str(failed.value).splitlines())
    assert list(tmp_path.rglob("*.template.json")) == []


def test_one_cdk_synth_reports_all_six_cleanly(app_file: Path) -> None:
    env = cdk_env()
    result = subprocess.run(
        SYNTH,
        cwd=app_file.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    for leak in ("Traceback", "at Kernel", "jsii.errors", "program.js", "Node 20", "@jsii"):
        assert leak not in output, output
    assert "HyperPod validation failed (6 problems); no template was written:" in output
    _check_problems(output.splitlines())
    assert list((app_file.parent / "cdk.out").rglob("*.template.json")) == []

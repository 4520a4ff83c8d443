"""Six mistakes in six different stages are all reported by one synth, each once.

The same app (its synth in the one-line opt-in ``with report_validation_errors():``) runs
three ways: in
process (``app.synth()`` fails with every error, no template is written), as ``python app.py``
and through the real ``cdk synth``. Both subprocesses print one report: six lines, one per
mistake (two rules broken by one value share a line), errors first and then the warning a
failing synth would otherwise never show, each once, the two groups named ``p5`` told apart
by their position, no Python or jsii stack, no JavaScript file prefix, exit status 1.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cdk_cli import SYNTH, cdk_env

APP = '''\
"""An app with six mistakes, one per stage (as users write it: validation on)."""
from aws_cdk import App, Duration, Stack

from hyperpod_constructs import (
    DeepHealthCheck,
    HyperPodInstanceType,
    HyperPodSlurmCluster,
    InstanceGroup,
    MinCountGateOptions,
    NodeProvisioningMode,
    report_validation_errors,
)

CPU = HyperPodInstanceType.ML_C5_4XLARGE
CHECKS = [DeepHealthCheck.INSTANCE_STRESS, DeepHealthCheck.INSTANCE_CONNECTIVITY]


def build(outdir=None):
    app = App(outdir=outdir) if outdir else App()
    stack = Stack(app, "Six")
    HyperPodSlurmCluster(
        stack,
        "Cluster",
        cluster_name="my_cluster",  # 1. the cluster's name
        node_provisioning_mode=NodeProvisioningMode.STANDARD,
        readiness_gate=MinCountGateOptions(poll_interval=Duration.seconds(5)),  # 2. gate
        instance_groups=[
            InstanceGroup.controller("controller", instance_type=CPU),
            InstanceGroup.compute(  # 3. a typo in a type: a warning with a "did you mean"
                "p5", instance_type=HyperPodInstanceType.of("ml.p5.48xlarg"),
                instance_count=2, partition="gpu", deep_health_checks=CHECKS,
            ),
            InstanceGroup.compute(  # 4. a name used twice
                "p5", instance_type=HyperPodInstanceType.ML_P5_48XLARGE, instance_count=2,
                # 5. a minimum above the count, and in STANDARD mode: one value, two rules
                min_instance_count=3, partition="gpu", deep_health_checks=CHECKS,
            ),
            InstanceGroup.compute(  # 6. another group
                "cpu", instance_type=CPU, instance_count=1, threads_per_core=3, partition="b"
            ),
        ],
    )
    return app


if __name__ == "__main__":
    with report_validation_errors():
        build().synth()
'''

EXPECTED = [
    # (rule ids, how the line names the cluster and its group), errors first.
    ("HP-NAME-CLUSTER", "[Six/Cluster] cluster_name "),
    ("HP-GATE-POLL", "[Six/Cluster] readiness_gate.poll_interval "),
    (
        "HP-MIN-ABOVE-COUNT, HP-MIN-NEEDS-CONTINUOUS",
        "[Six/Cluster] instance group 'p5' (position 3): min_instance_count ",
    ),
    ("HP-THREADS", "[Six/Cluster] instance group 'cpu': threads_per_core "),
    ("HP-GROUP-UNIQUE", "[Six/Cluster] instance group 'p5' (positions 2, 3): name "),
    ("HP-WARN-INSTANCE-TYPE", "[Six/Cluster] instance group 'p5' (position 2): instance_type "),
]
HEADER = "HyperPod validation failed (5 errors, 1 warning); no template was written:"
PROBLEM = re.compile(r"\[HP-[A-Z0-9-]+\]$")
RULE = re.compile(r"\[(HP-[A-Z0-9-]+)\]")


def _check_problems(lines: list[str], *, warnings: bool = True) -> None:
    problems = [line.strip() for line in lines if PROBLEM.search(line.strip())]
    expected = EXPECTED if warnings else [e for e in EXPECTED if "-WARN-" not in e[0]]
    assert [", ".join(RULE.findall(line)) for line in problems] == [
        rules for rules, _ in expected
    ], problems
    for line, (_, start) in zip(problems, expected, strict=True):
        assert line.startswith(start), line


def _check_report(output: str) -> None:
    for leak in ("Traceback", "at Kernel", "jsii.errors", "program.js", "Node 20", "@jsii"):
        assert leak not in output, output
    assert output.count(HEADER) == 1, output
    _check_problems(output.splitlines())
    for line in output.splitlines():
        if PROBLEM.search(line):
            assert output.count(line.strip()) == 1, line
    assert "did you mean ml.p5.48xlarge" in output
    assert "E3644" not in output  # aws-cdk-lib's own report of the typo: not printed again


@pytest.fixture(scope="module")
def app_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("six")
    (folder / "app.py").write_text(APP)
    (folder / "cdk.json").write_text(f'{{"app": "{sys.executable} app.py"}}\n')
    return folder / "app.py"


def test_one_synth_in_process_reports_all_six(app_file: Path, tmp_path: Path) -> None:
    """In process, aws-cdk-lib's error holds the report: the five errors (one line each),
    then the warning, marked as one."""
    namespace: dict[str, object] = {"__name__": "six"}
    exec(compile(app_file.read_text(), str(app_file), "exec"), namespace)
    app = namespace["build"](str(tmp_path))  # type: ignore[operator]
    with pytest.raises(RuntimeError, match="Validation failed") as failed:
        app.synth()
    lines = str(failed.value).splitlines()
    _check_problems([line.replace("] warning: ", "] ", 1) for line in lines])
    assert sum("] warning: " in line for line in lines) == 1
    assert list(tmp_path.rglob("*.template.json")) == []


@pytest.mark.parametrize("runner", ["python app.py", "cdk synth"])
def test_one_plain_synth_reports_all_six_cleanly(app_file: Path, runner: str) -> None:
    env = cdk_env()
    env.pop("CDK_VALIDATION", None)  # aws-cdk-lib's template validator as users run it
    command = [sys.executable, "app.py"] if runner == "python app.py" else SYNTH
    result = subprocess.run(
        command,
        cwd=app_file.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    _check_report(output)
    assert list((app_file.parent / "cdk.out").rglob("*.template.json")) == []

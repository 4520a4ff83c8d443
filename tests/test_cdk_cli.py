"""The real ``cdk synth`` on an invalid app that opts in to the short report
(``@report_validation_errors()`` on its ``main()``): each problem printed once, concisely,
exit != 0.

Two invalid apps (an error raised while the app is built, and cross-group errors found by
the cluster's node validation in ``app.synth()``), each in a temporary folder with its own
``cdk.json``, synthesized concurrently by the CLI in node_modules/.bin on Node 22.
Policy plugin (cdk-nag) failures need no test here: under the CLI aws-cdk-lib does not raise
them (``@aws-cdk/core:failSynthOnValidationErrors`` is false) and the CLI prints the report;
tests/test_reporting.py covers them in-process.
"""

from __future__ import annotations

import re
import sys

import pytest

from tests.support.cdk_cli import SYNTH, Finished, cdk_env, run_all

APP = '''\
"""A tiny invalid HyperPod app ({case})."""
import os

os.environ.setdefault("CDK_VALIDATION", "false")

from aws_cdk import App, Stack

from hyperpod_constructs import (
    HyperPodInstanceType, HyperPodSlurmCluster, InstanceGroup, report_validation_errors
)

CPU = HyperPodInstanceType.ML_C5_4XLARGE


@report_validation_errors()
def main():
    app = App()
    stack = Stack(app, "Invalid")
    HyperPodSlurmCluster(stack, "Cluster", instance_groups=[{groups}])
    app.synth()


main()
'''

CASES = {
    # Raised by add_instance_group while the app is built.
    "eager": (
        'InstanceGroup.controller("controller", instance_type=CPU), '
        'InstanceGroup.compute("gpu_1", instance_type=CPU, instance_count=2, '
        'min_instance_count=3, partition="gpu")',
        {"HP-NAME-GROUP", "HP-MIN-ABOVE-COUNT"},
    ),
    # Found by the cluster's node validation when app.synth() runs.
    "cross": (
        'InstanceGroup.compute("a", instance_type=CPU, instance_count=1, partition="p"), '
        'InstanceGroup.compute("a", instance_type=CPU, instance_count=1, partition="p")',
        {"HP-CONTROLLER-REQUIRED", "HP-GROUP-UNIQUE"},
    ),
}


@pytest.fixture(scope="module")
def synths(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Finished]:
    """Run ``cdk synth`` on every case at once; wait for all of them."""
    folders = {case: tmp_path_factory.mktemp(f"cdk-{case}") for case in CASES}
    for case, (groups, _) in CASES.items():
        (folders[case] / "app.py").write_text(APP.format(case=case, groups=groups))
        (folders[case] / "cdk.json").write_text(f'{{"app": "{sys.executable} app.py"}}\n')
    return run_all(folders, SYNTH, cdk_env(), merged=True)


@pytest.mark.deep(
    why="a real cdk synth per case; in make test the real cdk synth of a failing app "
    "prints each finding once in tests/test_one_synth.py"
)
@pytest.mark.parametrize("case", sorted(CASES))
def test_invalid_app_fails_with_each_message_once(case: str, synths: dict[str, Finished]) -> None:
    synth = synths[case]
    rules = CASES[case][1]
    output = synth.stdout

    assert synth.returncode != 0, output
    assert "Traceback" not in output
    assert "at Kernel" not in output
    assert "jsii.errors" not in output
    assert "Node 20" not in output
    problems = [line.strip() for line in output.splitlines() if re.search(r"\[HP-[A-Z-]+\]$", line)]
    assert sorted(re.sub(r".*\[(HP-[A-Z-]+)\]$", r"\1", line) for line in problems) == sorted(rules)
    for line in problems:
        assert line.startswith("[Invalid/Cluster] ")
        assert output.count(line) == 1
    assert list(synth.outdir.rglob("*.template.json")) == []

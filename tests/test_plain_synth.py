"""A plain app (no ``report_validation_errors``) run as ``python app.py``, in several shapes.

A validation failure prints the short report (every finding once, errors first, no Python
traceback and no jsii stack), writes no template and exits with status 1, whether the cluster
sits in a stack of the app, of a ``Stage`` or in a ``NestedStack``, whether the error is raised
while the app is built or relayed by jsii from an aspect. Any other error keeps Python's
traceback, also one aws-cdk-lib raises through jsii. Each case is a real subprocess; they run
at once. tests/test_cdk_cli.py and tests/test_one_synth.py run the same form under ``cdk synth``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from tests.support.cdk_cli import Finished, cdk_env, run_all, run_app

HEAD = """\
import os

os.environ.setdefault("CDK_VALIDATION", "false")

import jsii
from aws_cdk import App, Aspects, IAspect, NestedStack, Stack, Stage

from hyperpod_constructs import HyperPodInstanceType, HyperPodSlurmCluster, InstanceGroup

CPU = HyperPodInstanceType.ML_C5_4XLARGE
GROUPS = [
    InstanceGroup.controller("controller", instance_type=CPU),
    InstanceGroup.compute("a", instance_type=CPU, instance_count=1, threads_per_core=3,
                          partition="a"),
    InstanceGroup.compute("a", instance_type=HyperPodInstanceType.of("ml.c5.4xlarg"),
                          instance_count=1, partition="a"),
]
app = App()
"""

SHAPES = {
    "stack": 'HyperPodSlurmCluster(Stack(app, "Top"), "Cluster", instance_groups=GROUPS)',
    "stage": 'HyperPodSlurmCluster(Stack(Stage(app, "Prod"), "Top"), "Cluster", '
    "instance_groups=GROUPS)",
    "nested": 'HyperPodSlurmCluster(NestedStack(Stack(app, "Top"), "Inner"), "Cluster", '
    "instance_groups=GROUPS)",
}
"""Where the cluster sits; its construct path in the report is :data:`PATHS`."""

PATHS = {"stack": "Top/Cluster", "stage": "Prod/Top/Cluster", "nested": "Top/Inner/Cluster"}

OTHER = {
    # A sizing helper raising inside an aspect: jsii relays it as a RuntimeError.
    "relayed": """\
from hyperpod_constructs.sizing import fsdp_world_size


@jsii.implements(IAspect)
class Size:
    def visit(self, node):
        if node.node.path == "Top":
            fsdp_world_size(0)


Aspects.of(Stack(app, "Top")).add(Size())
""",
    # Valid props, one organisation policy error: no cdk.json here, so aws-cdk-lib's
    # annotationsInValidationReport flag is off and an error annotation alone would not fail.
    "policy": """\
from hyperpod_constructs.policy import HyperPodPolicy

HyperPodSlurmCluster(Stack(app, "Top"), "Cluster", instance_groups=[
    InstanceGroup.controller("controller", instance_type=CPU),
    InstanceGroup.compute("a", instance_type=CPU, instance_count=4, partition="a"),
])
Aspects.of(app).add(HyperPodPolicy(name="acme", max_instance_count=2))
""",
    # Raised while the app is built: a scope that is not a construct.
    "eager": 'HyperPodSlurmCluster("not a scope", "Cluster")\n',
    # Not a validation failure: Python's traceback, status 1.
    "python-error": 'Stack(app, "Top")\n{}["missing"]\n',
    # Not a validation failure either, raised by aws-cdk-lib through jsii.
    "jsii-error": 'Stack(app, "Top")\nStack(app, "Top")\n',
}

CASES = {**SHAPES, **OTHER}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Finished]:
    """Every case as ``python app.py`` in its own folder, all at once."""
    folders = {case: tmp_path_factory.mktemp(case) for case in CASES}
    for case, body in CASES.items():
        (folders[case] / "app.py").write_text(f"{HEAD}{body}\napp.synth()\n")
    env = cdk_env()
    env.pop("CDK_VALIDATION", None)
    return run_all(folders, [sys.executable, "app.py"], env)


def _assert_clean(run: Finished) -> list[str]:
    """The report's checks common to every validation failure; its indented lines."""
    assert run.returncode == 1, run.stderr
    assert run.stdout == ""
    for leak in ("Traceback", "jsii.errors", "at Kernel", "program.js", "RuntimeError"):
        assert leak not in run.stderr, run.stderr
    assert list(run.outdir.rglob("*.template.json")) == []
    lines = run.stderr.splitlines()
    assert re.fullmatch(
        r"(HyperPod v|V)alidation failed \(.*\); no template was written:", lines[0]
    )
    problems = [line.strip() for line in lines[1:]]
    assert all(line.startswith("  ") for line in lines[1:]), run.stderr
    assert len(set(problems)) == len(problems), run.stderr
    return problems


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_failing_synth_prints_every_finding_once(shape: str, runs: dict[str, Finished]) -> None:
    problems = _assert_clean(runs[shape])
    path = PATHS[shape]
    assert runs[shape].stderr.splitlines()[0] == (
        "HyperPod validation failed (2 errors, 1 warning); no template was written:"
    )
    assert [re.sub(r".*\[(.*)\]$", r"\1", line) for line in problems] == [
        "HP-THREADS",
        "HP-GROUP-UNIQUE",
        "HP-WARN-INSTANCE-TYPE",
    ]
    threads, unique, typo = problems
    # Two groups are named "a": each message says which one it means.
    assert threads.startswith(f"[{path}] instance group 'a' (position 2): threads_per_core")
    assert unique.startswith(f"[{path}] instance group 'a' (positions 2, 3): name")
    assert typo.startswith(f"[{path}] instance group 'a' (position 3): instance_type")
    assert "did you mean ml.c5.4xlarge" in typo


def test_an_error_jsii_relays_from_an_aspect_is_reported(runs: dict[str, Finished]) -> None:
    (problem,) = _assert_clean(runs["relayed"])
    assert "data_parallel=0" in problem


def test_a_policy_error_alone_fails_a_plain_app(runs: dict[str, Finished]) -> None:
    """A policy never fails open: not in ``python app.py`` without cdk.json's flags either."""
    (problem,) = _assert_clean(runs["policy"])
    assert problem.startswith("[Top/Cluster] [HPP-MAX-COUNT] acme: Top/Cluster: instance group")
    assert "instance_count 4 is above the maximum of 2" in problem


def test_an_error_raised_while_building_is_reported(runs: dict[str, Finished]) -> None:
    (problem,) = _assert_clean(runs["eager"])
    assert problem.startswith("[HyperPodSlurmCluster] scope = 'not a scope' is not allowed")


@pytest.mark.parametrize(
    ("case", "last_line"),
    [
        ("python-error", "KeyError: 'missing'"),
        ("jsii-error", "RuntimeError: There is already a Construct with name 'Top' in App"),
    ],
)
def test_other_errors_keep_their_traceback(
    case: str, last_line: str, runs: dict[str, Finished]
) -> None:
    run = runs[case]
    assert run.returncode == 1
    assert "Traceback (most recent call last):" in run.stderr, run.stderr
    assert run.stderr.rstrip().splitlines()[-1] == last_line
    assert "validation failed" not in run.stderr.lower()


def test_the_traceback_variable_restores_the_traceback(tmp_path: Path) -> None:
    """``HYPERPOD_CONSTRUCTS_TRACEBACK=1``: the usual traceback, for debugging the library."""
    (tmp_path / "app.py").write_text(f"{HEAD}{OTHER['eager']}")
    result = run_app(tmp_path, HYPERPOD_CONSTRUCTS_TRACEBACK="1")
    assert result.returncode == 1
    assert result.stderr.startswith("Traceback (most recent call last):")
    assert result.stderr.rstrip().splitlines()[-1].startswith("hyperpod_constructs.")

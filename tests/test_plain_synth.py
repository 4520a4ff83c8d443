"""An app run as ``python app.py``: what a failing synth prints, with and without the opt-in.

Importing the library changes no process-wide state. A plain app's failing synth ends in
Python's usual traceback of aws-cdk-lib's error, whose message is the library's report (every
finding once, warnings after errors). With the opt-in (``@report_validation_errors()`` on the
app's ``main()``) the report is printed without a traceback, whether the cluster sits in a
stack of the app, of a ``Stage`` or in a ``NestedStack``, whether the error is raised while
the app is built or relayed by jsii from an aspect. Any other error keeps Python's traceback,
also one aws-cdk-lib raises through jsii, and a user's own exception (wrapping or chaining the
validation error, in a thread, under a crash reporter installed before the import) is never
hidden or rewritten. Each case is a real subprocess; they run at once.
tests/test_cdk_cli.py and tests/test_one_synth.py run the opt-in form under ``cdk synth``.
"""

from __future__ import annotations

import re
import sys

import pytest

from tests.support.cdk_cli import Finished, cdk_env, run_all

pytestmark = pytest.mark.deep(
    why="eleven app processes at once; in make test a plain app's failing synth prints its "
    "report (tests/test_one_synth.py, python app.py and cdk synth; tests/test_readme.py's "
    "error message)"
)

HEAD = """\
import os

os.environ.setdefault("CDK_VALIDATION", "false")

import jsii
from aws_cdk import App, Aspects, IAspect, NestedStack, Stack, Stage

from hyperpod_constructs import (
    HyperPodInstanceType,
    HyperPodSlurmCluster,
    InstanceGroup,
    report_validation_errors,
)

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

USER = {
    # The user's own error around the validation error, inside the opt-in block: theirs.
    "wrapped": """\
HyperPodSlurmCluster(Stack(app, "Top"), "Cluster", instance_groups=GROUPS)
try:
    app.synth()
except RuntimeError as e:
    raise RuntimeError(f"team-x deploy failed, OPS-123: {e}") from e
""",
}
"""The user's own errors, inside the opt-in block."""

PLAIN = 'HyperPodSlurmCluster(Stack(app, "Top"), "Cluster", instance_groups=GROUPS)\n'
"""No opt-in: Python's traceback of aws-cdk-lib's error, the report its message."""

HOOKED = """\
import sys
import threading

sys.excepthook = lambda kind, error, trace: print(f"REPORTER {kind.__name__}: {error}")
before = (sys.excepthook, threading.excepthook)

from aws_cdk import App, Stack

from hyperpod_constructs import HyperPodInstanceType, HyperPodSlurmCluster, InstanceGroup

print("SAME HOOKS", (sys.excepthook, threading.excepthook) == before)
CPU = HyperPodInstanceType.ML_C5_4XLARGE


def failing_synth(name):
    app = App()
    HyperPodSlurmCluster(Stack(app, name), "Cluster", instance_groups=[
        InstanceGroup.compute("a", instance_type=CPU, instance_count=1, threads_per_core=3,
                              partition="a"),
    ])
    app.synth()


thread = threading.Thread(target=failing_synth, args=("InThread",))
thread.start()
thread.join()


class DeployError(Exception):
    pass


try:
    failing_synth("Main")
except RuntimeError as error:
    raise DeployError("team-x: the synth failed") from error
"""
"""A crash reporter installed before the import, a thread, and the user's chained error."""

CASES = {**SHAPES, **OTHER, **USER}


def _app(case: str) -> str:
    """The case's body in the app's ``main()``, decorated with the opt-in."""
    body = "".join(f"    {line}\n" for line in CASES[case].splitlines())
    main = f"@report_validation_errors()\ndef main():\n{body}    app.synth()\n"
    return f"{HEAD}\n\n{main}\n\nmain()\n"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Finished]:
    """Every case as ``python app.py`` in its own folder, all at once."""
    folders = {case: tmp_path_factory.mktemp(case) for case in [*CASES, "plain", "hooked"]}
    for case in CASES:
        (folders[case] / "app.py").write_text(_app(case))
    (folders["plain"] / "app.py").write_text(f"{HEAD}{PLAIN}app.synth()\n")
    (folders["hooked"] / "app.py").write_text(HOOKED)
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
    assert problem.startswith("[Top/Cluster] [HPP-MAX-COUNT] acme: instance group")
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


def _last_error(run: Finished) -> list[str]:
    """The lines of the last exception Python printed (from its ``Type: message`` line)."""
    lines = run.stderr.rstrip().splitlines()
    start = max(i for i, line in enumerate(lines) if re.match(r"^[\w.]+(Error|Exception):", line))
    return lines[start:]


def test_a_plain_app_raises_the_report_as_its_error(runs: dict[str, Finished]) -> None:
    """No opt-in: the usual traceback; aws-cdk-lib's error carries the clean report."""
    run = runs["plain"]
    assert run.returncode == 1
    assert "Traceback (most recent call last):" in run.stderr
    error = _last_error(run)
    assert error[0] == (
        "RuntimeError: ValidationFailedWithErrors: Validation failed with the following errors:"
    )
    problems = [line.strip() for line in error[1:]]
    assert [re.sub(r".*\[(.*)\]$", r"\1", line) for line in problems] == [
        "HP-THREADS",
        "HP-GROUP-UNIQUE",
        "HP-WARN-INSTANCE-TYPE",
    ]
    assert problems[2].startswith("[Top/Cluster] warning: instance group 'a' (position 3)")
    assert "validation failed (" not in run.stderr.lower()
    assert list(run.outdir.rglob("*.template.json")) == []


def test_the_users_own_error_is_never_rewritten(runs: dict[str, Finished]) -> None:
    """Wrapped and chained inside the opt-in block: the user's traceback, type and text."""
    run = runs["wrapped"]
    assert run.returncode == 1
    assert "The above exception was the direct cause of the following exception:" in run.stderr
    assert _last_error(run)[0] == (
        "RuntimeError: team-x deploy failed, OPS-123: ValidationFailedWithErrors: "
        "Validation failed with the following errors:"
    )
    assert "HyperPod validation failed (" not in run.stderr


def test_importing_changes_no_hook_and_hides_nothing(runs: dict[str, Finished]) -> None:
    """A crash reporter installed before the import stays (so does IPython's, which sets
    ``sys.excepthook`` the same way) and gets the user's error; ``threading.excepthook`` is
    Python's own and prints the thread's traceback."""
    run = runs["hooked"]
    assert run.stdout.splitlines()[0] == "SAME HOOKS True"
    assert run.stdout.splitlines()[-1] == "REPORTER DeployError: team-x: the synth failed"
    assert "Exception in thread" in run.stderr
    assert "Traceback (most recent call last):" in run.stderr
    assert "[InThread/Cluster] instance group 'a': threads_per_core" in run.stderr

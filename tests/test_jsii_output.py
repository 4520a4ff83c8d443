"""What aws-cdk-lib prints in the jsii kernel is written within the test that caused it
(tests/support/jsii_output.py): a synth's validation report with a warning lands in this test's
``capsys``, not after the test (a stray banner in ``make test``'s output) nor in the next
test's capture."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from aws_cdk import Stack

from hyperpod_constructs import HyperPodInstanceType, HyperPodSlurmCluster, InstanceGroup
from tests.conftest import new_app
from tests.support import jsii_output

CPU = HyperPodInstanceType.ML_C5_4XLARGE


def test_the_kernels_reader_is_the_one_that_drains() -> None:
    """jsii's reader of the Node process's stderr runs :mod:`tests.support.jsii_output`'s
    sink: the kernel started after conftest installed it."""
    (reader,) = [t for t in threading.enumerate() if t.name == "process.stderr_sink"]
    assert reader in jsii_output.SINK_THREADS


def test_a_warning_report_is_written_while_the_test_captures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app = new_app(outdir=str(tmp_path))
    HyperPodSlurmCluster(
        Stack(app, "Warned"),
        "Cluster",
        instance_groups=[
            InstanceGroup.controller("controller", instance_type=CPU),
            InstanceGroup.compute(
                "typo",
                instance_type=HyperPodInstanceType.of("ml.c5.4xlarg"),
                instance_count=1,
                partition="c",
            ),
        ],
    )
    app.synth()
    jsii_output.drain()
    err = capsys.readouterr().err
    assert "[HP-WARN-INSTANCE-TYPE]" in err
    # aws-cdk-lib names the report relative to the working directory where that is shorter.
    named = err.split("A copy of this report can be found in: ", 1)[1].splitlines()[0]
    assert Path(named).resolve() == (tmp_path / "validation-report.json").resolve()
    jsii_output.drain()
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("phase", ["setup", "call", "teardown"])
def test_each_phase_drains_inside_pytests_capture(
    phase: str, request: pytest.FixtureRequest
) -> None:
    """tests/conftest.py's drain runs inside pytest's capturing wrapper of each phase (pluggy
    calls a hook's implementations from the last of the list to the first: the first wraps
    innermost), so what it writes is still captured."""
    hook = getattr(request.config.pluginmanager.hook, f"pytest_runtest_{phase}")
    owners = [impl.plugin_name for impl in hook.get_hookimpls()]
    drains = [
        i
        for i, impl in enumerate(hook.get_hookimpls())
        if getattr(impl.plugin, "__name__", "") == "tests.conftest"
    ]
    (capturing,) = [i for i, name in enumerate(owners) if name == "capturemanager"]
    assert drains and drains[0] < capturing, owners

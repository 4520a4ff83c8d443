"""``watch`` against the HyperPod simulator and a stack served on a local HTTP endpoint.

The example app's ``FsdpTraining`` stack (gpu: 16 of 16 gated) is deployed in virtual time: the
real gate loop signals the wait condition, ``watch --json`` reads both through real boto3
clients. Asserted: the line-delimited JSON stream and the exit codes for a slow ramp to ready,
a rollback at the 3-hour mark, a failed cluster, the gate's own failure, throttling, and
unreachable or refusing AWS.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import boto3
import botocore.loaders
import botocore.session
import pytest
from aws_cdk.cx_api import CloudAssembly

from tests.support.hyperpod_sim import constant, linear, steps
from tests.support.parameterized import parameterized_assembly
from tests.support.watch_deployment import STACK, Deployment, WatchRun

WINDOW = 3 * 3600
INTERVAL = 120


@pytest.fixture(scope="module")
def cdk_out(example_assembly: CloudAssembly) -> str:
    return str(example_assembly.directory)


@pytest.fixture(scope="module")
def template(example_templates: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return example_templates[STACK]


def watch(deployment: Deployment, cdk_out: str | None, *extra: str, **server: Any) -> WatchRun:
    with deployment.server(**server) as endpoint:
        run = deployment.watch(
            cdk_out, "--json", "--interval", str(INTERVAL), *extra, endpoint=endpoint.url
        )
    assert endpoint.errors == []
    assert "Traceback" not in run.stderr
    return run


def gpu(refresh: dict[str, Any]) -> dict[str, Any]:
    (group,) = refresh["groups"]
    assert group["name"] == "gpu"
    return group


def test_slow_ramp_ends_ready_and_agrees_with_the_gate(
    monkeypatch: pytest.MonkeyPatch, cdk_out: str, template: dict[str, Any]
) -> None:
    # 6 instances an hour: the 16th is healthy at about 2 h 50 min, inside the window.
    deployment = Deployment(monkeypatch, template, linear(0, 6, 16))
    run = watch(deployment, cdk_out)

    assert run.code == 0, run.stderr
    refreshes = run.refreshes
    assert all(r["schema_version"] == 1 and r["stack"] == STACK for r in refreshes)
    assert all(r["cluster"] == "fsdp-train" for r in refreshes)
    counts = [gpu(r)["current_count"] for r in refreshes]
    assert counts == sorted(counts), "CurrentCount never goes down during a ramp"
    ramping = [r for r in refreshes if 0 < gpu(r)["current_count"] < 16]
    assert len(ramping) > 60, "the ramp is shown while it happens"
    assert all(gpu(r)["status"] == "Creating" and not gpu(r)["ready"] for r in ramping)
    assert all((gpu(r)["min_count"], gpu(r)["target_count"]) == (16, 16) for r in refreshes)
    left = [gpu(r)["window_left_seconds"] for r in ramping]
    assert left == sorted(left, reverse=True) and 0 < left[-1] < left[0] <= WINDOW
    assert {r["gate"]["state"] for r in refreshes} >= {"not armed", "waiting"}
    assert all(r["exit_code"] is None for r in refreshes[:-1])

    last = refreshes[-1]
    assert (last["verdict"], last["exit_code"]) == ("ready", 0)
    assert gpu(last)["ready"] and gpu(last)["current_count"] >= 16
    assert gpu(last)["status"] == "InService" and gpu(last)["window_left_seconds"] is None
    assert "all gated groups reached their minimum" in last["reason"]

    # The gate (its own loop, polling at its interval) opens within one poll of what watch saw.
    ready_at = deployment.world.clock.time()
    deployment.world.run()
    ((handle, signals),) = deployment.world.cfn.signals.items()
    (signal,) = signals
    assert handle in deployment.template["Resources"]
    assert signal.status == "SUCCESS"
    assert abs(signal.time - ready_at) <= 2 * INTERVAL


def test_rollback_at_the_three_hour_mark_exits_1_with_the_reason(
    monkeypatch: pytest.MonkeyPatch, cdk_out: str, template: dict[str, Any]
) -> None:
    deployment = Deployment(monkeypatch, template, constant(12))
    run = watch(deployment, cdk_out)

    assert run.code == 1
    last = run.refreshes[-1]
    assert (last["verdict"], last["exit_code"]) == ("failed", 1)
    # Whichever saw it first, watch's own read or the gate's signal, names the rollback.
    assert "MinCount gate failed: HyperPod rolled back instance group(s) gpu" in last["reason"]
    assert gpu(last)["rolled_back"] and gpu(last)["reported_target_count"] == 0
    assert any(e["description"].startswith("Rollback initiated") for e in gpu(last)["events"])
    rolled_back_at = deployment.sim.rolled_back_at("gpu")
    assert rolled_back_at is not None
    assert rolled_back_at - deployment.world.clock.start == pytest.approx(WINDOW, abs=20)
    # Seen within one refresh of the rollback, after a countdown that reached the last minutes.
    assert 0 <= deployment.world.clock.time() - rolled_back_at <= INTERVAL + 20
    before = [gpu(r)["window_left_seconds"] for r in run.refreshes[:-1]]
    assert before[-1] is not None and 0 < before[-1] <= INTERVAL + 20
    assert all(gpu(r)["current_count"] == 12 for r in run.refreshes[-5:-1])
    assert run.stderr.startswith("failed: ")
    assert "HyperPod rolled back instance group(s) gpu" in run.stderr
    assert run.stderr.count("\n") == 1


def test_failed_cluster_exits_1_with_its_failure_message(
    monkeypatch: pytest.MonkeyPatch, cdk_out: str, template: dict[str, Any]
) -> None:
    message = "Lifecycle script on_create.sh failed on the controller node (exit code 1)."
    deployment = Deployment(monkeypatch, template, constant(16), controller_failure=message)
    run = watch(deployment, cdk_out)

    assert run.code == 1
    last = run.refreshes[-1]
    assert last["cluster_status"] == "Failed" and last["failure_message"] == message
    assert "cluster fsdp-train is Failed" in last["reason"] and message in last["reason"]
    assert len(run.refreshes) <= 12, "noticed within a refresh of the failure (600 s)"


@pytest.fixture(scope="module")
def one_hour_gate(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, Any]]:
    """The example stack synthesized with a 1-hour gate: its cdk.out and template."""
    from aws_cdk import Duration

    from examples.fsdp import FsdpTrainingStack
    from hyperpod_constructs import MinCountGateOptions
    from tests.conftest import new_app

    app = new_app(outdir=str(tmp_path_factory.mktemp("one-hour-gate")))
    FsdpTrainingStack(app, STACK, readiness_gate=MinCountGateOptions(timeout=Duration.hours(1)))
    assembly = app.synth()
    return str(assembly.directory), assembly.get_stack_by_name(STACK).template


def test_the_gate_failing_by_its_deadline_exits_1_with_the_gate_reason(
    monkeypatch: pytest.MonkeyPatch, one_hour_gate: tuple[str, dict[str, Any]]
) -> None:
    """A gate timeout of 1 h (shorter than HyperPod's window): the gate's loop fails the wait
    condition, the stack rolls back, and watch reports the reason CloudFormation shows."""
    cdk_out, template = one_hour_gate
    deployment = Deployment(monkeypatch, template, constant(12))
    run = watch(deployment, cdk_out)

    assert run.code == 1
    last = run.refreshes[-1]
    assert last["gate"]["state"] == "failed"
    # SignalResource carries no reason: CloudFormation names the UniqueId, the reason's start.
    assert last["gate"]["reason"].startswith(
        "Received FAILURE signal with UniqueId gate-failed-deadline-reached"
    )
    assert last["reason"].startswith("the gate failed: Received FAILURE signal with UniqueId")
    assert gpu(last)["current_count"] == 12 and not gpu(last)["rolled_back"]


def test_a_throttling_burst_is_ridden_out(
    monkeypatch: pytest.MonkeyPatch, cdk_out: str, template: dict[str, Any]
) -> None:
    deployment = Deployment(monkeypatch, template, linear(0, 12, 16))
    start = deployment.world.clock.start
    fault = deployment.sim.inject("throttle", start=start + 3600, end=start + 3600 + 300)
    run = watch(deployment, cdk_out)

    assert run.code == 0, run.stderr
    assert fault.hits > 0
    noted = [r for r in run.refreshes if r["notes"]]
    assert noted, "a refresh whose DescribeCluster was throttled after retries says so"
    assert all("ThrottlingException" in " ".join(r["notes"]) for r in noted)
    assert all(r["verdict"] == "waiting" for r in noted)
    assert run.refreshes[-1]["verdict"] == "ready"


def test_endless_throttling_gives_up_with_exit_2(
    monkeypatch: pytest.MonkeyPatch, cdk_out: str, template: dict[str, Any]
) -> None:
    deployment = Deployment(monkeypatch, template, linear(0, 6, 16))
    deployment.sim.inject("throttle", start=deployment.world.clock.start + 1800)
    run = watch(deployment, cdk_out)

    assert run.code == 2
    (line,) = run.stderr.splitlines()
    assert line.startswith("error: AWS reads kept failing for 6")
    assert "sagemaker:DescribeCluster fsdp-train: ThrottlingException: Rate exceeded" in line
    assert run.refreshes[-1]["exit_code"] == 2


def test_access_denied_is_one_line_and_exit_2(
    monkeypatch: pytest.MonkeyPatch, cdk_out: str, template: dict[str, Any]
) -> None:
    deployment = Deployment(monkeypatch, template, constant(16))
    deployment.sim.inject("access_denied")
    run = watch(deployment, cdk_out)

    assert run.code == 2
    (line,) = run.stderr.splitlines()
    assert line.startswith("error: sagemaker:DescribeCluster fsdp-train failed in us-east-1: ")
    assert "AccessDeniedException" in line and "not authorized" in line
    assert run.stdout == ""


def test_an_endpoint_that_never_answers_is_exit_2(
    monkeypatch: pytest.MonkeyPatch, cdk_out: str, template: dict[str, Any]
) -> None:
    deployment = Deployment(monkeypatch, template, constant(16))
    with deployment.server() as endpoint:
        closed = endpoint.url  # nothing listens there once the server is closed
    run = deployment.watch(cdk_out, "--json", endpoint=closed)

    assert run.code == 2
    (line,) = run.stderr.splitlines()
    assert line.startswith("error: cannot reach AWS for cloudformation:DescribeStacks")
    assert run.stdout == ""


def test_reads_the_deployed_template_when_there_is_no_cdk_out(
    monkeypatch: pytest.MonkeyPatch, template: dict[str, Any], tmp_path: Path
) -> None:
    """``--stack`` without a ``cdk.out`` at hand: the gated groups come from GetTemplate."""
    monkeypatch.chdir(tmp_path)
    deployment = Deployment(monkeypatch, template, linear(0, 12, 16))
    with deployment.server() as endpoint:
        run = deployment.watch(None, "--json", "--interval", str(INTERVAL), endpoint=endpoint.url)

    assert (run.code, run.stderr) == (0, ""), run.stderr
    assert endpoint.requests[0] == ("cloudformation", "GetTemplate")
    assert endpoint.requests.count(("cloudformation", "GetTemplate")) == 1
    assert (gpu(run.refreshes[-1])["min_count"], run.refreshes[-1]["verdict"]) == (16, "ready")


def test_without_a_terminal_one_plain_line_per_refresh(
    monkeypatch: pytest.MonkeyPatch, cdk_out: str, template: dict[str, Any]
) -> None:
    deployment = Deployment(monkeypatch, template, linear(0, 12, 16))
    with deployment.server() as endpoint:
        run = deployment.watch(cdk_out, "--interval", str(INTERVAL), endpoint=endpoint.url)

    assert (run.code, run.stderr) == (0, ""), run.stderr
    *lines, verdict = run.stdout.splitlines()
    assert "\x1b" not in run.stdout
    assert verdict.startswith("ready: all gated groups reached their minimum: gpu 16/16")
    assert re.fullmatch(r"[0-9:]{8} fsdp-train \w+: gpu NotListed 0 / 16 / 16 .*", lines[0])
    assert re.search(
        r": gpu Creating ([1-9]|1[0-5]) / 16 / 16 window [0-2]:[0-5][0-9]:00; ", "\n".join(lines)
    )
    assert re.search(r": gpu InService 16 / 16 / 16; gate (waiting|ready); ready$", lines[-1])


def test_interrupted_is_exit_130_without_traceback(
    monkeypatch: pytest.MonkeyPatch, cdk_out: str, template: dict[str, Any]
) -> None:
    deployment = Deployment(monkeypatch, template, constant(16))

    def interrupt(_seconds: float) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(deployment, "sleep", interrupt)
    with deployment.server() as endpoint:
        run = deployment.watch(cdk_out, "--json", endpoint=endpoint.url)
    assert (run.code, run.stderr) == (130, "interrupted\n")
    assert len(run.refreshes) == 1


def test_a_stack_that_appears_late_is_waited_for(
    monkeypatch: pytest.MonkeyPatch, cdk_out: str, template: dict[str, Any]
) -> None:
    """cdk deploy publishes assets before it creates the stack: watch waits for it."""
    deployment = Deployment(monkeypatch, template, linear(0, 12, 16))
    deployment.stack.exists = False
    deployment.world.at(300, lambda: setattr(deployment.stack, "exists", True))
    run = watch(deployment, cdk_out)

    assert run.code == 0
    first = run.refreshes[0]
    assert (first["stack_status"], first["gate"]["state"], first["verdict"]) == (
        None,
        "unknown",
        "waiting",
    )
    assert first["reason"] == "waiting for cdk deploy to create stack FsdpTraining"


def test_a_stack_that_never_appears_is_exit_2(
    monkeypatch: pytest.MonkeyPatch, cdk_out: str, template: dict[str, Any]
) -> None:
    deployment = Deployment(monkeypatch, template, linear(0, 12, 16))
    deployment.stack.exists = False
    run = watch(deployment, cdk_out)

    assert run.code == 2
    (line,) = run.stderr.splitlines()
    assert line == (
        "error: stack FsdpTraining not found (waited 600 s for cdk deploy to create it); "
        "check --stack and --region"
    )


def test_a_cdk_out_that_does_not_match_the_deployed_stack_is_exit_2(
    monkeypatch: pytest.MonkeyPatch, cdk_out: str, template: dict[str, Any]
) -> None:
    """The stack is at rest and has no wait condition of the gated values read from cdk.out
    (synthesized after a change that was not deployed): nothing will ever arm that gate."""
    deployment = Deployment(monkeypatch, template, constant(12), arm_after=None)
    deployment.stack.status = "UPDATE_COMPLETE"
    run = watch(deployment, cdk_out)

    assert run.code == 2
    (line,) = run.stderr.splitlines()
    assert line.startswith(
        "error: stack FsdpTraining is UPDATE_COMPLETE without the gate's wait condition "
        "ClusterMinCountGateWait"
    )
    assert all(r["gate"]["state"] == "not armed" for r in run.refreshes)
    assert run.refreshes[-1]["elapsed_seconds"] == 600


def test_an_update_raising_the_minimum_counts_the_window_from_the_update(
    monkeypatch: pytest.MonkeyPatch, cdk_out: str, template: dict[str, Any]
) -> None:
    """The stack was deployed with the group ungated and 8 nodes up; the update raises its
    minimum to the template's 16. HyperPod's window (and watch's countdown) restarts then."""
    update_at = 5 * 3600.0
    deployment = Deployment(
        monkeypatch,
        template,
        steps((0, 8), (update_at + 3600, 16)),
        previous_min=0,
        arm_after=None,
    )
    deployment.stack.status = "CREATE_COMPLETE"
    deployment.world.at(update_at, deployment.update_to_template)
    deployment.sleep(update_at)
    run = watch(deployment, cdk_out)

    assert run.code == 0, run.stderr
    first = run.refreshes[0]
    assert (first["stack_status"], gpu(first)["status"], gpu(first)["current_count"]) == (
        "UPDATE_IN_PROGRESS",
        "Updating",
        8,
    )
    # Counted from the update (3 h left), not from the cluster's creation 5 hours earlier.
    assert WINDOW - 60 <= gpu(first)["window_left_seconds"] <= WINDOW
    assert first["gate"]["state"] == "not armed" and first["verdict"] == "waiting"
    assert {r["gate"]["state"] for r in run.refreshes} >= {"not armed", "waiting"}
    assert run.refreshes[-1]["verdict"] == "ready"


def _older_boto3(root: Path) -> Callable[..., Any]:
    """boto3 sessions whose SageMaker model predates MinCount and ListClusterEvents."""
    loader = botocore.loaders.Loader()
    model = loader.load_service_model("sagemaker", "service-2")
    del model["shapes"]["ClusterInstanceGroupDetails"]["members"]["MinCount"]
    del model["operations"]["ListClusterEvents"]
    version = loader.determine_latest_version("sagemaker", "service-2")
    (root / "sagemaker" / version).mkdir(parents=True)
    (root / "sagemaker" / version / "service-2.json").write_text(json.dumps(model))

    real = boto3.session.Session

    def session(region_name: str | None = None) -> Any:
        core = botocore.session.Session()
        core.get_component("data_loader").search_paths.insert(0, str(root))
        return real(botocore_session=core, region_name=region_name)

    return session


def test_an_older_boto3_without_mincount_or_events_still_decides(
    monkeypatch: pytest.MonkeyPatch, cdk_out: str, template: dict[str, Any], tmp_path: Path
) -> None:
    monkeypatch.setattr(boto3.session, "Session", _older_boto3(tmp_path))
    deployment = Deployment(monkeypatch, template, constant(12))
    with deployment.server() as endpoint:
        run = deployment.watch(
            cdk_out, "--json", "--interval", str(INTERVAL), endpoint=endpoint.url
        )

    assert (run.code, endpoint.errors) == (1, [])  # rolled back: TargetCount 0, no MinCount
    last = run.refreshes[-1]
    assert gpu(last)["rolled_back"] and gpu(last)["reported_min_count"] is None
    assert all(gpu(r)["events"] == [] for r in run.refreshes)
    assert ("sagemaker", "DescribeCluster") in endpoint.requests
    assert ("sagemaker", "ListClusterEvents") not in endpoint.requests


@pytest.fixture(scope="module")
def parameterized(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, Any]]:
    """A stack whose gated group's counts are parameters (defaults: 8 of 4): its cdk.out and
    template."""
    outdir = str(tmp_path_factory.mktemp("parameterized"))
    assembly = parameterized_assembly(STACK, cluster_name="product", outdir=outdir)
    return str(assembly.directory), assembly.get_stack_by_name(STACK).template


def test_counts_given_as_parameters_take_the_stack_s_values(
    monkeypatch: pytest.MonkeyPatch, parameterized: tuple[str, dict[str, Any]]
) -> None:
    cdk_out, template = parameterized
    parameters = {"GpuCount": "16", "GpuMin": "12"}
    deployment = Deployment(monkeypatch, template, linear(0, 6, 16), parameters=parameters)
    run = watch(deployment, cdk_out)

    assert run.code == 0, run.stderr
    assert all(r["cluster"] == "product" for r in run.refreshes)
    # The deployed 12 of 16, not the template's defaults (4 of 8).
    assert all((gpu(r)["min_count"], gpu(r)["target_count"]) == (12, 16) for r in run.refreshes)
    last = run.refreshes[-1]
    assert (last["verdict"], last["exit_code"]) == ("ready", 0)
    assert 12 <= gpu(last)["current_count"] < 16
    ((_, signals),) = deployment.world.cfn.signals.items()
    assert [s.status for s in signals] == ["SUCCESS"]


def test_a_stack_without_the_counts_parameters_is_exit_2(
    monkeypatch: pytest.MonkeyPatch, parameterized: tuple[str, dict[str, Any]]
) -> None:
    cdk_out, template = parameterized
    deployment = Deployment(monkeypatch, template, linear(0, 6, 16), arm_after=None)
    del deployment.stack.parameters["GpuMin"]  # a stack of another template under that name
    run = watch(deployment, cdk_out)

    assert run.code == 2
    last = run.refreshes[-1]
    assert gpu(last)["min_count"] is None and gpu(last)["target_count"] == 8
    assert last["reason"] == (
        f"stack {STACK} has no integer value for parameter(s) GpuMin, which the gated counts "
        "name: the template read does not match the deployed stack"
    )

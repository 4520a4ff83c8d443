"""The CDK integration tests in integ/, in snapshot mode (no AWS account needed).

Each ``integ/integ_*.py`` app is synthesized by the pinned ``cdk`` CLI from the repository
root, as the deploy commands in docs/integ.md run it, and compared with its snapshot (asset
hashes replaced by placeholders, as ``integ-runner`` ignores asset changes by default). The
checks below also hold the assertions to what the test stack really contains. The real
``integ-runner`` cannot read what aws-cdk-lib 2.275 writes yet: docs/integ.md has the evidence.

Update after an intended change: ``pytest tests/test_integ.py --snapshot-update``.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import re
import subprocess
import sys
import tarfile
import threading
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import botocore
import pytest
from aws_cdk import integ_tests_alpha
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.json import JSONSnapshotExtension

from integ import assertion_results
from tests.conftest import ROOT
from tests.support.cdk_cli import NODE_BIN, SYNTH, cdk_env
from tests.support.clock import VirtualClock
from tests.support.hyperpod_sim import GroupSpec, HyperPodSimulator, constant, unlimited
from tests.template_utils import normalize_asset_hashes, only

INTEG = ROOT / "integ"
APPS = sorted(INTEG.glob("integ_*.py"))


SYNTH_LIKE_INTEG_RUNNER = [*SYNTH, "--no-path-metadata", "--no-asset-metadata"]
"""``cdk synth`` with the options integ-runner synthesizes with (no path, asset or version
metadata). From the repository root the app gets cdk.json's feature flags, a superset of the
flags integ-runner passes (its recommended-feature-flags.json, all with the same values)."""


@pytest.fixture(scope="module")
def assemblies(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every integ app, synthesized once by the CLI: ``cdk synth --app "python <app>"``."""
    out: dict[str, Path] = {}
    env = cdk_env()
    for app in APPS:
        outdir = tmp_path_factory.mktemp(app.stem)
        command = [*SYNTH_LIKE_INTEG_RUNNER, "--app", f"{sys.executable} {app.relative_to(ROOT)}"]
        done = subprocess.run(
            [*command, "--output", str(outdir)], env=env, cwd=ROOT, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stdout + done.stderr
        out[app.stem] = outdir
    return out


def _templates(outdir: Path) -> dict[str, dict[str, Any]]:
    return {
        path.name.removesuffix(".template.json"): json.loads(path.read_text())
        for path in sorted(outdir.glob("*.template.json"))
    }


def _case(outdir: Path) -> dict[str, Any]:
    """The test case of an integ app's manifest (``integ.json``); each app has one."""
    (case,) = json.loads((outdir / "integ.json").read_text())["testCases"].values()
    return case  # type: ignore[no-any-return]


def _without_salt(template: dict[str, Any]) -> dict[str, Any]:
    """The template with each assertion's ``salt`` (the synth time, so that the assertion
    runs again on every deployment) replaced by a placeholder."""
    for resource in template.get("Resources", {}).values():
        if resource["Type"].startswith("Custom::DeployAssert@") and "salt" in resource.get(
            "Properties", {}
        ):
            resource["Properties"]["salt"] = "<salt>"
    return template


def test_there_is_an_integ_test() -> None:
    assert [app.name for app in APPS] == ["integ_gated_cluster.py"]


@pytest.mark.parametrize("app", [app.stem for app in APPS])
def test_integ_app_matches_its_snapshot(
    app: str, assemblies: dict[str, Path], snapshot: SnapshotAssertion
) -> None:
    outdir = assemblies[app]
    manifest = json.loads((outdir / "integ.json").read_text())
    snapshot_json = snapshot.use_extension(JSONSnapshotExtension)
    templates = {name: _without_salt(t) for name, t in _templates(outdir).items()}
    assert {"integ.json": manifest, **normalize_asset_hashes(templates)} == snapshot_json


def test_gated_cluster_assertions_name_what_the_test_stack_deploys(
    assemblies: dict[str, Path],
) -> None:
    outdir = assemblies["integ_gated_cluster"]
    case = _case(outdir)
    (stack_name,) = case["stacks"]
    templates = _templates(outdir)
    stack, asserts = templates[stack_name], templates[case["assertionStackName"]]

    _, cluster = only(stack, "AWS::SageMaker::Cluster")
    gated = {
        group["InstanceGroupName"]: group
        for group in cluster["Properties"]["InstanceGroups"]
        if group.get("MinInstanceCount", 0) > 0
    }
    wait_id, _ = only(stack, "AWS::CloudFormation::WaitCondition")
    calls = [
        resource["Properties"]
        for resource in asserts["Resources"].values()
        if resource["Type"].startswith("Custom::DeployAssert@SdkCall")
    ]
    by_api = {(call["service"], call["api"]): call for call in calls}

    describe = by_api[("SageMaker", "describeCluster")]
    expected = json.loads(describe["expected"])["$ObjectLike"]["InstanceGroups"]["$ArrayWith"]
    assert {item["$ObjectLike"]["InstanceGroupName"] for item in expected} == set(gated)
    for item in expected:
        group = gated[item["$ObjectLike"]["InstanceGroupName"]]
        # CurrentCount >= MinCount, as an equality: these groups ask for their whole count.
        assert group["MinInstanceCount"] == group["InstanceCount"]
        assert item["$ObjectLike"]["CurrentCount"] == group["MinInstanceCount"]

    resource = by_api[("CloudFormation", "describeStackResource")]
    assert resource["parameters"]["LogicalResourceId"] == f'"{wait_id}"'
    assert "CREATE_COMPLETE" in resource["expected"]


# -- deploy mode without integ-runner: integ/assertion_results.py ---------------------------

HANDLER = "package/lib/assertions/providers/lambda-handler/assertion.js"
"""The integ-tests-alpha Lambda code that writes each assertion's result."""


def _integ_tests_alpha_file(member: str) -> bytes:
    """A file of the installed aws-cdk.integ-tests-alpha's JavaScript package."""
    package = Path(integ_tests_alpha.__file__).parent / "_jsii"
    (tarball,) = package.glob("*.jsii.tgz")
    with tarfile.open(tarball) as tar:
        file = tar.extractfile(member)
        assert file is not None
        return file.read()


def _handler_results() -> dict[str, str]:
    """Status -> the JSON the installed integ-tests-alpha assertion handler writes for it,
    read from the handler's own source (its ``JSON.stringify({status: ...})`` calls)."""
    source = _integ_tests_alpha_file(HANDLER).decode()
    statuses = re.findall(r"status: '(\w+)'", source)
    return {status: json.dumps({"status": status, "message": "mismatch"}) for status in statuses}


def _deploy_outputs(assemblies: dict[str, Path], status: str) -> dict[str, dict[str, str]]:
    """What ``cdk deploy --outputs-file`` writes for the assertion stack of the gated-cluster
    test (its real output names), with every assertion's result in ``status``."""
    outdir = assemblies["integ_gated_cluster"]
    name = _case(outdir)["assertionStackName"]
    outputs = _templates(outdir)[name]["Outputs"]
    return {name: dict.fromkeys(outputs, _handler_results()[status])}


def test_the_checker_knows_what_the_assertion_handler_writes() -> None:
    assert set(_handler_results()) == {"success", "fail"}


def test_the_checker_passes_only_when_every_assertion_succeeded(
    assemblies: dict[str, Path],
) -> None:
    passed = _deploy_outputs(assemblies, "success")
    (stack,) = passed.values()
    assert len(stack) == 2
    assert assertion_results.failures(passed) == []
    for name in stack:
        one_failed = {
            key: {**values, name: _handler_results()["fail"]} for key, values in passed.items()
        }
        (line,) = assertion_results.failures(one_failed)
        assert name in line and line.endswith(": mismatch")


@pytest.mark.parametrize(
    "outputs",
    [
        {},
        {"HyperPodGatedCluster": {"ClusterName": "x"}},
        {"Asserts": {"AssertionResultsX": "not json"}},
        {"Asserts": {"AssertionResultsX": '"success"'}},
        {"Asserts": {"AssertionResultsX": '{"status": "pending"}'}},
    ],
    ids=["nothing", "no-assertion-output", "not-json", "not-an-object", "unknown-status"],
)
def test_the_checker_never_passes_without_a_success(outputs: dict[str, dict[str, str]]) -> None:
    assert assertion_results.failures(outputs)


def test_the_checker_command_exits_non_zero_on_a_failed_assertion(
    assemblies: dict[str, Path], tmp_path: Path
) -> None:
    script = [sys.executable, str(INTEG / "assertion_results.py")]
    runs = {}
    for status in ("success", "fail"):
        path = tmp_path / f"{status}.json"
        path.write_text(json.dumps(_deploy_outputs(assemblies, status)))
        runs[status] = subprocess.run([*script, str(path)], capture_output=True, text=True)
    assert (runs["success"].returncode, runs["success"].stderr) == (0, "")
    assert "every assertion passed" in runs["success"].stdout
    assert runs["fail"].returncode == 1
    assert runs["fail"].stderr.count("FAILED ") == 2
    missing = subprocess.run(
        [*script, str(tmp_path / "absent.json")], capture_output=True, text=True
    )
    assert missing.returncode == 1 and "cannot read the deploy outputs" in missing.stderr


def test_the_documented_deploy_commands_deploy_the_test_case_then_its_assertions(
    assemblies: dict[str, Path],
) -> None:
    """docs/integ.md deploys the test stacks, then the assertion stack with its outputs
    written to the file the checker reads, as integ-runner does."""
    docs = (ROOT / "docs" / "integ.md").read_text()
    deploy_mode = docs.split("## Deploy mode", 1)[1].split("\n## ", 1)[0]
    (commands,) = re.findall(r"```sh\n(.*?)```", deploy_mode, flags=re.DOTALL)
    deploys = re.findall(r"^cdk deploy (\S+) (.*)$", commands, flags=re.MULTILINE)
    checks = re.findall(r"^python integ/assertion_results\.py (\S+)$", commands, re.MULTILINE)
    case = _case(assemblies["integ_gated_cluster"])
    assert [stack for stack, _ in deploys] == [*case["stacks"], case["assertionStack"]]
    assertion_options = deploys[-1][1].split()
    assert "--no-rollback" in assertion_options
    outputs_file = assertion_options[assertion_options.index("--outputs-file") + 1]
    assert checks == [outputs_file]
    assert re.search(r"^cdk destroy --all --force ", commands, flags=re.MULTILINE)


# -- the assertions, evaluated by integ-tests-alpha's own Lambda handler --------------------

HANDLER_BUNDLE = "package/lib/assertions/providers/lambda-handler.bundle/index.js"
"""The assertion provider's Lambda code, as deployed (one file; the AWS SDK for JavaScript
v3 clients come from the Lambda runtime, here from node_modules)."""

RUN_HANDLER = """
const https = require("https");
let response;
https.request = (options, done) => ({
  on() {}, write(body) { response = body; }, end() { done({}); },
});
console.log = console.info = () => {};
const { handler } = require(process.argv[1]);
const context = { getRemainingTimeInMillis: () => 60000, logStreamName: "local" };
handler(JSON.parse(process.argv[2]), context).then(() => process.stdout.write(response));
"""
"""Runs the handler on one CloudFormation ``Create`` event and prints the response it sends
CloudFormation (the HTTPS PUT to the presigned response URL, captured instead of sent)."""

HOUR = 3600


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.timestamp()
    raise TypeError(f"not JSON serializable: {value!r}")


@contextlib.contextmanager
def _sagemaker_endpoint(sim: HyperPodSimulator) -> Iterator[str]:
    """A local HTTP endpoint that answers the SageMaker JSON protocol from the simulator
    (through a real boto3 client, so each answer is valid for botocore's model)."""
    client = sim.client()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            operation = self.headers["X-Amz-Target"].removeprefix("SageMaker.")
            params = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            answer = getattr(client, botocore.xform_name(operation))(**params)
            answer.pop("ResponseMetadata", None)
            body = json.dumps(answer, default=_jsonable).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-amz-json-1.1")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def handler_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("handler") / "index.js"
    path.write_bytes(_integ_tests_alpha_file(HANDLER_BUNDLE))
    return path


def _describe_cluster_assertion(assemblies: dict[str, Path]) -> tuple[str, dict[str, Any]]:
    outdir = assemblies["integ_gated_cluster"]
    asserts = _templates(outdir)[_case(outdir)["assertionStackName"]]["Resources"]
    (logical_id,) = [
        key
        for key, resource in asserts.items()
        if resource["Type"].startswith("Custom::DeployAssert@SdkCall")
        and resource["Properties"]["api"] == "describeCluster"
    ]
    return logical_id, asserts[logical_id]


def _simulated_cluster(
    assemblies: dict[str, Path], cluster_name: str, workers_capacity: int | None
) -> HyperPodSimulator:
    """The test stack's cluster in the simulator: its groups as the template defines them,
    each gated group limited to ``workers_capacity`` instances (None: no limit)."""
    outdir = assemblies["integ_gated_cluster"]
    (stack_name,) = _case(outdir)["stacks"]
    _, cluster = only(_templates(outdir)[stack_name], "AWS::SageMaker::Cluster")
    specs = []
    for group in cluster["Properties"]["InstanceGroups"]:
        minimum = group.get("MinInstanceCount", 0)
        limited = minimum > 0 and workers_capacity is not None
        specs.append(
            GroupSpec(
                group["InstanceGroupName"],
                group["InstanceCount"],
                minimum,
                node_type=group["SlurmConfig"]["NodeType"],
                instance_type=group["InstanceType"],
                capacity=constant(workers_capacity) if limited else unlimited(),
            )
        )
    return HyperPodSimulator(VirtualClock(), specs, name=cluster_name)


@pytest.mark.parametrize(
    ("workers_capacity", "hours", "workers_status", "status"),
    [(None, 2, "InService", "success"), (1, 2, "Creating", "fail"), (1, 4, "InService", "fail")],
    ids=["minimum-reached", "still-creating-below-minimum", "rolled-back-to-in-service"],
)
def test_the_describe_cluster_assertion_passes_only_once_every_gated_group_reached_its_minimum(
    assemblies: dict[str, Path],
    handler_bundle: Path,
    workers_capacity: int | None,
    hours: int,
    workers_status: str,
    status: str,
) -> None:
    """The assertion as deployed, run by integ-tests-alpha's handler with the AWS SDK for
    JavaScript against the simulated cluster. After a rollback the group is ``InService``
    again (with no instances): the assertion must not take that for success."""
    logical_id, resource = _describe_cluster_assertion(assemblies)
    cluster_name = json.loads(resource["Properties"]["parameters"]["ClusterName"])
    sim = _simulated_cluster(assemblies, cluster_name, workers_capacity)
    sim.clock.advance(hours * HOUR)
    event = {
        "RequestType": "Create",
        "ResourceType": resource["Type"],
        "ResourceProperties": {**resource["Properties"], "ServiceToken": "local"},
        "ResponseURL": "https://cloudformation-custom-resource-response.invalid/local",
        "StackId": "local",
        "RequestId": "local",
        "LogicalResourceId": logical_id,
    }
    env = cdk_env()
    with _sagemaker_endpoint(sim) as endpoint:
        env.update(
            AWS_ENDPOINT_URL_SAGEMAKER=endpoint,
            AWS_REGION="us-east-1",
            AWS_ACCESS_KEY_ID="local",
            AWS_SECRET_ACCESS_KEY="local",
            NODE_PATH=str(ROOT / "node_modules"),
        )
        done = subprocess.run(
            [
                str(NODE_BIN / "node"),
                "--no-deprecation",
                "-e",
                RUN_HANDLER,
                str(handler_bundle),
                json.dumps(event),
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 0, done.stderr
    response = json.loads(done.stdout)
    assert response["Status"] == "SUCCESS"  # a failed assertion does not fail the deployment
    result = json.loads(response["Data"]["assertion"])
    assert result["status"] == status, result
    groups = response["Data"]["apiCallResponse"]["InstanceGroups"]
    assert [g["Status"] for g in groups if g["InstanceGroupName"] == "workers"] == [workers_status]

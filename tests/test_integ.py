"""The CDK integration tests in integ/, in snapshot mode (no AWS account needed).

Each ``integ/integ_*.py`` app is synthesized by the pinned ``cdk`` CLI from the repository
root, as the deploy commands in docs/integ.md run it, and compared with its snapshot (asset
hashes replaced by placeholders, as ``integ-runner`` ignores asset changes by default). The
checks below also hold the assertions to what the test stack really contains. The real
``integ-runner`` cannot read what aws-cdk-lib 2.275 writes yet: docs/integ.md has the evidence.

Update after an intended change: ``pytest tests/test_integ.py --snapshot-update``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.json import JSONSnapshotExtension

from tests.conftest import ROOT
from tests.support.cdk_cli import SYNTH, cdk_env
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
    test_cases = json.loads((outdir / "integ.json").read_text())["testCases"]
    (case,) = test_cases.values()
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

"""The benchmark's L1 baselines: they must not import the library (or the ratios compare the
library with itself plus the library's import)."""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hyperpod_constructs.permissions import NETWORK_INTERFACE_ACTIONS
from tests.conftest import ROOT

APPS = ROOT / "bench" / "apps"


@pytest.fixture
def harness(monkeypatch: pytest.MonkeyPatch) -> object:
    monkeypatch.syspath_prepend(str(APPS))
    import _harness

    return _harness


def test_library_literal_reads_the_librarys_list_without_importing_it(harness: object) -> None:
    read = harness.library_literal("permissions", "NETWORK_INTERFACE_ACTIONS")  # type: ignore[attr-defined]
    assert read == NETWORK_INTERFACE_ACTIONS
    with pytest.raises(LookupError, match="no literal assignment to NO_SUCH_NAME"):
        harness.library_literal("cluster", "NO_SUCH_NAME")  # type: ignore[attr-defined]


def test_the_l1_scale_app_imports_nothing_of_the_library() -> None:
    env = {**os.environ, "CDK_VALIDATION": "false", "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, str(APPS / "scale.py"), "2", "--l1"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["library_modules"] == 0


def test_the_apps_load_the_library_from_bytecode_as_an_installed_package_does(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """pip compiles an installed package; a checkout run with PYTHONDONTWRITEBYTECODE=1
    would compile the library in every measured process (and aws-cdk-lib never)."""
    monkeypatch.syspath_prepend(str(ROOT / "bench"))
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    bench = importlib.import_module("run")
    monkeypatch.setattr(bench, "BYTECODE_DIR", tmp_path / "bytecode")
    env = bench.child_env(False)
    assert "PYTHONDONTWRITEBYTECODE" not in env
    subprocess.run(
        [sys.executable, "-c", "import hyperpod_constructs.enums"], env=env, cwd=ROOT, check=True
    )
    source = (ROOT / "hyperpod_constructs" / "enums.py").resolve()
    compiled = importlib.util.cache_from_source(str(source))
    # cache_from_source honours sys.pycache_prefix; rebuild the path under the bench's prefix.
    name = Path(compiled).name
    cached = tmp_path / "bytecode" / source.parent.relative_to(source.anchor) / name
    assert cached.is_file(), sorted(p.name for p in (tmp_path / "bytecode").rglob("*.pyc"))[:5]


def _run_app(script: str, *args: str, outdir: Path) -> dict[str, float]:
    env = {
        **os.environ,
        "CDK_VALIDATION": "false",
        "PYTHONPATH": str(ROOT),
        "HYPERPOD_BENCH_OUTDIR": str(outdir),
    }
    result = subprocess.run(
        [sys.executable, str(APPS / script), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        check=False,
    )
    assert result.returncode == 0 and not result.stderr.strip(), result.stderr
    report: dict[str, float] = json.loads(result.stdout.strip().splitlines()[-1])
    return report


@pytest.mark.deep(
    why="three benchmark apps synthesized and written back; make test runs the "
    "benchmark's other checks (this module)"
)
def test_the_floor_writes_the_apps_own_resources_without_the_library(tmp_path: Path) -> None:
    """The floor the library is judged against is the library's own template, resource for
    resource (logical ids, types, properties, attributes), built without importing it."""
    _run_app("clusters.py", "2", outdir=tmp_path / "library")
    template = tmp_path / "library" / "Clusters.template.json"
    report = _run_app("floor.py", str(template), outdir=tmp_path / "floor")
    assert report["library_modules"] == 0
    library = json.loads(template.read_text())
    floor = json.loads((tmp_path / "floor" / "Floor.template.json").read_text())
    assert floor["Resources"] == library["Resources"]
    assert sum(r["Type"] == "AWS::SageMaker::Cluster" for r in floor["Resources"].values()) == 2
    report = _run_app("floor_l1.py", str(template), outdir=tmp_path / "l1")
    assert report["library_modules"] == 0
    l1 = json.loads((tmp_path / "l1" / "FloorL1.template.json").read_text())
    # CfnInclude orders each DependsOn by its own construct paths: the same set.
    assert _depends_on_as_sets(l1["Resources"]) == _depends_on_as_sets(library["Resources"])


def _depends_on_as_sets(resources: dict[str, Any]) -> dict[str, Any]:
    return {
        name: {**r, "DependsOn": sorted(r["DependsOn"])} if "DependsOn" in r else r
        for name, r in resources.items()
    }


def test_the_peer_waits_for_each_cluster_with_the_provider_framework(tmp_path: Path) -> None:
    """Issue 37's peer: the same clusters as ``clusters.py`` in L1, each waited for by a custom
    resource of aws-cdk-lib's Provider framework (a Step Functions waiter), each with a
    dependant; built without importing the library."""
    report = _run_app("peer.py", "2", outdir=tmp_path / "peer")
    assert report["library_modules"] == 0
    peer = json.loads((tmp_path / "peer" / "Peer.template.json").read_text())["Resources"]
    kinds = [resource["Type"] for resource in peer.values()]
    assert kinds.count("AWS::SageMaker::Cluster") == 2
    assert kinds.count("AWS::CloudFormation::CustomResource") == 2
    assert kinds.count("AWS::StepFunctions::StateMachine") == 1  # the waiter, shared
    parameters = [r for r in peer.values() if r["Type"] == "AWS::SSM::Parameter"]
    assert all(len(p["DependsOn"]) == 1 and "Wait" in p["DependsOn"][0] for p in parameters)

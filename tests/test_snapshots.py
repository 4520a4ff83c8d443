"""Snapshots of every stack of the example app, and checks of the asset hashes they hide.

The snapshots replace asset hashes (which change whenever a handler's source changes) with
``<asset-hash-N>`` placeholders. The hashes are not taken on trust: the tests below check
each one against the asset manifest and the files staged in the cloud assembly.

Update after an intended change: ``pytest tests/test_snapshots.py --snapshot-update``.
"""

from __future__ import annotations

import filecmp
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import FileSystem, Stack
from aws_cdk.cx_api import CloudAssembly
from constructs import Construct
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.json import JSONSnapshotExtension

import hyperpod_constructs._gate.construct as gate_construct
from hyperpod_constructs import HyperPodInstanceType, HyperPodSlurmCluster, InstanceGroup
from hyperpod_constructs._gate.resources import LambdaCode
from hyperpod_constructs.lifecycle import UPLOAD_FOLLOW, UPLOAD_IGNORE_MODE
from tests.conftest import ROOT, new_app
from tests.template_utils import asset_hashes, normalize_asset_hashes, only, resources

GATE_RUNTIME = ROOT / "hyperpod_constructs" / "_runtime"
LIFECYCLE_DIR = ROOT / "examples" / "lifecycle"
GATE_HANDLERS = {"hyperpod_gate.poll.handler", "hyperpod_gate.arm.handler"}
BYTECODE = ("__pycache__", ".pyc")
LIFECYCLE_FINGERPRINT: dict[str, Any] = {"follow": UPLOAD_FOLLOW, "ignore_mode": UPLOAD_IGNORE_MODE}


@pytest.fixture
def json_snapshot(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(JSONSnapshotExtension)


def _asset_manifest(assembly: CloudAssembly, stack_name: str) -> dict[str, Any]:
    path = Path(assembly.directory) / f"{stack_name}.assets.json"
    files: dict[str, Any] = json.loads(path.read_text())["files"]
    return files


def _staged(assembly: CloudAssembly, stack_name: str, digest: str) -> Path:
    """Where the asset with hash ``digest`` was staged in the assembly directory."""
    entry = _asset_manifest(assembly, stack_name)[digest]
    return Path(assembly.directory) / str(entry["source"]["path"])


def _files(directory: Path) -> set[str]:
    return {str(path.relative_to(directory)) for path in directory.rglob("*") if path.is_file()}


def _lambda_code_hash(function: dict[str, Any]) -> str:
    key = function["Properties"]["Code"]["S3Key"]
    assert isinstance(key, str) and key.endswith(".zip"), key
    return key.removesuffix(".zip")


def _gate_functions(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        logical_id: function
        for logical_id, function in resources(template, "AWS::Lambda::Function").items()
        if function["Properties"].get("Handler") in GATE_HANDLERS
    }


# -- snapshots ----------------------------------------------------------------------------


def test_every_example_stack_matches_its_snapshot(
    example_templates: dict[str, dict[str, Any]], json_snapshot: SnapshotAssertion
) -> None:
    assert {"FsdpTraining", "Heterogeneous", "MinimalDev"} <= set(example_templates)
    normalized = {name: normalize_asset_hashes(t) for name, t in example_templates.items()}
    # Compare every stack (so every snapshot is used and updated), then show the first diff.
    changed = [name for name in sorted(normalized) if normalized[name] != json_snapshot(name=name)]
    if changed:
        first = changed[0]
        assert normalized[first] == json_snapshot(name=first), f"changed stacks: {changed}"


def test_normalization_replaces_only_asset_hashes() -> None:
    digest_a, digest_b = "a" * 64, "0123456789abcdef" * 4
    template = {
        "Resources": {
            "F": {"Properties": {"Code": {"S3Key": f"{digest_a}.zip"}, "Id": "b" * 63}},
            "G": {"Properties": {"Keys": [f"{digest_b}.zip", f"{digest_a}.zip"]}},
        }
    }
    assert normalize_asset_hashes(template) == {
        "Resources": {
            "F": {"Properties": {"Code": {"S3Key": "<asset-hash-1>.zip"}, "Id": "b" * 63}},
            "G": {"Properties": {"Keys": ["<asset-hash-2>.zip", "<asset-hash-1>.zip"]}},
        }
    }


# -- the hashes the snapshots hide ----------------------------------------------------------


# Every asset an example may stage, by the display name CDK gives it in the asset manifest.
# ``True``: staged from this repository, so its hash must be the fingerprint of the staged
# files. ``False``: an aws-cdk-lib handler, hashed by aws-cdk-lib its own way.
KNOWN_ASSETS: dict[re.Pattern[str], bool] = {
    re.compile(r"^Cluster/MinCountGate/CheckFunction/Code$"): True,
    re.compile(r"^Cluster/LifecycleScripts\d*/Upload/Asset1$"): True,
    re.compile(r"^Cluster/LifecycleScripts\d*/Upload/AwsCliLayer/Code$"): False,
    re.compile(r"^Custom::CDKBucketDeployment[0-9A-F]{32}/Code$"): False,
    re.compile(r"^\w+/Custom::VpcRestrictDefaultSGCustomResourceProvider Code$"): False,
}


def test_every_hidden_hash_is_a_known_staged_asset_of_its_stack(
    example_assembly: CloudAssembly, example_templates: dict[str, dict[str, Any]]
) -> None:
    for stack_name, template in example_templates.items():
        manifest = _asset_manifest(example_assembly, stack_name)
        for digest in asset_hashes(template):
            assert digest in manifest, f"{stack_name}: {digest} is not an asset of the stack"
            name = manifest[digest]["displayName"]
            ours = [own for pattern, own in KNOWN_ASSETS.items() if pattern.match(name)]
            assert len(ours) == 1, f"{stack_name}: unknown asset {name!r}: look at it, list it"
            staged = _staged(example_assembly, stack_name, digest)
            assert staged.exists(), f"{stack_name}: asset {digest} was not staged at {staged}"
            if ours[0]:
                # The hash is the content fingerprint of exactly what was staged (the lifecycle
                # upload hashes with its own link and ignore modes).
                options = LIFECYCLE_FINGERPRINT if "LifecycleScripts" in name else {}
                assert FileSystem.fingerprint(str(staged), **options) == digest, (stack_name, name)


def test_gate_functions_run_the_gate_runtime_staged_from_the_library(
    example_assembly: CloudAssembly, example_templates: dict[str, dict[str, Any]]
) -> None:
    gated = {name for name, template in example_templates.items() if _gate_functions(template)}
    assert {"FsdpTraining", "Heterogeneous"} <= gated
    for stack_name in gated:
        functions = _gate_functions(example_templates[stack_name])
        handlers = {f["Properties"]["Handler"] for f in functions.values()}
        assert handlers == GATE_HANDLERS, stack_name
        (digest,) = {_lambda_code_hash(f) for f in functions.values()}
        staged = _staged(example_assembly, stack_name, digest)
        assert staged.is_dir()
        assert FileSystem.fingerprint(str(staged)) == digest
        staged_files = _files(staged)
        assert not [f for f in staged_files if any(marker in f for marker in BYTECODE)]
        # Every module of the runtime package is staged byte for byte.
        modules = {
            str(path.relative_to(GATE_RUNTIME))
            for path in (GATE_RUNTIME / "hyperpod_gate").glob("*.py")
            if path.name != "__init__.py"
        }
        assert {"hyperpod_gate/poll.py", "hyperpod_gate/arm.py"} <= modules <= staged_files
        for module in modules:
            assert filecmp.cmp(staged / module, GATE_RUNTIME / module, shallow=False), module
        assert staged_files <= modules | {"hyperpod_gate/__init__.py", "__init__.py"}
    # Same runtime, same asset: the gated stacks share one hash.
    digests = {
        _lambda_code_hash(f)
        for name in gated
        for f in _gate_functions(example_templates[name]).values()
    }
    assert len(digests) == 1


def test_gate_handlers_import_from_the_staged_asset(
    example_assembly: CloudAssembly, example_templates: dict[str, dict[str, Any]]
) -> None:
    """What the Lambda runtime does: put the asset root on sys.path and import the handler."""
    function = next(iter(_gate_functions(example_templates["FsdpTraining"]).values()))
    staged = _staged(example_assembly, "FsdpTraining", _lambda_code_hash(function))
    script = (
        "import importlib, sys\n"
        f"sys.path.insert(0, {str(staged)!r})\n"
        f"for handler in {sorted(GATE_HANDLERS)!r}:\n"
        "    module, _, name = handler.rpartition('.')\n"
        "    loaded = importlib.import_module(module)\n"
        f"    assert loaded.__file__.startswith({str(staged)!r}), loaded.__file__\n"
        "    assert callable(getattr(loaded, name)), handler\n"
    )
    result = subprocess.run(
        [sys.executable, "-I", "-B", "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert result.returncode == 0, result.stderr


def _gate_code_from(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[str, Path]:
    """The hash of the code both functions of a gate run when the runtime is read from
    ``source`` (``RUNTIME_DIR``), and the folder it was staged to."""
    monkeypatch.setattr(gate_construct, "RUNTIME_DIR", str(source))
    app = new_app(outdir=str(tmp_path / "cdk.out"))
    stack = Stack(app, "Gated")
    HyperPodSlurmCluster(
        stack,
        "Cluster",
        cluster_name="fsdp-train",
        instance_groups=[
            InstanceGroup.controller("controller", instance_type=HyperPodInstanceType.ML_M5_XLARGE),
            InstanceGroup.compute(
                "gpu",
                instance_type=HyperPodInstanceType.ML_C5_4XLARGE,
                instance_count=2,
                min_instance_count=2,
                partition="gpu",
            ),
        ],
    )
    assembly = app.synth()
    functions = _gate_functions(assembly.get_stack_by_name("Gated").template)
    (digest,) = {_lambda_code_hash(f) for f in functions.values()}
    return digest, _staged(assembly, "Gated", digest)


def _example_gate_code(example_templates: dict[str, dict[str, Any]]) -> str:
    """The hash of the code the example's gate runs (the library's runtime as it is)."""
    functions = _gate_functions(example_templates["FsdpTraining"]).values()
    (digest,) = {_lambda_code_hash(f) for f in functions}
    return digest


def _runtime_copy(tmp_path: Path) -> Path:
    """A copy of the gate's runtime without bytecode, at ``tmp_path/runtime``."""
    source = tmp_path / "runtime"
    shutil.copytree(GATE_RUNTIME, source, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return source


def test_gate_asset_hash_ignores_bytecode_in_the_source_folder(
    example_templates: dict[str, dict[str, Any]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A __pycache__ folder (written whenever the runtime is imported) must not change it."""
    source = _runtime_copy(tmp_path)
    (source / "hyperpod_gate" / "__pycache__").mkdir()
    (source / "hyperpod_gate" / "__pycache__" / "poll.cpython-311.pyc").write_bytes(b"\0junk")
    (source / "hyperpod_gate" / "stray.pyc").write_bytes(b"\0junk")
    with_junk, _ = _gate_code_from(source, tmp_path, monkeypatch)
    assert with_junk == _example_gate_code(example_templates)


def test_gate_asset_hash_follows_an_edit_of_the_runtime(
    example_templates: dict[str, dict[str, Any]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An edited handler is a new hash (so ``cdk deploy`` uploads it and Lambda runs it), and
    the staged code is the edited file."""
    source = _runtime_copy(tmp_path)
    edited = source / "hyperpod_gate" / "poll.py"
    edited.write_text(edited.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    digest, staged = _gate_code_from(source, tmp_path, monkeypatch)
    assert digest != _example_gate_code(example_templates)
    assert filecmp.cmp(staged / "hyperpod_gate" / "poll.py", edited, shallow=False)


def _runtime_changes(root: Path) -> dict[str, Callable[[Path], None]]:
    """Every change of the runtime's files that must change its hash, by name: each file
    edited, renamed or removed, and a module added to each folder."""
    changes: dict[str, Callable[[Path], None]] = {}

    def edit(path: Path) -> None:
        path.write_bytes(path.read_bytes() + b"\n")

    def rename(path: Path) -> None:
        path.rename(path.with_name(f"renamed_{path.name}"))

    for relative in sorted(_files(root)):
        for verb, change in (("edit", edit), ("rename", rename), ("remove", Path.unlink)):
            changes[f"{verb} {relative}"] = lambda copy, r=relative, c=change: c(copy / r)
    for folder in sorted({str(Path(relative).parent) for relative in _files(root)}):
        changes[f"add a module to {folder}"] = lambda copy, f=folder: (
            copy / f / "added.py"
        ).write_text("", encoding="utf-8")
    return changes


def test_every_change_of_a_runtime_file_changes_the_code_hash(tmp_path: Path) -> None:
    """The code asset's hash is the fingerprint of the staged files, so a deployment picks
    up every change of the runtime. Each case is its own copy (aws-cdk-lib caches a staging
    per source path in a process); the gate stages it with the construct's own options."""
    app = new_app(outdir=str(tmp_path / "cdk.out"))
    stack = Stack(app, "Hashes")
    clean = _runtime_copy(tmp_path / "clean")
    changes = _runtime_changes(clean)
    assert len(changes) >= 3 * len(_files(clean))
    digests: dict[str, str] = {}
    for index, (name, change) in enumerate({"none": lambda _: None, **changes}.items()):
        copy = _runtime_copy(tmp_path / f"case{index}")
        change(copy)
        code = LambdaCode(
            Construct(stack, f"Case{index}"), str(copy), exclude=gate_construct._ASSET_EXCLUDES
        )
        assert not code.findings
        digests[name] = str(stack.resolve(code.code.s3_key)).removesuffix(".zip")
    unchanged = [name for name, digest in digests.items() if digest == digests["none"]]
    assert unchanged == ["none"]
    assert len(set(digests.values())) == len(digests)


def test_lifecycle_asset_is_the_example_scripts_folder(
    example_assembly: CloudAssembly, example_templates: dict[str, dict[str, Any]]
) -> None:
    _, upload = only(example_templates["FsdpTraining"], "Custom::CDKBucketDeployment")
    (key,) = upload["Properties"]["SourceObjectKeys"]
    digest = key.removesuffix(".zip")
    staged = _staged(example_assembly, "FsdpTraining", digest)
    assert _files(staged) == _files(LIFECYCLE_DIR) == {"on_create.sh"}
    assert filecmp.cmp(staged / "on_create.sh", LIFECYCLE_DIR / "on_create.sh", shallow=False)
    assert FileSystem.fingerprint(str(LIFECYCLE_DIR), **LIFECYCLE_FINGERPRINT) == digest

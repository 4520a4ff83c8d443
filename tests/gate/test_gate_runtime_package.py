"""The Lambda package: stdlib + boto3/botocore only, relative imports, importable from the
asset root (also without the ``__init__.py`` files the construct may exclude)."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

RUNTIME = Path(__file__).resolve().parents[2] / "hyperpod_constructs" / "_runtime"
PACKAGE = RUNTIME / "hyperpod_gate"
ALLOWED_THIRD_PARTY = {"boto3", "botocore"}


def modules() -> list[Path]:
    return sorted(PACKAGE.glob("*.py"))


@pytest.mark.parametrize("path", modules(), ids=lambda p: p.name)
def test_imports_are_stdlib_boto_or_relative(path: Path) -> None:
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level > 0:
                continue  # relative: inside the package
            names = [node.module or ""]
        else:
            continue
        for name in names:
            top = name.split(".")[0]
            assert top in sys.stdlib_module_names or top in ALLOWED_THIRD_PARTY, (
                f"{path.name} imports {name}"
            )


SCRIPT = """
import importlib, json, sys
poll = importlib.import_module("hyperpod_gate.poll")
arm = importlib.import_module("hyperpod_gate.arm")
print(json.dumps({
    "handlers": [callable(poll.handler), callable(arm.handler)],
    "leaked": sorted(m for m in sys.modules if m.split(".")[0] in
                     ("hyperpod_constructs", "aws_cdk", "jsii", "constructs")),
}))
"""


@pytest.mark.parametrize("keep_init", [True, False], ids=["with-init", "without-init"])
def test_handlers_import_from_the_asset_root(tmp_path: Path, keep_init: bool) -> None:
    ignore = ["__pycache__", "*.pyc"] + ([] if keep_init else ["__init__.py"])
    root = tmp_path / "asset"
    shutil.copytree(RUNTIME, root, ignore=shutil.ignore_patterns(*ignore))
    # -I ignores PYTHONPATH and leaves the cwd off sys.path; put the asset root first, as
    # Lambda does with /var/task
    result = subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(root)!r})\n{SCRIPT}"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert '"handlers": [true, true]' in result.stdout
    assert '"leaked": []' in result.stdout


def test_package_root_import_is_pure() -> None:
    source = (PACKAGE / "__init__.py").read_text()
    tree = ast.parse(source)
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert imported == {"decision"}  # no boto3 at CDK synth time


def test_watch_decides_with_the_gates_module_imported_plainly() -> None:
    """``watch`` imports the gate's decision module by its package path (no copy loaded from
    its file under another name), and that import pulls in neither aws_cdk nor boto3."""
    script = (
        "import sys, json\n"
        "import hyperpod_constructs.tools.watch.model as watch\n"
        "import hyperpod_constructs._runtime.hyperpod_gate.decision as decision\n"
        "print(json.dumps({'same': watch.evaluate_gate is decision.evaluate_gate"
        " and watch.GroupRequirement is decision.GroupRequirement,"
        " 'heavy': sorted(m for m in sys.modules if m.split('.')[0] in"
        " ('aws_cdk', 'jsii', 'constructs', 'boto3', 'botocore'))}))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == '{"same": true, "heavy": []}'

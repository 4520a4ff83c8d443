"""Running the pinned ``cdk`` CLI (node_modules/.bin) on a throw-away app folder."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
NODE_BIN = ROOT / "node_modules" / ".bin"
CDK = NODE_BIN / "cdk"
SYNTH = [str(CDK), "synth", "--quiet", "--no-notices", "--no-version-reporting"]
"""``cdk synth`` as `make synth` runs it."""


def cdk_env() -> dict[str, str]:
    """The environment for the CLI: Node 22 first on PATH, this checkout importable, and none
    of pytest's or an enclosing cdk run's variables. Skips the test without the CLI."""
    if not CDK.exists():
        pytest.skip("the cdk CLI is not installed (run `make setup`)")
    env = dict(os.environ)
    env.update(
        PATH=f"{NODE_BIN}{os.pathsep}{env.get('PATH', '')}",
        PYTHONPATH=str(ROOT),
        CDK_DISABLE_CLI_TELEMETRY="true",
    )
    for name in ("CDK_OUTDIR", "CDK_CONTEXT_JSON", "PYTEST_CURRENT_TEST", "PYTEST_VERSION"):
        env.pop(name, None)
    return env


def start(
    command: list[str], folder: Path, env: dict[str, str], *, merged: bool = False
) -> subprocess.Popen[str]:
    """Start ``command`` in ``folder``, its output captured as text (stderr into stdout when
    ``merged``)."""
    return subprocess.Popen(
        command,
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if merged else subprocess.PIPE,
        text=True,
    )


def run_app(folder: Path, **variables: str) -> subprocess.CompletedProcess[str]:
    """``python app.py`` in ``folder`` as a user runs it (aws-cdk-lib's own validation on),
    with :func:`cdk_env` and ``variables``."""
    env = {**cdk_env(), **variables}
    env.pop("CDK_VALIDATION", None)
    process = start([sys.executable, "app.py"], folder, env)
    stdout, stderr = process.communicate(timeout=180)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


@dataclass(frozen=True)
class Finished:
    """One finished command of :func:`run_all`."""

    returncode: int
    stdout: str
    stderr: str
    """Empty when the command ran with ``merged`` output."""
    outdir: Path
    """Where the app was told to write its cloud assembly (``CDK_OUTDIR``)."""


def run_all(
    folders: Mapping[str, Path], command: list[str], env: dict[str, str], *, merged: bool = False
) -> dict[str, Finished]:
    """Run ``command`` in every folder at once, each app writing to its folder's
    ``cdk.out``; wait for all of them."""
    started = {
        name: start(command, folder, {**env, "CDK_OUTDIR": str(folder / "cdk.out")}, merged=merged)
        for name, folder in folders.items()
    }
    done: dict[str, Finished] = {}
    for name, process in started.items():
        stdout, stderr = process.communicate(timeout=240)
        done[name] = Finished(process.returncode, stdout, stderr or "", folders[name] / "cdk.out")
    return done

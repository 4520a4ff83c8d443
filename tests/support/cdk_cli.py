"""Running the pinned ``cdk`` CLI (node_modules/.bin) on a throw-away app folder."""

from __future__ import annotations

import os
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

"""The benchmark's L1 baselines: they must not import the library (or the ratios compare the
library with itself plus the library's import)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

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

"""The command line as a user runs it: ``python -m hyperpod_constructs`` in a subprocess with
fake credentials, no AWS config, and every AWS call sent to a local endpoint; and the
registered subcommands, read from the main parser (so that a new one needs its cases)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hyperpod_constructs.__main__ import _parser

TIMEOUT = 60
"""A hang guard: a process still running after this many seconds fails the test."""


def subcommands() -> dict[str, argparse.ArgumentParser]:
    """Every registered subcommand's parser."""
    (action,) = [a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def run_cli(
    argv: list[str],
    *,
    cwd: Path,
    endpoint: str,
    stdout: Any = subprocess.PIPE,
    env: Mapping[str, str] | None = None,
) -> tuple[int, bytes, str]:
    """Run the command line ``argv``; return its exit code, stdout (bytes) and stderr."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "PYTHONIO"))}
    environment.update(
        AWS_ACCESS_KEY_ID="AKIDCLITESTCLITESTCL",
        AWS_SECRET_ACCESS_KEY="cli-test-secret",
        AWS_CONFIG_FILE="/dev/null",
        AWS_SHARED_CREDENTIALS_FILE="/dev/null",
        AWS_EC2_METADATA_DISABLED="true",
        AWS_ENDPOINT_URL=endpoint,
        **(env or {}),
    )
    result = subprocess.run(
        [sys.executable, "-m", "hyperpod_constructs", *argv],
        stdout=stdout,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=environment,
        timeout=TIMEOUT,
    )
    return result.returncode, result.stdout or b"", result.stderr.decode(errors="replace")

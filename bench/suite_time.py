"""What the test suite costs: the CPU and wall time of ``make test`` (or another Makefile
target), per command. Run: ``python bench/suite_time.py [TARGET ...] [--no-setup]`` (default
``test``; ``make suite-time`` runs it for ``test``). The figures are recorded in
docs/performance.md.

The target runs through ``make`` as usual, with this script as make's recipe shell: each
command runs in ``bash`` with the Makefile's environment and shell flags, and its CPU time
(user + system of the command and every process it waited for: pytest-xdist workers, the
Python and Node.js subprocesses the tests start) and wall time are recorded. CPU time is the
figure to compare on a shared machine: wall time grows with the other processes' load, CPU time
much less. The load average is printed before and after.

``make setup`` (installing the venv and node_modules when they are out of date) runs first,
untimed; ``--no-setup`` skips it and tells make not to remake them.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOG_VARIABLE = "HYPERPOD_SUITE_TIME_LOG"
"""Set by the measuring run: the file each timed command appends its figures to."""
SETUP_FILES = (".venv/.installed", "node_modules/.installed")


def run_command(argv: list[str], log: str) -> int:
    """Make's recipe shell: run the command in bash and append its figures to the log."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    code = subprocess.run(["/bin/bash", *argv], check=False).returncode
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    command = argv[-1] if argv else ""
    with open(log, "a", encoding="utf-8") as out:
        out.write(json.dumps({"command": command, "cpu": cpu, "wall": wall, "code": code}) + "\n")
    return code


def _load() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def measure(targets: list[str], setup: bool) -> int:
    """Run ``make TARGETS`` timing each command; print the table; make's exit status."""
    if setup:
        subprocess.run(["make", "--no-print-directory", "setup"], cwd=ROOT, check=True)
    keep = [flag for path in SETUP_FILES for flag in ("-o", path)]
    with tempfile.TemporaryDirectory(prefix="hyperpod-suite-time-") as folder:
        log = str(Path(folder) / "commands.jsonl")
        shell = Path(folder) / "timed-shell"
        shell.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{Path(__file__).resolve()}" "$@"\n')
        shell.chmod(0o755)
        load_before = _load()
        started = time.perf_counter()
        code = subprocess.run(
            ["make", "--no-print-directory", *keep, f"SHELL={shell}", *targets],
            cwd=ROOT,
            env={**os.environ, LOG_VARIABLE: log},
            check=False,
        ).returncode
        wall = time.perf_counter() - started
        lines = Path(log).read_text(encoding="utf-8").splitlines() if Path(log).exists() else []
    rows = [json.loads(line) for line in lines]
    print(
        f"\nmake {' '.join(targets)}: exit status {code}, load average {load_before} before, "
        f"{_load()} after"
    )
    print(f"{'CPU s':>8} {'wall s':>8}  command")
    for row in rows:
        print(f"{row['cpu']:8.1f} {row['wall']:8.1f}  {row['command'][:100]}")
    total = sum(row["cpu"] for row in rows)
    print(f"{total:8.1f} {wall:8.1f}  total (CPU: the commands; wall: make)")
    return code


def main() -> int:
    log = os.environ.get(LOG_VARIABLE)
    if log is not None and len(sys.argv) > 1 and sys.argv[1].startswith("-"):
        return run_command(sys.argv[1:], log)  # called by make as its shell
    args = sys.argv[1:]
    setup = "--no-setup" not in args
    targets = [arg for arg in args if arg != "--no-setup"] or ["test"]
    return measure(targets, setup)


if __name__ == "__main__":
    sys.exit(main())

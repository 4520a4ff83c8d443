"""``watch`` in a real pseudo-terminal, as a person sees it.

``python -m hyperpod_constructs watch`` runs as a subprocess whose stdout is a pty; what it
writes (``rich``'s live view and its escape codes) is fed to ``pyte``, a VT100 emulator, and the
screen is asserted: the group, its counts, the bar, the countdown, the gate. The AWS side is the
simulator and the stack fake on a local endpoint; each refresh moves virtual time 15 minutes on.

``WATCH_SCREEN_UPDATE=1`` rewrites the captured screen kept in ``docs/watch.md``; otherwise the
test checks that the docs still show what the command prints.
"""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import termios
import time
from pathlib import Path
from typing import Any

import pyte
import pytest
from aws_cdk.cx_api import CloudAssembly

from tests.support.hyperpod_sim import linear
from tests.support.watch_deployment import STACK, Deployment
from tests.support.wire import REGION

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "watch.md"
COLUMNS, ROWS = 110, 24
STEP = 900.0
"""Virtual seconds per refresh."""
START = 5400.0
"""The deployment is 1 h 30 min in when watch starts."""
BEGIN, END = "<!-- captured screen: begin -->", "<!-- captured screen: end -->"


def run_in_pty(argv: list[str], env: dict[str, str], limit: float = 120.0) -> tuple[int, list[str]]:
    """Run ``argv`` with a pty as its terminal; return its exit code and every screen it showed
    (one per chunk of output)."""
    screen = pyte.Screen(COLUMNS, ROWS)
    stream = pyte.ByteStream(screen)
    leader, follower = pty.openpty()
    termios.tcsetwinsize(follower, (ROWS, COLUMNS))
    process = subprocess.Popen(
        argv, stdin=follower, stdout=follower, stderr=follower, env=env, start_new_session=True
    )
    os.close(follower)
    screens: list[str] = []
    ends = time.monotonic() + limit
    try:
        while time.monotonic() < ends:
            ready, _, _ = select.select([leader], [], [], 0.5)
            if not ready:
                if process.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            stream.feed(chunk)
            screens.append("\n".join(line.rstrip() for line in screen.display).rstrip())
    finally:
        os.close(leader)
        if process.poll() is None:
            process.kill()
        code = process.wait()  # no timeout: a timed wait sleeps, which virtual time forbids
    return code, screens


def frame_with(screens: list[str], pattern: str) -> str:
    matching = [s for s in screens if re.search(pattern, s, re.MULTILINE)]
    assert matching, f"no screen shows {pattern!r}; last screen:\n{screens[-1] if screens else ''}"
    return matching[0]


@pytest.fixture(scope="module")
def cdk_out(example_assembly: CloudAssembly) -> str:
    return str(example_assembly.directory)


def test_a_ramp_on_a_real_terminal(
    monkeypatch: pytest.MonkeyPatch,
    cdk_out: str,
    example_templates: dict[str, dict[str, Any]],
    tmp_path: Path,
) -> None:
    deployment = Deployment(monkeypatch, example_templates[STACK], linear(0, 6, 16))
    deployment.sleep(START)

    def one_refresh_later(service: str, operation: str) -> None:
        if operation == "DescribeStacks":  # the first read of each refresh
            deployment.sleep(STEP)

    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(
        TERM="xterm-256color",
        HOME=str(tmp_path),
        PYTHONPATH=str(ROOT),
        AWS_ACCESS_KEY_ID="AKIDWATCHTESTWATCHTE",
        AWS_SECRET_ACCESS_KEY="watch-test-secret",
        AWS_CONFIG_FILE="/dev/null",
        AWS_SHARED_CREDENTIALS_FILE="/dev/null",
        AWS_EC2_METADATA_DISABLED="true",
    )
    for name in ("NO_COLOR", "COLUMNS", "LINES"):
        env.pop(name, None)
    argv = [sys.executable, "-m", "hyperpod_constructs", "watch", "--app", cdk_out]
    argv += ["--stack", STACK, "--region", REGION, "--interval", "1"]
    with deployment.server(before_request=one_refresh_later) as endpoint:
        env["AWS_ENDPOINT_URL"] = endpoint.url
        code, screens = run_in_pty(argv, env)
    assert endpoint.errors == []
    assert code == 0, screens[-1] if screens else "no output"

    # The third refresh: 2 h 15 min into the deployment, 30 min of watching.
    ramp = frame_with(screens, r"watching 0:30:00(.|\n)*^gpu +Creating .* [0-9]+ / 16 / 16 .*:")
    assert "HyperPod cluster fsdp-train (InService)" in ramp
    assert re.search(r"GROUP +STATUS +PROGRESS .* CURRENT / MIN / TARGET +3-H WINDOW LEFT", ramp)
    row = next(line for line in ramp.splitlines() if line.startswith("gpu "))
    current = int(re.search(r"([0-9]+) / 16 / 16", row).group(1))  # type: ignore[union-attr]
    assert 0 < current < 16
    bar = re.search(r"[█░]+", row).group(0)  # type: ignore[union-attr]
    assert (len(bar), bar.count("█")) == (24, round(24 * current / 16))
    left = re.search(r"([0-9]):([0-9]{2}):([0-9]{2})$", row)
    assert left is not None and 0 < int(left.group(1)) * 60 + int(left.group(2)) < 90
    assert "gate: waiting (wait condition ClusterMinCountGateWait" in ramp
    assert "waiting for minimum capacity: gpu " in ramp
    assert "\x1b" not in ramp

    final = screens[-1]
    assert re.search(r"^gpu +InService +█{24} +1[6-9] / 16 / 16 +-$", final, re.MULTILINE)
    assert "all gated groups reached their minimum" in final

    command = f"$ python -m hyperpod_constructs watch --stack {STACK}"
    captured = f"{BEGIN}\n```text\n{command}\n{ramp}\n```\n{END}"
    doc = DOC.read_text(encoding="utf-8")
    if os.environ.get("WATCH_SCREEN_UPDATE") == "1":
        head, rest = doc.split(BEGIN, 1)
        DOC.write_text(head + captured + rest.split(END, 1)[1], encoding="utf-8")
    else:
        assert captured in doc, (
            "docs/watch.md shows another screen: rerun with WATCH_SCREEN_UPDATE=1"
        )

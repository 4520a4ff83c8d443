"""Shared driver of the benchmark apps (each app is run as its own process by bench/run.py).

An app script imports this module first, calls :func:`start`, imports aws-cdk-lib and whatever
it needs, then calls :func:`run` with a function that adds its stack to an ``App``. The harness
synthesizes into a temporary folder and prints one JSON line on stdout:

- ``import_s``, ``build_s``, ``synth_s``: seconds spent importing (including the start of the
  jsii kernel), constructing, and in ``app.synth()``;
- ``jsii_build``, ``jsii_synth``: jsii round trips (requests sent to the Node kernel, callbacks
  included) during construction and synthesis;
- ``py_rss_kib``, ``node_rss_kib``: peak resident set size of this Python process and of the
  jsii Node process (stopped and reaped before it is read).
"""

from __future__ import annotations

import json
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

_started = time.perf_counter()
_calls = 0


def start() -> None:
    """Count jsii round trips from now on (call before aws-cdk-lib is imported)."""
    global _started
    _started = time.perf_counter()
    from jsii._kernel.providers import process

    send = process._NodeProcess.send

    def counting_send(self: Any, request: Any, response_type: Any) -> Any:
        global _calls
        _calls += 1
        return send(self, request, response_type)

    process._NodeProcess.send = counting_send  # type: ignore[method-assign]


def _stop_kernel() -> None:
    import jsii

    provider: Any = jsii.kernel.provider
    provider._process.stop()


def run(define: Callable[[Any], None]) -> None:
    """Build ``define(app)`` and synthesize it; print the measurements as one JSON line."""
    from aws_cdk import App

    imported = time.perf_counter()
    calls_before_build = _calls
    with tempfile.TemporaryDirectory(prefix="hyperpod-bench-") as outdir:
        app = App(outdir=outdir)
        define(app)
        built = time.perf_counter()
        calls_after_build = _calls
        app.synth()
        synthesized = time.perf_counter()
        calls_after_synth = _calls
    _stop_kernel()
    report = {
        "import_s": imported - _started,
        "build_s": built - imported,
        "synth_s": synthesized - built,
        "jsii_build": calls_after_build - calls_before_build,
        "jsii_synth": calls_after_synth - calls_after_build,
        "py_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "node_rss_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
    }
    sys.stdout.write(json.dumps(report) + "\n")
    sys.stdout.flush()
